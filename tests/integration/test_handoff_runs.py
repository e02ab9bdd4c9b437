"""The next point's fio started while the point before runs and let go the moment that one
exits (execute/handoff.py): each point still runs its own job, nothing started ahead
outlives a stop (fail-fast, Ctrl-C, SIGKILL), and a run that decides its next point as
it goes never starts one ahead. Real storbench, real fio, real files."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from storbench import engines
from storbench.engines.base import RunContext
from storbench.hosts import procguard
from storbench.model.metrics import DIRECTIONS
from storbench.plan import Point, Target
from storbench.store import Store

pytestmark = pytest.mark.integration

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from processes import marked  # noqa: E402
from throttled import recorded  # noqa: E402
from waiting import sigint_when, wait_until  # noqa: E402

PLAN = """\
name: handoff
targets: [{{file: {target}}}]
global: {{runtime: {runtime}, time_based: 1, ioengine: libaio, direct: 1, iodepth: 2, size: 16m}}
workloads:
  - {{name: w, rw: [randread, randwrite], bs: [4k, 8k]}}
"""


def _sb(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "storbench", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "STORBENCH_DB": str(db)},
    )


def _start(db: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "storbench", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "STORBENCH_DB": str(db)},
    )


def _plan(tmp_path: Path, runtime: int = 1) -> Path:
    plan = tmp_path / "h.yaml"
    plan.write_text(PLAN.format(target=tmp_path / "scratch.dat", runtime=runtime))
    return plan


def _gates(token: str) -> list[int]:
    """The run's processes waiting at their gate (engines/process.py start_gated)."""
    found = []
    for pid in marked(token):
        try:
            if b"storbench-gate" in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.append(pid)
        except OSError:  # gone
            continue
    return found


def _token(db: Path) -> str:
    run = Store(str(db), write=False).runs.get(1)
    assert run is not None and run.token
    return run.token


def _each_ran_its_own_job(db: Path) -> list[bool]:
    """Whether each recorded point (in the order they ran) was handed off; each one's job
    file and what fio measured are its own point's: the direction its rw names only, I/Os
    of its block size."""
    store = Store(str(db), write=False)
    rows = sorted(store.measurements.of_run(1), key=lambda m: m.started_at or 0)
    jobs = dict(store.db.execute("SELECT point_idx, job_file FROM measurements").fetchall())
    handed = []
    for before, m in zip([None, *rows], rows, strict=False):
        assert m.status == "ok" and m.point is not None, (m.status, m.error)
        params = m.point.params
        assert (
            f"rw={params['rw']}" in jobs[m.point_idx] and f"bs={params['bs']}" in jobs[m.point_idx]
        )
        did = [d for d in DIRECTIONS if m.measurement.direction(d)]
        assert did == (["read"] if params["rw"] == "randread" else ["write"]), did
        io = m.measurement.direction(did[0])
        assert io is not None and io.io_bytes == io.total_ios * int(params["bs"][:-1]) * 1024
        if before is not None:  # one after the other: the next began once the one before ended
            assert before.ended_at is not None and m.started_at is not None
            assert m.started_at >= before.ended_at
        handed.append(bool(m.measurement.extra.get("handed_off")))
    return handed


def test_handoff_each_point_runs_its_own_job_started_as_the_one_before_ended(
    tmp_path: Path,
) -> None:
    db = tmp_path / "r.db"
    r = _sb(db, "run", str(_plan(tmp_path)))
    assert r.returncode == 0, r.stdout + r.stderr
    assert _each_ran_its_own_job(db) == [False, True, True, True]
    assert marked(_token(db)) == []


def test_handoff_ctrl_c_leaves_nothing_running_and_resume_runs_the_rest(tmp_path: Path) -> None:
    """Ctrl-C while the second point runs (the third's fio waiting at its gate): the run
    stops with nothing of it left running; `resume` runs the points it did not record."""
    db = tmp_path / "r.db"
    proc = _start(db, "run", str(_plan(tmp_path, runtime=3)))
    token = ""

    def waiting() -> bool:  # the second point recorded, the third's fio at its gate
        nonlocal token
        token = _token(db) if recorded(db) >= 1 else ""
        return bool(token and _gates(token))

    out = sigint_when(proc, "the third point's fio waiting at its gate", waiting)
    assert proc.returncode == 130, out
    assert recorded(db) < 4, out
    wait_until("nothing of the run left running", lambda: marked(token) == [], timeout=30)
    r = _sb(db, "resume", "latest")
    assert r.returncode == 0, r.stdout + r.stderr
    assert len(_each_ran_its_own_job(db)) == 4
    assert marked(token) == []


def test_handoff_sigkill_leaves_no_fio_waiting_at_its_gate(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    proc = _start(db, "run", str(_plan(tmp_path, runtime=5)))
    try:
        wait_until("the first point recorded", lambda: recorded(db) >= 1, timeout=120)
        token = _token(db)
        wait_until("the next point's fio waiting at its gate", lambda: _gates(token))
        proc.kill()
        proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    wait_until("nothing of the run left running", lambda: marked(token) == [], timeout=30)


def test_handoff_a_run_that_decides_its_next_point_never_starts_one_ahead(
    tmp_path: Path,
) -> None:
    """A sweep that stops at its knee decides each next point from the one before."""
    plan = _plan(tmp_path)
    plan.write_text(
        plan.read_text().replace(
            "rw: [randread, randwrite], bs: [4k, 8k]",
            "rw: randread, bs: 4k, iodepth: [1, 2, 4], stop_at: knee",
        )
    )
    db = tmp_path / "r.db"
    r = _sb(db, "run", str(plan))
    assert r.returncode == 0, r.stdout + r.stderr
    store = Store(str(db), write=False)
    extras = [m.measurement.extra for m in store.measurements.of_run(1) if m.status == "ok"]
    assert extras and not any(e.get("handed_off") for e in extras), extras


class _NoEvents:
    def add(self, kind: str, message: str, data: dict[str, Any]) -> None:
        pass

    def of(self, kind: str) -> list[dict[str, Any]]:
        return []

    def recorded(self) -> set[int]:
        return set()


def _params(size: str) -> dict[str, Any]:
    return {"rw": "randread", "bs": "4k", "size": size, "runtime": 30, "time_based": 1}


def test_handoff_a_released_fio_whose_point_does_not_run_is_withdrawn(tmp_path: Path) -> None:
    """The engine's session alone: the point before ends with status 0 yet fails (it did no
    I/O: ``size: 200%`` of a file it may not extend, which plan check refuses), so the next
    point's fio was let go; a runner failing fast does not run it: withdrawn, it is gone."""
    theirs, ours = tmp_path / "theirs.dat", tmp_path / "ours.dat"
    theirs.write_bytes(b"x" * (1 << 20))
    ours.write_bytes(b"y" * (4 << 20))
    work = tmp_path / "work"
    work.mkdir()
    token = f"handoff-test-{os.getpid()}"
    before = Point(0, "k0", 0, Target("file", str(theirs)), "r", _params("200%"), {})
    nxt = Point(1, "k1", 0, Target("file", str(ours)), "r", _params("4m"), {})
    ctx = RunContext(run_id=1, workdir=str(work), total=2, events=_NoEvents(), token=token)
    with procguard.running(token):
        session = engines.get("fio").open(ctx, [before, nxt])
        try:
            assert session.prepare(nxt, after=before, ready=lambda: True)
            wait_until("its shell waiting at the gate", lambda: _gates(token))
            result = session.run(before)
            assert result.measurement is not None and result.measurement.status == "failed"
            assert "did no I/O" in (result.measurement.error or "")
            assert session.next is not None and session.next.gated.released_at  # let go
            wait_until("the next point's fio running", lambda: len(marked(token)) >= 1)
        finally:
            session.withdraw()
            session.close()
    assert session.next is None
    wait_until("the withdrawn fio gone", lambda: marked(token) == [], timeout=30)
