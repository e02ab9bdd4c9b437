"""Each suite's answer is one piece of data (analysis/answers.py): the terminal prints it,
and the JSON export carries the same answer as plain data. Real fio on a scratch file."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from storbench.model.units import fmt_iops

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
    optimal = _optimal_rows(r.stdout)
    assert set(optimal) == set(rows)
    for bs, row in rows.items():
        assert row["optimal_iodepth"] in (1, 4) and row["best_iodepth"] in (1, 4)
        assert row["best_iops"] >= row["optimal_iops"] > 0
        sweep = row["sweep"]
        assert sweep["axis"] == "iodepth" and [v for v, _, _ in sweep["values"]] == [1, 4]
        # each sweep value names its point: the point's measurement has that bs and iodepth
        for value, _, point in sweep["values"]:
            m = next(m for m in doc["measurements"] if m["point"] == point)
            assert m["params"]["bs"] == bs and m["params"]["iodepth"] == value
        # the terminal's table says the same optimal and best iodepth
        assert optimal[bs][:2] == [str(row["optimal_iodepth"]), fmt_iops(row["optimal_iops"])]
        assert optimal[bs][2:4] == [str(row["best_iodepth"]), fmt_iops(row["best_iops"])]


def _optimal_rows(text: str) -> dict[str, list[str]]:
    """The terminal's table of the matrix answer: bs -> its cells after target, rw, bs."""
    lines = text.splitlines()
    i = lines.index("Optimal iodepth (the smallest reaching 95 % of the best IOPS)")
    assert lines[i + 1].split()[:3] == ["target", "rw", "bs"] and lines[i + 2].startswith("---")
    out = {}
    for line in lines[i + 3 :]:
        if not line.strip():
            break
        cells = re.split(r"\s{2,}", line.strip())
        out[cells[2]] = cells[3:]
    return out


def test_answer_json_export_of_a_plan_without_a_suite_has_none(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    (tmp_path / "plan.yaml").write_text(PLAN.format(dir=tmp_path).replace("report: matrix\n", ""))
    assert sb("run", "plan.yaml", db=db, cwd=tmp_path).returncode == 0
    doc = json.loads(sb("export", "1", "--format", "json", db=db, cwd=tmp_path).stdout)
    assert "answer" not in doc
