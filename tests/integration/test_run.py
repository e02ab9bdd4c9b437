"""End to end through the command line with real fio on real files and loop devices."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the harness modules
from waiting import wait_until

pytestmark = pytest.mark.integration

SHORT = ["--set", "runtime=1", "--set", "ramp_time=0", "--set", "size=16m"]


def sb(
    *args: str,
    db: Path,
    cwd: Path | None = None,
    timeout: float = 300,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "storbench", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
        env={**os.environ, "STORBENCH_DB": str(db), **(env or {})},
    )


def start(*args: str, db: Path, cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "storbench", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=cwd,
        env={**os.environ, "STORBENCH_DB": str(db)},
    )


def q(db: Path, sql: str, *params: object) -> list[tuple[object, ...]]:
    con = sqlite3.connect(db)
    try:
        return con.execute(sql, params).fetchall()
    finally:
        con.close()


def wait_for_measurements(
    db: Path, n: int, proc: subprocess.Popen[str], timeout: float = 60
) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if db.exists():
            try:
                if q(db, "SELECT COUNT(*) FROM measurements")[0][0] >= n:
                    return
            except sqlite3.OperationalError:
                pass
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    raise AssertionError(f"no {n} measurements within {timeout}s")


def child_pids(pid: int) -> list[int]:
    """Processes whose parent is ``pid`` (fio runs as storbench's direct child)."""
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat_fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(stat_fields[1]) == pid:
                out.append(int(entry))
    return out


def _running(pid: int, word: str) -> bool:
    """Whether a child of ``pid`` has ``word`` in its command line."""
    for child in child_pids(pid):
        try:
            if word.encode() in Path(f"/proc/{child}/cmdline").read_bytes():
                return True
        except OSError:
            continue
    return False


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def write_plan(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "results.db"


def test_quick_suite_records_every_point_with_raw_output(tmp_path: Path, db: Path) -> None:
    scratch = tmp_path / "scratch.dat"
    r = sb("run", "quick", "--target", str(scratch), *SHORT, db=db, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    assert f"run 1 in {db}" in r.stdout
    assert "randwrite" in r.stdout and "IOPS" in r.stdout
    assert not scratch.exists(), "the scratch file storbench made is removed at the end"

    rows = q(
        db,
        "SELECT status, job_file, raw_output, engine_version FROM measurements ORDER BY point_idx",
    )
    assert len(rows) == 6
    for status, job_file, raw, version in rows:
        assert status == "ok"
        assert f"filename={scratch}" in job_file and "runtime=1" in job_file
        assert raw is not None and version.startswith("fio-")
    ((status, plan_text, inventory, fio_version),) = q(
        db, "SELECT status, plan_text, inventory, fio_version FROM runs"
    )
    assert status == "completed"
    assert "name: quick" in plan_text
    assert fio_version.startswith("fio-")
    inv = json.loads(inventory)
    for key in (
        "hostname",
        "kernel",
        "distribution",
        "cpu_model",
        "cpu_count",
        "memory_bytes",
        "fio_version",
        "storbench_version",
    ):
        assert inv["host"][key], key
    (target,) = inv["targets"]
    assert target["path"] == str(scratch)
    assert target["fstype"] and target["source"] and target["mount_options"]

    exp = sb("export", "latest", "--format", "json", db=db)
    assert exp.returncode == 0, exp.stderr
    doc = json.loads(exp.stdout)
    m = doc["measurements"][0]
    assert m["params"]["rw"] == "randread" and m["params"]["iodepth"] == 1
    for key in ("iops", "bw_bytes", "io_bytes", "runtime_s"):
        assert m["read"][key] > 0
    for key in ("mean", "p50", "p95", "p99", "p99.9"):
        assert m["read"]["clat_ns"][key] > 0
    assert m["read"]["clat_ns"]["p50"] <= m["read"]["clat_ns"]["p99"]

    shown = sb("show", "latest", db=db)
    assert shown.returncode == 0 and "seq1m" in shown.stdout
    point = sb("show", "1", "--point", "2", db=db)
    assert "iodepth=32" in point.stdout and '"jobs"' in point.stdout


def test_failing_point_is_recorded_and_the_run_goes_on(tmp_path: Path, db: Path) -> None:
    # fio's sg engine refuses regular files at run time: a real fio failure
    plan = write_plan(
        tmp_path / "p.yaml",
        f"""\
name: fails-then-works
targets:
  - file: {tmp_path}/f.dat
workloads:
  - name: w
    rw: read
    bs: 4k
    size: 1m
    ioengine: [sg, psync]
""",
    )
    r = sb("run", str(plan), db=db, cwd=tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "1 point(s) failed" in r.stderr
    rows = q(db, "SELECT status, error FROM measurements ORDER BY point_idx")
    assert [s for s, _ in rows] == ["failed", "ok"]
    assert "block or character devices" in rows[0][1] or "Invalid argument" in rows[0][1]
    assert q(db, "SELECT status FROM runs") == [("completed",)]

    r = sb("run", str(plan), "--fail-fast", db=db, cwd=tmp_path)
    assert r.returncode == 1
    assert q(db, "SELECT COUNT(*) FROM measurements WHERE run_id=2") == [(1,)]
    assert q(db, "SELECT status FROM runs WHERE id=2") == [("failed",)]


SLOW_PLAN = """\
name: four-points
targets:
  - file: {dir}/k.dat
workloads:
  - name: w
    rw: randread
    bs: 4k
    size: 8m
    time_based: 1
    runtime: 1
    iodepth: [1, 2, 4, 8]
"""


def test_sigkill_loses_no_finished_point_and_resume_runs_the_rest(tmp_path: Path, db: Path) -> None:
    plan = write_plan(tmp_path / "p.yaml", SLOW_PLAN.format(dir=tmp_path))
    proc = start("run", str(plan), db=db, cwd=tmp_path)
    wait_for_measurements(db, 2, proc)
    children = child_pids(proc.pid)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    before = q(db, "SELECT id, point_idx FROM measurements ORDER BY point_idx")
    assert len(before) >= 2
    # fio dies with storbench (no orphan keeps writing); that it does not outlive a point
    # of minutes is test_reliability_runs.py's test_orphans_sigkill_of_storbench_*
    wait_until("fio to die with storbench", lambda: not [p for p in children if _alive(p)])
    runs = sb("runs", db=db)
    assert "aborted" in runs.stdout

    r = sb("resume", "latest", db=db, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert f"{4 - len(before)} of 4 points to run" in r.stdout
    after = q(db, "SELECT id, point_idx FROM measurements ORDER BY point_idx")
    assert [p for _, p in after] == [0, 1, 2, 3]
    assert after[: len(before)] == before, "finished points are kept as they were"
    assert q(db, "SELECT status FROM runs") == [("completed",)]
    again = sb("resume", "latest", db=db, cwd=tmp_path)
    assert "nothing to resume" in again.stdout


def test_ctrl_c_stops_fio_keeps_finished_points_and_marks_interrupted(
    tmp_path: Path, db: Path
) -> None:
    plan = write_plan(tmp_path / "p.yaml", SLOW_PLAN.format(dir=tmp_path))
    proc = start("run", str(plan), db=db, cwd=tmp_path)
    wait_for_measurements(db, 1, proc)
    # inside the next point: its fio runs
    wait_until("the second point's fio", lambda: _running(proc.pid, "point-00001.fio"))
    proc.send_signal(signal.SIGINT)
    out, errtext = proc.communicate(timeout=30)
    assert proc.returncode == 130, out + errtext
    assert "Traceback" not in errtext
    assert "storbench resume 1" in out
    n = q(db, "SELECT COUNT(*) FROM measurements")[0][0]
    assert 1 <= n < 4
    assert q(db, "SELECT status FROM measurements WHERE status != 'ok'") == []
    assert q(db, "SELECT status FROM runs") == [("interrupted",)]
    r = sb("resume", "1", db=db, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert q(db, "SELECT COUNT(*) FROM measurements")[0][0] == 4


def test_existing_file_is_never_written_but_may_be_read(tmp_path: Path, db: Path) -> None:
    mine = tmp_path / "precious.dat"
    mine.write_bytes(b"x" * (1 << 20))
    r = sb("run", "quick", "--target", str(mine), *SHORT, db=db, cwd=tmp_path)
    assert r.returncode == 2
    assert "storbench: error:" in r.stderr and "Traceback" not in r.stderr
    assert "not created by storbench" in r.stderr or "did not create" in r.stderr
    assert mine.read_bytes() == b"x" * (1 << 20)
    assert not db.exists() or q(db, "SELECT COUNT(*) FROM runs") == [(0,)]

    plan = write_plan(
        tmp_path / "read.yaml",
        f"""\
targets:
  - file: {mine}
workloads:
  - name: r
    rw: randread
    bs: 4k
    runtime: 1
""",
    )
    r = sb("run", str(plan), db=db, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert mine.read_bytes() == b"x" * (1 << 20)


def test_free_space_is_checked_before_any_io(tmp_path: Path, db: Path) -> None:
    r = sb(
        "run",
        "quick",
        "--target",
        str(tmp_path / "huge.dat"),
        "--set",
        "size=900t",
        db=db,
        cwd=tmp_path,
    )
    assert r.returncode == 2, r.stdout
    assert "needs" in r.stderr and "available" in r.stderr
    assert not (tmp_path / "huge.dat").exists()


def test_repeat_runs_rounds_with_independent_offsets(tmp_path: Path, db: Path) -> None:
    plan = write_plan(
        tmp_path / "p.yaml",
        f"""\
targets:
  - file: {tmp_path}/r.dat
workloads:
  - name: r
    rw: randread
    bs: 4k
    size: 4m
    runtime: 1
    iodepth: [1, 4]
repeat: 2
""",
    )
    r = sb("run", str(plan), db=db, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    jobs = [j for (j,) in q(db, "SELECT job_file FROM measurements ORDER BY point_idx")]
    assert len(jobs) == 4
    seeds = [next(ln for ln in j.splitlines() if ln.startswith("randseed=")) for j in jobs]
    assert seeds[0] == seeds[1] != seeds[2] == seeds[3]
    keys = [k for (k,) in q(db, "SELECT key FROM points ORDER BY idx")]
    assert keys[0] == keys[2] and keys[1] == keys[3] and keys[0] != keys[1]


def test_directory_target_cleans_up_its_files(tmp_path: Path, db: Path) -> None:
    d = tmp_path / "dir"
    d.mkdir()
    (d / "keep.txt").write_text("mine")
    r = sb(
        "run",
        "quick",
        "--target",
        f"directory:{d}",
        *SHORT,
        "--set",
        "numjobs=2",
        db=db,
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in d.iterdir()) == ["keep.txt"]


# ---------------------------------------------------------------------------- loop devices


@pytest.fixture
def loopdev(tmp_path: Path) -> Iterator[str]:
    if os.geteuid() != 0:
        pytest.skip("loop devices need root")
    img = tmp_path / "disk.img"
    with open(img, "wb") as f:
        f.truncate(64 << 20)
    r = subprocess.run(["losetup", "--find", "--show", str(img)], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot make a loop device here: {r.stderr.strip()}")
    dev = r.stdout.strip()
    try:
        yield dev
    finally:
        subprocess.run(["losetup", "-d", dev], check=False)


DEVICE_PLAN = """\
targets:
  - device: {dev}
workloads:
  - name: w
    rw: {rw}
    bs: 4k
    size: 4m
    runtime: 1
"""


def test_blank_loop_device_is_written(tmp_path: Path, db: Path, loopdev: str) -> None:
    plan = write_plan(tmp_path / "p.yaml", DEVICE_PLAN.format(dev=loopdev, rw="randwrite"))
    r = sb("run", str(plan), db=db)
    assert r.returncode == 0, r.stderr
    inv = json.loads(q(db, "SELECT inventory FROM runs")[0][0])
    assert inv["targets"][0]["path"] == loopdev


def test_loop_device_with_filesystem_needs_destroy_data(
    tmp_path: Path, db: Path, loopdev: str
) -> None:
    subprocess.run(["mkfs.ext4", "-q", loopdev], check=True)
    plan = write_plan(tmp_path / "p.yaml", DEVICE_PLAN.format(dev=loopdev, rw="randwrite"))
    r = sb("run", str(plan), db=db)
    assert r.returncode == 2
    assert "ext4" in r.stderr and f"--destroy-data {loopdev}" in r.stderr
    assert not db.exists() or q(db, "SELECT COUNT(*) FROM runs") == [(0,)]

    # reading is harmless
    ro = write_plan(tmp_path / "ro.yaml", DEVICE_PLAN.format(dev=loopdev, rw="randread"))
    assert sb("run", str(ro), db=db).returncode == 0

    # the flag must name this very device
    r = sb("run", str(plan), "--destroy-data", "/dev/loop-nonexistent", db=db)
    assert r.returncode == 2
    r = sb("run", str(plan), "--destroy-data", loopdev, db=db)
    assert r.returncode == 0, r.stderr


def test_mounted_loop_device_is_refused_even_with_destroy_data(
    tmp_path: Path, db: Path, loopdev: str
) -> None:
    subprocess.run(["mkfs.ext4", "-q", loopdev], check=True)
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    subprocess.run(["mount", loopdev, str(mnt)], check=True)
    try:
        plan = write_plan(tmp_path / "p.yaml", DEVICE_PLAN.format(dev=loopdev, rw="write"))
        r = sb("run", str(plan), "--destroy-data", loopdev, db=db)
        assert r.returncode == 2
        assert "mounted" in r.stderr and str(mnt) in r.stderr
    finally:
        subprocess.run(["umount", str(mnt)], check=False)
