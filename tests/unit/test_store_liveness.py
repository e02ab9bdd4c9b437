"""Which process executes a run, and whether it still lives (schema 3: token, process
identity, heartbeat): a live run is never claimed by a second process; a dead one, or a pid
reused by another program, is."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from storbench.model.errors import UserError
from storbench.store import Store, liveness


def _run(store: Store) -> int:
    return store.runs.create(
        kind="run",
        name="r",
        source="test",
        plan_text=None,
        overrides=[],
        inventory={},
        fio_version=None,
        storbench_version="0",
        argv=[],
        points=[],
    )


def _set(store: Store, run_id: int, **cols: object) -> None:
    with store.conn.tx():
        for k, v in cols.items():
            store.db.execute(f"UPDATE runs SET {k}=? WHERE id=?", (v, run_id))


def test_liveness_identity_is_this_process_and_changes_with_the_process() -> None:
    me = liveness.process_identity()
    assert me is not None and me == liveness.process_identity(os.getpid())
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        other = liveness.process_identity(child.pid)
        assert other is not None and other != me
        assert other.split(":")[0] == me.split(":")[0]  # the same boot
    finally:
        child.kill()
        child.wait()
    assert liveness.process_identity(child.pid) is None


def test_liveness_of_a_new_run_is_its_creator(tmp_path: Path) -> None:
    store = Store(str(tmp_path / "r.db"))
    run_id = _run(store)
    r = store.runs.get(run_id)
    assert r.token and len(r.token) == 32
    assert (r.pid, r.hostname, r.proc_id) == (
        os.getpid(),
        liveness.hostname(),
        liveness.process_identity(),
    )
    assert r.live and r.effective_status == "running"
    assert [x.id for x in store.runs.live()] == [run_id]
    store.runs.set_status(run_id, "interrupted")
    assert not store.runs.get(run_id).live and store.runs.live() == []


def test_liveness_a_dead_or_reused_pid_is_not_the_run(tmp_path: Path) -> None:
    store = Store(str(tmp_path / "r.db"))
    run_id = _run(store)
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    _set(store, run_id, pid=child.pid, proc_id="x:1")
    assert not store.runs.get(run_id).live
    assert store.runs.get(run_id).effective_status == "aborted"
    # a live pid whose process started at another time: the pid was reused
    _set(store, run_id, pid=os.getpid(), proc_id=liveness.process_identity() + "0")
    assert not store.runs.get(run_id).live


def test_liveness_another_hosts_run_lives_by_its_heartbeat(tmp_path: Path) -> None:
    store = Store(str(tmp_path / "r.db"))
    run_id = _run(store)
    _set(store, run_id, hostname="elsewhere", pid=1, heartbeat=time.time() - 5)
    assert store.runs.get(run_id).live
    _set(store, run_id, heartbeat=time.time() - liveness.HEARTBEAT_STALE - 1)
    assert not store.runs.get(run_id).live


def test_liveness_claim_refuses_a_live_run_and_takes_a_dead_one(tmp_path: Path) -> None:
    store = Store(str(tmp_path / "r.db"))
    run_id = _run(store)
    _set(store, run_id, hostname="elsewhere", pid=4242, heartbeat=time.time())
    with pytest.raises(UserError, match=r"is executing right now.*pid 4242 on host elsewhere"):
        store.runs.claim(run_id)
    _set(store, run_id, heartbeat=time.time() - 3600, status="running")
    r = store.runs.claim(run_id)
    assert (r.hostname, r.pid, r.status) == (liveness.hostname(), os.getpid(), "running")
    assert r.live
    store.runs.beat(run_id)
    assert time.time() - (store.runs.get(run_id).heartbeat or 0) < 5


def test_liveness_a_point_is_never_recorded_twice(tmp_path: Path) -> None:
    from storbench.model.metrics import Measurement
    from storbench.plan import Point, Target

    store = Store(str(tmp_path / "r.db"))
    point = Point(0, "k", 0, Target("file", "/x"), "w", {}, {})
    run_id = store.runs.create(
        kind="run",
        name="r",
        source="t",
        plan_text=None,
        overrides=[],
        inventory={},
        fio_version=None,
        storbench_version="0",
        argv=[],
        points=[point],
    )
    kw = dict(
        engine="fio",
        command=None,
        job_file=None,
        raw_output=None,
        stderr=None,
        started_at=None,
        ended_at=None,
    )
    store.measurements.record(run_id, point, Measurement(), **kw)  # type: ignore[arg-type]
    with pytest.raises(UserError, match="recorded already"):
        store.measurements.record(run_id, point, Measurement(), **kw)  # type: ignore[arg-type]
