"""A capacity search (``slo:``) on an RBD image for real: the session's Ceph cluster
(conftest.py: 2 bluestore OSDs, pool ``bench``), fio's rbd engine on an image storbench
creates and removes. The closed-loop probe keeps 128 reads in flight, so its mean latency is
128 / its rate (Little's law): it meets the 8 ms target only above 16,000 IOPS, which two
OSDs sharing a few cores with fio do not reach (3,500 on 2 cores), while an open-loop step at
half the probe's rate waits a few ms. Every step after the probe offers fio ``rate_iops``
with poisson arrivals."""

from __future__ import annotations

import json
import re
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # its sibling test module's helpers
from test_ceph_runs import POOL, conf, images, sb, write_plan  # noqa: F401  (conf: a fixture)

pytestmark = [pytest.mark.integration, pytest.mark.ceph]


def test_rbd_capacity_search_on_a_new_image(
    ceph_cluster: Any,
    conf: str,  # noqa: F811
    tmp_path: Path,
) -> None:
    image = f"sb-cap-{uuid.uuid4().hex[:8]}"
    plan = write_plan(
        tmp_path / "rbd-capacity.yaml",
        f"""\
name: rbd-capacity
slo: {{latency: 8ms, percentile: mean, resolution: 10%}}
targets:
  - rbd: {POOL}/{image}
    size: 64m
workloads:
  - name: rr
    rw: randread
    bs: 4k
    iodepth: 128
    size: 16m
    runtime: 1
    time_based: 1
""",
    )
    db = tmp_path / "results.db"
    try:
        r = sb("run", plan, "--ceph-conf", conf, db=db, timeout=600)
        text = r.stdout + r.stderr
        assert r.returncode == 0, text
        after = images(ceph_cluster)
    finally:
        if image in images(ceph_cluster):
            ceph_cluster.run("rbd", "rm", "--no-progress", f"{POOL}/{image}")
    assert image not in after  # the image storbench created for the search is gone
    exported = sb("export", "latest", "--format", "json", db=db)
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
    if found["iops"] is None:  # a machine too busy for any step to meet 8 ms: said so
        assert found["text"].startswith("no load meets mean ≤ 8.00 ms"), found
    else:
        assert found["text"].startswith(f"{found['iops']:,.0f} IOPS at mean ≤ 8.00 ms"), found
        assert found["met"]["offered_iops"] < probe["step"]["achieved_iops"], found
        assert found["iops"] < 1.1 * probe["step"]["achieved_iops"], (found, probe)
    assert f"capacity: {found['text']}" in text
    params = {m["point"]: m["params"] for m in doc["measurements"]}
    for step in steps[1:]:
        assert step["step"] is not None, step  # every step measured something
        shown = sb("show", "latest", "--point", str(step["point"]), db=db)
        assert shown.returncode == 0, shown.stderr
        job = shown.stdout.split("# job file:")[1].split("# raw output:")[0]
        assert "ioengine=rbd" in job and f"rbdname={image}" in job, job
        assert "rate_process=poisson" in job.splitlines(), job
        (per_job,) = re.findall(r"^rate_iops=(\d+)$", job, re.M)
        assert int(per_job) == step["offered_iops"] == params[step["point"]]["rate_iops"]
