"""S3 services that misbehave in the middle of a run, made by a relay on loopback in front of
a real versitygw (tests/s3relay.py) or by deleting objects behind a point's back: one that
accepts connections and stops answering while a point's fio runs (fio's http engine sets
no timeout on its requests: storbench's watchdog must bound every point and every
cleanup), and GETs of a mixed point that get 503 or 404 (each an error of the point,
counted, never a success)."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # tests/: the harness modules
from test_s3_runs import Gateway, _fio_of, _gateway

from s3relay import Relay, relay
from waiting import wait_until

pytestmark = pytest.mark.integration

#: How long storbench may take over what these tests ask, s: a hang is for ever, a busy
#: machine is slow. Never a measure of how fast storbench is.
HANG = 600


def _start(plan: Path, db: Path, gw: Gateway, endpoint: str, work: Path) -> subprocess.Popen[str]:
    env = gw.env(AWS_ENDPOINT_URL=endpoint, STORBENCH_S3_TIMEOUT="2", TMPDIR=str(work))
    return subprocess.Popen(
        [sys.executable, "-m", "storbench", "run", str(plan)],
        env={**env, "STORBENCH_DB": str(db)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _finish(proc: subprocess.Popen[str], db: Path) -> tuple[str, str]:
    """What the run printed once it ended (killed, with every fio of it, when it hangs)."""
    try:
        return proc.communicate(timeout=HANG)
    except subprocess.TimeoutExpired:
        proc.kill()
        for pid in _fio_of(db):
            os.kill(pid, signal.SIGKILL)
        out, err = proc.communicate()
        raise AssertionError(f"storbench hung on a silent S3 service:\n{out}\n{err}") from None


def _stall_once_loading(gw: Gateway, r: Relay, shape: str) -> None:
    """Stop the relay once the point's fio has written objects of ``shape`` (b4k, ...)."""
    wait_until(
        f"the point's first {shape} objects",
        lambda: any(f".{shape}." in k for k in gw.objects("bench")),
    )
    r.stall()


def test_s3_service_that_stops_answering_mid_point_fails_it_and_the_run_ends(
    tmp_path: Path,
) -> None:
    """versitygw behind a relay that stops forwarding while the first point PUTs: that point
    fails, saying no request completed and what to set; the next point (its prefill) fails
    the same way; the cleanup's DELETEs are bounded too and their failure reported; the run
    ends, no fio and no temporary file left."""
    work = tmp_path / "tmp"
    work.mkdir()
    plan = tmp_path / "stall.yaml"
    with _gateway(tmp_path) as gw, relay(gw.endpoint) as r:
        plan.write_text(
            f"""\
name: s3-stall
targets:
  - s3: bench
    endpoint: {r.endpoint}
workloads:
  - {{name: put, rw: write, bs: 4k, objects: 16, numjobs: 2, runtime: 3, time_based: 1}}
  - {{name: get, rw: read, bs: 64k, objects: 4}}
"""
        )
        db = tmp_path / "r.db"
        proc = _start(plan, db, gw, r.endpoint, work)
        _stall_once_loading(gw, r, "b4k")
        out, err = _finish(proc, db)
        left = _fio_of(db)
    text = out + err
    assert proc.returncode == 1, text
    assert "Traceback" not in text
    rows = sqlite3.connect(db).execute("SELECT status, error FROM measurements ORDER BY point_idx")
    (put_status, put_error), (get_status, get_error) = rows.fetchall()
    assert put_status == "failed" and get_status == "failed", (put_error, get_error)
    for error in (put_error, get_error):
        assert re.search(r"no S3 request completed for \d+ s", error), error
        assert "STORBENCH_S3_TIMEOUT" in error, error
    assert get_error.startswith("writing the objects it reads"), get_error
    cleanup = text.split("s3-cleanup", 1)[1]
    assert "failed: s3://bench/storbench/" in cleanup and "no S3 request completed" in cleanup
    assert not left, left
    assert list(work.iterdir()) == [], list(work.iterdir())


def test_s3_ctrl_c_while_the_service_stopped_answering_ends_the_run(tmp_path: Path) -> None:
    """Ctrl-C while fio waits on a service that stopped answering: storbench ends (130),
    its fio gone, no temporary file left, no traceback."""
    work = tmp_path / "tmp"
    work.mkdir()
    plan = tmp_path / "stall.yaml"
    with _gateway(tmp_path) as gw, relay(gw.endpoint) as r:
        plan.write_text(
            f"""\
name: s3-stall-int
targets:
  - s3: bench
    endpoint: {r.endpoint}
workloads:
  - {{name: put, rw: write, bs: 4k, objects: 16, runtime: 600, time_based: 1}}
"""
        )
        db = tmp_path / "r.db"
        proc = _start(plan, db, gw, r.endpoint, work)
        _stall_once_loading(gw, r, "b4k")
        proc.send_signal(signal.SIGINT)
        out, err = _finish(proc, db)
        left = _fio_of(db)
    assert proc.returncode == 130, out + err
    assert "Traceback" not in err
    assert not left, left
    assert list(work.iterdir()) == [], list(work.iterdir())


@pytest.mark.parametrize(
    "workload",
    [
        "{name: put, rw: write, bs: 4k, objects: 16, numjobs: 2, runtime: 3, time_based: 1}",
        "{name: put, rw: write, bs: 4k, objects: 4000, numjobs: 2}",  # its size bounds it
    ],
    ids=["timed", "sized"],
)
def test_s3_service_that_stops_answering_a_hosts_point_fails_it_in_bounded_time(
    tmp_path: Path, workload: str
) -> None:
    """The same through fio's client and the ``local`` host's fio server (hosts:), where fio
    shows no progress until the point ends: a point fails once the time its whole load may
    take from its start has passed (its runtime, or its objects' bytes at the slowest rate
    a service may move them); the cleanup is bounded; the run ends, no fio left."""
    work = tmp_path / "tmp"
    work.mkdir()
    plan = tmp_path / "stall.yaml"
    with _gateway(tmp_path) as gw, relay(gw.endpoint) as r:
        plan.write_text(
            f"""\
name: s3-stall-hosts
hosts:
  - address: local
    targets:
      - s3: bench
        endpoint: {r.endpoint}
workloads:
  - {workload}
"""
        )
        db = tmp_path / "r.db"
        proc = _start(plan, db, gw, r.endpoint, work)
        _stall_once_loading(gw, r, "b4k")
        out, err = _finish(proc, db)
        left = _fio_of(db)
    text = out + err
    assert proc.returncode == 1, text
    assert "Traceback" not in text
    ((status, error),) = sqlite3.connect(db).execute("SELECT status, error FROM measurements")
    assert status == "failed" and re.search(r"no S3 request completed for \d+ s", error), error
    assert "no S3 request completed" in text.split("s3-cleanup", 1)[1]
    assert not left, left
    assert list(work.iterdir()) == [], list(work.iterdir())


MIX = "{name: mix, rw: randrw, bs: 4k, objects: 8, numjobs: 2, runtime: 4, time_based: 1}"


def test_s3_mixed_point_whose_gets_get_503_fails_counting_them(tmp_path: Path) -> None:
    """A randrw point while the service answers every GET 503 (the relay answers them,
    PUTs still reach versitygw): the point is failed, its error says how many requests the
    service answered 503 and of what kind; never a success."""
    work = tmp_path / "tmp"
    work.mkdir()
    plan = tmp_path / "mix.yaml"
    with _gateway(tmp_path) as gw, relay(gw.endpoint) as r:
        plan.write_text(
            f"""\
name: s3-mix-503
targets:
  - s3: bench
    endpoint: {r.endpoint}
workloads:
  - {MIX}
"""
        )
        db = tmp_path / "r.db"
        proc = _start(plan, db, gw, r.endpoint, work)
        # the prefill's 16 objects are there: from now on every GET is answered 503
        wait_until("the prefill's objects", lambda: len(gw.objects("bench")) >= 16)
        r.refuse_gets(503)
        out, err = _finish(proc, db)
        refused = r.refused["GET"]
    text = out + err
    assert proc.returncode == 1, text
    ((status, error),) = sqlite3.connect(db).execute("SELECT status, error FROM measurements")
    assert status == "failed", (status, error)
    m = re.search(r"HTTP 503 to ([\d,]+) GETs?", error)
    assert m, error
    assert 0 < int(m.group(1).replace(",", "")) <= refused, (error, refused)
    assert "Service Unavailable" in error


def test_s3_mixed_point_whose_gets_find_no_object_fails_counting_them(tmp_path: Path) -> None:
    """A randrw point's objects deleted behind its back, again and again while it runs:
    fio's http engine reads a 404 as zeroes and counts the GET a success, and fio checks no
    read of a mixed job; storbench's fio says so on stderr, and the point is failed with
    the count of GETs that found no object."""
    work = tmp_path / "tmp"
    work.mkdir()
    plan = tmp_path / "mix.yaml"
    with _gateway(tmp_path) as gw:
        plan.write_text(
            f"""\
name: s3-mix-404
targets:
  - s3: bench
    endpoint: {gw.endpoint}
workloads:
  - {MIX}
"""
        )
        db = tmp_path / "r.db"
        proc = _start(plan, db, gw, gw.endpoint, work)
        wait_until("the prefill's objects", lambda: len(gw.objects("bench")) >= 16)
        while proc.poll() is None:  # the point's own PUTs write them again: delete again
            _delete_objects(gw)
            _settle(proc)
        out, err = _finish(proc, db)
    text = out + err
    if "keeps quiet about a GET that finds no object" in text:  # its preflight said so
        pytest.skip("this machine's fio predates scripts/fio-http-404.patch: run `make setup`")
    assert proc.returncode == 1, text
    ((status, error),) = sqlite3.connect(db).execute("SELECT status, error FROM measurements")
    assert status == "failed", (status, error)
    m = re.search(r"([\d,]+) of ([\d,]+) GETs failed: the object was not there \(HTTP 404", error)
    assert m, error
    failed, total = (int(g.replace(",", "")) for g in m.groups())
    assert 0 < failed <= total


def _delete_objects(gw: Gateway) -> None:
    """Delete the bucket's objects in versitygw's directory (not its own hidden files: a
    PUT in progress there would fail)."""
    for name in gw.objects("bench"):
        if not any(part.startswith(".") for part in Path(name).parts):
            (gw.root / "bench" / name).unlink(missing_ok=True)


def _settle(proc: subprocess.Popen[str]) -> None:
    """A moment between two rounds of deletion (not a measure of anything)."""
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=0.05)
