"""Health samples from real recorded ``ceph ... -f json`` outputs (tests/data/rados), and the
monitor's thread when the cluster cannot be asked (the ceph command does not exist), with a
real Store written from that thread. The monitor against a live cluster:
tests/integration/ceph/test_monitor.py."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from test_ceph_preflight import pg_states, recorded

from storbench.execute.monitor import UNREACHABLE, HealthMonitor, HealthSample, sample_health
from storbench.preflight.ceph import commands
from storbench.store import Store

#: bound of every wait in these tests, s
TIMEOUT = 30.0


def wait_until(what: str, cond: Callable[[], Any]) -> Any:
    end = time.monotonic() + TIMEOUT
    while not (value := cond()):
        if time.monotonic() > end:
            raise AssertionError(f"timed out after {TIMEOUT:g} s waiting for {what}")
        time.sleep(0.01)
    return value


def sample(state: str, pools: tuple[str, ...] = ("bench",)) -> HealthSample:
    h = recorded(state, "health-detail")
    return HealthSample.of(
        h["status"], h["checks"], {p: pg_states(state, p) for p in pools}, at=1000.0
    )


def test_healthy() -> None:
    s = sample("healthy")
    assert (s.status, s.checks, s.inactive, s.detail) == ("HEALTH_OK", (), {}, {})
    assert s.message() == "HEALTH_OK"


def test_an_osd_down_under_a_size2_min2_pool() -> None:
    s = sample("degraded", ("bench", "deg"))
    assert s.status == "HEALTH_WARN"
    assert s.checks == ("OSD_DOWN", "PG_DEGRADED")
    assert s.inactive == {
        "bench": {"stale+active+clean": 6},
        "deg": {"undersized+degraded+peered": 8},
    }
    assert s.detail == recorded("degraded", "health-detail")["checks"]
    assert s.message() == (
        "HEALTH_WARN: OSD_DOWN (1 osds down); PG_DEGRADED (Degraded data redundancy: "
        "2479/4958 objects degraded (50.000%), 8 pgs degraded); "
        "pool bench: 6 PGs inactive (6 stale+active+clean); "
        "pool deg: 8 PGs inactive (8 undersized+degraded+peered)"
    )
    d = s.to_dict()
    assert json.loads(json.dumps(d)) == d
    assert d["checks"] == ["OSD_DOWN", "PG_DEGRADED"] and d["at"] == 1000.0


def test_what_a_change_is() -> None:
    degraded, stuck = sample("degraded", ("deg",)), sample("degraded-stuck", ("deg",))
    # 60 s later Ceph adds PG_AVAILABILITY: a change; the same states again are none
    assert "PG_AVAILABILITY" in stuck.checks
    assert degraded.key() != stuck.key()
    assert sample("degraded", ("deg",)).key() == degraded.key()
    assert sample("healthy", ()).key() != degraded.key()
    # counts inside a check's message move with every write: no change
    moved = recorded("degraded", "health-detail")["checks"]
    moved["PG_DEGRADED"] = {**moved["PG_DEGRADED"], "summary": {"message": "other counts"}}
    other = HealthSample.of("HEALTH_WARN", moved, {"deg": pg_states("degraded", "deg")})
    assert other.key() == degraded.key() and other.message() != degraded.message()
    # a different number of inactive PGs is a change
    fewer = HealthSample.of(
        "HEALTH_WARN", moved, {"deg": {"undersized+degraded+peered": 7, "active+clean": 1}}
    )
    assert fewer.key() != degraded.key()
    assert HealthSample.unreachable("a").key() == HealthSample.unreachable("b").key()


def test_health_err() -> None:
    s = sample("full")
    assert s.status == "HEALTH_ERR"
    assert s.checks == ("OSD_BACKFILLFULL", "OSD_FULL", "POOL_FULL")
    assert "OSD_FULL (1 full osd(s))" in s.message()


@pytest.fixture
def no_ceph(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> str:
    """The ceph command does not exist: every query fails for real."""
    monkeypatch.setattr(commands, "CEPH", str(tmp_path / "no-such-ceph"))  # where it is read
    return str(tmp_path / "no-such-ceph")


def test_a_failing_query_is_unreachable_not_an_exception(no_ceph: str) -> None:
    s = sample_health(None, ["bench"])
    assert s.status == UNREACHABLE and s.checks == () and s.inactive == {}
    assert "cannot run" in s.detail["error"] and no_ceph in s.detail["error"]
    assert s.message().startswith("UNREACHABLE: cannot run ")


def test_monitor_reports_the_first_sample_once_into_a_real_store(
    no_ceph: str, tmp_path: Path
) -> None:
    """on_change runs in the monitor's thread and writes the Store there."""
    store = Store(str(tmp_path / "r.db"))
    run = store.runs.create(
        kind="run",
        name="r",
        source="t",
        plan_text=None,
        overrides=[],
        inventory={},
        fio_version=None,
        storbench_version="0.1.0",
        argv=[],
        points=[],
    )
    calls: list[tuple[HealthSample, HealthSample | None]] = []

    def on_change(s: HealthSample, previous: HealthSample | None) -> None:
        calls.append((s, previous))
        store.events.add(run, "health", s.message(), s.to_dict(), at=s.at)

    mon = HealthMonitor(None, ["bench"], on_change, interval=0.02)
    mon.start()
    try:
        wait_until("5 samples", lambda: mon.samples() >= 5)
    finally:
        mon.stop()
    n = mon.samples()
    assert mon.callback_errors == []
    # every sample failed alike: one change, the first, reported against no baseline
    assert len(calls) == 1 and calls[0][1] is None and calls[0][0].status == UNREACHABLE
    [event] = store.events.of_run(run)
    assert event.message == calls[0][0].message() and event.data["status"] == UNREACHABLE
    assert mon.samples() == n, "no sample after stop()"


def test_initial_is_the_baseline(no_ceph: str) -> None:
    calls: list[tuple[HealthSample, HealthSample | None]] = []
    initial = sample("healthy")
    mon = HealthMonitor(
        None, ["bench"], lambda s, p: calls.append((s, p)), interval=0.02, initial=initial
    )
    with mon:
        wait_until("a change", lambda: calls)
    assert calls[0][1] is initial and calls[0][0].status == UNREACHABLE
    assert len(calls) == 1

    same: list[HealthSample] = []
    unreachable = HealthSample.unreachable("seen by preflight")
    with HealthMonitor(
        None, [], lambda s, p: same.append(s), interval=0.02, initial=unreachable
    ) as mon2:
        wait_until("3 samples", lambda: mon2.samples() >= 3)
    assert same == []


def test_an_exception_in_on_change_does_not_stop_sampling(no_ceph: str) -> None:
    def boom(s: HealthSample, p: HealthSample | None) -> None:
        raise RuntimeError("store closed")

    with HealthMonitor(None, [], boom, interval=0.02) as mon:
        wait_until("3 samples", lambda: mon.samples() >= 3)
    assert [str(e) for e in mon.callback_errors] == ["store closed"]


def test_stop_wakes_the_thread_at_once(no_ceph: str) -> None:
    """An interval of an hour: stop() must not wait it out (it would hang this test)."""
    mon = HealthMonitor(None, [], lambda s, p: None, interval=3600)
    mon.start()
    wait_until("the first sample", lambda: mon.samples() >= 1)
    mon.stop()
    assert mon._thread is not None and not mon._thread.is_alive()
    mon.stop()  # idempotent
    with pytest.raises(ValueError, match="interval"):
        HealthMonitor(None, [], lambda s, p: None, interval=0)
