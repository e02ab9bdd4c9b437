"""The purge of `precondition: {mode: ..., purge: discard|secure}`: read at load (a mapping
beside the short forms), refused at load for anything but a device of this machine, refused
by preflight unless --destroy-data names the device, said by `plan show`, and run once per
device and session by the preconditioning phase (blkdiscard itself: the integration tests,
tests/integration/test_precondition_runs.py)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from test_cli_errors import assert_one_error, db_path, storbench, write_plan

from storbench.engines.base import PointResult
from storbench.execute import purge
from storbench.execute.precondition import Preconditioner
from storbench.model.errors import PlanError, PreflightError
from storbench.model.metrics import Measurement
from storbench.plan import Point, parse_plan
from storbench.plan.model import PointHost
from storbench.preflight import check_targets, run_preflight
from storbench.preflight.safety import purge_refusal

WL = "workloads:\n  - name: w\n    rw: randread\n    bs: 4k\n    size: 8m\n    runtime: 1\n"
DEV = "/dev/sb-no-such-disk"  # missing devices are preflight's to refuse, not the loader's


def test_precondition_purge_mapping_per_target_and_for_the_rest() -> None:
    text = (
        "name: p\nprecondition: {mode: sequential, purge: discard}\ntargets:\n"
        f"  - device: {DEV}a\n  - device: {DEV}b\n    precondition: {{purge: secure}}\n"
        f"  - device: {DEV}c\n    precondition: workload\n" + WL
    )
    a, b, c = parse_plan(text, "p.yaml").expand()
    assert (a.precondition, a.purge) == ("sequential", "discard")
    assert (b.precondition, b.purge) == ("none", "secure")  # the target's own, whole
    assert (c.precondition, c.purge) == ("workload", None)
    assert a.writes and b.writes  # a purge erases the device: its data must be destroyable
    assert Point.from_dict(b.to_dict()).purge == "secure"
    assert "purge" not in c.to_dict()
    short = parse_plan(f"name: p\ntargets: [{{device: {DEV}}}]\n" + WL, "p.yaml").expand()[0]
    assert (short.precondition, short.purge, short.writes) == ("none", None, False)


def test_precondition_purge_from_the_command_line() -> None:
    (pt,) = parse_plan(
        "name: p\n" + WL, "p.yaml", targets=[DEV], sets=["precondition={purge: discard}"]
    ).expand()
    assert (pt.precondition, pt.purge) == ("none", "discard")
    with pytest.raises(PlanError) as e:  # --target replaced the device with a file
        parse_plan(
            "name: p\n" + WL,
            "p.yaml",
            targets=["/tmp/sb-purge.dat"],
            sets=["precondition={purge: discard}"],
        )
    assert "--set precondition=" in str(e.value) and "never a `file:` one" in str(e.value)


@pytest.mark.parametrize(
    ("pre", "target", "more", "line", "words"),
    [
        ("{purge: discrad}", f"device: {DEV}", "", 2, 'did you mean "discard"?'),
        ("{purge: wipe}", f"device: {DEV}", "", 2, "must be discard (blkdiscard"),
        ("{purge: true}", f"device: {DEV}", "", 2, "not True"),
        ("{purg: discard}", f"device: {DEV}", "", 2, 'did you mean "purge"?'),
        ("{mode: sequentail}", f"device: {DEV}", "", 2, 'did you mean "sequential"?'),
        ("discard", f"device: {DEV}", "", 2, "`precondition: {purge: discard}`"),
        ("[discard]", f"device: {DEV}", "", 2, "not a list"),
        ("{purge: discard}", "file: /tmp/sb-purge.dat", "", 2, "never a `file:` one"),
        ("{purge: discard}", "directory: /tmp", "", 2, "never a `directory:` one"),
        ("{purge: discard}", "rbd: pool/img", "", 2, "never a `rbd:` one"),
        ("{purge: discard}", "rados: pool", "", 2, "never a `rados:` one"),
        (
            "{purge: discard}",
            f"device: {DEV}",
            "hosts:\n  - address: 10.0.0.1\n",
            2,
            "never purges a target of a remote host (10.0.0.1:8765)",
        ),
    ],
)
def test_precondition_purge_refused_at_load(
    pre: str, target: str, more: str, line: int, words: str
) -> None:
    text = f"name: p\nprecondition: {pre}\ntargets:\n  - {target}\n{more}" + WL
    with pytest.raises(PlanError) as e:
        parse_plan(text, "p.yaml", ceph_conf="/etc/ceph/ceph.conf")
    assert words in str(e.value) + (e.value.fix or ""), str(e.value)
    assert e.value.file == "p.yaml" and e.value.line == line and e.value.fix


def test_precondition_purge_refused_at_the_targets_own_line() -> None:
    text = "name: p\ntargets:\n  - file: /tmp/sb-purge.dat\n    precondition: {purge: secure}\n"
    with pytest.raises(PlanError) as e:
        parse_plan(text + WL, "p.yaml")
    assert e.value.line == 4 and "`purge: secure` erases a whole block device" in str(e.value)


def _points(tmp_path: Path, target: str, how: str = "discard") -> list[Point]:
    text = f"name: p\ntargets:\n  - {target}\n    precondition: {{purge: {how}}}\n" + WL
    return parse_plan(text, "p.yaml").expand()


def test_precondition_purge_preflight_refuses_what_is_no_block_device(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"x")
    for device in ("/dev/null", str(tmp_path / "f"), str(tmp_path), DEV):
        reason = purge_refusal(device, "discard", [device])
        assert reason is not None and reason.startswith("`purge: discard` erases the whole")
        assert "not a block device" in reason or "does not exist" in reason, reason


def test_precondition_purge_preflight_refuses_a_file_before_anything(tmp_path: Path) -> None:
    (pt,) = _points(tmp_path, f"device: {DEV}")
    precious = tmp_path / "precious.dat"
    precious.write_bytes(b"PRECIOUS" * 1024)
    pt = dataclasses.replace(pt, target=dataclasses.replace(pt.target, path=str(precious)))
    with pytest.raises(PreflightError) as e:
        check_targets([pt], [])
    assert "is a regular file" in str(e.value) and "erases the whole device" in str(e.value)
    remote = dataclasses.replace(pt, hosts=[PointHost("far", "10.0.0.1", 8765, pt.target)])
    with pytest.raises(PreflightError) as e:
        run_preflight([remote], destroy_data=["10.0.0.1:" + str(precious)])
    assert "never purges a target of a remote host" in str(e.value)
    assert precious.read_bytes() == b"PRECIOUS" * 1024


def test_precondition_purge_plan_show_says_it(tmp_path: Path) -> None:
    plan = tmp_path / "plan.yaml"
    plan.write_text(
        f"name: p\ntargets:\n  - device: {DEV}\n"
        "    precondition: {mode: sequential, purge: secure}\n" + WL
    )
    r = storbench(tmp_path, "plan", "show", "plan.yaml", env={"COLUMNS": "300"})
    assert r.returncode == 0, r.stderr
    assert "planned 1s + purge + sequential preconditioning" in r.stdout
    assert "# purged first (secure: blkdiscard --secure of the whole device" in r.stdout
    assert "--destroy-data naming the device" in r.stdout
    assert "# preconditioned first: sequential" in r.stdout


def test_precondition_purge_run_refused_without_the_device(tmp_path: Path) -> None:
    plan = write_plan(
        tmp_path,
        "name: p\ntargets:\n  - file: {tmp}/a.dat\n    precondition: {{purge: discard}}\n" + WL,
    )
    r = storbench(tmp_path, "run", str(plan))
    assert_one_error(r, where=f"{plan}:4", says=("never a `file:` one",))
    assert not db_path(tmp_path).exists() and not (tmp_path / "a.dat").exists()


class _Events:
    def __init__(self) -> None:
        self.added: list[tuple[str, str, dict[str, Any]]] = []

    def add(self, kind: str, message: str, data: dict[str, Any]) -> None:
        self.added.append((kind, message, data))


def _result(code: int, err: str = "") -> PointResult:
    meas = Measurement(status="ok") if code == 0 else Measurement(status="failed", error=err)
    meas.extra["returncode"] = code
    return PointResult(meas, ["blkdiscard", "--verbose", DEV], None, "", err, 10.0, 12.5)


def test_precondition_purge_runs_once_per_device_and_stops_on_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ran: list[tuple[str, str]] = []
    answers = [_result(1, "BLKSECDISCARD ioctl failed"), _result(0), _result(0)]

    def fake(how: str, device: str) -> PointResult:
        ran.append((how, device))
        return answers[len(ran) - 1]

    monkeypatch.setattr(purge, "run", fake)
    events = _Events()
    pre = Preconditioner(events, clock=None, on_round=None)  # type: ignore[arg-type]
    (a,) = _points(tmp_path, f"device: {DEV}", "secure")
    b = dataclasses.replace(a, index=1)
    failed = pre.run(None, None, a)  # type: ignore[arg-type]
    assert failed is not None and failed.measurement is not None
    assert failed.measurement.status == "failed"
    assert pre.run(None, None, a) is not None  # not purged yet: tried again
    assert pre.run(None, None, b) is None  # purged in this session: not again, nothing else
    assert ran == [("secure", DEV)] * 2
    kinds = [(k, d["mode"], d["purge"], d["status"]) for k, _, d in events.added]
    assert kinds == [("precondition", "purge", "secure", s) for s in ("failed", "ok")]
    first, second = (d for _, _, d in events.added)
    assert first["error"] == "BLKSECDISCARD ioctl failed" and first["returncode"] == 1
    assert second["seconds"] == 2.5 and second["command"][0] == "blkdiscard"
    assert "purge of" in events.added[0][1] and "purged " in events.added[1][1]
    assert purge.command("secure", DEV)[1:] == ["--verbose", "--secure", DEV]
    assert purge.command("discard", DEV)[1:] == ["--verbose", DEV]
