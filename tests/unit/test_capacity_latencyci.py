"""The 95 % interval of a latency percentile from a histogram (analysis/latencyci.py): the
order statistics a binomial places around the quantile. Checked by simulation: drawn
latencies binned as fio bins them, the interval holds the true quantile about 95 % of the
time, and the open upper end when the data cannot bound it."""

from __future__ import annotations

import random

from storbench.analysis.latencyci import percentile_interval


def _fio_bucket(ns: float) -> int:
    """A value's bucket as fio's histograms keep them: 64 buckets per power of two."""
    v = max(1, int(ns))
    if v < 128:
        return v
    shift = v.bit_length() - 7
    return (v >> shift) << shift


def test_capacity_latencyci_holds_the_true_percentile_about_95_percent() -> None:
    rng = random.Random(26)
    # exponential latencies, mean 500 µs: the true p99 is 500 µs · ln(100)
    true_p99 = 500_000 * 4.605170185988092
    held = 0
    trials = 400
    for _ in range(trials):
        bins: dict[int, int] = {}
        for _ in range(3000):
            b = _fio_bucket(rng.expovariate(1 / 500_000))
            bins[b] = bins.get(b, 0) + 1
        found = percentile_interval(bins, 99)
        assert found is not None and not found.open_high
        # a bucket's value is its lower edge: widen by one bucket (1/64) to compare
        held += found.low_ns <= true_p99 <= found.high_ns * (1 + 1 / 64)
    # 95 % nominal; 400 trials put 1.96 standard errors at ±2.1 %
    assert 0.91 <= held / trials <= 0.99, held


def test_capacity_latencyci_is_open_above_when_the_data_cannot_bound_it() -> None:
    # p99.9 of 500 I/Os: the quantile sits at the slowest I/O, nothing bounds it above
    bins = {1000 + i: 1 for i in range(500)}
    found = percentile_interval(bins, 99.9)
    assert found is not None and found.open_high and found.high_ns == 1499
    assert percentile_interval({}, 99) is None
