"""Failure drills: the plan's actions and their refusals, the action thread with real
commands, and the drill report's figures from a series and a run's events."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Any

import pytest

from storbench.analysis.drill import HOLD_S, drill_row
from storbench.execute.drills import Drill, refusal
from storbench.hosts import load as hostload
from storbench.model.errors import PlanError
from storbench.model.series import Interval
from storbench.plan import parse_plan
from storbench.report.drill import drill_cells

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the harness modules
from waiting import wait_until

RBD = "targets: [{rbd: bench/img, size: 64m}]"
FILE = "targets: [{file: /tmp/storbench-drill-unit.dat}]"


def _plan(targets: str, actions: str, more: str = "", top: str = "") -> str:
    return (
        f"name: d\n{top}{targets}\nworkloads:\n  - name: w\n    rw: randwrite\n    bs: 4k\n"
        f"    size: 4m\n    runtime: 30\n    time_based: 1\n{more}    actions: {actions}\n"
    )


@pytest.mark.parametrize(
    ("text", "words"),
    [
        (_plan(RBD, "[{at: 5s, osd_stopp: 1}]"), 'did you mean "osd_stop"'),
        (_plan(RBD, "[{at: 40s, osd_stop: 1}]"), "at 40 s is past the point's end (30 s"),
        (_plan(RBD, "[{osd_stop: 1}]"), "needs `at`"),
        (_plan(RBD, "[{at: 5s, osd_stop: one}]"), "takes an OSD id"),
        (_plan(RBD, "[{at: 5s, osd_set: nodown2}]"), "takes one of noout"),
        (_plan(RBD, "[{at: 5s, osd_stop: 1, osd_start: 1}]"), "exactly one step"),
        (_plan(FILE, "[{at: 5s, osd_out: 1}]"), "the plan has no Ceph target"),
        (_plan(RBD, "[{at: 5s, osd_stop: 1}]", top="steady_state: true\n"), "steady-state"),
        (
            _plan(RBD, "[{at: 5s, osd_stop: 1}]", top='osd_daemons: {stop: "kill it"}\n'),
            "must be a command with `{id}`",
        ),
        (_plan(FILE, "[{at: 5s, run: ''}]"), "`run` takes a command"),
        # an osd_daemons: that is refused was still used for the steps (TypeError)
        (_plan(RBD, "[{at: 5s, osd_stop: 1}]", top="osd_daemons: true\n"), "must be a mapping"),
        (_plan(RBD, "[{at: 5s, osd_stop: 1}]", top="osd_daemons: [a]\n"), "must be a mapping"),
    ],
)
def test_drill_plan_errors_name_the_key_and_the_fix(text: str, words: str) -> None:
    with pytest.raises(PlanError) as e:
        parse_plan(text, "drill.yaml", ceph_conf="/etc/ceph/ceph.conf")
    assert words in str(e.value) + (e.value.fix or "")
    assert e.value.line is not None


def test_drill_needs_a_runtime() -> None:
    text = _plan(FILE, "[{at: 5s, run: sync}]").replace("    runtime: 30\n", "")
    with pytest.raises(PlanError) as e:
        parse_plan(text, "drill.yaml")
    assert "need a `runtime`" in str(e.value)


def test_drill_points_carry_their_actions_with_the_daemon_commands() -> None:
    top = 'osd_daemons: {stop: "ssh {host} systemctl stop ceph-osd@{id}"}\n'
    p = parse_plan(
        _plan(RBD, "[{at: 20s, osd_start: 3}, {at: 5s, osd_stop: 3}]", top=top),
        "drill.yaml",
        ceph_conf="/etc/ceph/ceph.conf",
    )
    (pt,) = p.expand()
    assert [(a.at_s, a.step, a.arg) for a in pt.actions] == [
        (5.0, "osd_stop", "3"),
        (20.0, "osd_start", "3"),
    ]
    assert pt.actions[0].command == "ssh {host} systemctl stop ceph-osd@{id}"
    assert pt.actions[1].command == "systemctl start ceph-osd@{id}"  # the default
    assert type(pt).from_dict(pt.to_dict()).actions == pt.actions  # resume reads them back
    assert refusal([pt], allowed=False) is not None and refusal([pt], allowed=True) is None


class _Events:
    def __init__(self) -> None:
        self.items: list[tuple[str, str, dict[str, Any]]] = []

    def add(self, kind: str, message: str, data: dict[str, Any]) -> None:
        self.items.append((kind, message, data))

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [d for k, _, d in self.items if k == kind]

    def recorded(self) -> set[int]:
        return set()


def test_drill_runs_commands_at_their_times_and_skips_what_the_load_outlived(
    tmp_path: Any,
) -> None:
    mark = tmp_path / "ran"
    text = _plan(
        FILE, f"[{{at: 0.2s, run: 'echo 1 >> {mark}'}}, {{at: 25s, run: 'echo 2 >> {mark}'}}]"
    )
    (pt,) = parse_plan(text, "drill.yaml").expand()
    events = _Events()
    drill = Drill(pt, events)
    drill.start()
    wait_until("the first step to be done", lambda: events.of("action"))
    drill.stop()
    assert mark.read_text() == "1\n"  # the second one's time never came
    first, second = events.of("action")
    assert first["outcome"] == "done" and 0.2 <= first["started_s"] < 25
    assert second["outcome"] == "skipped" and second["started_s"] is None


def _ticks(iops: list[int]) -> list[Interval]:
    return [
        Interval(n, (n + 1) * 1000, 1000, "write", k, k * 4096, p99_ns=1e6)
        for n, k in enumerate(iops)
    ]


def _events(began: float, started_s: float, health: list[tuple[float, str, bool]]) -> list[Any]:
    action = {"point": 0, "step": "osd_stop", "arg": "1", "outcome": "done"}
    action.update(started_s=started_s, ended_s=started_s + 1, began_at=began)
    out: list[Any] = [("action", began + started_s, action)]
    out += [("health", began + t, {"status": s, "clean": c}) for t, s, c in health]
    out += [("cluster-io", began + t, {"recovering_bytes_per_sec": 1e6 * t}) for t in (6, 8, 30)]
    return out


def test_drill_report_figures_from_the_series_and_the_events() -> None:
    began = 1000.0
    iops = [100] * 5 + [40, 0, 0, 80, 95, 100, 100]  # the action at 5 s
    health = [(5.5, "HEALTH_WARN", False), (9.0, "HEALTH_OK", False), (10.0, "HEALTH_OK", True)]
    row = drill_row(0, "p", _ticks(iops), _events(began, 5.0, health), began + 40, [])
    assert row.baseline_iops == 100 and row.baseline_p99_ns == 1e6
    assert row.dip_pct == 0 and row.dip_at_s == 7.0
    assert row.longest_stall_s == 2.0
    assert row.below_50_s == 3.0 and row.below_90_s == 4.0
    assert row.recovered_s == 9.0 - 5.0  # the end of the last interval below 90 %
    # HEALTH_OK without every PG clean does not count; the clean one held to the run's end
    assert row.healed_s == 10.0 - 5.0
    assert row.recovery_bytes_per_s_max == 8e6  # samples between the action and the heal


def test_drill_report_health_that_does_not_hold_is_not_healed() -> None:
    began = 1000.0
    brief = [
        (6.0, "HEALTH_WARN", False),
        (8.0, "HEALTH_OK", True),
        (8.0 + HOLD_S / 2, "HEALTH_WARN", False),
    ]
    row = drill_row(0, "p", _ticks([100] * 12), _events(began, 5.0, brief), began + 60, [])
    assert row.healed_s is None and row.recovered_s == 0.0


def test_drill_report_states_every_sampled_host_during_recovery() -> None:
    """The load's host and a remote host sampled through its agent (real /proc readings
    recorded while fio wrote: tests/data/proc), each summed up from the action to the heal."""
    proc = Path(__file__).parent.parent / "data" / "proc"
    a, b = hostload.read_counters(proc / "a"), hostload.read_counters(proc / "b")
    mine = [hostload.sample(a, b, n, (n + 1) * 1000) for n in range(12)]
    far = [dataclasses.replace(s, host="osd-host") for s in mine]
    began = 1000.0
    health = [(5.5, "HEALTH_WARN", False), (10.0, "HEALTH_OK", True)]
    events = _events(began, 5.0, health)
    row = drill_row(0, "p", _ticks([100] * 12), events, began + 40, [], [*mine, *far])
    assert row.host["cpu_busy_pct_mean"] == pytest.approx(mine[0].cpu_busy_pct)
    assert list(row.remote) == ["osd-host"] and row.remote["osd-host"] == row.host
    cells = [c[0] for c in drill_cells(row)]
    assert "host during recovery: CPU busy (user+system)" in cells
    assert "osd-host during recovery: CPU busy (user+system)" in cells
