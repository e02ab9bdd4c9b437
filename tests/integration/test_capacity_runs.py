"""`storbench run capacity` on a real device that saturates at a known rate (tests/throttled.py:
a loop device whose reads a blkio cgroup throttles to 2,000 IOPS). The search probes, then
brackets and bisects: its capacity at a mean latency ≤ 5 ms lies under the throttle. The
objective is the mean, not a tail: the closed-loop probe at queue depth 32 waits 32/2,000 s
= 16 ms an I/O on average (Little's law, whatever the machine's load), while a busy
machine's scheduling delays reach a p99 of open-loop steps but hardly their mean.
Each step is a point of the run; the answer says the load, the target and the step above,
beside the chart of every step (latency against offered load, the target line, the capacity
found); and fio alone, given the job file of the step storbench found, meets the target again
(what a reviewer would run to recheck it)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the harness modules
from storbench.engines.fio.tool import fio_path
from throttled import recorded, sb, throttled_device
from waiting import sigint_when

pytestmark = pytest.mark.integration

IOPS = 2000
SLO = "slo={latency: 5ms, percentile: mean}"
ARGS = ["run", "capacity", "--set", SLO, "--set", "runtime=2", "--set", "ramp_time=0", "-t"]


def test_capacity_search_finds_the_load_under_the_throttle_and_fio_rechecks_it(
    tmp_path: Path,
) -> None:
    with throttled_device(tmp_path, IOPS) as (dev, group):
        db = tmp_path / "r.db"
        r = sb(group, db, *ARGS, dev)
        text = r.stdout + r.stderr
        assert r.returncode == 0, text
        exported = sb(group, db, "export", "latest", "--format", "json")
        assert exported.returncode == 0, exported.stderr
        doc = json.loads(exported.stdout)
        (row,) = doc["answer"]["rows"]
        found = row["capacity"]
        assert found["iops"] is not None, found
        # under the throttle (queueing near it lengthens the mean: M/D/1 at 95 % waits ~5 ms)
        assert 0.7 * IOPS < found["iops"] <= 1.02 * IOPS, found
        assert found["text"].startswith(f"{found['iops']:,.0f} IOPS at mean ≤ 5.00 ms"), found
        steps = row["steps"]
        assert steps[0]["offered_iops"] is None and not steps[0]["step"]["meets"]  # the probe
        offered = [s["offered_iops"] for s in steps[1:]]
        assert len(offered) >= 3 and len(set(offered)) == len(offered)
        assert offered[0] == pytest.approx(steps[0]["step"]["achieved_iops"] / 2, abs=1)
        measurements = doc["measurements"]
        assert len(measurements) == len(steps)  # every step a point of the run
        assert f"capacity: {found['text']}" in text and "probe (closed loop)" in text

        # the steps as the latency-against-load curve: a file, and beside the answer
        best = next(s for s in steps if s["step"] == found["met"])
        curve = tmp_path / "curve.svg"
        drawn = sb(group, db, "chart", "latest", "--kind", "capacity", "-o", str(curve))
        assert drawn.returncode == 0, drawn.stderr
        assert curve.read_text().count('class="pt"') == 2 * len(steps) - 1  # + achieved rates
        page = tmp_path / "r.html"
        reported = sb(group, db, "report", "latest", "-o", str(page))
        assert reported.returncode == 0, reported.stderr
        answer = page.read_text().split('<section id="answer">')[1].split("</section>")[0]
        assert "target mean ≤ 5.00 ms" in answer, answer[:2000]
        assert f"capacity {found['iops']:,.0f} IOPS (offered {best['offered_iops']:,}" in answer

        # the reviewer's recheck: fio alone, with the job file of the step that met it
        shown = sb(group, db, "show", "latest", "--point", str(best["point"]))
        assert shown.returncode == 0, shown.stderr
        job = _job_file(shown.stdout)
        assert f"rate_iops={best['offered_iops']}" in job and "rate_process=poisson" in job
        (tmp_path / "recheck.fio").write_text(job)
        procs = group / "cgroup.procs"
        rerun = subprocess.run(
            [fio_path() or "fio", "--output-format=json+", str(tmp_path / "recheck.fio")],
            capture_output=True,
            text=True,
            timeout=120,
            preexec_fn=lambda: procs.write_text(f"{os.getpid()}\n"),
        )
        assert rerun.returncode == 0, rerun.stderr
        read = json.loads(rerun.stdout[rerun.stdout.index("{") :])["jobs"][0]["read"]
        # a new sample of a step at the edge: it may land a little past the target (the
        # search's resolution is 5 % of load, near saturation where latency climbs fast)
        assert read["lat_ns"]["mean"] <= 2 * 5e6, read["lat_ns"]
        assert read["iops"] > 0.9 * best["offered_iops"]


def _job_file(shown: str) -> str:
    """The job file `show --point` prints (between its "# job file" line and the next #)."""
    lines = shown.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("# job file"))
    body = []
    for line in lines[start + 1 :]:
        if line.startswith("# "):
            break
        body.append(line)
    return "\n".join(body) + "\n"


def test_capacity_search_interrupted_goes_on_where_it_was_on_resume(tmp_path: Path) -> None:
    """Ctrl-C once two steps are recorded: the run is interrupted; `resume` runs the step
    that was cut and the rest of the search, and the answer is whole."""
    with throttled_device(tmp_path, IOPS) as (dev, group):
        db = tmp_path / "r.db"
        procs = group / "cgroup.procs"
        proc = subprocess.Popen(
            [sys.executable, "-m", "storbench", *ARGS, dev],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env={**os.environ, "STORBENCH_DB": str(db)},
            preexec_fn=lambda: procs.write_text(f"{os.getpid()}\n"),
        )
        out = sigint_when(proc, "two steps recorded", lambda: recorded(db) >= 2)
        assert proc.returncode == 130, out
        before = recorded(db)
        r = sb(group, db, "resume", "latest")
        assert r.returncode == 0, r.stdout + r.stderr
        exported = sb(group, db, "export", "latest", "--format", "json")
        doc = json.loads(exported.stdout)
        (row,) = doc["answer"]["rows"]
        assert len(row["steps"]) > before and row["capacity"]["iops"] is not None, row
        assert 0.7 * IOPS < row["capacity"]["iops"] <= 1.02 * IOPS
        offered = [s["offered_iops"] for s in row["steps"]]
        assert offered[0] is None and len(set(offered)) == len(offered), offered
