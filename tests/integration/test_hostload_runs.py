"""The load's host sampled while real fio runs: every point has its samples, their CPU
shares add up, and the device under the target file shows the direct I/O."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
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
    for m in store.measurements.of_run(1):
        samples = store.host_samples.of_point(1, m.point_idx)
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
    first = store.host_samples.of_point(1, 0)[0]
    user = next(r for r in rows if r[1] == "1" and r[3] == "0" and r[6] == "cpu_user_pct")
    assert float(user[8]) == first.cpu_user_pct
    assert {r[1] for r in rows} == {str(m.point_idx + 1) for m in store.measurements.of_run(1)}
    assert "power" not in r.stdout and "IOPS/W" not in r.stdout  # no sensor on this VM
    every = [
        s for m in store.measurements.of_run(1) for s in store.host_samples.of_point(1, m.point_idx)
    ]
    assert all(s.watts is None for s in every)


def _sb(
    db: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "storbench", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "STORBENCH_DB": str(db), **(env or {})},
    )


def test_power_a_run_where_a_sensor_answers_has_watts_and_iops_per_watt(tmp_path: Path) -> None:
    """STORBENCH_POWERCAP at a directory laid out like /sys/class/powercap whose package
    counter this test advances at 30 W (these VMs have no sensor; the test plays the
    kernel's part): every sample has its watts, the point its mean and IOPS per watt, in
    show, the CSV and JSON exports; the inventory names the sensor."""
    zone = tmp_path / "powercap" / "intel-rapl:0"
    zone.mkdir(parents=True)
    (zone / "max_energy_range_uj").write_text(f"{2**40}\n")
    (zone / "energy_uj").write_text("0\n")
    done = threading.Event()

    def advance() -> None:
        began = time.monotonic()
        while not done.wait(0.01):
            (zone / "e.tmp").write_text(f"{int((time.monotonic() - began) * 30e6)}\n")
            (zone / "e.tmp").rename(zone / "energy_uj")

    thread = threading.Thread(target=advance, daemon=True)
    thread.start()
    db = tmp_path / "r.db"
    env = {"STORBENCH_POWERCAP": str(tmp_path / "powercap")}
    try:
        r = _sb(
            db, "run", "quick", "-t", f"{tmp_path}/p.dat", "--set", "runtime=2",
            "--set", "size=16m", "--set", "interval=500ms", "--set", "rw=randread", env=env,
        )  # fmt: skip
    finally:
        done.set()
        thread.join()
    assert r.returncode == 0, r.stdout + r.stderr
    store = Store(str(db), write=False)
    (m, *_) = store.measurements.of_run(1)
    samples = store.host_samples.of_point(1, m.point_idx)
    assert samples and all(s.watts == pytest.approx(30, rel=0.25) for s in samples)
    pw = m.measurement.extra["power"]
    assert pw["source"] == "rapl" and pw["watts_mean"] == pytest.approx(30, rel=0.1)
    assert pw["samples"] == len(samples)
    iops = sum(d.iops for d in m.measurement.directions.values())
    shown = _sb(db, "show", "1", env=env).stdout
    cell = f"{pw['watts_mean']:,.1f} W, {iops / pw['watts_mean']:,.0f} IOPS/W"
    assert "power" in shown and cell in shown, shown
    point = _sb(db, "show", "1", "--point", "1").stdout
    assert "# this host power: " in point and "power: rapl sensor" in _sb(db, "show", "1").stdout
    csv_rows = _sb(db, "export", "1", "--format", "csv").stdout.splitlines()
    head = csv_rows[0].split(",")
    assert float(csv_rows[1].split(",")[head.index("power_watts_mean")]) == pw["watts_mean"]
    exported = json.loads(_sb(db, "export", "1", "--format", "json").stdout)
    assert exported["measurements"][0]["power"] == pw
