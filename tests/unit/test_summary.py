"""Per-point summaries over repetitions, on the recorded fio outputs of tests/data/fio:
spread of rates, percentiles from merged bins (never averaged), figures over all directions,
and the fast path that merges the stored histograms of only the points that need it."""

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

from storbench.analysis.summary import PointSummary, fill_percentiles, needs_bins, summarize
from storbench.engines import fio
from storbench.model.metrics import PERCENTILES, Measurement, pct_key
from storbench.plan import Point, Target, point_key
from storbench.report.model import load_run
from storbench.store import Store

DATA = Path(__file__).resolve().parent.parent / "data" / "fio"
TARGET = Target("file", "/scratch/a.dat")


def last_doc(name: str) -> dict[str, Any]:
    docs, _ = fio.split_documents((DATA / f"{name}.json").read_text())
    return docs[-1]


def whole(name: str) -> Measurement:
    return fio.parse_output((DATA / f"{name}.json").read_text())[0]


def each_job(name: str) -> list[Measurement]:
    """Every job of a recording as fio would have printed it alone (one entry in jobs[])."""
    doc = last_doc(name)
    out = []
    for job in doc["jobs"]:
        one = {**copy.deepcopy(doc), "jobs": [job]}
        out.append(fio.parse_output(json.dumps(one))[0])
    return out


def points(params: dict[str, Any], reps: int, target: Target = TARGET) -> list[Point]:
    key = point_key(target, "w", params)
    return [
        Point(i, key, i, target, "w", params, {"iodepth": params.get("iodepth")})
        for i in range(reps)
    ]


def summarize_point(params: dict[str, Any], ms: list[Measurement]) -> list[PointSummary]:
    """Summaries of ``ms`` taken as the repetitions of one point."""
    return summarize(list(zip(points(params, len(ms)), ms, strict=True)))


def nearest_rank(samples: list[int], p: float) -> float:
    return float(samples[max(math.ceil(Fraction(str(p)) / 100 * len(samples)), 1) - 1])


def union_samples(entries: list[dict[str, Any]]) -> list[int]:
    c: Counter[int] = Counter()
    for e in entries:
        c.update({int(k): v for k, v in e["bins"].items()})
    return sorted(c.elements())


def test_one_repetition_keeps_fios_own_percentiles() -> None:
    (s,) = summarize_point({"iodepth": 4}, [whole("percentile-rank-jsonplus")])
    theirs = last_doc("percentile-rank-jsonplus")["jobs"][0]["read"]["clat_ns"]["percentile"]
    ds = s.dirs["read"]
    assert ds.clat is not None
    for p in PERCENTILES:
        assert ds.clat.percentiles[pct_key(p)] == theirs[f"{p:.6f}"]
    assert s.clat_p99 == theirs["99.000000"]
    assert s.runs == 1 and ds.iops_spread is not None and ds.iops_spread.half_width is None


def test_repetitions_merge_bins_and_spread_rates() -> None:
    """The 4 jobs of a numjobs=4 recording taken as 4 repetitions of one point."""
    jobs = last_doc("numjobs4-nogroup-jsonplus")["jobs"]
    (s,) = summarize_point({"iodepth": 1}, each_job("numjobs4-nogroup-jsonplus"))
    ds = s.dirs["write"]
    assert ds.clat is not None and s.runs == 4
    samples = union_samples([j["write"]["clat_ns"] for j in jobs])
    assert ds.clat.samples == len(samples) == 8192
    want = {pct_key(p): nearest_rank(samples, p) for p in PERCENTILES}
    assert ds.clat.percentiles == want
    averaged = statistics.fmean(j["write"]["clat_ns"]["percentile"]["99.000000"] for j in jobs)
    assert want["99"] != averaged
    # one direction only: the point's own latency is that direction's
    assert s.clat is not None and s.clat.percentiles == want
    # rates: one value per repetition, spread with a Student t interval
    iops = [j["write"]["iops"] for j in jobs]
    assert ds.iops == iops and s.rep_iops == iops
    sp = ds.iops_spread
    assert sp is not None and sp.n == 4
    assert sp.mean == pytest.approx(statistics.fmean(iops))
    assert sp.half_width == pytest.approx(3.182446 * statistics.stdev(iops) / 2, rel=1e-6)
    bw = ds.bw_spread
    assert bw is not None and bw.mean == pytest.approx(
        statistics.fmean(j["write"]["bw_bytes"] for j in jobs)
    )
    means = [j["write"]["clat_ns"]["mean"] for j in jobs]
    lat = ds.clat_mean_spread
    assert lat is not None and lat.mean == pytest.approx(statistics.fmean(means))
    assert s.rep_clat_mean == pytest.approx(means)
    assert ds.iops_mean == pytest.approx(statistics.fmean(iops))


def test_point_figures_cover_every_direction() -> None:
    job = last_doc("libaio-randrw-jsonplus")["jobs"][0]
    r, w = job["read"], job["write"]
    (s,) = summarize_point({"iodepth": 16}, [whole("libaio-randrw-jsonplus")])
    assert s.rep_iops == [pytest.approx(r["iops"] + w["iops"])]
    assert s.total_iops == pytest.approx(r["iops"] + w["iops"])
    assert s.total_bw == pytest.approx(r["bw_bytes"] + w["bw_bytes"])
    n_r, n_w = r["clat_ns"]["N"], w["clat_ns"]["N"]
    mean = (n_r * r["clat_ns"]["mean"] + n_w * w["clat_ns"]["mean"]) / (n_r + n_w)
    assert s.clat_mean == pytest.approx(mean)
    assert s.rep_clat_mean == [pytest.approx(mean)]
    samples = union_samples([r["clat_ns"], w["clat_ns"]])
    assert s.clat_p99 == nearest_rank(samples, 99.0)
    # ... which is neither direction's own p99
    assert s.clat_p99 not in (
        r["clat_ns"]["percentile"]["99.000000"],
        w["clat_ns"]["percentile"]["99.000000"],
    )


def _without_bins(m: Measurement) -> Measurement:
    data = m.to_dict()
    for d in data["directions"].values():
        for metric in ("clat", "lat", "slat"):
            if d.get(metric):
                d[metric]["bins"] = None
    return Measurement.from_dict(data)


def test_fill_percentiles_needs_exactly_the_missing_histograms() -> None:
    ms = each_job("numjobs4-nogroup-jsonplus")
    (s,) = summarize_point({"iodepth": 1}, [_without_bins(m) for m in ms])
    assert needs_bins(s) and s.dirs["write"].clat is not None
    assert s.dirs["write"].clat.percentiles == {}  # nothing averaged in place of merging
    jobs = last_doc("numjobs4-nogroup-jsonplus")["jobs"]
    texts = [("write", json.dumps(j["write"]["clat_ns"]["bins"])) for j in jobs]
    fill_percentiles(s, texts[:3])  # one repetition's histogram missing: stays empty
    assert s.dirs["write"].clat.percentiles == {} and s.clat is not None
    assert s.clat.percentiles == {}
    fill_percentiles(s, texts, percentiles=(99.0,))
    samples = union_samples([j["write"]["clat_ns"] for j in jobs])
    assert s.dirs["write"].clat.percentiles == {"99": nearest_rank(samples, 99.0)}
    assert s.clat.percentiles == {"99": nearest_rank(samples, 99.0)}
    assert not needs_bins(s)
    # mappings (not text), indented JSON text, and both mixed give the same
    for hists in (
        [("write", {int(k): v for k, v in j["write"]["clat_ns"]["bins"].items()}) for j in jobs],
        [("write", json.dumps(j["write"]["clat_ns"]["bins"], indent=2)) for j in jobs],
        [texts[0], ("write", jobs[1]["write"]["clat_ns"]["bins"]), *texts[2:]],
    ):
        (again,) = summarize_point({"iodepth": 1}, [_without_bins(m) for m in ms])
        fill_percentiles(again, hists)
        assert again.dirs["write"].clat is not None
        assert again.dirs["write"].clat.percentiles == {
            pct_key(p): nearest_rank(samples, p) for p in PERCENTILES
        }


def test_fill_percentiles_sums_many_histograms_a_chunk_at_a_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Past SUM_CHUNK histograms (thousands of repetitions of a point) they are summed a
    chunk at a time, in bounded memory: the percentiles are exactly those of the union."""
    import storbench.analysis.summary as summary

    monkeypatch.setattr(summary, "SUM_CHUNK", 2)  # 4 jobs x 3 copies: 6 chunks of 2
    jobs = last_doc("numjobs4-nogroup-jsonplus")["jobs"] * 3
    ms = each_job("numjobs4-nogroup-jsonplus") * 3
    (s,) = summarize_point({"iodepth": 1}, [_without_bins(m) for m in ms])
    fill_percentiles(s, [("write", json.dumps(j["write"]["clat_ns"]["bins"])) for j in jobs])
    samples = union_samples([j["write"]["clat_ns"] for j in jobs])
    assert s.dirs["write"].clat is not None and s.clat is not None
    want = {pct_key(p): nearest_rank(samples, p) for p in PERCENTILES}
    assert s.dirs["write"].clat.percentiles == want == s.clat.percentiles


def test_store_fast_path_equals_merging_every_histogram(tmp_path: Path) -> None:
    """Summaries loaded without histograms, then merged from the stored bins of only the
    points that need it, equal summaries of the measurements with all their bins."""
    plan: list[tuple[dict[str, Any], list[Measurement]]] = [
        ({"iodepth": 1}, each_job("numjobs4-nogroup-jsonplus")),  # 4 repetitions
        ({"iodepth": 2}, each_job("numjobs2-lat-percentiles-jsonplus")),  # 2
        ({"iodepth": 16}, [whole("libaio-randrw-jsonplus")]),  # 1, read and write
        ({"iodepth": 4}, [whole("percentile-rank-jsonplus")]),  # 1, fio's own percentiles
        ({"iodepth": 8}, [whole("psync-randread-json"), whole("status-interval-json")]),  # no bins
        (
            {"iodepth": 32},
            [whole("error-enospc-json"), whole("null-engine-jsonplus")],
        ),  # failed + ok
    ]
    items: list[tuple[Point, Measurement]] = []
    for params, ms in plan:
        key = point_key(TARGET, "w", params)
        for rep, m in enumerate(ms):
            items.append((Point(0, key, rep, TARGET, "w", params, dict(params)), m))
    items = [
        (Point(i, p.key, p.repetition, p.target, p.workload, p.params, p.axes), m)
        for i, (p, m) in enumerate(items)
    ]
    store = Store(str(tmp_path / "r.db"))
    run_id = store.runs.create(
        kind="run",
        name="t",
        source="test",
        plan_text=None,
        overrides=[],
        inventory={},
        fio_version=None,
        storbench_version="0",
        argv=[],
        points=[p for p, _ in items],
    )
    for p, m in items:
        store.measurements.record(
            run_id,
            p,
            m,
            engine="fio",
            command=None,
            job_file=None,
            raw_output=None,
            stderr=None,
            started_at=None,
            ended_at=None,
        )
    full = summarize(
        [(r.point, r.measurement) for r in store.measurements.of_run(run_id, bins=True) if r.point]
    )
    fast = load_run(store, run_id).summaries
    assert [s.key for s in fast] == [s.key for s in full]
    for a, b in zip(fast, full, strict=True):
        assert a.runs == b.runs and a.failed == b.failed
        assert a.rep_iops == b.rep_iops
        for d in b.dirs:
            ca, cb = a.dirs[d].clat, b.dirs[d].clat
            assert ca is not None and cb is not None
            assert ca.percentiles == cb.percentiles
            assert ca.mean == pytest.approx(cb.mean)
        assert (a.clat and a.clat.percentiles) == (b.clat and b.clat.percentiles)
    by_depth = {s.params["iodepth"]: s for s in fast}
    assert by_depth[1].clat_p99 is not None and by_depth[16].clat_p99 is not None
    assert by_depth[8].runs == 2 and by_depth[8].clat_p99 is None  # plain json: can't merge
    assert by_depth[32].runs == 1 and by_depth[32].failed == 1
    # compare's load: the points' p99 only
    slim = load_run(store, run_id, percentiles=(99.0,), dirs=False).summaries
    assert [s.clat_p99 for s in slim] == [s.clat_p99 for s in full]
