"""The s3 suite's answer (seed 003 §5.2): per target, operation and concurrency, requests/s
and bytes/s for each object size, with p50 and p99 latency, and where throughput stops
growing as objects grow (the network's or the gateway's limit).

An operation is what fio's http engine makes of ``rw``: write = PUT, read = GET, trim =
DELETE, a mix = mixed. A row is a sweep along the object size (``bs``, ordered by size)
of the points that differ in nothing else; its *limit* is the smallest object size whose
bytes/s reach 95 % of the row's best (analysis/sweep.py's saturation), named only when a
larger size follows it (otherwise the row never stopped growing within the sizes run).
Figures in base units (requests/s, bytes/s, ns).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, ClassVar

from storbench.analysis.summary import PointSummary
from storbench.analysis.sweep import Sweep, sweeps

#: fio's rw -> the S3 request it makes (fio 3.33 engines/http.c)
OPERATIONS = {"write": "PUT", "randwrite": "PUT", "read": "GET", "randread": "GET"}
OPERATIONS.update(trim="DELETE", randtrim="DELETE")


def operation(rw: Any) -> str:
    return OPERATIONS.get(str(rw).split(":")[0], "mixed")


@dataclass
class ObjectSize:
    bs: Any  # as the plan gives it (4k, 50m)
    requests_per_s: float
    bytes_per_s: float
    p50_ns: float | None
    p99_ns: float | None
    point: PointSummary


@dataclass
class S3Row:
    target: str
    op: str  # PUT, GET, DELETE, mixed
    concurrency: Any  # numjobs (fio jobs, each one request at a time)
    fixed: dict[str, Any]  # the sweep's other axes
    sizes: list[ObjectSize]
    limit_bs: Any | None  # where bytes/s stop growing (None: they grew to the largest size)
    limit_bytes_per_s: float | None
    sweep: Sweep


@dataclass
class S3Answer:
    kind: ClassVar[str] = "s3"
    rows: list[S3Row]


def _size(v: Any, thr: float, s: PointSummary) -> ObjectSize:
    p = s.clat.percentiles if s.clat is not None else {}
    return ObjectSize(v, s.total_iops, thr, p.get("50"), p.get("99"), s)


def _with_size_axis(s: PointSummary) -> PointSummary:
    """A point of one object size (``bs`` not an axis of the plan) as a sweep of one size,
    so that a plan of one size still gets its row."""
    if "bs" in s.axes:
        return s
    bs = s.params.get("bs", s.params.get("blocksize", "4k"))
    return replace(s, axes={**s.axes, "bs": bs})


def s3_rows(summaries: list[PointSummary]) -> list[S3Row]:
    """Every sweep along the object size of the s3 points, PUT before GET."""
    points = [_with_size_axis(s) for s in summaries if s.target.kind == "s3"]
    rows = []
    for sw in sweeps(points, "bs"):
        first = sw.values[0][2]
        rw = sw.fixed.get("rw", first.params.get("rw", "read"))
        limit, limit_bw, _ = sw.saturation(0.95)
        grew = limit == sw.values[-1][0]
        rows.append(
            S3Row(
                target=first.target.label,
                op=operation(rw),
                concurrency=sw.fixed.get("numjobs", first.params.get("numjobs", 1)),
                fixed={k: v for k, v in sw.fixed.items() if k not in ("target", "workload")},
                sizes=[_size(v, thr, s) for v, thr, s in sw.values],
                limit_bs=None if grew else limit,
                limit_bytes_per_s=None if grew else limit_bw,
                sweep=sw,
            )
        )
    order = {"PUT": 0, "GET": 1, "mixed": 2, "DELETE": 3}
    rows.sort(key=lambda r: (r.target, order.get(r.op, 9), _number(r.concurrency)))
    return rows


def _number(v: Any) -> float:
    try:
        return float(v)
    except (TypeError, ValueError):
        return float("inf")
