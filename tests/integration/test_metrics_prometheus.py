"""`storbench run … --metrics ADDR:PORT` scraped by a real Prometheus server (Debian's
`prometheus`, started here on loopback with a scrape config for the run's endpoint): the
figures Prometheus stored while the run went, asked back through its HTTP API with PromQL,
are the intervals the database then holds; an address off loopback is refused before
anything runs."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from storbench.store import Store

pytestmark = pytest.mark.integration

PLAN = """\
name: live
targets:
  - file: {dir}/live.dat
workloads:
  - name: rr
    rw: randread
    bs: 4k
    size: 16m
    direct: 1
    time_based: 1
    ramp_time: 0
    runtime: 8
    rate_iops: 800
  - name: rw
    rw: randwrite
    bs: 4k
    size: 16m
    direct: 1
    time_based: 1
    ramp_time: 0
    runtime: 8
    rate_iops: 600
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as r:
        return json.loads(r.read())


@contextlib.contextmanager
def prometheus(tmp: Path, scrape_port: int) -> Iterator[str]:
    """A Prometheus server on loopback scraping 127.0.0.1:``scrape_port`` every second;
    its HTTP API's base URL."""
    binary = shutil.which("prometheus")
    assert binary, "prometheus is not installed (scripts/setup-system.sh installs it)"
    web = _free_port()
    conf = tmp / "prometheus.yml"
    conf.write_text(
        "global: {scrape_interval: 1s, scrape_timeout: 1s}\n"
        "scrape_configs:\n"
        "  - job_name: storbench\n"
        f"    static_configs: [{{targets: ['127.0.0.1:{scrape_port}']}}]\n"
    )
    proc = subprocess.Popen(
        [
            binary,
            f"--config.file={conf}",
            f"--storage.tsdb.path={tmp / 'tsdb'}",
            f"--web.listen-address=127.0.0.1:{web}",
        ],
        stdout=subprocess.DEVNULL,
        stderr=open(tmp / "prometheus.log", "w"),  # noqa: SIM115 (closed with the process)
    )
    base = f"http://127.0.0.1:{web}"
    try:
        deadline = time.monotonic() + 60
        while True:
            if _ready(base):
                break
            assert proc.poll() is None, (tmp / "prometheus.log").read_text()[-2000:]
            assert time.monotonic() < deadline, "prometheus never became ready"
            time.sleep(0.2)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _ready(base: str) -> bool:
    try:
        with urllib.request.urlopen(f"{base}/-/ready", timeout=2) as r:
            return bool(r.status == 200)
    except OSError:
        return False


def query(base: str, promql: str) -> list[dict[str, Any]]:
    """The result of an instant PromQL query."""
    body = _get(f"{base}/api/v1/query?" + urllib.parse.urlencode({"query": promql}))
    assert body["status"] == "success", body
    return list(body["data"]["result"])


DASHBOARD = Path(__file__).resolve().parents[2] / "docs" / "grafana" / "storbench-live.json"


def _dashboard_answers(base: str, start: float, end: float) -> None:
    """Every query of the Grafana dashboard is PromQL this Prometheus accepts, and those of
    the figures every run has (progress, the running point, IOPS, bytes/s, latency) had
    data while the run went (this run is on a file: no Ceph cluster's health)."""
    dash = json.loads(DASHBOARD.read_text())
    for panel in dash["panels"]:
        for target in panel["targets"]:
            expr = target["expr"].replace("$run", ".*")
            args = {"query": expr, "start": start, "end": end, "step": 1}
            body = _get(f"{base}/api/v1/query_range?" + urllib.parse.urlencode(args))
            assert body["status"] == "success", (expr, body)
            # findings, steady state and Ceph's health only where a run has them (the
            # Ceph panels' figures are scraped from a real drill: ceph/test_drill_osd.py)
            quiet = panel["title"] in ("Findings", "Steady-state rounds")
            if not quiet and not panel["title"].startswith("Ceph"):
                assert body["data"]["result"], f"no data for {panel['title']!r}: {expr}"


def sb(*args: str, db: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "storbench", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "STORBENCH_DB": str(db), "COLUMNS": "200"},
    )


def test_metrics_prometheus_scrapes_what_the_database_holds(tmp_path: Path) -> None:
    port = _free_port()
    plan = tmp_path / "live.yaml"
    plan.write_text(PLAN.format(dir=tmp_path))
    db = tmp_path / "live.db"
    with prometheus(tmp_path, port) as base:
        t0 = time.time()
        r = sb("run", str(plan), "--metrics", f"127.0.0.1:{port}", db=db)
        assert r.returncode == 0, r.stdout + r.stderr
        assert f"metrics: http://127.0.0.1:{port}/metrics" in r.stdout
        # the last scrapes are in: Prometheus keeps what it scraped after the run ended
        time.sleep(2)
        _dashboard_answers(base, t0, time.time())
        planned = query(base, "max_over_time(storbench_points_planned[10m])")
        assert [float(x["value"][1]) for x in planned] == [2.0]
        done = query(base, "max_over_time(storbench_points_done[10m])")
        assert float(done[0]["value"][1]) >= 1  # the run's end may come before a scrape
        store = Store(str(db))
        for idx, direction in ((0, "read"), (1, "write")):
            sel = f'{{point="{idx + 1}",direction="{direction}",host=""}}'
            stored = [i for i in store.series.of_point(1, idx) if i.direction == direction]
            assert len(stored) >= 4
            scraped = query(base, f"storbench_iops{sel}[10m]")
            assert len(scraped) == 1, scraped
            assert scraped[0]["metric"]["workload"] == ("rr", "rw")[idx]
            values = {float(v) for _, v in scraped[0]["values"]}
            # each value Prometheus saw is one interval the database holds (the same
            # figure: Prometheus' text format carries floats at full precision) -- or, in
            # the last scrapes, the point's last interval before fio's final document,
            # moments later, measured it to the end (intervals.py: the tail revises it)
            assert values, scraped
            tail = {float(v) for _, v in scraped[0]["values"][-2:]}
            for v in values:
                held = any(abs(v - i.iops) <= 1e-6 * max(1.0, i.iops) for i in stored)
                revised = v in tail and abs(v - stored[-1].iops) <= 0.05 * stored[-1].iops
                assert held or revised, (v, [i.iops for i in stored])
            # it followed the point while it ran: several scrapes of it (not several values:
            # at rate_iops on a quiet machine every interval is exactly 800.0). A point's
            # figures are served from its first interval, ~1 s in (fio's start-up and its
            # first report), to its end: 8 s points leave ~6 s of 1 s scrapes
            assert len(scraped[0]["values"]) >= 2, scraped
            p99 = query(
                base, f'storbench_latency_seconds{{quantile="0.99",point="{idx + 1}"}}[10m]'
            )
            last = stored[-1].p99_ns
            for k, (_, v) in enumerate(p99[0]["values"]):
                held = any(
                    i.p99_ns is not None and abs(float(v) - i.p99_ns / 1e9) < 1e-12 for i in stored
                )
                at_end = k >= len(p99[0]["values"]) - 2 and last is not None
                assert held or (at_end and abs(float(v) - last / 1e9) <= 0.1 * last / 1e9), v


def test_metrics_prometheus_refuses_an_address_off_loopback(tmp_path: Path) -> None:
    plan = tmp_path / "live.yaml"
    plan.write_text(PLAN.format(dir=tmp_path))
    db = tmp_path / "live.db"
    for address in ("0.0.0.0:9464", "8.8.8.8:9464"):
        r = sb("run", str(plan), "--metrics", address, db=db)
        assert r.returncode != 0 and "Traceback" not in r.stderr, r.stderr
        assert "--metrics-any-address" in r.stderr, r.stderr
    r = sb("run", str(plan), "--metrics", "127.0.0.1:notaport", db=db)
    assert r.returncode != 0 and "no port number" in r.stderr, r.stderr
    assert not db.exists() or not Store(str(db)).runs.all()  # nothing ran, nothing recorded
