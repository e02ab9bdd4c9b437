"""The live metrics of a run (execute/metrics.py): what the runner's observer calls become
in Prometheus' text format (prometheus_client's exposition, read back by its own parser),
a finished point's figures gone, the address rules, and the endpoint served over HTTP."""

from __future__ import annotations

import json
import re
import urllib.request
from pathlib import Path

import pytest
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from storbench.execute.metrics import LiveMetrics, Tee
from storbench.execute.monitor import HealthSample
from storbench.model.errors import UserError
from storbench.model.findings import Finding
from storbench.model.series import Interval
from storbench.plan import Point, Target
from storbench.plan.metricskeys import parse_address


def _point(idx: int = 0) -> Point:
    return Point(idx, f"k{idx}", 0, Target("file", "/tmp/a.dat"), "rr", {"rw": "randread"}, {})


def _samples(live: LiveMetrics) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    text = generate_latest(live.registry).decode()
    out = {}
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def _value(live: LiveMetrics, name: str, **labels: str) -> float | None:
    for (n, ls), v in _samples(live).items():
        if n == name and all(dict(ls).get(k) == val for k, val in labels.items()):
            return v
    return None


def _interval(seq: int, ios: int, *, ramp: bool = False, host: str = "") -> Interval:
    return Interval(
        seq=seq,
        t_ms=(seq + 1) * 1000,
        dur_ms=1000,
        direction="read",
        ios=ios,
        bytes=ios * 4096,
        lat_mean_ns=250_000.0,
        p50_ns=200_000.0,
        p99_ns=900_000.0,
        p999_ns=1_500_000.0,
        ramp=ramp,
        host=host,
    )


def test_metrics_live_serves_the_latest_interval_then_forgets_a_finished_point() -> None:
    live = LiveMetrics()
    live.begin(7, planned=3)
    p = _point()
    live.point_started(p, 1, 3)
    assert _value(live, "storbench_point_running", run="7") == 1
    live.intervals(p, [_interval(0, 900, ramp=True)])  # ramp: not served
    assert _value(live, "storbench_iops") is None
    live.intervals(p, [_interval(1, 1000), _interval(2, 1200)])  # the latest wins
    labels = {"run": "7", "point": "1", "workload": "rr", "target": "/tmp/a.dat", "host": ""}
    assert _value(live, "storbench_iops", direction="read", **labels) == 1200
    assert _value(live, "storbench_throughput_bytes_per_second", **labels) == 1200 * 4096
    assert _value(live, "storbench_latency_seconds", quantile="0.99", **labels) == 0.0009
    assert _value(live, "storbench_latency_mean_seconds", **labels) == 0.00025
    live.intervals(p, [_interval(3, 600, host="h1")])  # a host's own figures beside
    assert _value(live, "storbench_iops", host="h1") == 600
    live.finding(p, Finding("page-cache", "evidence", "advice"))
    assert _value(live, "storbench_findings_total", code="page-cache") == 1
    live.point_finished(p, None, 1, 3, 5.0)  # type: ignore[arg-type]
    assert _value(live, "storbench_points_done", run="7") == 1
    assert _value(live, "storbench_iops") is None  # only running points are served
    assert _value(live, "storbench_latency_seconds") is None


def test_metrics_live_resume_counts_the_points_done_before() -> None:
    live = LiveMetrics()
    live.begin(3, planned=10, done=6)
    assert _value(live, "storbench_points_planned", run="3") == 10
    assert _value(live, "storbench_points_done", run="3") == 6


def test_metrics_live_tee_tells_each_observer_in_order() -> None:
    heard: list[str] = []

    class One:
        def phase(self, point: Point, text: str) -> None:
            heard.append(f"one {text}")

    class Two:
        def phase(self, point: Point, text: str) -> None:
            heard.append(f"two {text}")

    Tee(One(), Two()).phase(_point(), "prefill")
    assert heard == ["one prefill", "two prefill"]


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("127.0.0.1:9464", ("127.0.0.1", 9464)),
        ("[::1]:9464", ("::1", 9464)),
        (":0", ("127.0.0.1", 0)),
        ("9464", ("127.0.0.1", 9464)),
        ("localhost:9100", ("localhost", 9100)),
    ],
)
def test_metrics_live_parses_addresses(text: str, want: tuple[str, int]) -> None:
    assert parse_address(text) == want


@pytest.mark.parametrize(
    "text", ["127.0.0.1:abc", "127.0.0.1:70000", "host:", "", "::1", "::1:9464"]
)
def test_metrics_live_refuses_a_bad_address_with_the_fix(text: str) -> None:
    with pytest.raises(UserError) as e:
        parse_address(text)
    assert "--metrics ADDR:PORT" in (e.value.fix or "")


def test_metrics_live_listens_on_loopback_only_unless_told() -> None:
    live = LiveMetrics()
    for host in ("0.0.0.0", "8.8.8.8"):
        with pytest.raises(UserError) as e:
            live.serve(host, 0)
        assert "--metrics-any-address" in (e.value.fix or "")
    port = live.serve("127.0.0.1", 0)
    try:
        live.begin(1, planned=2)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
            body = r.read().decode()
        assert 'storbench_points_planned{run="1"} 2.0' in body
    finally:
        live.close()
    with pytest.raises(OSError):
        urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2)


DASHBOARD = Path(__file__).resolve().parents[2] / "docs" / "grafana" / "storbench-live.json"


def test_metrics_grafana_dashboard_asks_only_for_what_the_endpoint_serves() -> None:
    """Every metric a panel of the Grafana dashboard queries is one the endpoint serves,
    and every label a legend names is one of that metric's labels."""
    dash = json.loads(DASHBOARD.read_text())
    live = LiveMetrics()
    live.begin(1, planned=2)
    p = _point()
    live.point_started(p, 1, 2)
    live.intervals(p, [_interval(1, 1000)])
    live.round_finished(p, 1, 1000.0, None)
    live.finding(p, Finding("page-cache", "evidence", "advice"))
    live.ceph_health("/etc/ceph/ceph.conf", DEGRADED)
    served: dict[str, set[str]] = {}
    for (name, labels), _ in _samples(live).items():
        served.setdefault(name, set()).update(k for k, _ in labels)
    exprs = [
        (t["expr"], t.get("legendFormat", "")) for panel in dash["panels"] for t in panel["targets"]
    ]
    assert len(exprs) >= 16
    asked = set()
    for expr, legend in exprs:
        names = set(re.findall(r"\bstorbench_[a-z_]+", expr))
        assert names, expr
        asked |= names
        for name in names:
            assert name in served, f"{name} in the dashboard is not served"
        for label in re.findall(r"\{\{(\w+)\}\}", legend):
            assert any(label in served[n] for n in names), (label, expr)
    # the dashboard shows every figure the endpoint serves
    assert asked == set(served) - {"storbench_findings_created"}, set(served) - asked
    variable = dash["templating"]["list"][0]
    assert re.findall(r"storbench_[a-z_]+", variable["definition"])[0] in served


#: a cluster with one OSD down during a drill, as the run's health monitor samples it
DEGRADED = HealthSample(
    at=1.0,
    status="HEALTH_WARN",
    checks=("OSD_DOWN", "PG_DEGRADED"),
    inactive={"bench": {"undersized+degraded+peered": 8}},
    clean=False,
    io={"read_bytes_sec": 0.0, "write_bytes_sec": 4194304.0, "recovering_bytes_per_sec": 0.0},
)


def test_metrics_ceph_health_follows_the_monitors_samples() -> None:
    """A drill's course: healthy, an OSD down (checks raised, PGs inactive, writes going
    on), the cluster unreachable for a moment, healed (the checks gone, every PG clean)."""
    live = LiveMetrics()
    live.begin(1, planned=1)
    conf = "/etc/ceph/ceph.conf"
    key = (("cluster", conf), ("run", "1"))

    def value(name: str, *extra: tuple[str, str]) -> float | None:
        return _samples(live).get((name, tuple(sorted(key + extra))))

    live.ceph_health(conf, HealthSample(at=0.0, status="HEALTH_OK", clean=True))
    assert value("storbench_ceph_health_status") == 0 and value("storbench_ceph_up") == 1
    assert value("storbench_ceph_pgs_clean") == 1
    live.ceph_health(conf, DEGRADED)
    assert value("storbench_ceph_health_status") == 1
    assert value("storbench_ceph_health_check", ("check", "OSD_DOWN")) == 1
    assert value("storbench_ceph_health_check", ("check", "PG_DEGRADED")) == 1
    assert value("storbench_ceph_inactive_pgs", ("pool", "bench")) == 8
    assert value("storbench_ceph_pgs_clean") == 0
    assert value("storbench_ceph_client_write_bytes_per_second") == 4194304.0
    live.ceph_health(conf, HealthSample.unreachable("timed out", at=2.0))
    assert value("storbench_ceph_up") == 0
    assert value("storbench_ceph_health_status") == 1  # the last answer's, while none comes
    live.ceph_health(
        conf, HealthSample(at=3.0, status="HEALTH_OK", clean=True, io={"read_bytes_sec": 0.0})
    )
    assert value("storbench_ceph_up") == 1 and value("storbench_ceph_health_status") == 0
    assert value("storbench_ceph_health_check", ("check", "OSD_DOWN")) is None  # cleared
    assert value("storbench_ceph_inactive_pgs", ("pool", "bench")) == 0
    assert value("storbench_ceph_pgs_clean") == 1
