"""The soak suite's answer: is a long constant load stable? (seed 003 §6: "IOPS, throughput,
and latencies remained stable" over six hours.)

Computed from each point's time series (its measured intervals; the ramp left out), per
interval over every direction together: IOPS are the interval's I/Os over its length, its
p99 the worst direction's p99 (a mixed load is as slow as its slowest side). The figures:

- **variation**: the coefficient of variation (sample standard deviation / mean) of the
  intervals' IOPS and of their p99;
- **trend**: the slope of the least-squares line of IOPS against time, as % of the mean
  IOPS per hour (across the run, for a run shorter than an hour: an hour's slope drawn from
  minutes would say little);
- **first against last**: the IOPS of the first and of the last hour (of the first and last
  quarter when the run is shorter than four hours), the change in %;
- **worst interval**: the lowest IOPS and the highest p99, with when;
- **stalls**: intervals that completed no I/O, and the longest run of them.

The run is *stable* when each figure is within its limit (plan key ``soak:``, defaults in
storbench.plan.soakkeys) and the point did not fail. Plain data in base units (s, ns, %).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

from storbench.analysis.summary import PointSummary
from storbench.hosts.load import HostSample, summary
from storbench.model.series import Interval

#: The first and last window compared: an hour, or a quarter of a shorter run.
HOUR_S = 3600.0


class SeriesSource(Protocol):
    """A run's time data by point index (the store's ``run_series``)."""

    def intervals(self, point_idx: int) -> list[Interval]: ...
    def every_host(self, point_idx: int) -> list[Interval]: ...
    def host_samples(self, point_idx: int) -> list[HostSample]: ...


@dataclass
class Tick:
    """One interval of the point, every direction together."""

    t_s: float  # its end, s after the load began
    dur_s: float
    ios: int
    p99_ns: float | None

    @property
    def iops(self) -> float:
        return self.ios / self.dur_s if self.dur_s > 0 else 0.0


@dataclass
class SoakRow:
    point: PointSummary
    target: str
    workload: str
    intervals: int
    measured_s: float
    iops_mean: float | None = None
    iops_cv_pct: float | None = None
    p99_median_ns: float | None = None
    p99_cv_pct: float | None = None
    trend_pct_per_h: float | None = None  # across the run when it is shorter than an hour
    compared_s: float | None = None  # the length of the first and last window
    first_iops: float | None = None
    last_iops: float | None = None
    first_last_pct: float | None = None
    worst_iops: float | None = None
    worst_iops_at_s: float | None = None
    worst_p99_ns: float | None = None
    worst_p99_at_s: float | None = None
    stalls: int = 0
    longest_stall_s: float = 0.0
    errors: list[str] = field(default_factory=list)
    cut_short_s: float | None = None  # ended by Ctrl-C after this long
    #: the load's host over the run (storbench.hosts.load.summary: CPU, busiest disk, network)
    host: dict[str, Any] = field(default_factory=dict)
    stable: bool = False
    reasons: list[str] = field(default_factory=list)  # each limit not met, in words


@dataclass
class SoakAnswer:
    kind: ClassVar[str] = "soak"
    rows: list[SoakRow]
    limits: dict[str, Any]


def ticks(intervals: Sequence[Interval]) -> list[Tick]:
    """The measured intervals of a point, every direction (and host) of one interval
    together: I/Os summed, the worst p99. Without the point's own rows (several hosts)
    the hosts' rows of the same number are added up."""
    own = [i for i in intervals if not i.ramp and not i.host]
    rows = own or [i for i in intervals if not i.ramp]
    by_seq: dict[int, list[Interval]] = {}
    for i in rows:
        by_seq.setdefault(i.seq, []).append(i)
    out = []
    for seq in sorted(by_seq):
        g = by_seq[seq]
        p99s = [i.p99_ns for i in g if i.p99_ns is not None]
        out.append(
            Tick(
                t_s=max(i.t_ms for i in g) / 1000,
                dur_s=max(i.dur_ms for i in g) / 1000,
                ios=sum(i.ios for i in g),
                p99_ns=max(p99s) if p99s else None,
            )
        )
    return out


def _cv(values: list[float]) -> float | None:
    if len(values) < 2:
        return None
    mean = statistics.fmean(values)
    return statistics.stdev(values) / mean * 100 if mean > 0 else None


def _rate(ts: list[Tick]) -> float | None:
    dur = sum(t.dur_s for t in ts)
    return sum(t.ios for t in ts) / dur if dur > 0 else None


def stalls(ts: list[Tick]) -> tuple[int, float]:
    """Intervals that completed no I/O, and the longest run of them (s)."""
    count, longest, run = 0, 0.0, 0.0
    for t in ts:
        if t.ios == 0:
            count += 1
            run += t.dur_s
            longest = max(longest, run)
        else:
            run = 0.0
    return count, longest


def soak_row(s: PointSummary, intervals: Sequence[Interval], cut_s: float | None) -> SoakRow:
    """The figures of one point's series (module doc); the verdict is :func:`judge`'s."""
    ts = ticks(intervals)
    row = SoakRow(s, s.target.label, s.workload, len(ts), sum(t.dur_s for t in ts))
    row.errors, row.cut_short_s = list(s.errors), cut_s
    if len(ts) < 2:
        return row
    iops = [t.iops for t in ts]
    p99 = [t.p99_ns for t in ts if t.p99_ns is not None]
    row.iops_mean = statistics.fmean(iops)
    row.iops_cv_pct = _cv(iops)
    row.p99_median_ns = statistics.median(p99) if p99 else None
    row.p99_cv_pct = _cv(p99)
    end = ts[-1].t_s
    start = ts[0].t_s - ts[0].dur_s
    if row.iops_mean > 0:
        secs = [t.t_s for t in ts]
        slope = statistics.linear_regression(secs, iops).slope if len(set(iops)) > 1 else 0.0
        row.trend_pct_per_h = slope * min(HOUR_S, end - start) / row.iops_mean * 100
    row.compared_s = min(HOUR_S, (end - start) / 4)
    first = [t for t in ts if t.t_s <= start + row.compared_s + 1e-9]
    last = [t for t in ts if t.t_s - t.dur_s >= end - row.compared_s - 1e-9]
    row.first_iops, row.last_iops = _rate(first), _rate(last)
    if row.first_iops and row.last_iops is not None:
        row.first_last_pct = (row.last_iops - row.first_iops) / row.first_iops * 100
    low = min(ts, key=lambda t: t.iops)
    row.worst_iops, row.worst_iops_at_s = low.iops, low.t_s
    high = max((t for t in ts if t.p99_ns is not None), key=lambda t: t.p99_ns or 0, default=None)
    if high is not None:
        row.worst_p99_ns, row.worst_p99_at_s = high.p99_ns, high.t_s
    row.stalls, row.longest_stall_s = stalls(ts)
    return row


def judge(row: SoakRow, limits: dict[str, Any]) -> SoakRow:
    """Sets ``stable`` and the reasons it is not: each figure over its limit."""
    checks = [
        ("IOPS vary: CV", row.iops_cv_pct, limits["iops_cv"]),
        ("p99 varies: CV", row.p99_cv_pct, limits["p99_cv"]),
        ("IOPS trend", _abs(row.trend_pct_per_h), limits["trend"]),
        ("last against first", _abs(row.first_last_pct), limits["first_last"]),
    ]
    row.reasons = [
        f"{what} {value:.1f} % (limit {limit:g} %)"
        for what, value, limit in checks
        if value is not None and value > limit
    ]
    if row.stalls > limits["stalls"]:
        row.reasons.append(f"{row.stalls} stalled intervals, limit {limits['stalls']}")
    if row.errors or row.point.runs == 0:
        row.reasons.append("the point failed: " + (row.errors[0] if row.errors else "no result"))
    if row.intervals < 2:
        row.reasons.append("fewer than 2 measured intervals: nothing to judge")
    row.stable = not row.reasons
    return row


def _abs(v: float | None) -> float | None:
    return None if v is None else abs(v)


def soak_answer(
    summaries: list[PointSummary],
    series: SeriesSource | None,
    limits: dict[str, Any],
) -> SoakAnswer:
    """Each point's soak figures, its host's load over the run, and its verdict."""
    rows = []
    for s in summaries:
        row = soak_row(s, series.intervals(s.index) if series else [], s.cut_short_s)
        row.host = summary(series.host_samples(s.index)) if series else {}
        rows.append(judge(row, limits))
    return SoakAnswer(rows, limits)
