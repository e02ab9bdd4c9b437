"""Several processes writing into one PostgreSQL results database at once (a team's shared
database): two runs recording side by side lose nothing and get distinct ids; of two
processes claiming one run at the same moment (two `storbench resume`), exactly one gets it.

The processes start together on a file appearing (no sleeps); each then does its whole work
as fast as it can, so that their transactions interleave."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from storbench.store import Store

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the harness modules
import pgserver

TESTS = Path(__file__).resolve().parents[1]
POINTS = 40

WRITER = f"""
import os, sys, time
sys.path.insert(0, {str(TESTS)!r})
from stored_runs import recorded
from storbench.plan import Point, Target
from storbench.model.series import Interval
from storbench.store import Store

url, go = sys.argv[1], sys.argv[2]
store = Store(url)
while not os.path.exists(go):
    time.sleep(0.01)
meas = recorded("psync-randread-json")
points = [Point(i, f"k{{i}}", 0, Target("file", "/x"), "w", {{}}, {{}}) for i in range({POINTS})]
run_id = store.runs.create(kind="run", name=str(os.getpid()), source="t", plan_text=None,
    overrides=[], inventory={{}}, fio_version=None, storbench_version="0", argv=[],
    points=points)
for p in points:
    store.series.add(run_id, p.index, [Interval(s, s * 1000, 1000, "read", 1, 4096)
                                   for s in range(5)])
    store.measurements.record(run_id, p, meas, engine="fio", command=None, job_file=None,
                              raw_output="out", stderr=None, started_at=time.time(),
                              ended_at=time.time())
    store.events.add(run_id, "note", f"point {{p.index}}")
store.runs.set_status(run_id, "completed")
print(run_id)
"""

CLAIMER = """
import os, sys, time
from storbench.model.errors import UserError
from storbench.store import Store

url, go, run = sys.argv[1], sys.argv[2], int(sys.argv[3])
store = Store(url)
while not os.path.exists(go):
    time.sleep(0.01)
try:
    store.runs.claim(run)
    print("claimed", flush=True)
except UserError as e:
    print("busy" if "executing right now" in str(e) else f"other: {e}", flush=True)
sys.stdin.read()  # executing the run (alive) until the test lets go
"""

#: the session's PostgreSQL server and a database of each test's own on it
pg_server = pgserver.pg_server
pg_url = pgserver.pg_url


def _start(code: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", code, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_postgres_two_runs_recording_at_once_lose_nothing(pg_url: str, tmp_path: Path) -> None:
    go = tmp_path / "go"
    procs = [_start(WRITER, pg_url, str(go)) for _ in range(2)]
    go.touch()
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [err for _, err in outs]
    ids = sorted(int(out) for out, _ in outs)
    assert len(set(ids)) == 2
    store = Store(pg_url, write=False)
    for run_id in ids:
        run = store.runs.get(run_id)
        assert (run.status, run.points, run.measured, run.failed) == ("completed", 40, 40, 0)
        assert len(store.events.of_run(run_id)) == POINTS
        assert store.series.counts(run_id) == dict.fromkeys(range(POINTS), 5)
        assert all(
            store.measurements.raw(m.id)["raw_output"] == "out"
            for m in store.measurements.of_run(run_id)
        )
    store.close()


def _interrupted_run(location: str) -> int:
    """A new run without points, left interrupted (one that `resume` may claim)."""
    store = Store(location)
    run_id = store.runs.create(
        kind="run", name="r", source="t", plan_text=None, overrides=[], inventory={},
        fio_version=None, storbench_version="0", argv=[], points=[],
    )  # fmt: skip
    store.runs.set_status(run_id, "interrupted")
    store.close()
    return run_id


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_postgres_one_of_two_claims_at_once_wins(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    if backend == "sqlite":
        location = str(tmp_path / "r.db")
    else:
        location = str(request.getfixturevalue("pg_url"))
    run_id = _interrupted_run(location)
    go = tmp_path / "go"
    procs = [_start(CLAIMER, location, str(go), str(run_id)) for _ in range(2)]
    try:
        go.touch()
        said = sorted(p.stdout.readline().strip() for p in procs if p.stdout)
        assert said == ["busy", "claimed"], [p.stderr.read() for p in procs if p.stderr]
    finally:
        for p in procs:
            p.communicate(input="", timeout=60)


def test_postgres_a_claim_waits_for_the_claim_in_progress(pg_url: str) -> None:
    """The race made certain: process A has locked the run's row to claim it (the point in
    store.runs.claim right after ``FOR UPDATE``) when process B claims it; B must wait for A's
    transaction (seen waiting on a lock in pg_stat_activity) and then read A's claim and
    refuse. Without the row lock B would read the run as interrupted, wait only at its
    UPDATE, and overwrite A's claim once A commits: two processes executing one run."""
    from storbench.model.errors import UserError
    from storbench.store.pg import connect

    run_id = _interrupted_run(pg_url)
    a, watch = connect(pg_url, 30), connect(pg_url, 30)
    b = Store(pg_url)
    outcome: list[BaseException | str] = []
    try:
        a.execute("BEGIN")
        a.execute("SELECT id FROM runs WHERE id=? FOR UPDATE", (run_id,))
        thread = threading.Thread(target=_claim, args=(b, run_id, outcome), daemon=True)
        thread.start()
        for _ in range(600):  # until B waits on A's lock (at most 60 s)
            waiting = watch.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname=current_database()"
                " AND wait_event_type='Lock' AND application_name='storbench'"
            ).fetchone()
            if (waiting is not None and waiting[0] >= 1) or not thread.is_alive():
                break
            time.sleep(0.1)
        assert thread.is_alive(), f"B did not wait for A's lock: {outcome}"
        a.execute(
            "UPDATE runs SET status='running', hostname='other-host', pid=4242, proc_id=NULL,"
            " heartbeat=? WHERE id=?",
            (time.time(), run_id),
        )  # A's claim, from another host: alive while its heartbeat is fresh
        a.execute("COMMIT")
        thread.join(60)
        assert len(outcome) == 1 and isinstance(outcome[0], UserError), outcome
        assert "pid 4242 on host other-host" in str(outcome[0])
    finally:
        for conn in (a, watch):
            conn.close()
        b.close()


def _claim(store: Store, run_id: int, outcome: list[BaseException | str]) -> None:
    try:
        store.runs.claim(run_id)
        outcome.append("claimed")
    except Exception as e:  # the test reads what happened
        outcome.append(e)
