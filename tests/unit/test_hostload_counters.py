"""The load's host per interval (storbench.hosts.load): the /proc counters read from two real
readings (tests/data/proc, recorded by its record.sh while fio wrote), the differences as
rates and shares, and their round trip through the store."""

from __future__ import annotations

from pathlib import Path

import pytest

from storbench.hosts import load as hostload
from storbench.store import SCHEMA_VERSION, Store

PROC = Path(__file__).resolve().parents[1] / "data" / "proc"


def _fields(path: Path, name: str) -> list[str]:
    return next(
        line.split() for line in path.read_text().splitlines() if line.split()[2:3] == [name]
    )


def _readings() -> tuple[hostload.Reading, hostload.Reading]:
    a, b = hostload.read_counters(PROC / "a"), hostload.read_counters(PROC / "b")
    a.t, b.t = 100.0, 101.0  # the recording's 1 s (its files carry no time)
    return a, b


def test_hostload_cpu_shares_are_the_tick_differences() -> None:
    a, b = _readings()
    s = hostload.sample(a, b, 0, 1000)
    ca = [int(x) for x in (PROC / "a" / "stat").read_text().split("\n")[0].split()[1:9]]
    cb = [int(x) for x in (PROC / "b" / "stat").read_text().split("\n")[0].split()[1:9]]
    d = [y - x for x, y in zip(ca, cb, strict=True)]
    assert s.cpu_user_pct == pytest.approx(100 * (d[0] + d[1]) / sum(d))
    assert s.cpu_system_pct == pytest.approx(100 * (d[2] + d[5] + d[6]) / sum(d))
    assert s.cpu_iowait_pct == pytest.approx(100 * d[4] / sum(d))
    total = s.cpu_user_pct + s.cpu_system_pct + s.cpu_iowait_pct + s.cpu_idle_pct + s.cpu_steal_pct
    assert total == pytest.approx(100.0)


def test_hostload_disk_figures_follow_iostats() -> None:
    a, b = _readings()
    s = hostload.sample(a, b, 0, 1000)
    fa, fb = _fields(PROC / "a" / "diskstats", "vda"), _fields(PROC / "b" / "diskstats", "vda")
    d = [int(y) - int(x) for x, y in zip(fa[3:], fb[3:], strict=True)]
    util, queue, rbps, wbps, iops = s.disks["vda"]
    assert rbps == pytest.approx(d[2] * 512)  # field 3: sectors read
    assert wbps == pytest.approx(d[6] * 512)  # field 7: sectors written, 512 bytes each
    assert wbps > 0  # fio wrote while it was recorded
    assert iops == pytest.approx(d[0] + d[4])
    assert util == pytest.approx(min(100.0, d[9] / 10))  # io_ticks ms over 1000 ms, in %
    assert queue == pytest.approx(d[10] / 1000)  # iostat's aqu-sz
    assert all(k != "loop1" for k in s.disks)  # an idle device is left out
    assert s.mem_total_bytes > s.mem_used_bytes > 0


def test_hostload_samples_round_trip_through_the_store(tmp_path: Path) -> None:
    a, b = _readings()
    s = hostload.sample(a, b, 3, 1000)
    store = Store(str(tmp_path / "r.db"))
    run = store.runs.create(
        kind="run",
        name="t",
        source="t",
        plan_text="",
        overrides=[],
        inventory={},
        fio_version=None,
        storbench_version="0",
        argv=[],
        points=[],
    )
    store.host_samples.add(run, 0, [s])
    (got,) = store.host_samples.of_point(run, 0)
    assert (got.seq, got.t_ms, got.dur_ms) == (3, 1000, s.dur_ms)
    assert got.cpu_user_pct == pytest.approx(s.cpu_user_pct, abs=0.01)
    assert got.disks["vda"][0] == pytest.approx(s.disks["vda"][0], abs=0.01)
    assert store.run_series(run).host_samples(0) == [got]
    assert SCHEMA_VERSION >= 5


def test_hostload_summary_names_the_busiest_disk() -> None:
    a, b = _readings()
    s = hostload.sample(a, b, 0, 1000)
    got = hostload.summary([s, s])
    assert got["cpu_busy_pct_mean"] == pytest.approx(s.cpu_busy_pct)
    assert got["disk"] == max(s.disks, key=lambda k: s.disks[k][0])


def _schema(path: Path) -> dict[str, str]:
    import sqlite3

    db = sqlite3.connect(path)
    try:
        return dict(
            db.execute("SELECT name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'")
        )
    finally:
        db.close()


def test_hostload_a_real_schema_4_database_gains_the_table(tmp_path: Path) -> None:
    """tests/data/store/v4-run.sql: a database storbench wrote before host samples (its
    README says how), opened by this one: migrated in place, its run intact."""
    import sqlite3

    path = tmp_path / "results.db"
    db = sqlite3.connect(path)
    db.executescript((PROC.parent / "store" / "v4-run.sql").read_text())
    db.close()
    before = _schema(path)
    assert "intervals" in before and "host_samples" not in before
    store = Store(str(path))
    assert store.db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[
        0
    ] == str(SCHEMA_VERSION)
    fresh = tmp_path / "fresh.db"
    Store(str(fresh)).close()
    after = _schema(path)
    assert after == _schema(fresh)
    assert {k: after[k] for k in before} == before  # the v4 tables as they were
    run = store.runs.get(1)
    assert (run.name, run.status, run.measured) == ("v4-fixture", "completed", 1)
    assert store.series.of_point(1, 0) and store.host_samples.of_point(1, 0) == []
    a, b = _readings()
    store.host_samples.add(1, 0, [hostload.sample(a, b, 0, 1000)])
    assert len(store.host_samples.of_point(1, 0)) == 1
    store.close()


def test_hostload_a_counter_that_went_down_is_left_out_of_that_interval() -> None:
    a, b = _readings()
    dev = next(iter(hostload.sample(a, b, 0, 1000).disks))
    b.disks[dev] = tuple(x - 10**6 if k == 4 else x for k, x in enumerate(a.disks[dev]))
    assert dev not in hostload.sample(a, b, 0, 1000).disks
