"""Issue 17, data and processes: a file storbench did not create is never written, no fio
process outlives a killed storbench, a run executing now is never resumed beside itself, and
two runs never measure one target at once. Real storbench, real fio, real files."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from processes import marked  # noqa: E402

PRECIOUS = b"PRECIOUS" * 131072  # 1 MiB


def sb(
    *args: str, db: Path, cwd: Path, env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "storbench", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
        env={**os.environ, "STORBENCH_DB": str(db), **(env or {})},
    )


def start(*args: str, db: Path, cwd: Path, env: dict[str, str] | None = None) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "storbench", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=cwd,
        env={**os.environ, "STORBENCH_DB": str(db), **(env or {})},
    )


def q(db: Path, sql: str) -> list[tuple[object, ...]]:
    con = sqlite3.connect(db)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def has_runs(db: Path, n: int) -> bool:
    """Whether ``db`` holds ``n`` runs; False while the starting run is still creating it
    (the file exists a moment before its tables do)."""
    try:
        return db.exists() and q(db, "SELECT COUNT(*) FROM runs") == [(n,)]
    except sqlite3.OperationalError:
        return False


def fio_processes(marker: str) -> list[int]:
    """Live (not zombie) fio processes whose command line mentions ``marker``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmd = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if "fio" in cmd and marker in cmd and state != "Z":
            found.append(int(entry))
    return found


def _session(pid: int) -> int | None:
    """The session of process ``pid`` (None when it is gone)."""
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[3])
    except (OSError, IndexError, ValueError):
        return None


def wait_until(what: object, timeout: float = 30.0) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if what():  # type: ignore[operator]
            return
        time.sleep(0.05)
    raise AssertionError(f"not within {timeout} s")


LONG = """\
name: long
targets:
  - file: {target}
workloads:
  - name: w
    rw: randread
    bs: 4k
    size: 4m
    time_based: 1
    runtime: {runtime}
    iodepth: [1, 2]
"""


# ------------------------------------------------------------------ files it did not create


def test_safety_read_run_never_lays_out_a_foreign_file_again(tmp_path: Path) -> None:
    """The issue's reproduction: read-only, `size` above the file's own size."""
    important = tmp_path / "important.txt"
    important.write_bytes(PRECIOUS)
    db = tmp_path / "r.db"
    r = sb(
        "run", "quick", "--target", str(important),
        "--set", "rw=read", "--set", "size=8m", "--set", "runtime=1",
        db=db, cwd=tmp_path,
    )  # fmt: skip
    assert r.returncode == 2, r.stdout + r.stderr
    assert "Traceback" not in r.stderr
    assert "important.txt" in r.stderr and "size" in r.stderr
    assert important.read_bytes() == PRECIOUS
    assert not db.exists() or q(db, "SELECT COUNT(*) FROM runs") == [(0,)]


def test_safety_read_run_within_a_foreign_file_reads_it_and_leaves_it(tmp_path: Path) -> None:
    important = tmp_path / "important.txt"
    important.write_bytes(PRECIOUS)
    db = tmp_path / "r.db"
    r = sb(
        "run", "quick", "--target", str(important),
        "--set", "rw=read", "--set", "size=1m", "--set", "runtime=1", "--set", "iodepth=1",
        db=db, cwd=tmp_path,
    )  # fmt: skip
    assert r.returncode == 0, r.stdout + r.stderr
    assert important.read_bytes() == PRECIOUS
    # fio itself is told that nothing may be written (its --readonly safety net)
    commands = [json.loads(str(c)) for (c,) in q(db, "SELECT command FROM measurements")]
    assert commands and all("--readonly" in c for c in commands)


def test_safety_device_target_must_be_a_block_device(tmp_path: Path) -> None:
    empty = tmp_path / "not-a-device"
    empty.write_bytes(b"")
    plan = tmp_path / "p.yaml"
    plan.write_text(
        f"targets:\n  - device: {empty}\nworkloads:\n  - name: r\n    rw: read\n"
        "    bs: 4k\n    size: 64m\n    runtime: 1\n"
    )
    r = sb("run", str(plan), db=tmp_path / "r.db", cwd=tmp_path)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "block device" in r.stderr and "Traceback" not in r.stderr
    assert empty.stat().st_size == 0


# ------------------------------------------------------------------ processes


def test_orphans_sigkill_of_storbench_leaves_no_fio_running(tmp_path: Path) -> None:
    """fio's job processes leave its session: they used to run on under init."""
    work = tmp_path / "tmp"
    work.mkdir()
    db = tmp_path / "r.db"
    plan = tmp_path / "p.yaml"
    plan.write_text(LONG.format(target=tmp_path / "s.dat", runtime=120))
    proc = start("run", str(plan), db=db, cwd=tmp_path, env={"TMPDIR": str(work)})
    # fio main and its job process are up, the job process in a session of its own (what
    # made it outlive storbench before the guard)
    wait_until(lambda: len({_session(p) for p in fio_processes(str(work))} - {None}) >= 2)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    wait_until(lambda: not fio_processes(str(work)), timeout=60)  # the point: 120 s

    # the next resume removes the leftovers: the work directory at its start, the scratch
    # file at its end (here cut short with Ctrl-C: the points left run for minutes)
    leftover = next(work.iterdir())
    assert (tmp_path / "s.dat").exists()
    resumed = start("resume", "latest", db=db, cwd=tmp_path, env={"TMPDIR": str(work)})
    wait_until(lambda: not leftover.exists() and len(fio_processes(str(work))) >= 2)
    resumed.send_signal(signal.SIGINT)
    out, err = resumed.communicate(timeout=60)
    assert resumed.returncode == 130, out + err
    assert f"removed the work directory {leftover}" in out
    assert not (tmp_path / "s.dat").exists()
    assert list(work.iterdir()) == []
    assert not fio_processes(str(work))


def test_orphans_cleanup_removes_what_a_killed_run_left(tmp_path: Path) -> None:
    work = tmp_path / "tmp"
    work.mkdir()
    db = tmp_path / "r.db"
    plan = tmp_path / "p.yaml"
    plan.write_text(LONG.format(target=tmp_path / "s.dat", runtime=120))
    proc = start("run", str(plan), db=db, cwd=tmp_path, env={"TMPDIR": str(work)})
    wait_until(lambda: len(fio_processes(str(work))) >= 2)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    r = sb("cleanup", "latest", db=db, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert not (tmp_path / "s.dat").exists()
    assert list(work.iterdir()) == []
    assert not fio_processes(str(work))


# ------------------------------------------------------------------ one run at a time


def test_resume_refuses_a_run_that_is_executing(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    plan = tmp_path / "p.yaml"
    plan.write_text(LONG.format(target=tmp_path / "s.dat", runtime=4))
    proc = start("run", str(plan), db=db, cwd=tmp_path)
    try:
        wait_until(lambda: has_runs(db, 1))
        r = sb("resume", "latest", db=db, cwd=tmp_path)
        assert r.returncode == 2, r.stdout + r.stderr
        assert "is executing right now" in r.stderr and "Traceback" not in r.stderr
        c = sb("cleanup", "latest", db=db, cwd=tmp_path)
        assert c.returncode == 2 and "is executing right now" in c.stderr
    finally:
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, out + err
    assert q(db, "SELECT COUNT(*), COUNT(DISTINCT point_idx) FROM measurements") == [(2, 2)]


def test_concurrent_second_run_on_the_same_target_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    other_db = tmp_path / "other.db"
    target = tmp_path / "s.dat"
    plan = tmp_path / "p.yaml"
    plan.write_text(LONG.format(target=target, runtime=4))
    proc = start("run", str(plan), db=db, cwd=tmp_path)
    try:
        wait_until(lambda: has_runs(db, 1))
        # the same database, and another one: the target's own lock tells either
        for where in (db, other_db):
            r = sb("run", str(plan), db=where, cwd=tmp_path)
            assert r.returncode == 2, r.stdout + r.stderr
            assert "another storbench run" in r.stderr and "Traceback" not in r.stderr
    finally:
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, out + err
    assert q(db, "SELECT COUNT(*) FROM runs") == [(1,)]


def test_orphans_sigkill_stops_the_local_hosts_fio_server_and_its_jobs(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    plan = tmp_path / "p.yaml"
    plan.write_text(
        "hosts:\n  - address: local\n"
        + LONG.format(target=tmp_path / "s.dat", runtime=120).replace("name: long\n", "")
    )
    proc = start("run", str(plan), db=db, cwd=tmp_path)
    wait_until(lambda: has_runs(db, 1))
    ((token,),) = q(db, "SELECT token FROM runs")
    # the server, its connection process and the job process (which leaves the session)
    wait_until(lambda: len(marked(str(token))) >= 3)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    wait_until(lambda: not marked(str(token)), timeout=60)  # the point: 120 s


def test_safety_scratch_file_reaches_offset_plus_size(tmp_path: Path) -> None:
    """Found by the fuzz test: a write at `offset` past the laid-out size made fio unlink
    and recreate the scratch file, which then lost storbench's mark and stayed behind."""
    db = tmp_path / "r.db"
    plan = tmp_path / "p.yaml"
    plan.write_text(
        f"targets:\n  - file: {tmp_path}/new.dat\nworkloads:\n  - name: w\n    rw: write\n"
        "    bs: 4k\n    size: 64k\n    offset: 512k\n    numjobs: 2\n"
        "    offset_increment: 128k\n"
    )
    r = sb("run", str(plan), db=db, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert not (tmp_path / "new.dat").exists()


def test_safety_scratch_file_shrunk_by_a_point_is_laid_out_again(tmp_path: Path) -> None:
    """Found by the fuzz test: fio's ftruncate engine shrinks the scratch file; the next
    point's fio found it short, recreated it without storbench's mark, and it stayed."""
    db = tmp_path / "r.db"
    plan = tmp_path / "p.yaml"
    plan.write_text(
        f"targets:\n  - file: {tmp_path}/new.dat\nworkloads:\n  - name: w\n    rw: write\n"
        "    bs: 4k\n    size: 64k\n    ioengine: ftruncate\nrepeat: 2\n"
    )
    r = sb("run", str(plan), db=db, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert not (tmp_path / "new.dat").exists()
