"""`storbench compare` and `storbench report --format markdown` end to end, on tiny real fio
runs (null engine: the figures are fio's, not a device's). Expected values are recomputed
here from the raw fio output storbench stored with each measurement.

The null engine does no I/O (and storbench lays no file out for it). fio's runtime has a
1 ms clock, so a point must last long enough for its repetitions to differ: with 256 MiB a
fast CI machine finished in 16-19 ms, and with 2 GiB in 82-83 ms (6.3 M IOPS), and the six
repetitions took only two distinct values, leaving Welch's test little to test; with 8 MiB
every repetition reports the same IOPS. 8 GiB lasts ~0.3 s there and `runtime: 1` caps a
slow machine at 1 s."""

from __future__ import annotations

import json
import math
import os
import sqlite3
import statistics
import subprocess
import sys
from collections import Counter
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from scipy import stats as scipy_stats

from storbench.model import rawpack

pytestmark = pytest.mark.integration

PLAN = """\
name: {name}
targets:
  - file: {dir}/a.dat
  - file: {dir}/b.dat
    name: bee
workloads:
  - name: rand
    ioengine: "null"
    rw: randread
    bs: 4k
    size: 8g
    runtime: 1
    time_based: 1
    iodepth: {depths}
repeat: {repeat}
"""


def sb(*args: str, db: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "storbench", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
        env={**os.environ, "STORBENCH_DB": str(db), "COLUMNS": "200"},
    )


def ok(r: subprocess.CompletedProcess[str]) -> str:
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Traceback" not in r.stderr
    return r.stdout


@pytest.fixture(scope="module")
def bed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Runs 1 and 2: the same plan, two targets, iodepth 1 and 4, 3 repetitions each.
    Run 3: one target, iodepth 4 and 8, no repetitions."""
    d = tmp_path_factory.mktemp("cmp")
    db = d / "results.db"
    for i, (depths, repeat) in enumerate((("[1, 4]", 3), ("[1, 4]", 3), ("[4, 8]", 1)), 1):
        text = PLAN.format(name=f"plan{i}", dir=d, depths=depths, repeat=repeat)
        if i == 3:
            text = text.replace(f"  - file: {d}/b.dat\n    name: bee\n", "")
        (d / f"p{i}.yaml").write_text(text)
        ok(sb("run", str(d / f"p{i}.yaml"), db=db, cwd=d))
    return {"dir": d, "db": db, "a": str(d / "a.dat")}


def raw_docs(db: Path, run_id: int) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(point spec, fio's JSON document) of every measurement, from the stored raw output."""
    con = sqlite3.connect(db)
    try:
        rows = con.execute(
            "SELECT p.spec, m.raw_output FROM measurements m JOIN points p"
            " ON p.run_id = m.run_id AND p.idx = m.point_idx WHERE m.run_id = ?"
            " ORDER BY m.point_idx",
            (run_id,),
        ).fetchall()
    finally:
        con.close()
    out = []
    for spec, raw in rows:
        text = rawpack.unpack(raw)
        doc, _ = json.JSONDecoder().raw_decode(text, text.index("{"))
        out.append((json.loads(spec), doc))
    return out


def by_point(db: Path, run_id: int) -> dict[tuple[str, int], list[dict[str, Any]]]:
    """fio's read figures per (target path, iodepth), one entry per repetition."""
    out: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for spec, doc in raw_docs(db, run_id):
        (job,) = doc["jobs"]
        out.setdefault((spec["target"]["path"], spec["params"]["iodepth"]), []).append(job["read"])
    return out


def merged_p99(reps: list[dict[str, Any]]) -> float:
    c: Counter[int] = Counter()
    for r in reps:
        c.update({int(k): v for k, v in r["clat_ns"]["bins"].items()})
    samples = sorted(c.elements())
    return float(samples[math.ceil(Fraction(99) / 100 * len(samples)) - 1])


def test_two_runs_with_repetitions_have_verdicts_and_p_values(bed: dict[str, Any]) -> None:
    db, d = bed["db"], bed["dir"]
    doc = json.loads(ok(sb("compare", "1", "2", "--format", "json", db=db, cwd=d)))
    (c,) = doc["comparisons"]
    assert c["baseline"] == "run 1 (plan1)" and c["other"] == "run 2 (plan2)"
    assert len(c["points"]) == 4 and c["only_baseline"] == c["only_other"] == []
    base, other = by_point(db, 1), by_point(db, 2)
    for p in c["points"]:
        assert p["verdict"] in ("better", "worse", "no significant difference")
        assert p["p_value"] is not None and 0 <= p["p_value"] <= 1
        key = (p["baseline"]["target"]["path"], p["params"]["iodepth"])
        assert p["other"]["target"]["path"] == key[0]  # two targets a side: paired by target
        a = [r["iops"] for r in base[key]]
        b = [r["iops"] for r in other[key]]
        assert len(a) == len(b) == 3
        assert p["baseline"]["iops"]["n"] == 3
        assert p["baseline"]["iops"]["mean"] == pytest.approx(statistics.fmean(a))
        assert p["iops_change_pct"] == pytest.approx(
            100 * (statistics.fmean(b) - statistics.fmean(a)) / statistics.fmean(a)
        )
        assert len(set(a + b)) > 2, "repetitions that vary"
        ref = scipy_stats.ttest_ind(b, a, equal_var=False)
        assert p["p_value"] == pytest.approx(float(ref.pvalue), rel=1e-6)
        want = "no significant difference"
        if ref.pvalue < 0.05:
            want = "better" if statistics.fmean(b) > statistics.fmean(a) else "worse"
        assert p["verdict"] == want
        # p99 over the 3 repetitions: from the summed bins, not an average of p99s
        assert p["baseline"]["clat_p99_ns"] == merged_p99(base[key])
        assert p["other"]["clat_p99_ns"] == merged_p99(other[key])
    s = c["summary"]
    assert s["total"] == 4 and 0 <= s["wins"] <= 4
    assert s["wins"] == s["verdicts"]["better"] and s["losses"] == s["verdicts"]["worse"]
    assert sum(s["verdicts"].values()) == 4 and s["verdicts"]["untested"] == 0
    ratios = [p["other"]["iops"]["mean"] / p["baseline"]["iops"]["mean"] for p in c["points"]]
    geo = math.exp(statistics.fmean(math.log(r) for r in ratios))
    assert s["points"] == 4 and s["iops_ratio_geomean"] == pytest.approx(geo)

    text = ok(sb("compare", "1", "2", db=db, cwd=d))
    assert f"run 2 (plan2) is {geo:.2f}\u00d7 run 1 (plan1) in IOPS (" in text
    assert "geometric mean of 4 points, 95 % CI " in text
    assert f"{s['wins']} better, {s['losses']} worse of 4 judged points" in text
    assert "verdicts (Welch's t-test per repetition, 95 %)" in text
    assert "3/3" in text and "geometric means by iodepth" in text


def test_targets_of_one_run_and_formats(bed: dict[str, Any]) -> None:
    db, d, a = bed["db"], bed["dir"], bed["a"]
    doc = json.loads(
        ok(sb("compare", f"1:target={a}", "1:target=bee", "--format", "json", db=db, cwd=d))
    )
    (c,) = doc["comparisons"]
    assert c["baseline"] == f"{a} (run 1)" and c["other"] == "bee (run 1)"
    assert [p["params"]["iodepth"] for p in c["points"]] == [1, 4]
    for p in c["points"]:
        assert p["baseline"]["target"]["path"] == a
        assert p["other"]["target"]["name"] == "bee"
        assert p["verdict"] != "untested" and p["p_value"] is not None
    md = ok(sb("compare", f"1:target={a}", "1:target=bee", "--format", "markdown", db=db, cwd=d))
    assert md.startswith(f"## bee (run 1) vs {a} (run 1)\n")
    g = c["summary"]["iops_ratio_geomean"]
    assert f"**bee (run 1) is {g:.2f}\u00d7 {a} (run 1) in IOPS (" in md.replace("\\", "")
    assert "| point | n | IOPS base | IOPS other |" in md
    assert "### Geometric means by queue depth (over block sizes)" in md

    out = d / "cmp.md"
    r = sb("report", "1", "2", "--format", "markdown", "-o", str(out), db=db, cwd=d)
    ok(r)
    text = out.read_text()
    assert text.startswith("## run 2 (plan2) vs run 1 (plan1)\n")
    assert "run 1 (plan1) in IOPS (" in text


def test_unmatched_points_are_listed_and_untested_without_repetitions(
    bed: dict[str, Any],
) -> None:
    db, d, a = bed["db"], bed["dir"], bed["a"]
    text = ok(sb("compare", f"1:target={a}", "3", db=db, cwd=d))
    assert "1 matched point, 1 only in the baseline, 1 only in run 3 (plan3)" in text
    assert "unmatched points (2):" in text
    assert f"only in {a} (run 1): {a} rand iodepth=1" in text
    assert f"only in run 3 (plan3): {a} rand iodepth=8" in text
    row = next(ln for ln in text.splitlines() if ln.startswith("rand iodepth=4"))
    assert "3/1" in row and "untested" in row
    doc = json.loads(ok(sb("compare", f"1:target={a}", "3", "--format", "json", db=db, cwd=d)))
    (c,) = doc["comparisons"]
    assert [p["params"]["iodepth"] for p in c["only_baseline"]] == [1]
    assert [p["params"]["iodepth"] for p in c["only_other"]] == [8]
    assert [p["verdict"] for p in c["points"]] == ["untested"]
    assert c["points"][0]["p_value"] is None and c["points"][0]["iops_change_pct"] is not None


def test_report_markdown_of_one_run_has_spread_and_merged_percentiles(
    bed: dict[str, Any],
) -> None:
    db, d, a = bed["db"], bed["dir"], bed["a"]
    md = ok(sb("report", f"1:target={a}", "--format", "markdown", db=db, cwd=d))
    assert md.startswith("## run 1 (plan1)\n")
    head = "| iodepth | n | dir | IOPS | ±95% | MiB/s | clat mean | clat p99 |"
    assert head in md
    rows = [ln for ln in md.splitlines() if ln.startswith("| 1 |") or ln.startswith("| 4 |")]
    assert len(rows) == 2
    base = by_point(db, 1)
    from storbench.model.units import fmt_ns

    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        depth = int(cells[0])
        reps = base[(a, depth)]
        assert cells[1] == "3" and cells[4].startswith("±")
        assert cells[7] == fmt_ns(merged_p99(reps))


def test_bad_references_are_one_line_errors(bed: dict[str, Any]) -> None:
    db, d = bed["db"], bed["dir"]
    r = sb("compare", "1:target=/nowhere", "2", db=db, cwd=d)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "no point of run 1" in r.stderr and "bee" in r.stderr
    r = sb("compare", "1", "42", db=db, cwd=d)
    assert r.returncode == 2 and "there is no run 42" in r.stderr
    r = sb("compare", "1:iodepth", "2", db=db, cwd=d)
    assert r.returncode == 2 and "is not key=value" in r.stderr
    h = ok(sb("compare", "--help", db=db, cwd=d))
    assert "storbench compare 12:target=/dev/sdb 12:target=/dev/sdc" in h
    assert "--format [table|json|markdown]" in h


def test_compare_with_no_matched_point_exits_2_and_lists_both_sides(bed: dict[str, Any]) -> None:
    db, d, a = bed["db"], bed["dir"], bed["a"]
    r = sb("compare", "1:iodepth=1", "3", db=db, cwd=d)
    assert r.returncode == 2 and "Traceback" not in r.stderr and r.stdout == ""
    assert "nothing to compare: no point of run 3 (plan3) matches one of run 1" in r.stderr
    assert "run 1 [iodepth=1] has 2 points: rand (" in r.stderr and "iodepth=1" in r.stderr
    assert "run 3 (plan3) has 2 points: rand (" in r.stderr and "iodepth=4|8" in r.stderr
    assert "fix:" in r.stderr and "RUN:target=PATH" in r.stderr
    for fmt in ("json", "markdown"):
        assert sb("compare", "1:iodepth=1", "3", "--format", fmt, db=db, cwd=d).returncode == 2
    r = sb("compare", f"1:target={a}", "2", "--format", "html", db=db, cwd=d)
    assert r.returncode == 2 and "compare writes no HTML" in r.stderr
    assert f"storbench report 1:target={a} 2 -o report.html" in r.stderr


TINY = ["--set", "runtime=1", "--set", "ramp_time=0", "--set", "size=16m"]


def test_compare_direct_against_buffered_is_not_comparable_and_summed_by_geomean(
    tmp_path: Path,
) -> None:
    """Real fio, twice on one small file: `quick` with direct=1, then with direct=0 (the
    page cache). No point of the pair gets better/worse; the summary over comparable
    points is empty and says so; what the figures say is their geometric mean, never an
    arithmetic mean of percentages. A third run, direct=1 again, is comparable: its summary
    is the geometric mean of the per-point IOPS ratios from fio's own output."""
    db, f = tmp_path / "r.db", str(tmp_path / "scratch.dat")
    ok(sb("run", "quick", "--target", f, *TINY, db=db, cwd=tmp_path))
    ok(sb("run", "quick", "--target", f, *TINY, "--set", "direct=0", db=db, cwd=tmp_path))
    ok(sb("run", "quick", "--target", f, *TINY, db=db, cwd=tmp_path))

    def iops(run_id: int) -> dict[tuple[str, int], float]:
        out = {}
        for spec, doc in raw_docs(db, run_id):
            (job,) = doc["jobs"]
            total = sum(job[k]["iops"] for k in ("read", "write", "trim"))
            out[(spec["params"]["rw"], spec["params"]["iodepth"])] = total
        return out

    def geo(base: int, other: int, keys: set[tuple[str, int]] | None = None) -> float:
        b, o = iops(base), iops(other)
        assert b.keys() == o.keys() and len(b) == 6
        return math.exp(statistics.fmean(math.log(o[k] / b[k]) for k in keys or b))

    (c,) = json.loads(ok(sb("compare", "1", "2", "--format", "json", db=db, cwd=tmp_path)))[
        "comparisons"
    ]
    assert c["differs"] == {"direct": {"baseline": 1, "other": 0}}
    assert [p["verdict"] for p in c["points"]] == ["not comparable"] * 6
    assert all("direct=1 vs direct=0" in p["reason"] for p in c["points"])
    s = c["summary"]
    assert s["points"] == 0 and s["iops_ratio_geomean"] is None and s["total"] == 0
    assert s["wins"] == s["losses"] == 0 and s["verdicts"]["not comparable"] == 6
    assert s["as_measured"]["iops_ratio_geomean"] == pytest.approx(geo(1, 2), rel=1e-6)
    assert all(p["lat_metric"] == "lat" for p in c["points"])  # total latency judged
    text = ok(sb("compare", "1", "2", db=db, cwd=tmp_path))
    assert "no point of run 2 (quick) can be judged against run 1 (quick)" in text
    assert "run 2 (quick) measured through the page cache" in text
    assert " beat " not in text and "on average" not in text
    for ln in text.splitlines():
        if ln.startswith(("rand4k", "seq1m")):
            assert "NOT COMPARABLE" in ln and " better " not in ln and " worse " not in ln

    (c,) = json.loads(ok(sb("compare", "1", "3", "--format", "json", db=db, cwd=tmp_path)))[
        "comparisons"
    ]
    # no setting differs; a pair is left out only for a finding that says its number is
    # not the storage's (a client at a whole CPU, on a fast device)
    judged = [p for p in c["points"] if p["verdict"] != "not comparable"]
    for p in c["points"]:
        assert p["verdict"] != "not comparable" or "direct" not in p["reason"], p["reason"]
    keys = {(p["params"]["rw"], p["params"]["iodepth"]) for p in judged}
    s = c["summary"]
    assert s["points"] == len(judged) >= 1, c["points"]
    assert s["iops_ratio_geomean"] == pytest.approx(geo(1, 3, keys), rel=1e-6)
    lo, hi = s["iops_ratio_ci95"]
    assert lo <= s["iops_ratio_geomean"] <= hi
    text = ok(sb("compare", "1", "3", db=db, cwd=tmp_path))
    g = s["iops_ratio_geomean"]
    assert f"run 3 (quick) is {g:.2f}\u00d7 run 1 (quick) in IOPS (" in text
    n = len(judged)
    assert f"geometric mean of {n} point{'s' if n > 1 else ''}, 95 % CI {lo:.2f}" in text


def test_matrix_and_qualify_summaries_name_the_optimum(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    tiny = ["--set", "ioengine=null", "--set", "size=8m", "--set", "runtime=1"]
    tiny += ["--set", "time_based=0", "--set", "ramp_time=0"]
    out = ok(
        sb(
            "run", "matrix", "-t", str(tmp_path / "m.dat"), *tiny,
            "--set", "rw=randread", "--set", "bs=[4k,64k]", "--set", "iodepth=[1,4]",
            db=db, cwd=tmp_path,
        )
    )  # fmt: skip
    lines = out.splitlines()
    i = lines.index("Optimal iodepth (the smallest reaching 95 % of the best IOPS)")
    assert [ln.split()[2] for ln in lines[i + 3 : i + 5]] == ["4k", "64k"]  # a row per bs
    assert not lines[i + 5].strip()
    md = ok(sb("report", "latest", "--format", "markdown", db=db, cwd=tmp_path))
    assert "IOPS by block size and iodepth" in md and "| bs \\ iodepth | 1 | 4 |" in md
    assert "Optimal iodepth (the smallest reaching 95 % of the best IOPS)" in md

    out = ok(
        sb(
            "run", "qualify", "-t", str(tmp_path / "q.dat"), *tiny, "--set", "numjobs=[1,2]",
            db=db, cwd=tmp_path,
        )
    )  # fmt: skip
    assert "best job count is" in out and "reach 95 % of it" in out
    md = ok(sb("report", "latest", "--format", "markdown", db=db, cwd=tmp_path))
    assert "| ID | Size | Type | Proto | IOPS | #Jobs | Notes |" in md
