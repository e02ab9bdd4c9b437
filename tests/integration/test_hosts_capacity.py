"""A capacity search (``slo:``) over two hosts for real: two of the lab's fio servers, each in
its network namespace (tests/integration/test_hosts_netns.py), each reading a loop device of
its own that a blkio cgroup throttles to 1,000 reads/s (tests/throttled.py; the servers are
moved into the group, so the jobs they fork are too). Together the hosts saturate at 2,000
IOPS: the closed-loop probe (2 jobs x iodepth 16 per host) waits 32 / 1,000 s = 32 ms an I/O
on average (Little's law), far above the 5 ms target, while open-loop steps under the
throttle wait a fraction of a ms. The search's offered rate is divided over the hosts and
their jobs (searches.py ``_step``: whole I/Os per second per job), and their merged
figures judge each step."""

from __future__ import annotations

import contextlib
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the harness modules
from test_hosts_netns import Lab, Server, lab, sb  # noqa: F401  (lab: a fixture)

from throttled import BLKIO, throttled_devices

pytestmark = [pytest.mark.integration, pytest.mark.root]

IOPS = 1000  # each host's device
HOSTS = 2
JOBS = 2  # per host


@contextlib.contextmanager
def _throttled(servers: list[Server], group: Path) -> Iterator[None]:
    """The servers (and so every job they fork from now on) in the cgroup ``group``; back
    in the root group afterwards, so that the group can go."""
    try:
        for s in servers:
            assert s.proc is not None
            (group / "cgroup.procs").write_text(f"{s.proc.pid}\n")
        yield
    finally:
        for s in servers:
            if s.proc is not None:
                with contextlib.suppress(OSError):
                    (BLKIO / "cgroup.procs").write_text(f"{s.proc.pid}\n")


def _plan(tmp_path: Path, servers: list[Server], devs: list[str]) -> Path:
    hosts = "".join(
        f"  - address: {s.address}\n    port: {s.port}\n    targets:\n      - device: {dev}\n"
        for s, dev in zip(servers, devs, strict=True)
    )
    plan = tmp_path / "capacity.yaml"
    plan.write_text(
        f"""\
name: hosts-capacity
slo: {{latency: 5ms, percentile: mean, resolution: 5%}}
hosts:
{hosts}workloads:
  - name: rr
    rw: randread
    bs: 4k
    ioengine: libaio
    direct: 1
    iodepth: 16
    numjobs: {JOBS}
    time_based: 1
    runtime: 2
    ramp_time: 0
"""
    )
    return plan


def test_hosts_capacity_search_divides_each_step_over_the_hosts_and_their_jobs(
    tmp_path: Path,
    lab: Lab,  # noqa: F811
) -> None:
    servers = lab.servers[:HOSTS]
    db = tmp_path / "r.db"
    with throttled_devices(tmp_path, [IOPS] * HOSTS) as (devs, group), _throttled(servers, group):
        r = sb("run", str(_plan(tmp_path, servers, devs)), db=db, timeout=600)
        text = r.stdout + r.stderr
        assert r.returncode == 0, text
        exported = sb("export", "latest", "--format", "json", db=db)
        assert exported.returncode == 0, exported.stderr
        doc = json.loads(exported.stdout)
        (row,) = doc["answer"]["rows"]
        found, steps = row["capacity"], row["steps"]
        probe = steps[0]
        assert probe["offered_iops"] is None and not probe["step"]["meets"], probe
        # the two throttles together (each host's own device): the probe's rate
        assert 0.8 * HOSTS * IOPS < probe["step"]["achieved_iops"] <= 1.05 * HOSTS * IOPS
        assert found["iops"] is not None, found
        assert 0.6 * HOSTS * IOPS < found["iops"] <= 1.05 * HOSTS * IOPS, found
        assert found["text"].startswith(f"{found['iops']:,.0f} IOPS at mean ≤ 5.00 ms"), found
        assert found["met"]["offered_iops"] < probe["step"]["achieved_iops"], (found, probe)
        assert f"capacity: {found['text']}" in text
        offered = [s["offered_iops"] for s in steps[1:]]
        assert 3 <= len(offered) <= 10 and len(set(offered)) == len(offered), offered

        measurements = {m["point"]: m for m in doc["measurements"]}
        assert len(measurements) == len(steps)  # every step a point of the run
        addresses = {f"{s.address}:{s.port}" for s in servers}
        assert "rate_iops" not in measurements[probe["point"]]["params"]
        for step in steps:
            m = measurements[step["point"]]
            assert set(m["hosts"]) == addresses, m["hosts"]  # every step on both hosts
            assert all(h["status"] == "ok" for h in m["hosts"].values())
        for step in steps[1:]:
            params = measurements[step["point"]]["params"]
            assert params["rate_process"] == "poisson", params
            # the offered rate is what every job of every host adds up to
            assert params["rate_iops"] * JOBS * HOSTS == step["offered_iops"], (params, step)
            shown = sb("show", "latest", "--point", str(step["point"]), db=db)
            assert shown.returncode == 0, shown.stderr
            job = shown.stdout.split("# job file")[1]
            assert re.findall(r"^rate_iops=(\d+)$", job, re.M)[0] == str(params["rate_iops"])
            assert "rate_process=poisson" in job and f"numjobs={JOBS}" in job, job
