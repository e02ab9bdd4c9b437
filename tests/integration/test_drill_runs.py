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
