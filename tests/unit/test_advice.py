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
