"""A real device that saturates at a known rate, whatever the machine's load: a blank loop
device (direct I/O over a sparse file) whose reads a cgroup v1 blkio group throttles to a
number of I/Os per second, and storbench run inside that group (so its fio is too).
Throughput then stays at the throttle's rate however deep the queue, and latency grows with
it: a knee, and a capacity, a test can know in advance."""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

BLKIO = Path("/sys/fs/cgroup/blkio")


@contextlib.contextmanager
def throttled_device(tmp_path: Path, iops: int) -> Iterator[tuple[str, Path]]:
    """(the loop device, its cgroup): reads of the device in the group at ``iops`` at most;
    skipped where there is no root, losetup or blkio controller. Removed afterwards."""
    with throttled_devices(tmp_path, [iops]) as (devs, group):
        yield devs[0], group


@contextlib.contextmanager
def throttled_devices(
    tmp_path: Path, rates: list[int], ops: tuple[str, ...] = ("read",)
) -> Iterator[tuple[list[str], Path]]:
    """(a loop device per rate, their cgroup): the I/Os of each of ``ops`` (read, write) of
    each device in the group at its rate at most; skipped where there is no root, losetup
    or blkio controller. Removed afterwards."""
    if os.geteuid() != 0 or shutil.which("losetup") is None:
        pytest.skip("needs root and losetup (a loop device)")
    if not all((BLKIO / f"blkio.throttle.{op}_iops_device").exists() for op in ops):
        pytest.skip("needs cgroup v1's blkio controller (blkio.throttle.*)")
    devs: list[str] = []
    group = BLKIO / f"storbench-test-{os.getpid()}-{tmp_path.name}"
    try:
        for i, _ in enumerate(rates):
            image = tmp_path / f"disk{i}.img"
            with open(image, "wb") as f:
                f.truncate(64 << 20)
            devs.append(
                subprocess.run(
                    ["losetup", "--find", "--show", "--direct-io=on", str(image)],
                    capture_output=True,
                    text=True,
                    check=True,
                    timeout=30,
                ).stdout.strip()
            )
        group.mkdir()
        for dev, iops in zip(devs, rates, strict=True):
            rdev = os.stat(dev).st_rdev
            for op in ops:
                (group / f"blkio.throttle.{op}_iops_device").write_text(
                    f"{os.major(rdev)}:{os.minor(rdev)} {iops}\n"
                )
        yield devs, group
    finally:
        for _ in range(50):  # its processes are gone once the run returned
            with contextlib.suppress(OSError):
                group.rmdir()
            if not group.exists():
                break
            time.sleep(0.1)
        for dev in devs:
            subprocess.run(["losetup", "-d", dev], check=False, timeout=30)


def sb(group: Path, db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """storbench ``args`` on the database ``db``, run inside the cgroup ``group``."""
    procs = group / "cgroup.procs"
    return subprocess.run(
        [sys.executable, "-m", "storbench", *args],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "STORBENCH_DB": str(db), "COLUMNS": "200"},
        preexec_fn=lambda: procs.write_text(f"{os.getpid()}\n"),
    )


def recorded(db: Path) -> int:
    """How many measurements the database ``db`` holds so far (0 before it exists)."""
    if not db.exists():
        return 0
    with contextlib.closing(sqlite3.connect(db, timeout=30)) as c:
        try:
            return int(c.execute("SELECT COUNT(*) FROM measurements").fetchone()[0])
        except sqlite3.OperationalError:  # not made yet
            return 0
