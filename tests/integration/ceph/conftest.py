"""One real Ceph cluster for the whole test session (tests/cephcluster.py).

``ceph_cluster`` brings up 1 mon, 1 mgr and 2 bluestore OSDs (8 GiB sparse files) on
127.0.0.1 (~7-10 s on 2 cores), with the pool ``bench`` (size 1, 8 PGs); tests that change
the cluster (stop an OSD, create pools) put it back as they found it. Skips when the Ceph
packages are not installed (``make test`` installs them: scripts/setup-system.sh). The
cluster is always torn down: by the session finalizer (also after a failure or Ctrl-C), else
at interpreter exit (atexit), else -- when the test process is killed outright -- by the
daemons' parent-death signal.
"""

from __future__ import annotations

import atexit
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # tests/: the harness module

from cephcluster import CephCluster, missing_packages

#: bring-up and teardown times of this session's cluster, for the terminal summary
TIMINGS: dict[str, float] = {}


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "ceph: runs against a real Ceph cluster (tests/cephcluster.py); -m 'not ceph'"
    )


@pytest.fixture(scope="session")
def ceph_cluster(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> CephCluster:
    missing = missing_packages()
    if missing:
        pytest.skip(
            f"Ceph is not installed (missing Debian packages: {' '.join(missing)}); "
            "`make test` installs them (scripts/setup-system.sh)"
        )
    cluster = CephCluster(
        tmp_path_factory.mktemp("ceph"),
        num_osd=2,
        # not memstore: its used-bytes counter (16.2.15) wraps below zero after a few
        # write/delete cycles (kb_used 18014398509481963) and the OSD turns "full" (HEALTH_ERR)
        objectstore="bluestore",
        osd_gb=8,
        pool="bench",
        pool_size=1,
        pg_num=8,
    )

    def stop() -> None:
        t0 = time.monotonic()
        cluster.stop()
        TIMINGS.setdefault("teardown", round(time.monotonic() - t0, 3))

    # both registered before start(): a bring-up that fails half-way is torn down too
    request.addfinalizer(stop)
    atexit.register(stop)
    cluster.start()
    TIMINGS.update({f"bring-up {k}": v for k, v in cluster.timings.items()})
    return cluster


#: the OSD ``inactive_pool`` stops (the session cluster has osd.0 and osd.1)
STOPPED_OSD = 1


def _wait_for(what: str, cond: Any, timeout: float) -> Any:
    """Poll ``cond`` every 0.5 s until it returns something true; AssertionError after
    ``timeout`` seconds."""
    end = time.monotonic() + timeout
    while True:
        value = cond()
        if value:
            return value
        if time.monotonic() > end:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(0.5)


@pytest.fixture
def inactive_pool(ceph_cluster: CephCluster) -> Iterator[str]:
    """The name of a pool none of whose PGs serves I/O: a pool of size 2 / min_size 2
    (8 PGs) with osd.1 stopped -- Ceph says only HEALTH_WARN, yet any I/O to the pool would
    wait forever (the approach of test_cluster.py's health-gate test). Yields once every PG
    of the pool is inactive; afterwards the OSD runs again, the pool is gone and every PG is
    active+clean with the cluster HEALTH_OK, whatever the test did."""
    pool = "inactive"
    ceph_cluster.create_pool(pool, 2, 2, 8)
    try:
        ceph_cluster.stop_osd(STOPPED_OSD)

        def all_inactive() -> bool:
            doc = ceph_cluster.ceph("pg", "ls-by-pool", pool)
            pgs = doc.get("pg_stats", []) if isinstance(doc, dict) else doc
            states = [str(pg["state"]).split("+") for pg in pgs]
            return len(states) == 8 and all("active" not in s for s in states)

        _wait_for(f"every PG of pool {pool} inactive", all_inactive, 60)
        yield pool
    finally:
        if f"osd.{STOPPED_OSD}" not in ceph_cluster.pids():  # also when stop_osd failed
            ceph_cluster.start_osd(STOPPED_OSD)
        ceph_cluster.delete_pool(pool)
        ceph_cluster.wait_clean()
    _wait_for("HEALTH_OK", lambda: ceph_cluster.health()[0] == "HEALTH_OK", 60)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if TIMINGS:
        up = TIMINGS.get("bring-up total")
        down = TIMINGS.get("teardown")
        steps = ", ".join(
            f"{k.removeprefix('bring-up ')} {v:.1f}s"
            for k, v in TIMINGS.items()
            if k.startswith("bring-up ") and k != "bring-up total"
        )
        terminalreporter.write_line(
            f"ceph test cluster: up in {up}s ({steps}); torn down in {down}s"
        )
