"""Comparisons that cannot mislead (issue 24): the summary is the geometric mean of the
per-point ratios with a reproducible bootstrap interval; points whose settings change what
is measured are "not comparable", never better or worse, and stay out of the summary; the
latency judged is fio's total latency (lat); one sign convention in every presenter; the
JSON's summary keys. Summaries are built from the recorded fio outputs of tests/data/fio."""

from __future__ import annotations

import json
import math
import re
import statistics
import sys
from pathlib import Path
from typing import Any

import pytest

from storbench.analysis.comparable import not_comparable
from storbench.analysis.compare import BETTER, NOT_COMPARABLE, WORSE, compare, compare_point
from storbench.analysis.ratios import bootstrap_ci, geomean, summarize_ratios
from storbench.analysis.summary import PointSummary, summarize
from storbench.engines import fio
from storbench.model.metrics import Measurement
from storbench.plan import Point, Target, point_key
from storbench.report import html
from storbench.report.fmt import fmt_pct
from storbench.report.markdown import comparison_markdown
from storbench.report.terminal import comparison_text
from storbench.store import Store

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the harness modules
from stored_runs import recorded, stored_run

DATA = Path(__file__).resolve().parent.parent / "data" / "fio"
T = Target("file", "/mnt/a/sb.dat")
J4 = "numjobs4-nogroup-jsonplus"  # 4 jobs: ~8000 write IOPS each
J2 = "numjobs2-lat-percentiles-jsonplus"  # 2 jobs: ~12500 write IOPS each


def whole(name: str) -> Measurement:
    return fio.parse_output((DATA / f"{name}.json").read_text())[0]


def each_job(name: str) -> list[Measurement]:
    docs, _ = fio.split_documents((DATA / f"{name}.json").read_text())
    doc = docs[-1]
    return [fio.parse_output(json.dumps({**doc, "jobs": [j]}))[0] for j in doc["jobs"]]


def side(spec: list[tuple[dict[str, Any], list[Measurement]]]) -> list[PointSummary]:
    items = []
    for i, (params, ms) in enumerate(spec):
        key = point_key(T, "w", params)
        axes = {k: params[k] for k in ("rw", "iodepth") if k in params}
        for rep, m in enumerate(ms):
            items.append((Point(rep * len(spec) + i, key, rep, T, "w", params, axes), m))
    return summarize(sorted(items, key=lambda pm: pm[0].index))


def one(params: dict[str, Any], ms: list[Measurement]) -> PointSummary:
    (s,) = side([(params, ms)])
    return s


# --------------------------------------------------------------------------- geometric mean


def test_compare_geomean_of_known_ratios() -> None:
    assert geomean([2.0, 0.5]) == pytest.approx(1.0)
    assert geomean([1.0, 4.0]) == pytest.approx(2.0)
    assert geomean([0.87] * 6) == pytest.approx(0.87)
    # the direct-vs-buffered pair of the issue: one point at +2,317 % and five at -30 %
    ratios = [24.17] + [0.7] * 5
    assert statistics.fmean(100 * (r - 1) for r in ratios) == pytest.approx(361.17, abs=0.01)
    assert geomean(ratios) == pytest.approx((24.17 * 0.7**5) ** (1 / 6))
    s = summarize_ratios([0.87] * 6)
    assert (s.geomean, s.ci95, s.points) == (pytest.approx(0.87), pytest.approx((0.87, 0.87)), 6)
    assert s.change_pct == pytest.approx(-13.0)
    # one point: no interval; ratios a geometric mean cannot take are left out
    assert summarize_ratios([2.0]).ci95 is None
    s = summarize_ratios([None, 0.0, math.inf, 4.0, 1.0])
    assert s.points == 2 and s.geomean == pytest.approx(2.0)
    assert summarize_ratios([]).geomean is None and summarize_ratios([]).points == 0


def test_compare_bootstrap_ci_is_reproducible_and_symmetric_in_the_baseline() -> None:
    ratios = [0.5, 1.0, 2.0, 4.0, 8.0, 0.25, 1.5]
    ci = bootstrap_ci(ratios)
    assert ci is not None and ci == bootstrap_ci(ratios)  # fixed seed: same output
    g = geomean(ratios)
    assert g is not None and min(ratios) <= ci[0] < g < ci[1] <= max(ratios)
    # the other run as the baseline: the inverse ratios give the inverse interval
    inv = bootstrap_ci([1 / r for r in ratios])
    assert inv is not None and inv == pytest.approx((1 / ci[1], 1 / ci[0]), rel=1e-9)


def test_compare_bootstrap_ci_matches_the_normal_interval_of_many_points() -> None:
    """With many points the bootstrap interval of a mean of logs approaches
    mean ± 1.96 sd / sqrt(n) (central limit): a known value to check against."""
    logs = [math.sin(7.3 * i) * 0.8 for i in range(400)]  # deterministic, spread
    ratios = [math.exp(v) for v in logs]
    m, sd = statistics.fmean(logs), statistics.stdev(logs)
    half = 1.959964 * sd / math.sqrt(len(logs))
    ci = bootstrap_ci(ratios)
    assert ci is not None
    assert math.log(ci[0]) == pytest.approx(m - half, abs=0.15 * half)
    assert math.log(ci[1]) == pytest.approx(m + half, abs=0.15 * half)


def test_compare_ci_of_thousands_of_points_is_the_normal_interval_and_continuous() -> None:
    """Above BOOTSTRAP_MAX points the interval is mean ± 1.96 sd / sqrt(n) of the logs
    (no 40 million resamples for 20,000 points); just below, the bootstrap gives the same
    to within its own noise: no jump at the threshold."""
    from storbench.analysis.ratios import BOOTSTRAP_MAX

    logs = [math.sin(7.3 * i) * 0.8 for i in range(BOOTSTRAP_MAX + 1)]
    m, sd = statistics.fmean(logs), statistics.stdev(logs)
    half = 1.959964 * sd / math.sqrt(len(logs))
    ci = bootstrap_ci([math.exp(v) for v in logs])
    assert ci is not None
    assert math.log(ci[0]) == pytest.approx(m - half, rel=1e-6)
    assert math.log(ci[1]) == pytest.approx(m + half, rel=1e-6)
    below = bootstrap_ci([math.exp(v) for v in logs[:-1]])  # the bootstrap's
    assert below is not None
    assert math.log(below[0]) == pytest.approx(m - half, abs=0.15 * half)
    assert math.log(below[1]) == pytest.approx(m + half, abs=0.15 * half)


# --------------------------------------------------------------------------- not comparable


@pytest.mark.parametrize(
    ("base", "other", "said"),
    [
        ({"direct": 1}, {"direct": 0}, "direct=1 vs direct=0: B measured through the page cache"),
        ({"direct": 1}, {}, "direct=1 vs direct=0 (default): B measured through the page cache"),
        ({"buffered": 1}, {"direct": True}, "buffered=1 vs direct=1: A measured through"),
        ({"ioengine": "libaio"}, {"ioengine": "psync"}, "ioengine=libaio vs ioengine=psync"),
        ({"ioengine": "io_uring"}, {}, "ioengine=io_uring vs ioengine=psync (default)"),
        ({"engine": "rados-bench"}, {}, "engine=rados-bench vs engine=fio (default)"),
        ({"sync": 1}, {"sync": "none"}, "sync=1 vs sync=none"),
        ({"fsync": 1}, {}, "fsync=1 vs fsync=0 (default)"),
        ({"fdatasync": 8}, {"fdatasync": 1}, "fdatasync=8 vs fdatasync=1"),
        ({"rate_iops": 1000}, {"rate_iops": 2000}, "rate_iops=1000 vs rate_iops=2000"),
    ],
)
def test_compare_not_comparable_settings(
    base: dict[str, Any], other: dict[str, Any], said: str
) -> None:
    m = whole("psync-randread-json")
    reason = not_comparable(one(base, [m]), one(other, [m]), base_name="A", other_name="B")
    assert reason is not None and said in reason
    pair = compare_point(one(base, [m]), one(other, [m]), base_name="A", other_name="B")
    assert pair.verdict == NOT_COMPARABLE and pair.reason == reason and pair.p_value is None


@pytest.mark.parametrize(
    ("base", "other"),
    [
        ({"direct": 1}, {"buffered": 0}),
        ({"direct": "1"}, {"direct": True}),
        ({}, {"direct": 0, "ioengine": "psync", "sync": 0, "fsync": "0"}),
        ({"sync": "0"}, {"sync": "none"}),
        ({"ioengine": "LibAIO"}, {"ioengine": "libaio"}),
    ],
)
def test_compare_same_measurement_is_comparable(
    base: dict[str, Any], other: dict[str, Any]
) -> None:
    m = whole("psync-randread-json")
    assert not_comparable(one(base, [m]), one(other, [m])) is None


def test_compare_not_comparable_points_are_never_judged_nor_summarised() -> None:
    """Runs set to direct=1 and direct=0 throughout (``differs``): repetitions that would
    be a significant difference get "not comparable", and no summary counts them."""
    rw = {"rw": "randwrite", "bs": "4k"}
    j4, j2 = each_job(J4), each_job(J2)
    base = side([({**rw, "iodepth": 1, "direct": 1}, j4), ({**rw, "iodepth": 2, "direct": 1}, j2)])
    other = side([({**rw, "iodepth": 1, "direct": 0}, j2), ({**rw, "iodepth": 2, "direct": 0}, j4)])
    same = compare(
        base, [*side([({**rw, "iodepth": 1, "direct": 1}, j2)])], base_name="A", other_name="B"
    )
    assert [m.verdict for m in same.matched] == [BETTER]  # the same pair, comparable
    c = compare(base, other, base_name="run 1", other_name="run 2")
    assert c.differs == {"direct": (1, 0)}
    assert [m.verdict for m in c.matched] == [NOT_COMPARABLE] * 2
    assert all(m.p_value is None and m.iops_change_pct is not None for m in c.matched)
    assert all("run 2 measured through the page cache" in (m.reason or "") for m in c.matched)
    assert c.total == c.wins == c.losses == c.higher == 0
    assert c.iops.geomean is None and c.iops.points == 0 and c.by_iodepth == {}
    # what the figures say, as no verdict
    ratios = [m.other.total_iops / m.base.total_iops for m in c.matched]
    assert c.as_measured.iops.geomean == pytest.approx(geomean(ratios))
    text = comparison_text(c)
    assert "no point of run 2 can be judged against run 1" in text
    assert "2 of 2 matched points not comparable (direct=1 vs direct=0" in text
    assert "as measured, not a verdict: run 2 is" in text
    assert BETTER not in text.replace("no point", "") and WORSE not in text
    doc = c.to_dict()
    assert doc["summary"]["verdicts"][NOT_COMPARABLE] == 2
    assert doc["points"][0]["reason"].startswith("direct=1 vs direct=0")
    assert doc["summary"]["as_measured"]["iops_ratio_geomean"] == pytest.approx(geomean(ratios))


# --------------------------------------------------------------------------- one latency


def test_compare_judges_total_latency_with_clat_beside_it() -> None:
    """The libaio/direct=0 trap: clat can fall while lat (submission + completion) grows.
    Here: the mean of the judged latency is fio's lat_ns, clat's change is shown apart."""
    b, o = one({"iodepth": 1}, each_job(J4)), one({"iodepth": 1}, each_job(J2))
    assert b.judged_latency_metric == "lat" and b.total_lat is not None
    m = compare_point(b, o)
    lat_b, lat_o = b.total_lat.mean, o.total_lat.mean  # type: ignore[union-attr]
    assert lat_b is not None and lat_o is not None
    assert m.mean_lat_change_pct == pytest.approx(100 * (lat_o - lat_b) / lat_b)
    assert b.clat_mean is not None and o.clat_mean is not None
    assert m.clat_mean_change_pct == pytest.approx(100 * (o.clat_mean - b.clat_mean) / b.clat_mean)
    assert m.mean_lat_change_pct != m.clat_mean_change_pct
    # J4's jobs have no lat percentiles: the p99 is clat's, and says so
    assert m.p99_metric == "clat"
    assert m.to_dict()["p99_metric"] == "clat" and m.to_dict()["lat_metric"] == "lat"
    # both with lat percentiles (lat_percentiles=1, one measurement each): the p99 is lat's
    j2 = each_job(J2)
    m = compare_point(one({}, j2[:1]), one({}, j2[1:]))
    assert m.p99_metric == "lat"


# --------------------------------------------------------------------------- presenters


def _no_old_wording(text: str) -> None:
    for gone in ("reduction", " beat ", "on average", "avg_iops_gain_pct"):
        assert gone not in text, gone


def test_compare_one_sign_convention_in_terminal_markdown_and_html(tmp_path: Path) -> None:
    store = Store(str(tmp_path / "r.db"))
    t = Target("file", "/x")
    runs = []
    for stem in ("psync-randread-json", "warning-before-json"):
        pts = [Point(i, f"q{q}", 0, t, "w", {"iodepth": q}, {"iodepth": q}) for i, q in [(0, 1)]]
        runs.append(stored_run(store, [(p, recorded(stem)) for p in pts], name=stem))
    from storbench.report import model

    report = model.load_comparison(store, [str(r) for r in runs])
    (c,) = report.comparisons
    (m,) = c.matched
    change = m.mean_lat_change_pct
    assert change is not None and change < 0  # the other run's latency is lower
    cell = fmt_pct(change)
    assert cell.startswith("\u2212")
    said = f"latency {fmt_pct(c.lat.change_pct)}"
    assert c.lat.change_pct == pytest.approx(change)

    text = comparison_text(c)
    row = next(ln for ln in text.splitlines() if ln.startswith("w iodepth=1"))
    assert cell in row and said in text
    _no_old_wording(text)
    md = comparison_markdown(c)
    assert f"| {cell} |" in md and said in md
    _no_old_wording(md)
    page = html.render_report(store, [str(r) for r in runs])
    i = page.index('<section id="comparison">')
    section = page[i : page.index("</section>", i)]
    assert f'<td class="n">{cell}</td>' in section and said in section
    _no_old_wording(section)
    # one repetition a side: untested, so no colour on the row
    assert re.search(r'class="n (good|bad)"', section) is None
    # the JSON: the same change, the summary's keys
    doc = json.loads(json.dumps(c.to_dict()))
    assert doc["points"][0]["mean_lat_change_pct"] == pytest.approx(change)
    keys = {"iops_ratio_geomean", "iops_ratio_ci95", "lat_ratio_geomean", "lat_ratio_ci95"}
    assert keys | {"points"} <= set(doc["summary"])
    assert doc["summary"]["points"] == 1 and doc["summary"]["iops_ratio_ci95"] is None
    assert doc["summary"]["lat_ratio_geomean"] == pytest.approx(1 + change / 100)
    assert "avg_iops_gain_pct" not in json.dumps(doc) and "avg_lat_reduction_pct" not in str(doc)


def test_compare_json_summary_keys_and_ci_as_lists() -> None:
    rw = {"rw": "randwrite", "bs": "4k"}
    base = side([({**rw, "iodepth": q}, each_job(J4)) for q in (1, 2, 4)])
    other = side([({**rw, "iodepth": q}, each_job(J2)) for q in (1, 2, 4)])
    doc = json.loads(json.dumps(compare(base, other, base_name="a", other_name="b").to_dict()))
    s = doc["summary"]
    assert s["points"] == s["lat_points"] == 3
    lo, hi = s["iops_ratio_ci95"]
    assert lo <= s["iops_ratio_geomean"] <= hi
    assert isinstance(s["lat_ratio_ci95"], list) and len(s["lat_ratio_ci95"]) == 2
    assert s["lat_metric"] == "lat"
    assert {"wins", "losses", "ties", "total", "higher", "verdicts", "as_measured"} <= set(s)
    assert s["wins"] == 3 and s["losses"] == 0  # J2's jobs are significantly faster
    for g in doc["by_iodepth"]:
        assert {"iodepth", "iops_ratio_geomean", "lat_ratio_geomean", "points"} <= set(g)
