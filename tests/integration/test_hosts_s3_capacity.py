"""A capacity search (``slo:``) of S3 GETs from three hosts at once, for real: three of the
lab's fio servers, each in its network namespace, each with fio's http engine against one
versitygw in a namespace of its own (test_hosts_netns.py's ``s3net``). 16 jobs per host GET
one 4 KiB object at a time; the closed-loop probe keeps 48 requests in flight, so its mean
latency is 48 / its rate (Little's law) and meets the 4 ms target only above 12,000
requests/s, which versitygw on a machine of a few cores does not reach. Every step after the
probe offers its rate over the hosts and their jobs (whole requests per second per job),
with poisson arrivals, and the hosts' merged figures judge it."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the harness modules
from test_hosts_netns import Lab, S3Net, db, lab, s3net, sb  # noqa: F401  (fixtures)

from stored_runs import stored_text

pytestmark = [pytest.mark.integration, pytest.mark.root]

HOSTS = 3
JOBS = 16  # per host


def test_s3_capacity_from_three_hosts_divides_each_step_over_hosts_and_jobs(
    tmp_path: Path,
    db: Path,  # noqa: F811
    lab: Lab,  # noqa: F811
    s3net: S3Net,  # noqa: F811
) -> None:
    hosts = "".join(
        f"  - address: {s.address}\n    port: {s.port}\n    targets:\n"
        f"      - s3: bench\n        endpoint: {s3net.endpoint}\n        prefix: cap/\n"
        for s in lab.servers[:HOSTS]
    )
    plan = tmp_path / "s3cap.yaml"
    plan.write_text(
        "name: s3-hosts-capacity\n"
        "slo: {latency: 4ms, percentile: mean, resolution: 10%}\n"
        f"hosts:\n{hosts}workloads:\n"
        f"  - {{name: get, rw: read, bs: 4k, objects: 4, numjobs: {JOBS}, time_based: 1,"
        " runtime: 1}\n"
    )
    env = {"AWS_ACCESS_KEY_ID": s3net.key_id, "AWS_SECRET_ACCESS_KEY": s3net.secret}
    r = sb("run", str(plan), db=db, env=env, timeout=900)
    text = r.stdout + r.stderr
    assert r.returncode == 0, text
    assert s3net.objects("bench") == {}, "the search's objects go with the run"
    exported = sb("export", "latest", "--format", "json", db=db, env=env)
    assert exported.returncode == 0, exported.stderr
    doc = json.loads(exported.stdout)
    (row,) = doc["answer"]["rows"]
    found, steps = row["capacity"], row["steps"]
    probe = steps[0]
    assert probe["offered_iops"] is None and not probe["step"]["meets"], probe  # Little's law
    assert 4 <= len(steps) <= 12, steps
    offered = [s["offered_iops"] for s in steps[1:]]
    assert len(set(offered)) == len(offered), offered
    assert all(o < probe["step"]["achieved_iops"] for o in offered), offered
    assert f"capacity: {found['text']}" in text
    if found["iops"] is not None:  # a machine too busy for any step to meet 4 ms says so
        assert found["met"]["meets"] and found["met"]["latency_ns"] <= 4e6, found
    measurements = {m["point"]: m for m in doc["measurements"]}
    assert len(measurements) == len(steps)  # every step a point of the run
    addresses = {f"{s.address}:{s.port}" for s in lab.servers[:HOSTS]}
    for step in steps:
        m = measurements[step["point"]]
        assert set(m["hosts"]) == addresses, m["hosts"]  # every step from all three hosts
        assert all(h["status"] == "ok" for h in m["hosts"].values()), m["hosts"]
        # the step's figures are the hosts' merged: their GETs add up
        assert m["read"]["total_ios"] == sum(h["read"]["total_ios"] for h in m["hosts"].values())
    assert "rate_iops" not in measurements[probe["point"]]["params"]
    for step in steps[1:]:
        params = measurements[step["point"]]["params"]
        assert params["rate_process"] == "poisson", params
        assert params["rate_iops"] * JOBS * HOSTS == step["offered_iops"], (params, step)
        shown = sb("show", "latest", "--point", str(step["point"]), db=db, env=env)
        assert shown.returncode == 0, shown.stderr
        job = shown.stdout.split("# job file")[1]
        assert "ioengine=http" in job and "http_mode=s3" in job, job
        assert re.findall(r"^rate_iops=(\d+)$", job, re.M)[0] == str(params["rate_iops"])
    assert s3net.secret not in stored_text(db)
