"""A reviewer's warnings before a run (engines/fio/advice.py): iodepth above 1 with a
synchronous ioengine does nothing, said at `plan check` and kept with the run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from storbench.engines import fio
from storbench.plan import load_plan

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the harness modules
from stored_runs import recorded, stored_run


def _advice(*sets: str) -> list[str]:
    p = load_plan("matrix", targets=["/tmp/storbench-advice.dat"], sets=["bs=[4k]", *sets])
    return fio.advice(p.expand())


def test_advice_sync_engine_with_a_queue_is_named_with_its_depths() -> None:
    (line,) = _advice("ioengine=psync", "iodepth=[1,4,32]")
    assert "workload 'sweep': iodepth 4, 32 with ioengine=psync does nothing" in line
    assert "libaio or io_uring" in line and "numjobs" in line


@pytest.mark.parametrize("engine", ["libaio", "io_uring", "null", "posixaio"])
def test_advice_none_for_engines_that_queue(engine: str) -> None:
    assert _advice(f"ioengine={engine}", "iodepth=[1,4,32]") == []


def test_advice_none_at_depth_one() -> None:
    assert _advice("ioengine=sync", "iodepth=1") == []


def test_advice_plan_check_prints_it(tmp_path: Path) -> None:
    r = subprocess.run(
        [
            *(sys.executable, "-m", "storbench", "plan", "check", "matrix"),
            *("-t", str(tmp_path / "x"), "--set", "bs=[4k]"),
            *("--set", "ioengine=pvsync2", "--set", "iodepth=[1,8]"),
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "300"},
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    assert "warning: workload 'sweep': iodepth 8 with ioengine=pvsync2 does nothing" in r.stdout


def _point(**params: object) -> object:
    p = load_plan("quick", targets=["/tmp/storbench-advice.dat"]).expand()[0]
    return type(p)(p.index, p.key, 0, p.target, p.workload, dict(params), {})


def test_advice_a_point_that_ran_out_of_size_says_so() -> None:
    """psync-randread-json ended on its size after about 1.1 s (a real recording): with
    runtime=4 and no time_based its result says it ran short, and why."""
    text = (
        Path(__file__).resolve().parent.parent / "data/fio/psync-randread-json.json"
    ).read_text()
    meas = fio.parse_output(text)[0]
    ran = meas.directions["read"].runtime_s
    note = fio.ended_early(_point(runtime="4", size="64m"), meas)
    assert note is not None
    assert f"ran {ran:.2f} s of runtime=4" in note and "(64m)" in note and "time_based=1" in note
    assert fio.ended_early(_point(runtime="4", time_based=1), meas) is None
    assert fio.ended_early(_point(runtime=f"{ran:.3f}"), meas) is None  # ran its runtime
    assert fio.ended_early(_point(size="64m"), meas) is None  # no runtime asked


def test_advice_compare_warns_of_runs_whose_iodepth_does_nothing(tmp_path: Path) -> None:
    """A comparison of points along iodepth with psync would print changes as if iodepth
    mattered: compare says, per run, that it does nothing there."""
    from storbench.plan import Point, Target
    from storbench.store import Store

    db = tmp_path / "r.db"
    store = Store(str(db))
    t = Target("file", "/x")
    for _ in range(2):
        pts = [
            Point(i, f"q{q}", 0, t, "rr", {"ioengine": "psync", "iodepth": q}, {"iodepth": q})
            for i, q in enumerate((1, 32))
        ]
        stored_run(store, [(p, recorded("psync-randread-json")) for p in pts], name="psync")
    store.close()
    r = subprocess.run(
        [sys.executable, "-m", "storbench", "compare", "1", "2"],
        capture_output=True,
        text=True,
        env={**os.environ, "STORBENCH_DB": str(db), "COLUMNS": "300"},
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    for run_id in (1, 2):
        assert f"warning: run {run_id}: workload 'rr': iodepth 32 with ioengine=psync" in r.stderr
