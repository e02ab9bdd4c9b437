"""A failure drill on the session's real Ceph cluster (conftest.py): fio's rbd engine loads
an image of a size-2 pool while storbench stops osd.1 and starts it again; the drill report
says when the cluster was healthy again (HEALTH_OK with every PG active+clean) and how the
load fared, and its figures are those of the point's own stored series.

storbench stops and starts the OSD through the plan's ``osd_daemons:`` commands; here they
ask this test process (over a Unix socket it serves while storbench runs) to do it with the
cluster harness, so that the daemons stay the harness's own: started from this test's main
thread, stopped the way an admin would (SIGTERM), torn down with the session.
"""

from __future__ import annotations

import json
import os
import select
import socket
import sqlite3
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from conftest import STOPPED_OSD, _wait_for
from prometheus_client.parser import text_string_to_metric_families

pytestmark = [pytest.mark.integration, pytest.mark.ceph]

POOL = "drill"
CTL = """\
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect({sock!r})
s.sendall((" ".join(sys.argv[1:]) + "\\n").encode())
reply = s.makefile().readline().strip()
print(reply)
sys.exit(0 if reply == "ok" else 1)
"""
PLAN = """\
name: drill
osd_daemons:
  stop: "{py} {ctl} stop_osd {{id}}"
  start: "{py} {ctl} start_osd {{id}}"
targets:
  - rbd: {pool}/drill-image
    size: 64m
workloads:
  - name: load
    rw: randwrite
    bs: 4k
    iodepth: 4
    size: 16m
    runtime: 36
    time_based: 1
    actions:
      - {{at: 6s, osd_stop: {osd}}}
      - {{at: 14s, osd_start: {osd}}}
"""


def _scrape(port: int, seen: set[tuple[str, str]]) -> None:
    """The run's live metrics (``--metrics``): the Ceph health checks raised and the
    health status, as Prometheus would scrape them, added to ``seen``."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2) as r:
            text = r.read().decode()
    except OSError:  # not serving yet, or already stopped
        return
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == "storbench_ceph_health_check" and sample.value == 1:
                seen.add(("check", sample.labels["check"]))
            elif sample.name == "storbench_ceph_health_status":
                seen.add(("status", str(int(sample.value))))


def _serve(
    proc: subprocess.Popen[str], server: socket.socket, cluster: Any, scrape: Any = None
) -> None:
    """Do what storbench's osd_daemons commands ask until storbench exits (in this thread:
    the OSD started here lives as long as the test session, like every other daemon);
    ``scrape()`` between them, twice a second."""
    while proc.poll() is None:
        if scrape is not None:
            scrape()
        ready, _, _ = select.select([server], [], [], 0.5)
        if not ready:
            continue
        conn, _ = server.accept()
        with conn:
            verb, osd = conn.makefile().readline().split()
            try:
                getattr(cluster, verb)(int(osd))
                conn.sendall(b"ok\n")
            except Exception as e:  # the command prints it; storbench records it
                conn.sendall(f"error: {e}\n".encode())


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _intervals(db: Path) -> list[tuple[int, int, int]]:
    con = sqlite3.connect(db)
    try:
        return con.execute(
            "SELECT seq, dur_ms, sum(ios) FROM intervals WHERE host='' AND ramp=0 "
            "GROUP BY seq ORDER BY seq"
        ).fetchall()
    finally:
        con.close()


def test_drill_osd_stop_and_start_under_rbd_load(ceph_cluster: Any, tmp_path: Path) -> None:
    sock, ctl = tmp_path / "ctl.sock", tmp_path / "ctl.py"
    ctl.write_text(CTL.format(sock=str(sock)))
    plan = tmp_path / "drill.yaml"
    plan.write_text(PLAN.format(py=sys.executable, ctl=ctl, pool=POOL, osd=STOPPED_OSD))
    db = tmp_path / "r.db"
    ceph_cluster.create_pool(POOL, 2, 1, 8)  # degraded, not stopped, while an OSD is down
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(sock))
    server.listen()
    env = {k: v for k, v in os.environ.items() if k != "CEPH_CONF"}
    conf = str(ceph_cluster.conf_path)
    args = [sys.executable, "-m", "storbench", "run", str(plan), "--ceph-conf", conf]
    try:
        refused = subprocess.run(
            [*args, "--db", str(db)], capture_output=True, text=True, env=env, timeout=60
        )
        assert refused.returncode == 2 and "--allow-disruption" in refused.stderr
        assert not db.exists()  # refused before anything: not even a database
        port = _free_port()
        proc = subprocess.Popen(
            [*args, "--allow-disruption", "--db", str(db), "--metrics", f"127.0.0.1:{port}"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        seen: set[tuple[str, str]] = set()
        _serve(proc, server, ceph_cluster, lambda: _scrape(port, seen))
        out, err = proc.communicate(timeout=120)
    finally:
        server.close()
        if f"osd.{STOPPED_OSD}" not in ceph_cluster.pids():
            ceph_cluster.start_osd(STOPPED_OSD)
        ceph_cluster.delete_pool(POOL)
        ceph_cluster.wait_clean()
        _wait_for("HEALTH_OK", lambda: ceph_cluster.health()[0] == "HEALTH_OK", 60)
    assert proc.returncode == 0, out + err
    assert "Traceback" not in err
    # the drill as Prometheus saw it live: the OSD down raised, the cluster warned
    assert ("check", "OSD_DOWN") in seen and ("status", "1") in seen, seen
    assert "failure drill, point 1" in out
    doc = json.loads(
        subprocess.run(
            [sys.executable, "-m", "storbench", "export", "1", "--db", str(db)],
            capture_output=True,
            text=True,
            env=env,
            check=True,
        ).stdout
    )
    (drill,) = doc["drills"]
    steps = [(a["step"], a["outcome"]) for a in drill["actions"]]
    assert steps == [("osd_stop", "done"), ("osd_start", "done")], drill["actions"]
    # the cluster noticed, and was healthy again before the run ended
    health = [e for e in doc["events"] if e["kind"] == "health"]
    assert any("OSD_DOWN" in e["data"]["checks"] for e in health)
    assert drill["healed_s"] is not None and drill["healed_s"] > 0
    stop = drill["actions"][0]["started_s"]
    start = drill["actions"][1]["started_s"]
    # not before the OSD was started again; the step itself ends later, when the harness
    # has seen the OSD up (one `ceph osd tree` after another: seconds on a busy machine),
    # by when the monitor may have seen every PG clean already
    assert drill["healed_s"] >= start - stop
    # the load's figures, again from its stored series
    rows = _intervals(db)
    assert drill["baseline_iops"] > 0
    longest = run = 0.0
    for _, dur_ms, ios in rows:
        run = run + dur_ms / 1000 if ios == 0 else 0.0
        longest = max(longest, run)
    assert drill["longest_stall_s"] == pytest.approx(longest)
    assert drill["dip_pct"] is not None and drill["dip_pct"] >= 0
    md = subprocess.run(
        [sys.executable, "-m", "storbench", "report", "1", "--format", "markdown", "--db", str(db)],
        capture_output=True,
        text=True,
        env=env,
    )
    assert "**Failure drill, point 1" in md.stdout and "HEALTH_OK" in md.stdout
