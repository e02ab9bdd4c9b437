"""The load's host per interval (storbench.hostload): the /proc counters read from two real
readings (tests/data/proc, recorded by its record.sh while fio wrote), the differences as
rates and shares, and their round trip through the store."""

from __future__ import annotations

from pathlib import Path

import pytest

from storbench import hostload
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
    run = store.create_run(
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
    store.add_host_samples(run, 0, [s])
    (got,) = store.host_samples(run, 0)
    assert (got.seq, got.t_ms, got.dur_ms) == (3, 1000, s.dur_ms)
    assert got.cpu_user_pct == pytest.approx(s.cpu_user_pct, abs=0.01)
    assert got.disks["vda"][0] == pytest.approx(s.disks["vda"][0], abs=0.01)
    assert store.run_series(run).host_samples(0) == [got]
    assert SCHEMA_VERSION == 5


def test_hostload_summary_names_the_busiest_disk() -> None:
    a, b = _readings()
    s = hostload.sample(a, b, 0, 1000)
    got = hostload.summary([s, s])
    assert got["cpu_busy_pct_mean"] == pytest.approx(s.cpu_busy_pct)
    assert got["disk"] == max(s.disks, key=lambda k: s.disks[k][0])


def test_hostload_a_schema_4_database_gains_the_table_and_keeps_its_series(
    tmp_path: Path,
) -> None:
    """A database as the previous release (schema 4) left it opens, migrated in place."""
    import sqlite3

    from storbench.series import Interval

    path = tmp_path / "r.db"
    store = Store(str(path))
    run = store.create_run(
        kind="run",
        name="old",
        source="t",
        plan_text="",
        overrides=[],
        inventory={},
        fio_version=None,
        storbench_version="0",
        argv=[],
        points=[],
    )
    store.add_intervals(run, 0, [Interval(0, 1000, 1000, "read", 10, 40960)])
    store.close()
    db = sqlite3.connect(path)
    db.executescript(
        "DROP TABLE host_samples; UPDATE meta SET value='4' WHERE key='schema_version';"
    )
    db.close()
    again = Store(str(path))
    assert (
        again.db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0] == "5"
    )
    assert again.intervals(run, 0)[0].ios == 10
    assert again.host_samples(run, 0) == []
    again.close()
