"""Preconditioning end to end with real fio on a real file: the sequential phase writes the
target twice before its first point (once per target), the workload phase runs a point's
own workload to steady state first; each is an event with its own series, never a
measurement, and a file storbench did not create is never preconditioned. A purge
(blkdiscard) runs on a real loop device (root) only with --destroy-data naming it."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.integration

PLAN = """\
name: pre
interval: 500ms
{top}targets:
  - file: {dir}/a.dat
    precondition: {mode}
workloads:
  - name: r
    ioengine: psync
    rw: randread
    bs: 4k
    iodepth: [1, 2]
    size: 8m
    runtime: 1
    time_based: 1
"""


def sb(*args: str, db: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "storbench", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
        env={**os.environ, "STORBENCH_DB": str(db), "COLUMNS": "200"},
    )


def _rows(db: Path, sql: str) -> list[tuple[Any, ...]]:
    con = sqlite3.connect(db)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def test_precondition_sequential_writes_the_target_twice_once(tmp_path: Path) -> None:
    (tmp_path / "p.yaml").write_text(PLAN.format(dir=tmp_path, mode="sequential", top=""))
    db = tmp_path / "r.db"
    r = sb("run", "p.yaml", db=db, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "preconditioning " in r.stdout and "(sequential" in r.stdout
    events = _rows(db, "SELECT data FROM events WHERE kind='precondition'")
    assert len(events) == 1  # once for the target, not before each point
    data = json.loads(events[0][0])
    assert data["status"] == "ok" and data["point"] == 0 and data["series_point"] == -1
    assert data["io_bytes"] == 2 * 8 * 2**20  # the whole target, twice
    assert "rw=write" in data["job_file"] and "bs=128k" in data["job_file"]
    assert "loops=2" in data["job_file"]
    # its series apart from the points', and no measurement of it
    assert _rows(db, "SELECT count(*) FROM intervals WHERE point_idx=-1 AND ramp=0")[0][0] >= 1
    assert _rows(db, "SELECT point_idx FROM measurements ORDER BY point_idx") == [(0,), (1,)]
    shown = sb("show", "1", "--point", "1", db=db, cwd=tmp_path)
    assert "# preconditioning (sequential)" in shown.stdout
    csv_text = sb("export", "1", "--series", db=db, cwd=tmp_path).stdout
    assert all(not line.startswith("1,0,") for line in csv_text.splitlines())  # not point 0


def test_precondition_workload_runs_each_point_to_steady_state_first(tmp_path: Path) -> None:
    top = "steady_state: {round: 1s, window: 2, rounds: 3, range: 100%, slope: 100%}\n"
    # the plan's steady state applies to the points too: both phases settle in 2 rounds
    (tmp_path / "p.yaml").write_text(PLAN.format(dir=tmp_path, mode="workload", top=top))
    db = tmp_path / "r.db"
    r = sb("run", "p.yaml", db=db, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    events = [
        json.loads(d) for (d,) in _rows(db, "SELECT data FROM events WHERE kind='precondition'")
    ]
    assert [e["point"] for e in events] == [0, 1]  # before every point
    for e in events:
        assert e["mode"] == "workload" and e["status"] == "ok"
        assert e["steady_state"]["reached"] and e["steady_state"]["rounds"] == 2
    assert _rows(db, "SELECT count(*) FROM measurements")[0][0] == 2


def test_precondition_refuses_a_file_storbench_did_not_create(tmp_path: Path) -> None:
    precious = tmp_path / "a.dat"
    precious.write_bytes(b"PRECIOUS" * 2**20)
    (tmp_path / "p.yaml").write_text(PLAN.format(dir=tmp_path, mode="sequential", top=""))
    r = sb("run", "p.yaml", db=tmp_path / "r.db", cwd=tmp_path)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "Traceback" not in r.stderr
    assert precious.read_bytes() == b"PRECIOUS" * 2**20


# ------------------------------------------------------------------------- purge (root)

LOOP_SIZE = 64 * 2**20
PATTERN = b"STORBNCH"  # no filesystem signature: the device is blank to wipefs and blkid
TOOLS = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin"])
PURGE_PLAN = """\
name: purge
targets:
  - device: {dev}
    precondition: {{purge: {how}}}
workloads:
  - name: r
    ioengine: psync
    rw: randread
    bs: 4k
    size: 8m
    runtime: 1
    time_based: 1
"""


@pytest.fixture
def loop(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A 64 MiB loop device over a file full of PATTERN: (its node, the file)."""
    if os.geteuid() != 0:
        pytest.skip("needs root: a loop device to purge")
    for tool in ("losetup", "blkdiscard"):
        if shutil.which(tool, path=TOOLS) is None:
            pytest.skip(f"{tool} is not installed (apt-get install util-linux)")
    image = tmp_path / "disk.img"
    image.write_bytes(PATTERN * (LOOP_SIZE // len(PATTERN)))
    env = {**os.environ, "PATH": TOOLS}
    proc = subprocess.run(
        ["losetup", "--find", "--show", str(image)], capture_output=True, text=True, env=env
    )
    if proc.returncode != 0:
        pytest.skip(f"cannot create a loop device here: {proc.stderr.strip()}")
    dev = proc.stdout.strip()
    try:
        yield dev, image
    finally:
        for _ in range(20):
            if subprocess.run(["losetup", "-d", dev], capture_output=True, env=env).returncode == 0:
                break
            time.sleep(0.1)


def _purge_run(tmp_path: Path, dev: str, how: str, *more: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "p.yaml").write_text(PURGE_PLAN.format(dev=dev, how=how))
    return sb("run", "p.yaml", *more, db=tmp_path / "r.db", cwd=tmp_path)


def _intact(dev: str, image: Path) -> bool:
    whole = PATTERN * (LOOP_SIZE // len(PATTERN))
    with open(dev, "rb") as f:
        return image.read_bytes() == whole and f.read(LOOP_SIZE) == whole


def test_precondition_purge_discard_zeroes_the_device(
    tmp_path: Path, loop: tuple[str, Path]
) -> None:
    dev, image = loop
    if int(Path(f"/sys/class/block/{Path(dev).name}/queue/discard_max_bytes").read_text()) == 0:
        pytest.skip(f"{dev} does not discard here (its file system cannot punch holes)")
    r = _purge_run(tmp_path, dev, "discard", "--destroy-data", dev)
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"purged {dev} (discard): discarded the whole device" in r.stdout
    (raw,) = _rows(tmp_path / "r.db", "SELECT data FROM events WHERE kind='precondition'")
    e = json.loads(raw[0])
    assert (e["mode"], e["purge"], e["status"], e["returncode"]) == ("purge", "discard", "ok", 0)
    assert e["command"][-2:] == ["--verbose", dev] and e["command"][0].endswith("blkdiscard")
    assert f"Discarded {LOOP_SIZE} bytes" in e["output"] and e["seconds"] >= 0
    assert e["discard_max_bytes"] > 0
    assert _rows(tmp_path / "r.db", "SELECT point_idx, status FROM measurements") == [(0, "ok")]
    # the loop driver punches holes in its file: the whole range reads back as zeros
    with open(dev, "rb") as f:
        assert f.read(LOOP_SIZE) == bytes(LOOP_SIZE)
    assert image.read_bytes() == bytes(LOOP_SIZE)
    assert image.stat().st_blocks * 512 < LOOP_SIZE // 16


def test_precondition_purge_refused_without_destroy_data(
    tmp_path: Path, loop: tuple[str, Path]
) -> None:
    from storbench.preflight.safety import device_write_refusal

    dev, image = loop
    assert device_write_refusal(dev) is None  # blank: plain writes would need no flag
    for more in ([], ["--destroy-data", f"{dev}p1"]):
        r = _purge_run(tmp_path, dev, "discard", *more)
        assert r.returncode == 2, r.stdout + r.stderr
        assert "Traceback" not in r.stderr and "--destroy-data" in r.stderr
        assert not (tmp_path / "r.db").exists() or not _rows(
            tmp_path / "r.db", "SELECT id FROM runs"
        )
    assert (
        "purges only a device the command line names with --destroy-data"
        in _purge_run(tmp_path, dev, "discard").stderr
    )
    assert _intact(dev, image)


def test_precondition_purge_secure_unsupported_fails_with_the_devices_answer(
    tmp_path: Path, loop: tuple[str, Path]
) -> None:
    dev, image = loop  # a loop device has no secure erase
    r = _purge_run(tmp_path, dev, "secure", "--destroy-data", dev)
    assert r.returncode == 1, r.stdout + r.stderr
    (raw,) = _rows(tmp_path / "r.db", "SELECT data FROM events WHERE kind='precondition'")
    e = json.loads(raw[0])
    assert (e["purge"], e["status"]) == ("secure", "failed") and "--secure" in e["command"]
    assert "does not support secure erase" in e["error"] and "not supported" in e["output"]
    ((status, error),) = _rows(tmp_path / "r.db", "SELECT status, error FROM measurements")
    assert status == "failed" and error.startswith("preconditioning failed: the device does not")
    assert _intact(dev, image)
