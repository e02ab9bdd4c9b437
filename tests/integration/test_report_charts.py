"""`storbench chart` and `storbench report` on real runs (real fio): every kind writes a valid
PNG and SVG, and a kind the runs cannot give ends with exit status 2 and a clear message."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from storbench.report.charts import KINDS

pytestmark = pytest.mark.integration

SVG = "{http://www.w3.org/2000/svg}"
DATA = Path(__file__).resolve().parent.parent / "data" / "fio"
NAME = '<script>alert(1)</script> & "q" $x$'

PLAN = """\
name: charts
targets:
  - file: {dir}/scratch.dat
    name: "<img src=x onerror=alert(2)>"
workloads:
  - name: '{name}'
    rw: randread
    bs: [4k, 64k]
    iodepth: [1, 4]
    size: 8m
    runtime: 1
    direct: 1
  - name: jobs
    rw: randwrite
    bs: 4k
    numjobs: [1, 2]
    size: 8m
    runtime: 1
    direct: 1
"""

TITLES = {
    "iops-vs-iodepth": "IOPS vs iodepth",
    "bw-vs-iodepth": "Bandwidth vs iodepth",
    "lat-vs-iodepth": "Mean completion latency vs iodepth",
    "iops-vs-numjobs": "IOPS vs numjobs",
    "bw-vs-numjobs": "Bandwidth vs numjobs",
    "lat-vs-numjobs": "Mean completion latency vs numjobs",
    "iops-vs-bs": "IOPS vs bs",
    "bw-vs-bs": "Bandwidth vs bs",
    "lat-vs-bs": "Mean completion latency vs bs",
    "lat-percentiles": "Completion latency percentiles",
    "compare": "Relative comparison",
}


def sb(*args: str, db: Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "storbench", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
        env={**os.environ, "STORBENCH_DB": str(db)},
    )


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Runs 1 and 2: the plan above, real fio; run 3: a recorded fio output imported (no
    iodepth or numjobs axis)."""
    if shutil.which("fio") is None:
        pytest.skip("fio is not installed")
    tmp = tmp_path_factory.mktemp("charts")
    db = tmp / "results.db"
    plan = tmp / "plan.yaml"
    plan.write_text(PLAN.format(dir=tmp, name=NAME))
    for _ in range(2):
        r = sb("run", str(plan), db=db, cwd=tmp)
        assert r.returncode == 0, r.stdout + r.stderr
    r = sb("import", str(DATA / "psync-randread-json.json"), db=db)
    assert r.returncode == 0, r.stderr
    return db


def check_svg(path: Path, title: str) -> ET.Element:
    root = ET.parse(path).getroot()  # well-formed XML whatever the names
    assert root.tag == f"{SVG}svg"
    assert root.find(f"{SVG}title").text.startswith(title)
    return root


@pytest.mark.parametrize("kind", [k for k in KINDS if k != "capacity"])  # test_capacity_runs.py
def test_every_kind_writes_png_and_svg(db: Path, tmp_path: Path, kind: str) -> None:
    runs = ["1", "2"] if kind == "compare" else ["1"]
    png, svg = tmp_path / f"{kind}.png", tmp_path / f"{kind}.svg"
    for out in (png, svg):
        r = sb("chart", *runs, "--kind", kind, "-o", str(out), db=db)
        assert r.returncode == 0, r.stderr
        assert "Traceback" not in r.stderr
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
    root = check_svg(svg, TITLES[kind])
    # every data point is a group with its value as a hover title
    tips = [
        t.text or ""
        for g in root.iter(f"{SVG}g")
        if g.get("class") == "pt"
        for t in g.iter(f"{SVG}title")
    ]
    assert tips and all(t.strip() for t in tips)
    if kind != "compare":  # names from the plan are kept literally
        assert all("<img src=x onerror=alert(2)>" in t for t in tips)
    if "iodepth" in kind or kind == "compare":
        assert any(NAME in t for t in tips)
    assert all("data-ref" not in g.attrib for g in root.iter(f"{SVG}g")), "a file has no page"


def test_sweep_against_runs_draws_a_line_per_run(db: Path, tmp_path: Path) -> None:
    out = tmp_path / "two.svg"
    r = sb("chart", "1", "2", "--kind", "iops-vs-iodepth", "-o", str(out), db=db)
    assert r.returncode == 0, r.stderr
    root = check_svg(out, "IOPS vs iodepth")
    tips = [
        t.text
        for g in root.iter(f"{SVG}g")
        if g.get("class") == "pt"
        for t in g.iter(f"{SVG}title")
    ]
    assert len(tips) == 2 * 4  # 2 runs x (2 bs x 2 iodepth)
    assert sum("run 1: charts" in t for t in tips) == 4


def test_kind_the_run_cannot_give_exits_2(db: Path, tmp_path: Path) -> None:
    out = tmp_path / "x.png"
    r = sb("chart", "3", "--kind", "iops-vs-numjobs", "-o", str(out), db=db)
    assert r.returncode == 2
    assert "no numjobs axis" in r.stderr and "kinds that fit: lat-percentiles" in r.stderr
    assert "Traceback" not in r.stderr and not out.exists()

    r = sb("chart", "1", "--kind", "compare", "-o", str(out), db=db)
    assert r.returncode == 2 and "needs two runs" in r.stderr

    r = sb("chart", "1", "--kind", "capacity", "-o", str(out), db=db)
    assert r.returncode == 2 and "has no capacity search to draw" in r.stderr
    assert "storbench run capacity" in r.stderr

    r = sb("chart", "1", "--kind", "iops-vs-iodepth", "-o", str(tmp_path / "x.jpg"), db=db)
    assert r.returncode == 2 and ".png or .svg" in r.stderr

    r = sb("chart", "1", "--kind", "iops-vs-qd", "-o", str(out), db=db)  # no such kind
    assert r.returncode == 2 and "iops-vs-iodepth" in r.stderr

    r = sb("chart", "9", "--kind", "iops-vs-iodepth", "-o", str(out), db=db)
    assert r.returncode == 2 and "there is no run 9" in r.stderr


def test_report_writes_one_self_contained_file(db: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    r = sb("report", "1", "2", "3", "-o", str(out), db=db)
    assert r.returncode == 0, r.stderr
    text = out.read_text()
    assert text.startswith("<!DOCTYPE html>")
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert "<script>alert" not in text and "<img" not in text
    # nothing that could load from elsewhere or run: no src, no event handler, only local links
    tags = re.findall(r"<[a-zA-Z][^<>]*>", text)
    assert not [t for t in tags if re.search(r"\s(src|on[a-z]+)=", t)]
    links = {v for t in tags for v in re.findall(r'href="([^"]*)"', t)}
    assert all(v.startswith("#") or v == "data:," for v in links), links
    assert "@import" not in text and "url(http" not in text
    assert text.count("<script") == 1
    r = sb("report", "latest", db=db)  # to standard output
    assert r.returncode == 0 and r.stdout.startswith("<!DOCTYPE html>")


def test_compare_chart_of_pairs_none_comparable_says_why(db: Path, tmp_path: Path) -> None:
    """The same plan buffered (``--set direct=0``) against run 1: every pair matches on its
    workload and none is comparable (direct differs): the chart is refused with the reason,
    not drawn, nor reported as "no point matched"."""
    plan = db.parent / "plan.yaml"
    other = tmp_path / "other.db"
    shutil.copy(db, other)
    r = sb("run", str(plan), "--set", "direct=0", db=other, cwd=db.parent)
    assert r.returncode == 0, r.stdout + r.stderr
    out = tmp_path / "cmp.png"
    r = sb("chart", "1", "latest", "--kind", "compare", "-o", str(out), db=other)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "none of the 6 matched points is comparable" in r.stderr, r.stderr
    assert "direct" in r.stderr and "storbench compare" in r.stderr
    assert "Traceback" not in r.stderr and not out.exists()
