"""The capacity a service can promise: the highest offered load whose latency meets a target
(a service-level objective, ``slo:``), found by a search over open-loop steps.

A *step* offers the workload a fixed rate of I/Os (fio's ``rate_iops``, split over its jobs
and hosts, with ``rate_process=poisson``: arrivals at random times, as many clients make
them) and judges the latency of all its I/Os at the objective's percentile (fio's ``lat``,
submission and completion, from the merged histograms) or its mean. A step *meets* the
objective when that latency is at most the target and the device took what was offered;
a step whose achieved rate falls short of the offered one by more than
:data:`SATURATION` (2 %) -- and by more than Poisson arrivals miss it by chance: three
standard deviations of their count, 3/√(offered × seconds), 5.5 % for 1,000 IOPS over 3 s
-- is *saturated*: the device, not the target, set its latency, and fio's rate limiting
waits instead of queueing, so the latency it shows understates what an open-loop client
would see. A saturated step never meets the objective.

The search (:func:`next_rate`):

1. the *probe*: the workload as the plan gives it (closed loop, no rate): the most the
   device does at that concurrency. When even that meets the objective, that is the
   capacity (the device runs out before the target does);
2. *bracketing*: the offered rate halves from the probe's achieved rate until a step meets
   the objective (none down to 1/1024 of it: no load meets the target);
3. *bisection*: the midpoint of the highest rate that met and the lowest that did not, until
   they are within the resolution (5 % of the one that met, by default).

The answer (:func:`capacity`) is the highest step that met, its latency with that latency's
95 % interval (analysis/latencyci.py: how far chance could move it with this many I/Os), and
the step above it: "1,940 IOPS at p99 ≤ 2.00 ms (p99 651.3 µs [95 % CI 518.1 µs–897.0 µs];
resolution 5 %; next step 2,008 IOPS: p99 102.24 ms [95 % CI 102.24 ms–103.28 ms])". A step
whose interval holds the target is *within chance*: the search still judges it by its
figure (as fio's own percentile), and the answer and the table say so.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from storbench.analysis.latencyci import (
    LatencyInterval,
    holding,
    latency_interval,
    percentile_interval,
)
from storbench.model.metrics import DIRECTIONS, LatencyStats, Measurement, pct_key
from storbench.model.units import fmt_ns
from storbench.plan.slokeys import Slo

#: How far a step's achieved rate may fall short of its offered one before it is saturated.
SATURATION = 0.02

#: The least rate bracketing tries, as a fraction of the probe's: below it, nothing meets.
FLOOR = 1 / 1024


@dataclass(frozen=True)
class Step:
    """One step of a search: what it offered (None: the closed-loop probe), what the device
    did, its latency as the objective judges it, whether it saturated and met it, and the
    95 % interval of that latency (analysis/latencyci.py; None without a histogram)."""

    offered_iops: float | None
    achieved_iops: float
    latency_ns: float | None
    saturated: bool
    meets: bool
    interval: LatencyInterval | None = None

    def said(self, slo: Slo) -> str:
        which = "mean" if slo.percentile is None else f"p{slo.percentile:g}"
        lat = fmt_ns(self.latency_ns) if self.latency_ns is not None else "no latency"
        sat = ", saturated" if self.saturated else ""
        return f"{self.achieved_iops:,.0f} IOPS: {which} {lat}{self.interval_said()}{sat}"

    def interval_said(self) -> str:
        """The interval as " [95 % CI 1.79 ms–1.86 ms]", or nothing without one."""
        i = self.interval
        if i is None:
            return ""
        high = f"≥ {fmt_ns(i.high_ns)}" if i.open_high else fmt_ns(i.high_ns)
        return f" [95 % CI {fmt_ns(i.low_ns)}–{high}]"

    def within_chance(self, slo: Slo) -> bool:
        """Whether the target lies inside this step's interval: with these I/Os, meeting or
        missing it could be chance (a saturated step misses whatever its latency)."""
        i = self.interval
        return i is not None and not self.saturated and i.low_ns <= slo.latency_ns <= i.high_ns


def _judged(slo: Slo, meas: Measurement) -> tuple[float | None, LatencyInterval | None]:
    """The latency of all of ``meas``'s I/Os the objective judges (module docstring), and
    its 95 % interval."""
    stats = [d.lat for d in (meas.direction(n) for n in DIRECTIONS) if d is not None]
    lat = LatencyStats.merge([s for s in stats if s is not None])
    if lat is None:
        return None, None
    interval = latency_interval(lat, slo.percentile)
    if slo.percentile is None:
        return lat.mean, interval
    return lat.percentiles.get(pct_key(slo.percentile)), interval


def shortfall(offered: float, meas: Measurement) -> float:
    """How far (a fraction) the achieved rate of a step offered ``offered`` I/Os per second
    may fall short before it is saturated: :data:`SATURATION`, or three standard deviations
    of a Poisson count over the step's time when that is more (module docstring)."""
    seconds = max((d.runtime_s for d in meas.directions.values() if d.active), default=0.0)
    expected = offered * seconds
    return max(SATURATION, 3 / math.sqrt(expected)) if expected > 0 else SATURATION


def step_of(slo: Slo, offered: float | None, meas: Measurement) -> Step | None:
    """The step ``meas`` measured at ``offered`` I/Os per second (None: the probe); None
    when it has no figures (failed)."""
    if meas.status not in ("ok", "partial"):
        return None
    achieved = sum(d.iops for d in (meas.direction(n) for n in DIRECTIONS) if d is not None)
    if achieved <= 0:
        return None
    latency, interval = _judged(slo, meas)
    saturated = offered is not None and achieved < offered * (1 - shortfall(offered, meas))
    meets = not saturated and latency is not None and latency <= slo.latency_ns
    return Step(offered, achieved, latency, saturated, meets, interval)


def with_interval(step: Step, bins: Mapping[int, int], percentile: float) -> Step:
    """``step`` with the interval of its ``percentile`` from the point's merged total-latency
    histogram ``bins`` (a step read back without its histograms has none)."""
    found = holding(percentile_interval(bins, percentile), step.latency_ns)
    return replace(step, interval=found)


def _bounds(steps: Sequence[Step]) -> tuple[Step | None, Step | None]:
    """The highest step that met the objective, and the lowest offered one above it that
    did not (the probe counts at its achieved rate)."""
    met = [s for s in steps if s.meets]
    best = max(met, key=lambda s: s.offered_iops or s.achieved_iops) if met else None
    floor = (best.offered_iops or best.achieved_iops) if best is not None else 0.0
    above = [s for s in steps if not s.meets and _rate(s) > floor]
    return best, min(above, key=_rate) if above else None


def _rate(s: Step) -> float:
    return s.offered_iops if s.offered_iops is not None else s.achieved_iops


def next_rate(slo: Slo, steps: Sequence[Step | None]) -> float | None:
    """The offered rate of the search's next step after ``steps`` (the probe first; None
    for a step that failed), or None when the search is done (module docstring)."""
    if not steps or steps[0] is None:
        return None
    probe = steps[0]
    if probe.meets:
        return None
    done = [s for s in steps if s is not None]
    best, above = _bounds(done)
    if above is None:
        return None
    if best is None:
        rate = _rate(above) / 2
        return rate if rate >= probe.achieved_iops * FLOOR else None
    low = _rate(best)
    if (_rate(above) - low) / low <= slo.resolution:
        return None
    return (low + _rate(above)) / 2


@dataclass(frozen=True)
class Capacity:
    """A search's answer: the highest load that met the objective (None: none did), the
    step above it, and the answer in words."""

    slo: Slo
    iops: float | None
    met: Step | None
    above: Step | None
    text: str


def capacity(slo: Slo, steps: Sequence[Step | None]) -> Capacity:
    """What a (finished) search's ``steps`` say (module docstring)."""
    done = [s for s in steps if s is not None]
    if not done:
        return Capacity(slo, None, None, None, "no step measured anything")
    probe = done[0]
    if probe.meets and probe.offered_iops is None:
        text = (
            f"{probe.achieved_iops:,.0f} IOPS at {slo.label}: the most the device does at "
            f"this concurrency meets the target ({probe.said(slo)})"
        )
        return Capacity(slo, probe.achieved_iops, probe, None, text)
    best, above = _bounds(done)
    if best is None:
        low = min(done, key=_rate)
        text = f"no load meets {slo.label}: the lowest step offered gave {low.said(slo)}"
        return Capacity(slo, None, None, low, text)
    nxt = f"; next step {above.said(slo)}" if above is not None else ""
    which = "mean" if slo.percentile is None else f"p{slo.percentile:g}"
    chance = ", the target within it" if best.within_chance(slo) else ""
    lat = f"{which} {fmt_ns(best.latency_ns)}{best.interval_said()}{chance}; "
    text = (
        f"{best.achieved_iops:,.0f} IOPS at {slo.label} ({lat}resolution "
        f"{slo.resolution * 100:g} %{nxt})"
    )
    return Capacity(slo, best.achieved_iops, best, above, text)
