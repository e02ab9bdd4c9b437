"""Each suite's answer is one piece of data (analysis/answers.py): the terminal prints it,
and the JSON export carries the same answer as plain data. Real fio on a scratch file."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed"),
]

PLAN = """\
name: small matrix
report: matrix
targets:
  - file: {dir}/scratch.dat
workloads:
  - name: m
    rw: randread
    bs: [4k, 64k]
    iodepth: [1, 4]
    size: 4m
    runtime: 1
"""


def sb(*args: str, db: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "storbench", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
        env={**os.environ, "STORBENCH_DB": str(db)},
    )


def test_answer_matrix_terminal_and_json_export_say_the_same(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    (tmp_path / "plan.yaml").write_text(PLAN.format(dir=tmp_path))
    r = sb("run", "plan.yaml", db=db, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    doc = json.loads(sb("export", "1", "--format", "json", db=db, cwd=tmp_path).stdout)
    answer = doc["answer"]
    assert answer["kind"] == "matrix"
    rows = {row["bs"]: row for row in answer["rows"]}
    assert set(rows) == {"4k", "64k"}
    for bs, row in rows.items():
        assert row["optimal_iodepth"] in (1, 4) and row["best_iodepth"] in (1, 4)
        assert row["best_iops"] >= row["optimal_iops"] > 0
        sweep = row["sweep"]
        assert sweep["axis"] == "iodepth" and [v for v, _, _ in sweep["values"]] == [1, 4]
        # each sweep value names its point: the point's measurement has that bs and iodepth
        for value, _, point in sweep["values"]:
            m = next(m for m in doc["measurements"] if m["point"] == point)
            assert m["params"]["bs"] == bs and m["params"]["iodepth"] == value
        # the terminal's line says the same optimal iodepth
        assert f"bs={bs}: optimal iodepth {row['optimal_iodepth']} reaches 95 %" in r.stdout


def test_answer_json_export_of_a_plan_without_a_suite_has_none(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    (tmp_path / "plan.yaml").write_text(PLAN.format(dir=tmp_path).replace("report: matrix\n", ""))
    assert sb("run", "plan.yaml", db=db, cwd=tmp_path).returncode == 0
    doc = json.loads(sb("export", "1", "--format", "json", db=db, cwd=tmp_path).stdout)
    assert "answer" not in doc
