"""The health monitor against the session's real Ceph cluster (``ceph_cluster``): an OSD
stopped under a size 2 / min_size 2 pool is reported at once as HEALTH_WARN with the pool's
inactive PGs, its return as HEALTH_OK -- each change written from the monitor's thread into a
real Store. The cluster is left as found: the OSD up, the pool gone, every PG active+clean."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from test_cluster import wait_until

from storbench.execute.monitor import HealthMonitor, HealthSample, sample_health
from storbench.preflight import ceph
from storbench.store import Store

pytestmark = [pytest.mark.integration, pytest.mark.ceph]

POOL = "monitored"
OSD = 1
#: seconds between samples (each is 2 ceph commands in parallel, ~0.4 s here)
INTERVAL = 0.5


def test_monitor_sees_an_osd_go_down_and_come_back(ceph_cluster: Any, tmp_path: Path) -> None:
    conf = str(ceph_cluster.conf_path)
    status, checks = ceph.health(conf)
    assert (status, checks) == ("HEALTH_OK", {}), checks

    store = Store(str(tmp_path / "results.db"))
    run = store.runs.create(
        kind="run",
        name="monitored",
        source="test",
        plan_text=None,
        overrides=[],
        inventory={},
        fio_version=None,
        storbench_version="0.1.0",
        argv=[],
        points=[],
    )
    changes: list[tuple[HealthSample, HealthSample | None, str]] = []

    def on_change(s: HealthSample, previous: HealthSample | None) -> None:
        # the runner's use: an event per change, written from the monitor's thread
        store.events.add(run, "health", s.message(), s.to_dict(), at=s.at)
        changes.append((s, previous, threading.current_thread().name))

    def seen(cond: Any) -> HealthSample | None:
        return next((s for s, _, _ in changes if cond(s)), None)

    ceph_cluster.create_pool(POOL, 2, 2, 8)
    osd_down = False
    try:
        initial = sample_health(conf, [POOL])
        assert (initial.status, initial.inactive) == ("HEALTH_OK", {}), initial.message()
        mon = HealthMonitor(conf, [POOL], on_change, interval=INTERVAL, initial=initial)
        mon.start()
        try:
            ceph_cluster.stop_osd(OSD)
            osd_down = True
            warn = wait_until(
                f"a HEALTH_WARN change with the inactive PGs of {POOL}",
                lambda: seen(lambda s: s.status == "HEALTH_WARN" and POOL in s.inactive),
                timeout=60,
            )
            # then, once peered without the OSD, not one PG of the pool is active
            wait_until(
                f"every PG of {POOL} inactive",
                lambda: seen(lambda s: sum(s.inactive.get(POOL, {}).values()) == 8),
                timeout=60,
            )
            ceph_cluster.start_osd(OSD)
            osd_down = False
            ok = wait_until(
                "the change back to HEALTH_OK, every PG active",
                lambda: seen(
                    lambda s: s.status == "HEALTH_OK" and not s.inactive and s.at > warn.at
                ),
                timeout=120,
            )
        finally:
            mon.stop()
    finally:
        if osd_down:
            ceph_cluster.start_osd(OSD)
        ceph_cluster.delete_pool(POOL)
        ceph_cluster.wait_clean()
    assert wait_until("HEALTH_OK", lambda: ceph.health(conf)[0] == "HEALTH_OK", 30)

    print("\n".join(f"{s.at - initial.at:+.1f} s {s.message()}" for s, _, _ in changes))
    assert "OSD_DOWN" in warn.checks
    assert f"pool {POOL}: " in warn.message() and " inactive (" in warn.message()
    peered = seen(lambda s: sum(s.inactive.get(POOL, {}).values()) == 8)
    assert peered is not None and peered.status == "HEALTH_WARN"
    # min_size 2 with one OSD: no PG of the pool is active (Ceph still says only WARN)
    assert all("active" not in state.split("+") for state in peered.inactive[POOL])
    assert f"pool {POOL}: 8 PGs inactive" in peered.message()
    assert ok.inactive == {} and ok.checks == ()
    assert mon.samples() >= len(changes) >= 2
    assert mon.callback_errors == []

    # each change against the one before, the first against what preflight saw
    assert changes[0][1] is initial
    for (_, prev, _), (before, _, _) in zip(changes[1:], changes, strict=False):
        assert prev is before
    assert all(s.key() != p.key() for s, p, _ in changes if p is not None)
    assert {name for _, _, name in changes} == {"storbench-health-monitor"}

    # the timeline in the store: one event per change, in order
    events = store.events.of_run(run, "health")
    assert [e.message for e in events] == [s.message() for s, _, _ in changes]
    assert [e.data["status"] for e in events][-1] == "HEALTH_OK"
    assert any(POOL in e.data["inactive"] for e in events)
    store.close()
