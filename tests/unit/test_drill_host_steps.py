"""A drill's ``run`` step on a host of ``hosts:`` (``host: NAME``) and the host's ``shell:``:
what the plan refuses and where, what a step runs, what it keeps with the run, and the
step's event from real commands (the host's shell here: a wrapper on this machine; ssh
itself in tests/integration/test_drill_hosts.py)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from storbench.execute.drills import Drill
from storbench.model.errors import PlanError
from storbench.plan import parse_plan
from storbench.plan.actionkeys import SSH, Action

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the harness modules
from waiting import wait_until

HOSTS = """\
hosts:
  - address: 192.0.2.10
    name: vm01
  - address: 192.0.2.11{shell}
"""


def _plan(actions: str, shell: str = "", hosts: str | None = None) -> str:
    hosts = HOSTS.format(shell=f"\n    shell: {shell}" if shell else "") if hosts is None else hosts
    return (
        f"name: d\ntargets: [{{directory: /tmp}}]\n{hosts}workloads:\n  - name: w\n"
        f"    rw: randread\n    bs: 4k\n    size: 4m\n    runtime: 30\n    time_based: 1\n"
        f"    actions: {actions}\n"
    )


RUN = "[{at: 5s, run: sync, host: vm01}]"
VM1 = "[{at: 5s, run: sync, host: vm1}]"


@pytest.mark.parametrize(
    ("text", "words", "line"),
    [
        (_plan(VM1), "`host` 'vm1' is not a host of the plan (hosts: vm01, 192.0.2.11:8765)", 14),
        (_plan(VM1), 'did you mean "vm01"', 14),
        (_plan(RUN, hosts=""), "(hosts: none: the plan has no `hosts:`)", 10),
        (_plan("[{at: 5s, osd_set: noout, host: vm01}]"), "`host` goes with a `run` step", 14),
        (_plan("[{at: 5s, run: sync, host: [vm01]}]"), "`host` takes the name of a host", 14),
        (_plan('[{at: 5s, run: sync, host: "vm\\x01"}]'), "`host` holds a control character", 14),
        (_plan("[{at: 5s, run: sync, hots: vm01}]"), 'did you mean "host"', 14),
        (_plan(RUN, shell="{ssh: 1}"), "prefix (text or a list of words), not a mapping", 7),
        (_plan(RUN, shell="[]"), "not an empty one", 7),
        (_plan(RUN, shell="[ssh, true]"), "a word of it is True", 7),
        (_plan(RUN, shell='"ssh \'vm01"'), "`shell` cannot be split into words", 7),
        (_plan(RUN, shell='"ssh\\tvm01"'), "`shell` holds a control character (a tab)", 7),
        (_plan(RUN, shell='[ssh, "vm\\n01"]'), "`shell` holds a control character (a newline)", 7),
    ],
)
def test_host_steps_refused_name_the_key_the_line_and_the_hosts(
    text: str, words: str, line: int
) -> None:
    with pytest.raises(PlanError) as e:
        parse_plan(text, "drill.yaml")
    assert words in str(e.value) + (e.value.fix or "")
    assert e.value.line == line and e.value.file == "drill.yaml"


def test_host_steps_take_their_hosts_shell_and_keep_it_with_the_run() -> None:
    actions = (
        "[{at: 5s, run: 'systemctl restart ceph-osd@1', host: vm01},"
        " {at: 6s, run: 'echo a b', host: '192.0.2.11:8765'}, {at: 7s, run: sync}]"
    )
    (pt,) = parse_plan(_plan(actions, shell="[pct, exec, 101, --, sh, -c]"), "d.yaml").expand()
    ssh, pct, here = pt.actions
    assert ssh.argv() == [*SSH, "192.0.2.10", "systemctl restart ceph-osd@1"]
    assert pct.argv() == ["pct", "exec", "101", "--", "sh", "-c", "echo a b"]
    assert here.argv() == ["sh", "-c", "sync"] and here.host == "" and here.shell == ()
    assert ssh.label() == "run on vm01 `systemctl restart ceph-osd@1`"
    assert type(pt).from_dict(pt.to_dict()).actions == pt.actions  # resume reads them back
    old = {"at_s": 7.0, "step": "run", "arg": "sync", "timeout_s": 300.0}  # stored before hosts
    assert Action.from_dict(old) == here and "host" not in here.to_dict()
    # a shell given as text is split like a shell's words; numbers in a list are words
    for shell, words in [
        ("\"ssh -p 2222 'root@vm 2'\"", ["ssh", "-p", "2222", "root@vm 2"]),
        ("[ssh, -p, 2222, root@vm2]", ["ssh", "-p", "2222", "root@vm2"]),
    ]:
        text = _plan("[{at: 5s, run: x, host: '192.0.2.11:8765'}]", shell=shell)
        (pt,) = parse_plan(text, "d.yaml").expand()
        assert pt.actions[0].argv() == [*words, "x"]


def test_plan_show_says_where_a_step_runs_and_what_runs_it(tmp_path: Path) -> None:
    plan = tmp_path / "d.yaml"
    plan.write_text(_plan("[{at: 5s, run: 'touch /tmp/x', host: vm01}]"))
    r = subprocess.run(
        [sys.executable, "-m", "storbench", "plan", "show", str(plan)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    want = "action at 5 s: run on vm01 `touch /tmp/x` (runs ssh -o BatchMode=yes"
    assert want in r.stdout and "192.0.2.10 'touch /tmp/x')" in r.stdout


class _Events:
    def __init__(self) -> None:
        self.items: list[tuple[str, str, dict[str, Any]]] = []

    def add(self, kind: str, message: str, data: dict[str, Any]) -> None:
        self.items.append((kind, message, data))


def test_host_steps_run_through_the_shell_and_their_events_say_where_and_how(
    tmp_path: Path,
) -> None:
    """The host's shell is a wrapper here (``env`` then ``sh -c``): the command reaches it
    as one argument, no local shell in between; a failing command is a failed step with its
    exit status; one that outlives its timeout is killed with everything it started."""
    mark = tmp_path / "ran"
    actions = (
        f"[{{at: 0.1s, run: 'echo \"$WHERE\" > {mark}', host: '192.0.2.11:8765'}},"
        " {at: 0.2s, run: 'echo no >&2; exit 3', host: '192.0.2.11:8765'},"
        " {at: 0.3s, run: 'sleep 60 & sleep 60', host: '192.0.2.11:8765', timeout: 1}]"
    )
    (pt,) = parse_plan(_plan(actions, shell="[env, WHERE=on-host, sh, -c]"), "d.yaml").expand()
    events = _Events()
    drill = Drill(pt, events)
    t0 = time.monotonic()
    drill.start()
    # the load ends once the third step has begun (not after a fixed time: a busy machine
    # begins it late, and a step not begun when the load ends is skipped)
    wait_until("the third step to begin", lambda: drill.next == 3)
    drill.stop()
    assert time.monotonic() - t0 < 10 + 0.3 + 30  # the timeout held, though `sleep 60 &`
    # kept the pipe (30 s: the slack of a busy machine, far below sleep's 60)
    assert mark.read_text() == "on-host\n"
    (_, m1, ok), (_, m2, bad), (_, m3, slow) = events.items
    assert ok["outcome"] == "done" and ok["exit_status"] == 0 and ok["host"] == "192.0.2.11:8765"
    assert ok["shell"] == ["env", "WHERE=on-host", "sh", "-c"]
    assert m1.startswith("point 1: run on 192.0.2.11:8765 `echo")
    assert bad["outcome"] == "failed" and bad["exit_status"] == 3
    assert bad["output"] == "exit status 3: no" and m2.endswith("(exit status 3: no)")
    assert slow["outcome"] == "failed" and "exit_status" not in slow
    assert "did not end within 1 s" in m3
