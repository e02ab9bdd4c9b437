"""The load's host sampled while real fio runs: every point has its samples, their CPU
shares add up, and the device under the target file shows the direct I/O."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from storbench.store import Store

pytestmark = pytest.mark.integration


def _device_of(path: Path) -> str | None:
    """The kernel's name of the block device a file is on (/sys/dev/block/MAJ:MIN)."""
    st = os.stat(path.parent)
    link = Path(f"/sys/dev/block/{os.major(st.st_dev)}:{os.minor(st.st_dev)}")
    return link.resolve().name if link.exists() else None


def test_hostload_every_point_has_samples_of_its_host(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "storbench",
            "run",
            "quick",
            "-t",
            f"{tmp_path}/h.dat",
            "--set",
            "runtime=2",
            "--set",
            "size=32m",
            "--set",
            "interval=500ms",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "STORBENCH_DB": str(db)},
    )
    assert r.returncode == 0, r.stdout + r.stderr
    store = Store(str(db), write=False)
    dev = _device_of(tmp_path / "h.dat")
    seen_dev = False
    for m in store.measurements(1):
        samples = store.host_samples(1, m.point_idx)
        took_ms = (m.ended_at - m.started_at) * 1000
        assert len(samples) >= took_ms / 500 - 2, (m.point_idx, len(samples), took_ms)
        assert [s.seq for s in samples] == list(range(len(samples)))
        for s in samples:
            shares = (s.cpu_user_pct, s.cpu_system_pct, s.cpu_iowait_pct, s.cpu_idle_pct)
            assert all(0 <= x <= 100 for x in shares)
            assert sum(shares) + s.cpu_steal_pct == pytest.approx(100, abs=0.1)
            assert 0 < s.mem_used_bytes < s.mem_total_bytes
            for util, queue, rbps, wbps, iops in s.disks.values():
                assert 0 <= util <= 100 and queue >= 0 and min(rbps, wbps, iops) >= 0
        seen_dev |= dev is not None and any(dev in s.disks for s in samples)
    if dev is not None and not dev.startswith(("loop", "zram")):  # tmpfs has no device
        assert seen_dev, f"the target's device {dev} moved nothing in any sample"
    shown = subprocess.run(
        [sys.executable, "-m", "storbench", "show", "1", "--point", "1"],
        capture_output=True,
        text=True,
        env={**os.environ, "STORBENCH_DB": str(db)},
    )
    assert "# this host CPU busy (user+system):" in shown.stdout
    exported = subprocess.run(
        [sys.executable, "-m", "storbench", "export", "1", "--host-samples"],
        capture_output=True,
        text=True,
        env={**os.environ, "STORBENCH_DB": str(db)},
    )
    rows = [line.split(",") for line in exported.stdout.splitlines()[1:]]
    first = store.host_samples(1, 0)[0]
    user = next(r for r in rows if r[1] == "1" and r[3] == "0" and r[6] == "cpu_user_pct")
    assert float(user[8]) == first.cpu_user_pct
    assert {r[1] for r in rows} == {str(m.point_idx + 1) for m in store.measurements(1)}
