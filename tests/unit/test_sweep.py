"""Sweep analysis (best, saturation, latency knee) on summaries of recorded fio outputs, and
its use for qualify's best job count (seed 002) and matrix's optimal iodepth (seed 003)."""

from __future__ import annotations

import copy
import json
import math
from collections import Counter
from fractions import Fraction
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from storbench.analysis.summary import PointSummary, summarize
from storbench.analysis.sweep import sweeps
from storbench.engines import fio
from storbench.model.metrics import Measurement
from storbench.plan import Point, Target, point_key
from storbench.report import suites

DATA = Path(__file__).resolve().parent.parent / "data" / "fio"
A = Target("file", "/mnt/a/sb.dat")
B = Target("file", "/mnt/b/sb.dat")


def last_doc(name: str) -> dict[str, Any]:
    docs, _ = fio.split_documents((DATA / f"{name}.json").read_text())
    return docs[-1]


def entries(name: str) -> list[dict[str, Any]]:
    doc = last_doc(name)
    return doc.get("jobs") or [c for c in doc["client_stats"] if c["jobname"] != "All clients"]


def whole(name: str) -> Measurement:
    return fio.parse_output((DATA / f"{name}.json").read_text())[0]


def each_job(name: str) -> list[Measurement]:
    doc = last_doc(name)
    return [
        fio.parse_output(json.dumps({**copy.deepcopy(doc), "jobs": [j]}))[0] for j in doc["jobs"]
    ]


def run(spec: list[tuple[dict[str, Any], Measurement]], target: Target = A) -> list[PointSummary]:
    """One point per (axes, measurement), in the order given; axes are also the params."""
    items = []
    for i, (axes, m) in enumerate(spec):
        params = {"rw": "randread", **axes}
        items.append((Point(i, point_key(target, "w", params), 0, target, "w", params, axes), m))
    return summarize(items)


def p99(es: list[dict[str, Any]]) -> float:
    c: Counter[int] = Counter()
    for e in es:
        for d in ("read", "write"):
            c.update({int(k): v for k, v in (e[d]["clat_ns"].get("bins") or {}).items()})
    if not c:  # plain json, one job: fio's own
        (e,) = es
        return next(
            e[d]["clat_ns"]["percentile"]["99.000000"] for d in ("read", "write") if e[d]["iops"]
        )
    samples = sorted(c.elements())
    return float(samples[math.ceil(Fraction(99) / 100 * len(samples)) - 1])


def iops(es: list[dict[str, Any]]) -> float:
    return sum(e["read"]["iops"] + e["write"]["iops"] for e in es)


IODEPTH = {  # iodepth -> recording (listed out of order on purpose)
    8: "libaio-randrw-jsonplus",
    1: "psync-randread-json",
    4: "clientserver-2hosts-jsonplus",
    2: "numjobs4-group-jsonplus",
}


def expected_knee(values: list[tuple[Any, float, float]]) -> tuple[Any, Any] | None:
    """The definition, applied to figures read from the JSON: the first step where p99
    grows by a larger fraction than throughput (and grows at all)."""
    for (v0, t0, l0), (v1, t1, l1) in pairwise(values):
        if l1 / l0 - 1 > max(t1 / t0 - 1, 0):
            return v0, v1
    return None


def test_iodepth_sweep_best_saturation_and_knee() -> None:
    ss = run([({"iodepth": q}, whole(name)) for q, name in IODEPTH.items()])
    (sw,) = sweeps(ss, "iodepth")
    assert sw.figure == "IOPS"
    assert [v for v, _, _ in sw.values] == [1, 2, 4, 8]  # ordered along the axis
    figures = {q: iops(entries(name)) for q, name in IODEPTH.items()}
    assert [f for _, f, _ in sw.values] == pytest.approx([figures[q] for q in (1, 2, 4, 8)])
    best = max(figures, key=lambda q: figures[q])
    assert sw.best[0] == best == 4
    smallest = min(q for q, f in figures.items() if f >= 0.95 * figures[best])
    assert sw.saturation(0.95)[0] == smallest
    assert sw.saturation(0.5)[0] == min(q for q, f in figures.items() if f >= 0.5 * figures[best])
    lat = {q: p99(entries(name)) for q, name in IODEPTH.items()}
    assert [s.clat_p99 for _, _, s in sw.values] == [lat[q] for q in (1, 2, 4, 8)]
    want = expected_knee([(q, figures[q], lat[q]) for q in (1, 2, 4, 8)])
    knee = sw.knee()
    assert want is not None and knee is not None
    assert (knee.before, knee.at) == want == (2, 4)
    assert knee.p99_change_pct == pytest.approx(100 * (lat[4] / lat[2] - 1))
    assert knee.throughput_change_pct == pytest.approx(100 * (figures[4] / figures[2] - 1))
    assert knee.p99_change_pct > knee.throughput_change_pct > 0


def test_no_knee_while_throughput_keeps_pace() -> None:
    ss = run([({"iodepth": q}, whole(IODEPTH[q])) for q in (1, 2)])
    (sw,) = sweeps(ss, "iodepth")
    assert sw.knee() is None  # 1 -> 2: IOPS x2.5, p99 +18 %


def test_numjobs_sweep_is_qualifys_best_job_count() -> None:
    """The 4 jobs of a numjobs=4 recording as the points numjobs 1..4 of a qualify run."""
    jobs = each_job("numjobs4-nogroup-jsonplus")
    es = entries("numjobs4-nogroup-jsonplus")
    order = [3, 1, 4, 2]
    ss = run([({"numjobs": n}, jobs[n - 1]) for n in order])
    (sw,) = sweeps(ss, "numjobs")
    figures = {n: es[n - 1]["write"]["iops"] for n in (1, 2, 3, 4)}
    top = max(figures.values())
    best = min(n for n, f in figures.items() if f == top)  # ties: the fewest jobs
    assert sw.best[0] == best
    assert sw.saturation()[0] == min(n for n, f in figures.items() if f >= 0.95 * top)
    want = expected_knee([(n, figures[n], p99([es[n - 1]])) for n in (1, 2, 3, 4)])
    knee = sw.knee()
    got = (knee.before, knee.at) if knee else None
    assert got == want

    (row,) = suites.qualify_rows(ss, {})
    assert (row.best_jobs, row.best_iops) == (best, top)
    assert row.saturation_jobs == sw.saturation()[0]
    (t,) = suites.qualify_tables(suites.QualifyAnswer([row]))
    assert t.headers == ["ID", "Size", "Type", "Proto", "IOPS", "#Jobs", "Notes"]
    (cells,) = t.rows
    assert cells[0] == A.path and cells[4] == f"{top:.0f}" and cells[5] == str(best)
    assert cells[6].startswith(f"1 job: {figures[1]:.0f}")
    text = suites.qualify_text([row])
    assert f"best job count is {best}" in text and "reach 95 % of it" in text
    assert ("p99 climbs faster" in text) == (want is not None)


def test_block_size_sweep_uses_bandwidth() -> None:
    spec = {
        "128k": "twojobs-sections-json",
        512: "psync-randread-json",
        "4k": "warning-before-json",
    }
    ss = run([({"bs": bs}, whole(name)) for bs, name in spec.items()])
    (sw,) = sweeps(ss, "bs")
    assert sw.figure == "bandwidth"
    assert [v for v, _, _ in sw.values] == [512, "4k", "128k"]
    bw = {
        bs: sum(e[d]["bw_bytes"] for e in entries(name) for d in ("read", "write"))
        for bs, name in spec.items()
    }
    assert [f for _, f, _ in sw.values] == pytest.approx([bw[512], bw["4k"], bw["128k"]])
    assert sw.best[0] == max(bw, key=lambda k: bw[k])


def test_sweeps_are_grouped_by_target_and_other_axes() -> None:
    m = whole("psync-randread-json")
    ss = run([({"bs": bs, "iodepth": q}, m) for bs in ("4k", "64k") for q in (1, 8)], target=A)
    ss += run([({"bs": "4k", "iodepth": q}, m) for q in (1, 8, 32)], target=B)
    ss += run([({"bs": "4k", "iodepth": 64}, whole("error-enospc-json"))], target=B)  # failed
    groups = sweeps(ss, "iodepth")
    assert [
        (sw.fixed["target"], sw.fixed["bs"], [v for v, _, _ in sw.values]) for sw in groups
    ] == [
        (A.path, "4k", [1, 8]),
        (A.path, "64k", [1, 8]),
        (B.path, "4k", [1, 8, 32]),
    ]
    assert sweeps(ss, "numjobs") == []


def test_matrix_rows_give_the_optimal_iodepth_per_block_size() -> None:
    ss = run([({"bs": "4k", "iodepth": q}, whole(name)) for q, name in IODEPTH.items()])
    (row,) = suites.matrix_rows(ss)
    assert (row.rw, row.bs, row.best_iodepth, row.optimal_iodepth) == (
        "randread",
        "4k",
        4,
        4,
    )
    assert row.knee is not None and (row.knee.before, row.knee.at) == (2, 4)
    t = suites.matrix_optimal_table(suites.matrix_rows(ss))
    (cells,) = t.rows
    assert dict(zip(t.headers, cells, strict=True)) | {"IOPS": "", "best IOPS": ""} == {
        "target": row.target,
        "rw": "randread",
        "bs": "4k",
        "optimal iodepth": "4",
        "IOPS": "",
        "best iodepth": "4",
        "best IOPS": "",
        "p99 climbs faster than IOPS": "2 → 4",
    }
