"""A suite's answer and a report format added from the test directory alone (a plugin named
in STORBENCH_PLUGINS, tests/plugins/toyreport.py), run end to end on real fio (null engine):
`plan check` knows the new report kind, `run` and `show` print its answer, every built-in
format draws it (Markdown, HTML, JSON), the new format writes one run and a comparison. The
IOPS the toy answer shows are checked against fio's own output stored with each point."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "plugins"))
import plugintools  # noqa: E402  (tests/plugins: running storbench with them)
from plugintools import ok  # noqa: E402

PLAN = """\
name: toy
report: toy
targets:
  - file: {dir}/a.dat
workloads:
  - name: rand
    ioengine: "null"
    rw: randread
    bs: 4k
    size: 1g
    runtime: 1
    iodepth: [1, 4]
"""


def sb(*args: str, db: Path, cwd: Path, plugins: bool = True) -> subprocess.CompletedProcess[str]:
    return plugintools.storbench(*args, db=db, cwd=cwd, plugins="toyreport" if plugins else None)


def test_report_plugins_add_a_suite_answer_and_a_format_end_to_end(tmp_path: Path) -> None:
    db = tmp_path / "results.db"
    plan = tmp_path / "toy.yaml"
    plan.write_text(PLAN.format(dir=tmp_path))

    # without the plugin the kind is unknown, said as a plan error (not a traceback)
    r = sb("plan", "check", str(plan), db=db, cwd=tmp_path, plugins=False)
    assert r.returncode == 2 and "unknown report 'toy'" in r.stderr + r.stdout
    assert "Traceback" not in r.stderr
    ok(sb("plan", "check", str(plan), db=db, cwd=tmp_path))

    ran = ok(sb("run", str(plan), db=db, cwd=tmp_path))
    assert "Toy: IOPS per point" in ran and "a toy answer, from tests/plugins" in ran

    # the figures: fio's own, from the stored JSON of each point
    doc = json.loads(ok(sb("export", "1", "--format", "json", db=db, cwd=tmp_path)))
    iops = {m["point"]: m["read"]["iops"] for m in doc["measurements"]}
    assert doc["answer"]["kind"] == "toy"
    assert [(row["point"], row["iops"]) for row in doc["answer"]["rows"]] == sorted(iops.items())

    shown = ok(sb("show", "1", db=db, cwd=tmp_path))
    for point, value in iops.items():
        assert f"\n{point}  " in shown.split("Toy: IOPS per point", 1)[1]  # from 1 in both
        assert f"{value:.0f}" in shown
    md = ok(sb("report", "1", "--format", "markdown", db=db, cwd=tmp_path))
    assert "### Toy: IOPS per point" in md and "| point | IOPS | of the best |" in md
    page = ok(sb("report", "1", "--format", "html", db=db, cwd=tmp_path))
    assert "<h4>Toy: IOPS per point</h4>" in page
    assert json.loads(ok(sb("report", "1", "--format", "json", db=db, cwd=tmp_path))) == doc

    rows = list(
        csv.reader(io.StringIO(ok(sb("report", "1", "--format", "toycsv", db=db, cwd=tmp_path))))
    )
    assert rows[0] == ["run", "1", "toy"] and rows[2] == ["point", "IOPS", "of the best"]
    assert {int(p): float(v) for p, v, _ in rows[3:]} == {
        p: float(f"{v:.0f}") for p, v in iops.items()
    }
    assert "100%" in [share for *_, share in rows[3:]]

    ok(sb("run", str(plan), db=db, cwd=tmp_path))
    cmp = list(
        csv.reader(
            io.StringIO(ok(sb("report", "1", "2", "--format", "toycsv", db=db, cwd=tmp_path)))
        )
    )
    assert cmp == [["base", "other", "matched"], ["run 1 (toy)", "run 2 (toy)", "2"]]

    # a format nobody registered is refused by the command line, naming the choices
    r = sb("report", "1", "--format", "toycsv", db=db, cwd=tmp_path, plugins=False)
    assert r.returncode == 2 and "toycsv" in r.stderr and "markdown" in r.stderr
