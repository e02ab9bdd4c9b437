"""The Ceph clusters' health for Prometheus while a run goes (execute/metrics.py serves
them beside the points' figures): what the run's health monitors (execute/monitor.py)
sample, every few seconds during a failure drill, as gauges per run and cluster (the
cluster's ``ceph.conf``):

- ``storbench_ceph_up``: 1 while the cluster answers, 0 when it could not be asked;
- ``storbench_ceph_health_status``: 0 ``HEALTH_OK``, 1 ``HEALTH_WARN``, 2 ``HEALTH_ERR``
  (ceph-mgr's own exporter counts the same way), the last answer's;
- ``storbench_ceph_health_check{check}``: 1 for each health check raised (``OSD_DOWN``,
  ``PG_DEGRADED``...); a check that clears goes;
- ``storbench_ceph_pgs_clean``: 1 when every PG is active+clean (healed), else 0;
- ``storbench_ceph_inactive_pgs{pool}``: a benchmarked pool's PGs that serve no I/O;
- ``storbench_ceph_client_read_bytes_per_second``, ``..._write_...``,
  ``storbench_ceph_recovery_bytes_per_second``: the cluster's client and recovery
  throughput as ``ceph status`` gives it.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry, Gauge

if TYPE_CHECKING:
    from storbench.execute.monitor import HealthSample

__all__ = ["CephGauges"]

STATUS = {"HEALTH_OK": 0, "HEALTH_WARN": 1, "HEALTH_ERR": 2}
#: ceph status's pgmap figure -> the gauge's name
IO = {
    "read_bytes_sec": "storbench_ceph_client_read_bytes_per_second",
    "write_bytes_sec": "storbench_ceph_client_write_bytes_per_second",
    "recovering_bytes_per_sec": "storbench_ceph_recovery_bytes_per_second",
}


class CephGauges:
    """The gauges above, set from each health sample."""

    def __init__(self, registry: CollectorRegistry) -> None:
        labels = ["run", "cluster"]
        self.up = Gauge("storbench_ceph_up", "the cluster answered", labels, registry=registry)
        self.status = Gauge(
            "storbench_ceph_health_status",
            "0 HEALTH_OK, 1 HEALTH_WARN, 2 HEALTH_ERR",
            labels,
            registry=registry,
        )
        self.check = Gauge(
            "storbench_ceph_health_check",
            "1 for each health check raised",
            [*labels, "check"],
            registry=registry,
        )
        self.clean = Gauge(
            "storbench_ceph_pgs_clean", "every PG active+clean", labels, registry=registry
        )
        self.inactive = Gauge(
            "storbench_ceph_inactive_pgs",
            "PGs of a benchmarked pool that serve no I/O",
            [*labels, "pool"],
            registry=registry,
        )
        self.io = {
            key: Gauge(name, f"ceph status: {key}", labels, registry=registry)
            for key, name in IO.items()
        }
        self.raised: dict[tuple[str, str], set[str]] = {}
        self.pools: dict[tuple[str, str], set[str]] = {}
        self.lock = threading.Lock()

    def sample(self, run: str, cluster: str, s: HealthSample) -> None:
        """One sample of ``cluster``'s health (from a monitor's thread)."""
        key = (run, cluster)
        with self.lock:
            self.up.labels(*key).set(0 if s.status not in STATUS else 1)
            if s.status not in STATUS:  # unreachable: the last answer's figures stay
                return
            self.status.labels(*key).set(STATUS[s.status])
            for gone in self.raised.get(key, set()) - set(s.checks):
                self.check.remove(*key, gone)
            for code in s.checks:
                self.check.labels(*key, code).set(1)
            self.raised[key] = set(s.checks)
            if s.clean is not None:
                self.clean.labels(*key).set(1 if s.clean else 0)
            for pool in self.pools.get(key, set()) | set(s.inactive):
                self.inactive.labels(*key, pool).set(sum(s.inactive.get(pool, {}).values()))
            self.pools[key] = self.pools.get(key, set()) | set(s.inactive)
            for name, gauge in self.io.items():
                if name in s.io:
                    gauge.labels(*key).set(float(s.io[name]))
