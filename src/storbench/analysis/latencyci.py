"""How well one measurement knows its own latency: a 95 % interval for a percentile from the
point's merged histogram, and for the mean from its standard deviation.

A capacity step (analysis/capacity.py) judges one measurement's latency against a target;
with a few thousand I/Os its p99 rests on a few dozen of them, and a reader should see how
far that figure could move by chance before trusting "meets" or "misses".

- **Percentile** (distribution-free): of ``n`` independent latencies, the count below the
  true q-quantile is binomial(n, q), so the order statistics at ranks
  ``n·q ± z·√(n·q·(1−q))`` (z = 1.96 for 95 %; the normal approximation of that binomial)
  bracket the quantile with 95 % confidence. The bounds are read from the histogram by
  fio's own rule (the value of the first bucket whose cumulative count reaches the rank,
  model/metrics.py): fio's buckets are up to 1/64 of their value wide (``FIO_IO_U_PLAT_BITS``
  = 6), so the bounds carry that resolution too. When the upper rank lies beyond the last
  I/O (``n·(1−q)`` small: a p99.9 of 2,000 I/Os), the upper bound is the slowest I/O's
  bucket and the interval is marked open (the data cannot bound it).
- **Mean**: ``mean ± z·s/√n``, s fio's sample standard deviation.

Both assume the I/Os' latencies are independent. Under queueing they are not (an I/O that
waited behind a slow one is slow too), so the true uncertainty is wider than these
intervals: they are a lower bound on it, said as such where they are shown.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from statistics import NormalDist

from storbench.analysis.stats import CONFIDENCE
from storbench.model.metrics import LatencyStats, pct_key


@dataclass(frozen=True)
class LatencyInterval:
    """A latency's 95 % interval in ns; ``open_high``: the data cannot bound it above (the
    high end is the slowest I/O's bucket)."""

    low_ns: float
    high_ns: float
    open_high: bool = False


def _z(confidence: float) -> float:
    return NormalDist().inv_cdf(0.5 + confidence / 2)


def _value_at_rank(items: list[tuple[int, int]], rank: int) -> float:
    """The value of the first bucket whose cumulative count reaches ``rank`` (from 1)."""
    cum = 0
    for value, count in items:
        cum += count
        if cum >= rank:
            return float(value)
    return float(items[-1][0])


def percentile_interval(
    bins: Mapping[int, int], percentile: float, confidence: float = CONFIDENCE
) -> LatencyInterval | None:
    """The interval of the ``percentile`` of the latencies a histogram holds (module
    docstring); None for an empty histogram."""
    items = sorted((int(v), int(c)) for v, c in bins.items() if int(c) > 0)
    n = sum(c for _, c in items)
    if n == 0:
        return None
    q = percentile / 100
    half = _z(confidence) * math.sqrt(n * q * (1 - q))
    low_rank = max(1, math.floor(n * q - half))
    high_rank = math.ceil(n * q + half) + 1
    open_high = high_rank > n
    return LatencyInterval(
        _value_at_rank(items, low_rank), _value_at_rank(items, min(high_rank, n)), open_high
    )


def mean_interval(lat: LatencyStats, confidence: float = CONFIDENCE) -> LatencyInterval | None:
    """The interval of the mean latency (module docstring); None without a mean, a standard
    deviation or two samples."""
    if lat.mean is None or lat.stddev is None or lat.samples < 2:
        return None
    half = _z(confidence) * lat.stddev / math.sqrt(lat.samples)
    return LatencyInterval(max(0.0, lat.mean - half), lat.mean + half)


def latency_interval(
    lat: LatencyStats, percentile: float | None, confidence: float = CONFIDENCE
) -> LatencyInterval | None:
    """The interval of ``lat``'s mean (``percentile`` None) or of that percentile (needs the
    histogram: None without it)."""
    if percentile is None:
        return mean_interval(lat, confidence)
    if not lat.bins:
        return None
    return holding(
        percentile_interval(lat.bins, percentile, confidence),
        lat.percentiles.get(pct_key(percentile)),
    )


def holding(found: LatencyInterval | None, point: float | None) -> LatencyInterval | None:
    """``found`` widened to hold the ``point`` figure: that is fio's own percentile (its rank
    rule, model/metrics.py), which bucket rounding at the bounds' ranks could leave outside."""
    if found is None or point is None:
        return found
    return LatencyInterval(min(found.low_ns, point), max(found.high_ns, point), found.open_high)
