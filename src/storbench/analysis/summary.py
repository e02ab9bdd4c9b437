"""Per-point summaries of stored measurements: repetitions folded together.

Rates are averaged over repetitions (with their spread); latency is merged — sample-weighted
mean, percentiles from the summed histogram bins — never an average of percentiles.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any

from storbench.metrics import DIRECTIONS, LatencyStats, Measurement
from storbench.plan import Point, Target


@dataclass
class DirSummary:
    iops: list[float] = field(default_factory=list)
    bw_bytes: list[float] = field(default_factory=list)
    clat: LatencyStats | None = None
    lat: LatencyStats | None = None

    @property
    def iops_mean(self) -> float:
        return statistics.fmean(self.iops) if self.iops else 0.0

    @property
    def bw_mean(self) -> float:
        return statistics.fmean(self.bw_bytes) if self.bw_bytes else 0.0

    @property
    def iops_stdev(self) -> float | None:
        return statistics.stdev(self.iops) if len(self.iops) > 1 else None


@dataclass
class PointSummary:
    key: str
    index: int  # first point index (for ordering)
    target: Target
    workload: str
    params: dict[str, Any]
    axes: dict[str, Any]
    runs: int = 0  # repetitions with a usable measurement
    failed: int = 0
    errors: list[str] = field(default_factory=list)
    dirs: dict[str, DirSummary] = field(default_factory=dict)

    def direction(self, name: str) -> DirSummary | None:
        return self.dirs.get(name)

    @property
    def total_iops(self) -> float:
        return sum(d.iops_mean for d in self.dirs.values())


def summarize(items: list[tuple[Point, Measurement]]) -> list[PointSummary]:
    """Fold measurements of the same point (its repetitions) into one summary per point."""
    by_key: dict[str, PointSummary] = {}
    lats: dict[tuple[str, str], tuple[list[LatencyStats], list[LatencyStats]]] = {}
    for point, meas in items:
        s = by_key.get(point.key)
        if s is None:
            s = by_key[point.key] = PointSummary(
                key=point.key,
                index=point.index,
                target=point.target,
                workload=point.workload,
                params=point.params,
                axes=point.axes,
            )
        if meas.status == "failed" or not any(meas.direction(d) for d in DIRECTIONS):
            s.failed += 1
            if meas.error:
                s.errors.append(meas.error)
            continue
        s.runs += 1
        for ddir in DIRECTIONS:
            d = meas.direction(ddir)
            if d is None:
                continue
            ds = s.dirs.setdefault(ddir, DirSummary())
            ds.iops.append(d.iops)
            ds.bw_bytes.append(d.bw_bytes)
            cl, la = lats.setdefault((point.key, ddir), ([], []))
            if d.clat:
                cl.append(d.clat)
            if d.lat:
                la.append(d.lat)
    for (key, ddir), (cl, la) in lats.items():
        ds = by_key[key].dirs[ddir]
        ds.clat = LatencyStats.merge(cl)
        ds.lat = LatencyStats.merge(la)
    return sorted(by_key.values(), key=lambda s: s.index)
