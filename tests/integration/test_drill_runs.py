"""A drill's steps go with storbench: a ``run:`` step still running when storbench is killed
with SIGKILL (nothing of storbench can clean up then) dies with it -- the step and what it
started -- instead of going on under init; and a step's timeout past what a plan may give is
refused before anything runs. Real ``storbench run`` with fio on a scratch file."""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration


def _with(arg: str) -> list[int]:
    """The pids of the processes whose command line holds ``arg``."""
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                cmdline = Path(f"/proc/{name}/cmdline").read_bytes()
            except OSError:
                continue
            if arg.encode() in cmdline:
                found.append(int(name))
    return found


def _wait(predicate, seconds: float) -> bool:  # type: ignore[no-untyped-def]
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.05)
    return bool(predicate())


def test_drill_steps_die_with_storbench_killed(tmp_path: Path) -> None:
    # a duration no other process has; `; true` keeps sh as the parent of sleep (no exec)
    marker = f"61.{secrets.randbelow(10**6):06d}"
    plan = tmp_path / "drill.yaml"
    plan.write_text(
        f"""\
name: drill-kill
targets:
  - file: {tmp_path}/a.dat
workloads:
  - name: load
    rw: randread
    bs: 4k
    size: 4m
    ioengine: psync
    runtime: 60
    time_based: 1
    actions:
      - {{at: 0.2s, run: "sleep {marker}; true", timeout: 120}}
"""
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "storbench", "run", str(plan), "--db", str(tmp_path / "r.db")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        assert _wait(lambda: len(_with(marker)) >= 2, 60), "the step did not start"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        assert _wait(lambda: not _with(marker), 15), f"the step outlived storbench: {_with(marker)}"
    finally:
        for pid in _with(marker):
            os.kill(pid, signal.SIGKILL)
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_drill_step_dies_with_the_process_that_started_it(tmp_path: Path) -> None:
    """Without a run's guard too: the step's own process (here the shell execs sleep) has
    storbench's death as its parent-death signal (a Drill in a process of its own, killed
    by SIGKILL while its step runs; what a step forks goes with the run's guard, above)."""
    marker = f"62.{secrets.randbelow(10**6):06d}"
    code = f"""
import time
from storbench.execute.drills import Drill
from storbench.plan import parse_plan
plan = '''name: d
targets: [{{file: {tmp_path}/a.dat}}]
workloads:
  - name: w
    rw: randread
    bs: 4k
    size: 4m
    runtime: 60
    time_based: 1
    actions: [{{at: 0s, run: "exec sleep {marker}", timeout: 120}}]
'''
(pt,) = parse_plan(plan, "d.yaml").expand()
class Events:
    def add(self, *a): pass
Drill(pt, Events()).start()
time.sleep(120)
"""
    script = tmp_path / "drill.py"  # (not on its command line: only the step has the marker)
    script.write_text(code)
    proc = subprocess.Popen([sys.executable, str(script)], start_new_session=True)
    try:
        assert _wait(lambda: bool(_with(marker)), 60), "the step did not start"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        assert _wait(lambda: not _with(marker), 15), f"the step outlived it: {_with(marker)}"
    finally:
        for pid in _with(marker):
            os.kill(pid, signal.SIGKILL)
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.parametrize("timeout", ["1e20", "8d", ".nan", ".inf"])
def test_drill_step_timeout_past_the_largest_is_a_plan_error(tmp_path: Path, timeout: str) -> None:
    """A step's ``timeout: 1e20`` once killed the drill thread (its wait overflowed) while
    the run went on and exited 0 without the action: now the plan is refused, naming the
    file, the line and the largest timeout a step may have."""
    from storbench.model.errors import PlanError
    from storbench.plan import parse_plan
    from storbench.plan.actionkeys import MAX_TIMEOUT_S

    text = (
        "name: d\ntargets: [{file: /tmp/x.dat}]\nworkloads:\n  - name: w\n    rw: read\n"
        "    bs: 4k\n    size: 4m\n    runtime: 30\n    time_based: 1\n"
        f"    actions: [{{at: 1s, run: sync, timeout: {timeout}}}]\n"
    )
    with pytest.raises(PlanError) as e:
        parse_plan(text, "drill.yaml")
    said = f"{e.value} {e.value.fix}"
    assert e.value.file == "drill.yaml" and e.value.line == 10, said
    assert "timeout" in said and f"{MAX_TIMEOUT_S:g}" in said.replace(",", ""), said
    plan = tmp_path / "drill.yaml"
    plan.write_text(text.replace("/tmp/x.dat", str(tmp_path / "x.dat")))
    r = subprocess.run(
        [sys.executable, "-m", "storbench", "run", str(plan), "--db", str(tmp_path / "r.db")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode != 0 and "Traceback" not in r.stderr and "drill.yaml" in r.stderr
    assert not (tmp_path / "r.db").exists() or "run 1" not in r.stdout


def test_drill_thread_that_fails_fails_its_point_visibly(tmp_path: Path) -> None:
    """Whatever goes wrong inside the drill's thread (here a step's action raising), the
    action is recorded as failed with why, and the point is failed with it -- never a
    thread that dies silently and a point reported as if its drill ran."""
    from storbench.execute.drills import Drill
    from storbench.plan import parse_plan

    text = (
        f"name: d\ntargets: [{{file: {tmp_path}/x.dat}}]\nworkloads:\n  - name: w\n"
        "    rw: read\n    bs: 4k\n    size: 4m\n    runtime: 30\n    time_based: 1\n"
        '    actions: [{at: 0s, run: sync}, {at: 0s, run: "true"}]\n'
    )
    (pt,) = parse_plan(text, "d.yaml").expand()
    items: list[tuple[str, str, dict]] = []

    class Events:
        def add(self, kind: str, message: str, data: dict) -> None:
            items.append((kind, message, data))

    def broken(a, cluster):  # type: ignore[no-untyped-def]
        raise OverflowError("timeout value is too large")

    drill = Drill(pt, Events(), do=broken)
    drill.start()
    assert drill.done.wait(0) is False
    end = time.monotonic() + 30
    while len(items) < 2 and time.monotonic() < end:
        time.sleep(0.02)
    drill.stop()
    assert [d["outcome"] for _, _, d in items] == ["failed", "failed"]
    assert "OverflowError: timeout value is too large" in items[0][1]
    assert drill.error is not None and "OverflowError" in drill.error


def test_drill_that_fails_in_storbench_fails_the_point_of_a_run(tmp_path: Path) -> None:
    """End to end: a real run whose drill step raises inside storbench (patched in) records
    the point as failed, says why, and exits non-zero."""
    plan = tmp_path / "drill.yaml"
    plan.write_text(
        f"name: d\ntargets: [{{file: {tmp_path}/x.dat}}]\nworkloads:\n  - name: w\n"
        "    rw: read\n    bs: 4k\n    size: 4m\n    runtime: 2\n    time_based: 1\n"
        "    actions: [{at: 0.2s, run: sync}]\n"
    )
    db = tmp_path / "r.db"
    code = (
        "import sys\nimport storbench.execute.drills as d\n"
        "def boom(argv, timeout):\n    raise OverflowError('timeout value is too large')\n"
        "d._exec = boom\nfrom storbench.cli import main\n"
        f"sys.argv = ['storbench', 'run', {str(plan)!r}, '--db', {str(db)!r}]\nmain()\n"
    )
    r = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert r.returncode != 0 and "Traceback" not in r.stderr, r.stdout + r.stderr
    out = subprocess.run(
        [sys.executable, "-m", "storbench", "export", "1", "--format", "json", "--db", str(db)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    import json

    doc = json.loads(out.stdout)
    (m,) = doc["measurements"]
    assert m["status"] == "failed" and "the failure drill failed" in m["error"], m
    assert "OverflowError" in m["error"]
    (action,) = [e for e in doc["events"] if e["kind"] == "action"]
    assert "failed" in action["message"] and "OverflowError" in action["message"]
