"""A run's live figures for Prometheus (``storbench run … --metrics ADDR:PORT``): what the
runner tells its observer (each point's start and end, each batch of intervals as the
engine reports it, steady-state rounds, findings) kept as gauges and counters, and served
in Prometheus' text format while the run goes.

The exposition is prometheus_client's (its registry, its WSGI server in a thread of its
own); names and units follow Prometheus' conventions (base units: ``_seconds``,
``_bytes_per_second``; ``_total`` for counters). Per point and host (``host=""``: the
point's own figures, its hosts merged) and direction:

- ``storbench_iops``, ``storbench_throughput_bytes_per_second``: the latest interval's
  (``interval:`` in the plan, 1 s by default), as the database then holds it;
- ``storbench_latency_seconds{quantile="0.5|0.99|0.999"}``, ``storbench_latency_mean_seconds``:
  that interval's completion latency (fio's clat: what its status reports give per interval);
- ``storbench_steady_state_rounds``: the point's rounds so far (steady state);

and per run: ``storbench_points_planned``, ``storbench_points_done`` (measured, failed or
skipped), ``storbench_point_running`` (the running point's number, 0 between points) and
``storbench_findings_total{code}``; per Ceph cluster, its health as the run's monitors
sample it (execute/cephmetrics.py: ``storbench_ceph_health_status``, the checks raised,
PGs clean or inactive, client and recovery throughput), every 2 s during a drill. A
point's figures go when it ends (a dashboard shows what runs now; the database keeps
everything). Ramp intervals (before the measurement
begins) are not served.

Like ``serve`` and ``agent``, the endpoint has no authentication: it listens on loopback
unless told ``--metrics-any-address`` (hosts/binding.py).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from prometheus_client import CollectorRegistry, Counter, Gauge, start_wsgi_server

from storbench.execute.cephmetrics import CephGauges
from storbench.hosts import binding
from storbench.model.errors import UserError, clipped

if TYPE_CHECKING:
    from storbench.analysis.steady import Verdict
    from storbench.execute.monitor import HealthSample
    from storbench.model.findings import Finding
    from storbench.model.metrics import Measurement
    from storbench.model.series import Interval
    from storbench.plan import Point

__all__ = ["LiveMetrics", "Tee"]

#: the labels of a point's figures
POINT_LABELS = ("run", "point", "workload", "target", "host", "direction")
#: what whoever reaches the endpoint gets (said when an address is refused)
EXPOSES = "whoever reaches it reads the run's figures, its targets and workloads"
#: the interval percentiles a batch carries, as Prometheus' quantile label
QUANTILES = (("0.5", "p50_ns"), ("0.99", "p99_ns"), ("0.999", "p999_ns"))


class LiveMetrics:
    """The observer that keeps a run's figures for Prometheus (module docstring)."""

    def __init__(self) -> None:
        self.run = ""
        self.registry = CollectorRegistry()
        r = self.registry
        self.planned = Gauge(
            "storbench_points_planned", "points the run plans", ["run"], registry=r
        )
        self.done = Gauge(
            "storbench_points_done", "points measured, failed or skipped", ["run"], registry=r
        )
        self.running = Gauge(
            "storbench_point_running", "the running point's number (0: none)", ["run"], registry=r
        )
        self.findings = Counter(
            "storbench_findings", "findings of the run's measurements", ["run", "code"], registry=r
        )
        self.iops = Gauge(
            "storbench_iops", "I/Os per second, latest interval", POINT_LABELS, registry=r
        )
        self.bw = Gauge(
            "storbench_throughput_bytes_per_second",
            "bytes per second, latest interval",
            POINT_LABELS,
            registry=r,
        )
        self.lat = Gauge(
            "storbench_latency_seconds",
            "completion latency percentile, latest interval",
            [*POINT_LABELS, "quantile"],
            registry=r,
        )
        self.lat_mean = Gauge(
            "storbench_latency_mean_seconds",
            "mean completion latency, latest interval",
            POINT_LABELS,
            registry=r,
        )
        self.rounds = Gauge(
            "storbench_steady_state_rounds",
            "steady-state rounds of the point so far",
            ["run", "point", "workload", "target"],
            registry=r,
        )
        self.ceph = CephGauges(r)  # the clusters' health during the run (cephmetrics.py)
        self.shown: dict[int, set[tuple[str, ...]]] = {}  # point -> its label values served
        self.lock = threading.Lock()
        self.server: Any = None
        self.thread: threading.Thread | None = None

    def begin(self, run_id: int, planned: int, done: int = 0) -> None:
        """The run the figures are of (its id labels them), its planned points and those
        done before (``resume``)."""
        self.run = str(run_id)
        self.planned.labels(self.run).set(planned)
        self.done.labels(self.run).set(done)
        self.running.labels(self.run).set(0)

    def beside(self, observer: Any) -> Tee:
        """The runner's observer that tells ``observer`` (the terminal's progress) and then
        these metrics everything."""
        return Tee(observer, self)

    # -- serving

    def serve(self, host: str, port: int, any_address: bool = False) -> int:
        """Serve the figures on ``host``:``port``; the port bound (0: a free one). A
        UserError when the address is refused (module docstring) or cannot be had."""
        reason = binding.refusal(host, any_address, scope="loopback", exposes=EXPOSES)
        if reason:
            raise UserError(
                f"--metrics {clipped(host)}:{port}: {reason}",
                fix="listen on loopback (127.0.0.1) and let Prometheus scrape there, or add "
                "--metrics-any-address to listen there anyway",
            )
        try:
            self.server, self.thread = start_wsgi_server(port, host, registry=self.registry)
        except OSError as e:
            raise UserError(
                f"--metrics {clipped(host)}:{port}: cannot listen there: {e.strerror or e}",
                fix="choose another port (0: any free one)",
            ) from None
        return int(self.server.server_port)

    def close(self) -> None:
        """Stop serving (the run has ended)."""
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None
        if self.thread is not None:
            self.thread.join(timeout=5)
            self.thread = None

    # -- the runner's observer

    def _point(self, point: Point) -> tuple[str, str, str, str]:
        return (self.run, str(point.index + 1), point.workload, point.target.label)

    def point_started(self, point: Point, n: int, total: int) -> None:
        self.running.labels(self.run).set(point.index + 1)
        self.planned.labels(self.run).set(total)

    def point_finished(
        self, point: Point, meas: Measurement, n: int, total: int, seconds: float
    ) -> None:
        self.done.labels(self.run).inc()
        self._forget(point)

    def point_interrupted(self, point: Point) -> None:
        self._forget(point)
        self.running.labels(self.run).set(0)

    def round_finished(self, point: Point, n: int, value: float, verdict: Verdict | None) -> None:
        self.rounds.labels(*self._point(point)).set(n)

    def phase(self, point: Point, text: str) -> None:
        return None

    def finding(self, point: Point, finding: Finding) -> None:
        self.findings.labels(self.run, finding.code).inc()

    def ceph_health(self, cluster: str, sample: HealthSample) -> None:
        self.ceph.sample(self.run, cluster, sample)

    def intervals(self, point: Point, rows: list[Interval]) -> None:
        latest: dict[tuple[str, str], Interval] = {}
        for row in rows:
            if not row.ramp:
                latest[(row.host, row.direction)] = row  # rows come in time order
        with self.lock:
            shown = self.shown.setdefault(point.index, set())
            for (host, direction), row in latest.items():
                labels = (*self._point(point), host, direction)
                shown.add(labels)
                self.iops.labels(*labels).set(row.iops)
                self.bw.labels(*labels).set(row.bw_bytes)
                _set(self.lat_mean.labels(*labels).set, row.lat_mean_ns)
                for q, attr in QUANTILES:
                    _set(self.lat.labels(*labels, q).set, getattr(row, attr))

    def _forget(self, point: Point) -> None:
        """A point's figures go when it ends: only running points are served."""
        with self.lock:
            for labels in self.shown.pop(point.index, set()):
                for gauge in (self.iops, self.bw, self.lat_mean):
                    _remove(gauge, labels)
                for q, _ in QUANTILES:
                    _remove(self.lat, (*labels, q))
        _remove(self.rounds, self._point(point))


def _set(setter: Callable[[float], None], ns: float | None) -> None:
    if ns is not None:
        setter(ns / 1e9)


def _remove(gauge: Gauge, labels: tuple[str, ...]) -> None:
    with contextlib.suppress(KeyError):  # never set (no latency, no rounds)
        gauge.remove(*labels)


class Tee:
    """The runner's observer made of several: each hears every call, in order (the
    terminal's progress, then the live metrics)."""

    def __init__(self, *observers: Any) -> None:
        self.observers = observers

    def __getattr__(self, name: str) -> Callable[..., None]:
        calls = [getattr(o, name) for o in self.observers]

        def each(*args: Any) -> None:
            for call in calls:
                call(*args)

        return each
