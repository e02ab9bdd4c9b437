"""Power sensors: RAPL counters read from a powercap tree, IPMI's reading, and the reason
recorded where no sensor answers (never a zero)."""

from __future__ import annotations

import dataclasses
import sqlite3
import sys
import threading
import time
from pathlib import Path

import pytest

from storbench import engines
from storbench.hosts import load as hostload
from storbench.hosts import power
from storbench.hosts.load import HostSample
from storbench.store import SCHEMA_VERSION, Store

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the harness modules
from waiting import wait_until

DATA = Path(__file__).parent.parent / "data" / "store"

FIO = engines.get("fio")  # which fio a run would use


def _zone(root: Path, name: str, energy: int, wrap: int = 2**32) -> Path:
    z = root / name
    z.mkdir(parents=True)
    (z / "energy_uj").write_text(f"{energy}\n")
    (z / "max_energy_range_uj").write_text(f"{wrap}\n")
    return z


def test_power_rapl_watts_are_energy_over_time_across_a_wrap(tmp_path: Path) -> None:
    a = _zone(tmp_path, "intel-rapl:0", 1_000_000)
    b = _zone(tmp_path, "intel-rapl:1", 999_000_000, wrap=1_000_000_000)
    _zone(tmp_path, "intel-rapl:0:0", 5)  # a sub-zone (core): inside package 0, not added
    src = power.probe(tmp_path)
    assert src.kind == "rapl" and [z.name for z in src.zones] == ["intel-rapl:0", "intel-rapl:1"]
    meter = power.PowerMeter(src)
    assert meter.read(10.0) is None  # a first reading has no interval
    (a / "energy_uj").write_text("31000000\n")  # +30 J
    (b / "energy_uj").write_text("9000000\n")  # +10 J across the wrap
    assert meter.read(12.0) == pytest.approx(20.0)  # 40 J in 2 s


def test_power_no_sensor_says_why_and_gives_no_figure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(power.shutil, "which", lambda name: None)
    src = power.probe(tmp_path / "absent")
    assert src.kind is None
    assert "absent" in src.why and "ipmitool not installed" in src.why
    assert src.to_dict() == {"source": None, "why": src.why}
    assert power.PowerMeter(src).read(1.0) is None


def test_power_this_machines_inventory_names_its_source_or_why_not() -> None:
    from storbench.hosts.inventory.host import host_inventory

    p = host_inventory(FIO.about())["power"]
    assert (p["source"] in ("rapl", "ipmi")) != bool(p.get("why"))


class _Counter:
    """A directory laid out like /sys/class/powercap whose package counter this test
    advances at ``watts`` (there is no power sensor on these VMs: the test plays the
    kernel's part, storbench's reading of it is what is tested)."""

    def __init__(self, root: Path, watts: float) -> None:
        self.zone = _zone(root, "intel-rapl:0", 0, wrap=2**40)
        self.watts, self.began = watts, time.monotonic()
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        while not self.done.wait(0.01):
            uj = int((time.monotonic() - self.began) * self.watts * 1e6)
            tmp = self.zone / "energy_uj.tmp"
            tmp.write_text(f"{uj}\n")
            tmp.rename(self.zone / "energy_uj")

    def stop(self) -> None:
        self.done.set()
        self.thread.join()


def test_power_every_sample_of_this_machine_has_its_watts(tmp_path: Path) -> None:
    counter = _Counter(tmp_path, 40.0)
    got: list[HostSample] = []
    try:
        meter = power.PowerMeter(power.probe(tmp_path))
        with hostload.Sampler(100, got.extend, power=meter) as sampler:
            wait_until("5 samples", lambda: len(got) >= 5)
    finally:
        counter.stop()
    assert len(got) >= 5 and sampler.power_samples == got
    assert all(s.watts == pytest.approx(40.0, rel=0.25) for s in got), [s.watts for s in got]
    assert hostload.watts_mean(got) == pytest.approx(40.0, rel=0.1)
    assert hostload.summary(got)["watts_mean"] == hostload.watts_mean(got)


def test_power_a_sample_without_a_sensor_has_none_never_a_zero() -> None:
    got: list[HostSample] = []
    with hostload.Sampler(100, got.extend) as sampler:
        wait_until("a sample", lambda: got)
    assert got and all(s.watts is None for s in got) and sampler.power_samples == []
    assert hostload.watts_mean(got) is None and "watts_mean" not in hostload.summary(got)


def test_power_watts_mean_weighs_each_interval_by_its_length() -> None:
    a = HostSample(0, 1000, 1000, 0, 0, 0, 100, 0, 0, 1, watts=10.0)
    b = dataclasses.replace(a, seq=1, t_ms=4000, dur_ms=3000, watts=30.0)
    c = dataclasses.replace(a, seq=2, t_ms=5000, watts=None)
    assert hostload.watts_mean([a, b, c]) == pytest.approx(25.0)


def test_power_a_real_schema_5_database_gains_the_watts_column(tmp_path: Path) -> None:
    """tests/data/store/v5-run.sql: a database storbench wrote before power per interval
    (its README says how), opened by this one: migrated in place, its samples intact."""
    path = tmp_path / "results.db"
    db = sqlite3.connect(path)
    db.executescript((DATA / "v5-run.sql").read_text())
    old = db.execute("SELECT COUNT(*) FROM host_samples").fetchone()[0]
    db.close()
    store = Store(str(path))
    version = store.db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
    assert version[0] == str(SCHEMA_VERSION)
    samples = store.host_samples.of_point(1, 0)
    assert len(samples) == old > 0 and all(s.watts is None for s in samples)
    assert store.runs.get(1).name == "v5-fixture"
    store.host_samples.add(1, 0, [dataclasses.replace(samples[0], seq=99, watts=12.34)])
    assert store.host_samples.of_point(1, 0)[-1].watts == pytest.approx(12.3)
    store.close()
    fresh = tmp_path / "fresh.db"
    Store(str(fresh)).close()
    assert _schema(path) == _schema(fresh)


def _schema(path: Path) -> dict[str, str]:
    db = sqlite3.connect(path)
    try:
        rows = db.execute("SELECT name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'")
        return dict(rows)
    finally:
        db.close()
