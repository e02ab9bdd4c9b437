"""Sweeps: how throughput and tail latency change along one swept option.

A sweep is a set of points that differ only in one axis (numjobs, iodepth, bs, later the
number of clients), same target, workload and other axes. Along it:

- **throughput** is the point's total IOPS (all directions) — or its total bandwidth when
  the axis is the block size, where IOPS fall as blocks grow while bytes/s rise;
- **best** is the value with the highest throughput;
- **saturation** is the smallest value whose throughput reaches 95 % of the best: the
  cheapest setting that gets (nearly) everything, which is what seed 003 calls the
  "optimal queue depth";
- the **latency knee** is the first step, going up the axis from one value to the next,
  where the p99 completion latency (of all the point's I/Os) grows by a larger fraction
  than throughput does: ``p99[i] / p99[i-1] - 1 > max(thr[i] / thr[i-1] - 1, 0)``. Before
  it, more parallelism buys throughput at least as fast as it costs tail latency; from it
  on, latency climbs faster than throughput (queueing). ``Knee.before`` is the last value
  before the climb, ``Knee.at`` the first value of it. Steps where either point lacks a
  p99 or has no throughput are skipped.

Values are ordered by size (numbers, or fio sizes such as ``4k`` for block sizes); when
they cannot all be read as numbers, plan order is kept.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from storbench.analysis.summary import PointSummary
from storbench.model.units import UnitError, parse_size

#: Axes along which throughput means bandwidth (bytes/s) rather than IOPS.
SIZE_AXES = frozenset(("bs", "blocksize"))


@dataclass
class Knee:
    before: Any  # the last value before p99 climbs faster than throughput
    at: Any  # the first value where it does
    throughput_change_pct: float  # change from ``before`` to ``at``
    p99_change_pct: float


@dataclass
class Sweep:
    axis: str
    fixed: dict[str, Any]  # the other axes' values, plus the target and the workload
    values: list[tuple[Any, float, PointSummary]]  # (axis value, throughput, point), ordered
    figure: str = "IOPS"  # what the throughput is: "IOPS" or "bandwidth" (bytes/s)

    @property
    def best(self) -> tuple[Any, float, PointSummary]:
        return max(self.values, key=lambda v: v[1])

    def saturation(self, fraction: float = 0.95) -> tuple[Any, float, PointSummary]:
        """The smallest value that reaches ``fraction`` of the best throughput."""
        top = self.best[1]
        for v in self.values:
            if v[1] >= fraction * top:
                return v
        return self.best

    def knee(self) -> Knee | None:
        """The first step where p99 latency grows faster than throughput (module doc)."""
        usable: list[tuple[Any, float, float]] = []
        for v, f, s in self.values:
            p99 = s.clat_p99
            if f > 0 and p99:
                usable.append((v, f, p99))
        for (v0, f0, p0), (v1, f1, p1) in pairwise(usable):
            thr = f1 / f0 - 1
            lat = p1 / p0 - 1
            if lat > max(thr, 0.0):
                return Knee(
                    before=v0, at=v1, throughput_change_pct=100 * thr, p99_change_pct=100 * lat
                )
        return None


def _order_key(axis: str, value: Any) -> float:
    if isinstance(value, bool):
        raise ValueError(value)
    if isinstance(value, int | float):
        return float(value)
    if axis in SIZE_AXES:
        try:
            return float(parse_size(value))
        except UnitError:
            raise ValueError(value) from None
    return float(str(value))


def _ordered(sw: Sweep) -> None:
    try:
        keys = [_order_key(sw.axis, v) for v, _, _ in sw.values]
    except ValueError:
        return
    order = sorted(range(len(keys)), key=lambda i: keys[i])
    sw.values = [sw.values[i] for i in order]


def throughput(axis: str) -> tuple[str, Callable[[PointSummary], float]]:
    """The throughput figure of a sweep along ``axis``: its name and how to read it."""
    if axis in SIZE_AXES:
        return "bandwidth", lambda s: s.total_bw
    return "IOPS", lambda s: s.total_iops


def sweeps(
    summaries: list[PointSummary],
    axis: str,
    figure: Callable[[PointSummary], float] | None = None,
) -> list[Sweep]:
    """Group points that differ only in ``axis``; one sweep per group, in plan order of the
    groups, values ordered along the axis. ``figure`` overrides the throughput figure."""
    name, default = throughput(axis)
    fig = figure or default
    groups: dict[str, Sweep] = {}
    for s in summaries:
        if axis not in s.axes or s.runs == 0:
            continue
        fixed = {
            "target": s.target.label,
            "workload": s.workload,
            **{k: v for k, v in s.axes.items() if k != axis},
        }
        key = repr(sorted(fixed.items(), key=lambda kv: kv[0]))
        sw = groups.setdefault(
            key, Sweep(axis=axis, fixed=fixed, values=[], figure=name if figure is None else "")
        )
        sw.values.append((s.axes[axis], fig(s), s))
    for sw in groups.values():
        _ordered(sw)
    return list(groups.values())
