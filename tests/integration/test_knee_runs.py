"""`stop_at: knee` on a real device that saturates: a loop device whose reads a blkio cgroup
throttles to 2,000 IOPS, storbench (and so its fio) run inside that cgroup. Throughput is
the throttle's at every depth and latency doubles with each, whatever the machine's load:
the climb stops after iodepth 4 (knee at 1; a step later should a busy machine make a
step gain 5 %), the points above are recorded as skipped with the figures that stopped
it, the run exits 0, and `show`, the reports and the JSON export list them."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the harness modules
from throttled import sb, throttled_device

pytestmark = pytest.mark.integration

IOPS = 2000


@pytest.fixture
def throttled(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    with throttled_device(tmp_path, IOPS) as found:
        yield found


def test_knee_climb_stops_on_a_saturated_device_and_lists_what_it_skipped(
    tmp_path: Path, throttled: tuple[str, Path]
) -> None:
    dev, group = throttled
    plan = tmp_path / "knee.yaml"
    plan.write_text(
        f"""\
name: knee
targets:
  - device: {dev}
workloads:
  - name: climb
    rw: randread
    bs: 4k
    ioengine: libaio
    direct: 1
    runtime: 2
    time_based: 1
    iodepth: [1, 2, 4, 8, 16, 32]
    stop_at: knee
"""
    )
    db = tmp_path / "r.db"
    r = sb(group, db, "run", str(plan))
    text = r.stdout + r.stderr
    assert r.returncode == 0, text
    rows = {m["params"]["iodepth"]: m for m in json.loads(export(group, db))["measurements"]}
    skipped = [qd for qd, m in rows.items() if m["status"] == "skipped"]
    measured = [qd for qd, m in rows.items() if m["status"] == "ok"]
    # flat from the start: the climb stops after 4 (or, should one step of a busy
    # machine gain 5 %, one step later); never before three steps, never not at all
    assert measured in ([1, 2, 4], [1, 2, 4, 8]), rows
    assert skipped == [qd for qd in (8, 16, 32) if qd not in measured], rows
    knee, last = measured[-3], measured[-1]
    said = f"skipped: beyond the knee of iodepth (at iodepth={knee}): iodepth {knee} → "
    for qd in measured:  # the throttle set their throughput
        assert 0.8 * IOPS < rows[qd]["read"]["iops"] < 1.1 * IOPS, rows[qd]["read"]["iops"]
    for qd in skipped:
        assert rows[qd]["error"].startswith(said), rows[qd]["error"]
        assert "(each under 5 %) while mean latency grew" in rows[qd]["error"]
    assert f"{len(skipped)} point(s) skipped beyond the knee of their sweep" in text, text
    assert f"-> {said}" in text, text
    shown = sb(group, db, "show", "latest")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.count("skipped") >= len(skipped), shown.stdout
    assert f"the climb of iodepth stops at its knee, iodepth={knee}" in shown.stdout
    assert f"its points above iodepth={last} are skipped" in shown.stdout
    runs = sb(group, db, "runs")
    assert runs.returncode == 0 and "completed" in runs.stdout, runs.stdout
    md = sb(group, db, "report", "latest", "--format", "markdown")
    assert md.returncode == 0 and md.stdout.count("skipped") >= len(skipped), md.stdout


def export(group: Path, db: Path) -> str:
    r = sb(group, db, "export", "latest", "--format", "json")
    assert r.returncode == 0, r.stderr
    return r.stdout
