"""A-vs-B comparison on summaries built from the recorded fio outputs of tests/data/fio:
matching, changes, verdicts, seed 004's summary, RUN:filter selection, and the three
output formats. Expected figures are read from the recordings' JSON directly."""

from __future__ import annotations

import copy
import json
import math
import statistics
from collections import Counter
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from scipy import stats as scipy_stats

from storbench.analysis.compare import (
    BETTER,
    NO_DIFFERENCE,
    NOT_COMPARABLE,
    UNTESTED,
    VERDICTS,
    WORSE,
    Comparison,
    compare,
)
from storbench.analysis.select import parse_run_spec, same_value, select
from storbench.analysis.summary import PointSummary, summarize
from storbench.engines import fio
from storbench.model.errors import UserError
from storbench.model.metrics import Measurement
from storbench.plan import Point, Target, point_key
from storbench.report.fmt import fmt_pct
from storbench.report.markdown import comparison_markdown
from storbench.report.terminal import comparison_text

DATA = Path(__file__).resolve().parent.parent / "data" / "fio"
A = Target("file", "/mnt/a/sb.dat", "alpha")
B = Target("device", "/dev/sdb")


def last_doc(name: str) -> dict[str, Any]:
    docs, _ = fio.split_documents((DATA / f"{name}.json").read_text())
    return docs[-1]


def entries(name: str) -> list[dict[str, Any]]:
    doc = last_doc(name)
    return doc.get("jobs") or [c for c in doc["client_stats"] if c["jobname"] != "All clients"]


def whole(name: str) -> Measurement:
    return fio.parse_output((DATA / f"{name}.json").read_text())[0]


def each_job(name: str) -> list[Measurement]:
    """Every job of a recording as fio would have printed it alone (one entry in jobs[])."""
    doc = last_doc(name)
    return [
        fio.parse_output(json.dumps({**copy.deepcopy(doc), "jobs": [j]}))[0] for j in doc["jobs"]
    ]


def run(
    spec: list[tuple[dict[str, Any], list[Measurement]]],
    target: Target = A,
    workload: str = "w",
) -> list[PointSummary]:
    """Summaries of a run: each (params, measurements) is one point with those repetitions
    (in rounds, as storbench runs them)."""
    items: list[tuple[Point, Measurement]] = []
    n = len(spec)
    for i, (params, ms) in enumerate(spec):
        key = point_key(target, workload, params)
        axes = {k: v for k, v in params.items() if k in ("rw", "bs", "iodepth")}
        for rep, m in enumerate(ms):
            items.append((Point(rep * n + i, key, rep, target, workload, params, axes), m))
    items.sort(key=lambda pm: pm[0].index)
    return summarize(items)


def iops_of(es: list[dict[str, Any]]) -> list[float]:
    return [e["read"]["iops"] + e["write"]["iops"] for e in es]


def pct(base: float, other: float) -> float:
    return 100 * (other - base) / base


def clat_mean(es: list[dict[str, Any]], kind: str = "clat_ns") -> float:
    """Sample-weighted mean clat (or ``lat_ns``: total latency) of every I/O of these job
    entries."""
    parts = [e[d][kind] for e in es for d in ("read", "write") if e[d][kind]["N"]]
    return sum(p["N"] * p["mean"] for p in parts) / sum(p["N"] for p in parts)


def lat_mean(es: list[dict[str, Any]]) -> float:
    return clat_mean(es, "lat_ns")


def geo(values: list[float]) -> float:
    return math.exp(statistics.fmean(math.log(v) for v in values))


def p99_of(es: list[dict[str, Any]]) -> float:
    c: Counter[int] = Counter()
    for e in es:
        for d in ("read", "write"):
            c.update({int(k): v for k, v in (e[d]["clat_ns"].get("bins") or {}).items()})
    samples = sorted(c.elements())
    return float(samples[math.ceil(Fraction(99) / 100 * len(samples)) - 1])


RW = {"rw": "randwrite", "bs": "4k"}
J4 = "numjobs4-nogroup-jsonplus"  # 4 jobs: ~8000 write IOPS each
J2 = "numjobs2-lat-percentiles-jsonplus"  # 2 jobs: ~12500 write IOPS each


@pytest.fixture(scope="module")
def verdicts() -> Comparison:
    """Four points: other faster, other slower, the same device split in two, no repeats."""
    j4, j2 = each_job(J4), each_job(J2)
    base = run(
        [
            ({**RW, "iodepth": 1}, j4),
            ({**RW, "iodepth": 2}, j2),
            ({**RW, "iodepth": 4}, j4[:2]),
            ({**RW, "iodepth": 8}, [whole("psync-randread-json")]),
        ]
    )
    other = run(
        [
            ({**RW, "iodepth": 1}, j2),
            ({**RW, "iodepth": 2}, j4),
            ({**RW, "iodepth": 4}, j4[2:]),
            ({**RW, "iodepth": 8}, [whole("warning-before-json")]),
        ],
        target=B,
    )
    return compare(base, other, base_name="base", other_name="other")


@pytest.mark.filterwarnings("ignore:Precision loss:RuntimeWarning")  # scipy, on 8031 and 8031
def test_verdicts_follow_welch_on_iops_per_repetition(verdicts: Comparison) -> None:
    e4, e2 = entries(J4), entries(J2)
    cases = {
        1: (iops_of(e4), iops_of(e2)),
        2: (iops_of(e2), iops_of(e4)),
        4: (iops_of(e4[:2]), iops_of(e4[2:])),
    }
    got = {m.params["iodepth"]: m for m in verdicts.matched}
    assert sorted(got) == [1, 2, 4, 8]
    for depth, (a, b) in cases.items():
        m = got[depth]
        ref = scipy_stats.ttest_ind(b, a, equal_var=False)
        assert m.p_value == pytest.approx(float(ref.pvalue), rel=1e-9)
        assert m.iops_change_pct == pytest.approx(pct(statistics.fmean(a), statistics.fmean(b)))
    assert got[1].verdict == BETTER and got[1].p_value is not None and got[1].p_value < 0.01
    assert got[2].verdict == WORSE
    assert got[4].verdict == NO_DIFFERENCE and got[4].p_value is not None
    assert got[4].p_value > 0.05
    assert got[8].verdict == UNTESTED and got[8].p_value is None
    assert got[8].iops_change_pct == pytest.approx(
        pct(iops_of(entries("psync-randread-json"))[0], iops_of(entries("warning-before-json"))[0])
    )
    assert all(m.verdict in VERDICTS for m in verdicts.matched)
    assert [verdicts.count(v) for v in VERDICTS] == [1, 1, 1, 0, 1, 0]  # none equal


def test_compare_summary_is_the_geomean_of_ratios_and_counts_significant_verdicts(
    verdicts: Comparison,
) -> None:
    ratios = [m.other.total_iops / m.base.total_iops for m in verdicts.matched]
    assert [m.iops_ratio for m in verdicts.matched] == pytest.approx(ratios)
    assert verdicts.total == 4 and verdicts.iops.points == 4
    assert verdicts.iops.geomean == pytest.approx(geo(ratios))
    lats = [m.other.total_lat.mean / m.base.total_lat.mean for m in verdicts.matched]  # type: ignore[union-attr]
    assert verdicts.lat.geomean == pytest.approx(geo(lats))
    # wins and losses are significant verdicts only; "higher" is the plain comparison
    assert (verdicts.wins, verdicts.losses, verdicts.ties) == (1, 1, 1)
    assert verdicts.higher == sum(1 for r in ratios if r > 1) == 3
    # every point has the same bs: one group, the overall geomean; one group per iodepth
    assert list(verdicts.by_bs) == ["4k"]
    assert verdicts.by_bs["4k"].iops.geomean == pytest.approx(verdicts.iops.geomean)
    assert list(verdicts.by_iodepth) == [1, 2, 4, 8]
    for m in verdicts.matched:
        assert verdicts.by_iodepth[m.params["iodepth"]].iops.geomean == pytest.approx(m.iops_ratio)
    # the target differs between the sides and is not part of the match
    assert {(m.base.target, m.other.target) for m in verdicts.matched} == {(A, B)}
    assert verdicts.only_base == [] and verdicts.only_other == []


def test_compare_geomeans_per_iodepth_are_over_block_sizes() -> None:
    """A 2 x 2 grid (bs x iodepth), one repetition per point, as in seed 004."""
    names = {
        ("4k", 1): ("psync-randread-json", "warning-before-json"),
        ("64k", 1): ("status-interval-json", "percentile-rank-jsonplus"),
        ("4k", 16): ("percentile-rank-jsonplus", "psync-randread-json"),
        ("64k", 16): ("numjobs4-group-jsonplus", "libaio-randrw-jsonplus"),
    }
    base = run(
        [
            ({"rw": "randread", "bs": bs, "iodepth": q}, [whole(b)])
            for (bs, q), (b, _) in names.items()
        ]
    )
    other = run(
        [
            ({"rw": "randread", "bs": bs, "iodepth": q}, [whole(o)])
            for (bs, q), (_, o) in names.items()
        ]
    )
    c = compare(base, other, base_name="vmware", other_name="proxmox")
    iops = {k: iops_of(entries(o))[0] / iops_of(entries(b))[0] for k, (b, o) in names.items()}
    lat = {k: lat_mean(entries(o)) / lat_mean(entries(b)) for k, (b, o) in names.items()}
    assert list(c.by_iodepth) == [1, 16] and list(c.by_bs) == ["4k", "64k"]
    for q in (1, 16):
        g = c.by_iodepth[q]
        assert g.iops.geomean == pytest.approx(geo([iops[("4k", q)], iops[("64k", q)]]))
        assert g.lat.geomean == pytest.approx(geo([lat[("4k", q)], lat[("64k", q)]]))
        assert g.iops.points == 2
    for bs in ("4k", "64k"):
        g = c.by_bs[bs]
        assert g.iops.geomean == pytest.approx(geo([iops[(bs, 1)], iops[(bs, 16)]]))
        assert g.lat.geomean == pytest.approx(geo([lat[(bs, 1)], lat[(bs, 16)]]))
    assert c.iops.geomean == pytest.approx(geo(list(iops.values())))
    assert c.lat.geomean == pytest.approx(geo(list(lat.values())))
    assert c.wins == c.losses == 0  # untested: no verdict is significant
    assert c.higher == sum(1 for r in iops.values() if r > 1)
    assert all(m.verdict == UNTESTED for m in c.matched)


def test_mixed_point_is_judged_by_all_its_io() -> None:
    base = run([({"rw": "randrw", "iodepth": 16}, [whole("libaio-randrw-jsonplus")])])
    other = run([({"rw": "randrw", "iodepth": 16}, [whole("numjobs4-group-jsonplus")])])
    (m,) = compare(base, other, base_name="a", other_name="b").matched
    eb, eo = entries("libaio-randrw-jsonplus"), entries("numjobs4-group-jsonplus")
    assert m.iops_change_pct == pytest.approx(pct(iops_of(eb)[0], iops_of(eo)[0]))
    bw = [sum(e[d]["bw_bytes"] for d in ("read", "write")) for e in (eb[0], eo[0])]
    assert m.bw_change_pct == pytest.approx(pct(*bw))
    # latency judged: fio's total latency (lat); clat beside it; p99 of clat (lat has none)
    assert m.lat_metric == "lat"
    assert m.mean_lat_change_pct == pytest.approx(pct(lat_mean(eb), lat_mean(eo)))
    assert m.clat_mean_change_pct == pytest.approx(pct(clat_mean(eb), clat_mean(eo)))
    assert m.p99_metric == "clat"
    assert m.p99_lat_change_pct == pytest.approx(pct(p99_of(eb), p99_of(eo)))
    # the p99 of all I/Os: not the read p99, not the write p99
    assert p99_of(eb) not in (
        eb[0][d]["clat_ns"]["percentile"]["99.000000"] for d in ("read", "write")
    )


def test_compare_rate_capped_point_is_judged_by_total_latency() -> None:
    params = {**RW, "iodepth": 1, "rate_iops": 8000}
    e4, e2 = entries(J4), entries(J2)
    c = compare(
        run([(params, each_job(J4))]), run([(params, each_job(J2))]), base_name="a", other_name="b"
    )
    (m,) = c.matched
    a = [e["write"]["lat_ns"]["mean"] for e in e4]
    b = [e["write"]["lat_ns"]["mean"] for e in e2]
    ref = scipy_stats.ttest_ind(b, a, equal_var=False)
    assert m.by_latency and m.p_value == pytest.approx(float(ref.pvalue), rel=1e-9)
    if ref.pvalue < 0.05:
        assert m.verdict == (BETTER if statistics.fmean(b) < statistics.fmean(a) else WORSE)
    else:
        assert m.verdict == NO_DIFFERENCE
    assert m.higher == (statistics.fmean(b) < statistics.fmean(a))
    assert c.higher == int(m.higher)
    assert c.wins == int(m.verdict == BETTER)
    # its IOPS are what the plan asked for: not in the IOPS geomean, in the latency one
    assert c.iops.points == 0 and c.lat.points == 1


def test_unmatched_points_are_listed() -> None:
    j = [whole("psync-randread-json")]
    base = run([({**RW, "iodepth": q}, j) for q in (1, 16)])
    other = run([({**RW, "iodepth": q}, j) for q in (16, 32)])
    other += run([({**RW, "iodepth": 1}, j)], workload="renamed")
    c = compare(base, other, base_name="a", other_name="b")
    assert [m.params["iodepth"] for m in c.matched] == [16]
    assert [s.params["iodepth"] for s in c.only_base] == [1]
    assert sorted((s.workload, s.params["iodepth"]) for s in c.only_other) == [
        ("renamed", 1),
        ("w", 32),
    ]
    text = comparison_text(c)
    assert "unmatched points (3)" in text
    assert "only in a: alpha w rw=randwrite bs=4k iodepth=1" in text
    assert "only in b: alpha renamed rw=randwrite bs=4k iodepth=1" in text
    assert "only in b: alpha w rw=randwrite bs=4k iodepth=32" in text


def test_several_targets_per_side_pair_target_with_target() -> None:
    j4, j2 = each_job(J4), each_job(J2)
    base = run([({**RW, "iodepth": 1}, j4)], target=A) + run([({**RW, "iodepth": 1}, j2)], target=B)
    other = run([({**RW, "iodepth": 1}, j2)], target=B) + run(
        [({**RW, "iodepth": 1}, j4)], target=A
    )
    c = compare(base, other, base_name="monday", other_name="tuesday")
    assert [(m.base.target, m.other.target) for m in c.matched] == [(A, A), (B, B)]
    assert [m.iops_change_pct for m in c.matched] == [0.0, 0.0]
    assert c.matched[0].label.startswith("alpha ") and c.matched[1].label.startswith("/dev/sdb ")
    assert c.matched[0].key != c.matched[1].key


def test_values_match_as_text_but_not_other_parameters() -> None:
    j = [whole("psync-randread-json")]
    c = compare(
        run([({"rw": "randread", "iodepth": 32, "direct": True}, j)]),
        run([({"rw": "randread", "iodepth": "32", "direct": 1}, j)]),
        base_name="a",
        other_name="b",
    )
    assert len(c.matched) == 1 and c.matched[0].label == "w rw=randread iodepth=32"
    # an option set to one value per run but differing between the runs is what the runs
    # compare (e.g. ioengine libaio vs psync): matched on everything else, and reported
    c = compare(
        run([({"rw": "randread", "iodepth": 32, "size": "1g"}, j)]),
        run([({"rw": "randread", "iodepth": 32, "size": "2g"}, j)]),
        base_name="a",
        other_name="b",
    )
    assert len(c.matched) == 1 and c.differs == {"size": ("1g", "2g")}
    assert "the runs differ in size (1g -> 2g)" in comparison_text(c)
    # an option that varies within a run is part of the point's identity
    c = compare(
        run(
            [
                ({"rw": "randread", "iodepth": 32, "size": "1g"}, j),
                ({"rw": "randread", "iodepth": 1, "size": "1g"}, j),
            ]
        ),
        run(
            [
                ({"rw": "randread", "iodepth": 32, "size": "2g"}, j),
                ({"rw": "randread", "iodepth": 1, "size": "4g"}, j),
            ]
        ),
        base_name="a",
        other_name="b",
    )
    assert c.matched == [] and c.differs == {}
    assert len(c.only_base) == len(c.only_other) == 2
    assert "RUN:target=PATH" in comparison_text(c)


def test_a_failed_side_is_untested_and_not_counted() -> None:
    base = run(
        [
            ({**RW, "iodepth": 1}, [whole("psync-randread-json")]),
            ({**RW, "iodepth": 2}, [whole("psync-randread-json")]),
        ]
    )
    other = run(
        [
            ({**RW, "iodepth": 1}, [whole("error-enospc-json")]),
            ({**RW, "iodepth": 2}, [whole("warning-before-json")]),
        ]
    )
    c = compare(base, other, base_name="a", other_name="b")
    failed, ok = c.matched
    assert failed.other.runs == 0 and failed.verdict == UNTESTED
    assert failed.iops_change_pct is None and failed.higher is None
    assert ok.iops_change_pct is not None
    assert (c.wins, c.total, c.higher, c.iops.points) == (0, 1, 1, 1)
    assert "failed in b" in comparison_text(c)


# --------------------------------------------------------------------------- formats


def test_compare_formats_carry_the_summary(verdicts: Comparison) -> None:
    text = comparison_text(verdicts)
    g = verdicts.iops.geomean
    assert g is not None and verdicts.iops.ci95 is not None
    lo, hi = verdicts.iops.ci95
    sentence = (
        f"other is {g:.2f}\u00d7 base in IOPS ({fmt_pct(100 * (g - 1))}; geometric mean of "
        f"4 points, 95 % CI {lo:.2f}\u2013{hi:.2f})"
    )
    assert sentence in text
    assert "1 better, 1 worse of 4 judged points (1 no significant difference, 1 untested)" in text
    assert "higher mean IOPS in 3 of 4 (1 significantly)" in text
    assert "1 better, 1 worse, 1 no significant difference, 1 untested" in text
    assert "geometric means by iodepth" in text
    assert " beat " not in text and "on average" not in text and "reduction" not in text

    md = comparison_markdown(verdicts)
    assert f"**{sentence}; latency " in md.replace("\\", "")
    tables = [ln for ln in md.splitlines() if ln.startswith("|")]
    assert tables, md
    # every row of a table has as many cells as its header
    block: list[str] = []
    for ln in [*md.splitlines(), ""]:
        if ln.startswith("|"):
            block.append(ln)
            continue
        if block:
            widths = {len(row.replace("\\|", "").split("|")) for row in block}
            assert len(widths) == 1, block
            assert set(block[1].replace("|", "")) <= set("-: ")
            block = []
    assert "### Geometric means by queue depth (over block sizes)" in md
    assert "| 1 | 1 | " in md

    doc = json.loads(json.dumps(verdicts.to_dict()))
    summary = doc["summary"]
    assert (summary["wins"], summary["losses"], summary["ties"]) == (1, 1, 1)
    assert summary["total"] == 4 and summary["higher"] == 3
    assert summary["verdicts"] == {**{v: 1 for v in VERDICTS}, NOT_COMPARABLE: 0, "equal": 0}
    assert [p["verdict"] for p in doc["points"]] == [BETTER, WORSE, NO_DIFFERENCE, UNTESTED]
    first = doc["points"][0]
    assert first["baseline"]["iops"]["n"] == 4 and first["other"]["iops"]["n"] == 2
    assert first["baseline"]["iops"]["ci_low"] < first["baseline"]["iops"]["mean"]
    assert [g["iodepth"] for g in doc["by_iodepth"]] == [1, 2, 4, 8]


# --------------------------------------------------------------------------- RUN:filter


def test_parse_run_spec() -> None:
    s = parse_run_spec("12:target=/dev/sdb")
    assert (s.run, s.filters) == ("12", (("target", "/dev/sdb"),))
    s = parse_run_spec("latest~1:rw=randread, iodepth=32")
    assert (s.run, s.filters, s.filter_text) == (
        "latest~1",
        (("rw", "randread"), ("iodepth", "32")),
        "rw=randread,iodepth=32",
    )
    assert parse_run_spec("latest").filters == ()
    assert parse_run_spec("3:target=/mnt/a:b").filters == (("target", "/mnt/a:b"),)
    for bad in ("12:bs", ":bs=4k", "12:=4k", "12:bs=", "12:"):
        with pytest.raises(UserError) as e:
            parse_run_spec(bad)
        assert "fix:" in str(e.value)


def test_select_by_target_workload_and_parameters() -> None:
    j = [whole("psync-randread-json")]
    ss = run(
        [({"rw": "randread", "bs": bs, "iodepth": q}, j) for bs in ("4k", 65536) for q in (1, 32)],
        target=A,
    ) + run([({"rw": "randread", "bs": "4k", "iodepth": 1}, j)], target=B, workload="other")
    assert [s.target for s in select(ss, (("target", "/mnt/a/sb.dat"),))] == [A] * 4
    assert [s.target for s in select(ss, (("target", "alpha"),))] == [A] * 4
    assert [s.target for s in select(ss, (("target", "/dev/sdb"),))] == [B]
    assert [s.workload for s in select(ss, (("workload", "other"),))] == ["other"]
    four_k = select(ss, (("bs", "4096"),))
    assert len(four_k) == 3  # 4k matches 4096
    assert len(select(ss, (("bs", "64k"), ("iodepth", "32")))) == 1
    assert select(ss, ()) is ss
    with pytest.raises(UserError) as e:
        select(ss, (("iodepht", "1"),), what="run 7")
    assert "run 7 has no point with a parameter 'iodepht'" in str(e.value)
    assert 'did you mean "iodepth"' in str(e.value)
    with pytest.raises(UserError) as e:
        select(ss, (("target", "/dev/sdz"),), what="run 7")
    assert "no point of run 7 has target=/dev/sdz" in str(e.value)
    assert "alpha" in str(e.value) and "/dev/sdb" in str(e.value)


@pytest.mark.parametrize(
    ("have", "want", "same"),
    [
        ("4k", "4096", True),
        (4096, "4k", True),
        ("randread", "RandRead", True),
        (32, "32", True),
        ("1m", "1024k", True),
        ("4k", "8k", False),
        ("randread", "read", False),
        (True, "1", False),
    ],
)
def test_same_value(have: object, want: str, same: bool) -> None:
    assert same_value(have, want) is same


def test_compare_latency_change_is_of_the_mean_over_all_ios_of_all_repetitions(
    verdicts: Comparison,
) -> None:
    """What README and every format say: latency changes compare the mean total latency
    (lat) over all I/Os of all repetitions (pooled by I/O count), not the mean of the
    repetitions' means."""
    m = {x.params["iodepth"]: x for x in verdicts.matched}[1]  # base: J4's jobs; other: J2's

    def pooled(es: list[dict[str, Any]], kind: str = "lat_ns") -> float:
        n = [e["write"][kind]["N"] for e in es]
        return sum(e["write"][kind]["mean"] * k for e, k in zip(es, n, strict=True)) / sum(n)

    assert m.mean_lat_change_pct == pytest.approx(pct(pooled(entries(J4)), pooled(entries(J2))))
    assert m.clat_mean_change_pct == pytest.approx(
        pct(pooled(entries(J4), "clat_ns"), pooled(entries(J2), "clat_ns"))
    )
    assert "latency and clat mean: over all I/Os of all repetitions" in comparison_text(verdicts)
