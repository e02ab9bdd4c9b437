"""Statistics over repetitions: mean, spread, confidence intervals, Welch's t-test.

Every function here works on plain lists of numbers (one figure per repetition of a point:
its IOPS, its bandwidth, its mean latency) and knows nothing about fio or the store.

- ``stddev`` is the *sample* standard deviation (divides by n - 1), as fio and
  ``statistics.stdev`` use.
- The confidence interval of the mean is Student's t interval,
  ``mean ± t(1 - α/2, n - 1) · s / √n``: with three repetitions t is 4.30, not the normal 1.96,
  so a 95 % interval from few repetitions is honestly wide.
- Two sets of repetitions are compared with Welch's t-test (unequal variances), two-sided:
  ``t = (mean_b - mean_a) / sqrt(s_a²/n_a + s_b²/n_b)`` with Welch–Satterthwaite degrees of
  freedom; the same figures as ``scipy.stats.ttest_ind(b, a, equal_var=False)``.

The Student t distribution comes from ``scipy.special`` (``stdtr``, ``stdtrit``: the functions
``scipy.stats.t`` itself evaluates), imported on first use: importing ``scipy.stats`` costs
about a second, which every ``storbench show`` would pay.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

#: The confidence level of every interval and test storbench reports.
CONFIDENCE = 0.95


@dataclass(frozen=True)
class Spread:
    """Mean and spread of one figure over ``n`` repetitions.

    ``stddev`` and the interval are None with a single repetition (nothing to estimate from).
    """

    n: int
    mean: float
    stddev: float | None
    ci_low: float | None
    ci_high: float | None

    @property
    def half_width(self) -> float | None:
        """Half the width of the confidence interval (the ``±`` of ``mean ± x``)."""
        if self.ci_low is None or self.ci_high is None:
            return None
        return (self.ci_high - self.ci_low) / 2

    @property
    def rel_half_width_pct(self) -> float | None:
        """The ``±`` as a percentage of the mean (None when the mean is 0)."""
        hw = self.half_width
        if hw is None or self.mean == 0:
            return None
        return 100.0 * hw / abs(self.mean)


def mean(values: Sequence[float]) -> float:
    if not values:
        raise ValueError("mean of no values")
    return statistics.fmean(values)


def stddev(values: Sequence[float]) -> float | None:
    """Sample standard deviation (n - 1); None for fewer than two values."""
    return statistics.stdev(values) if len(values) > 1 else None


def t_critical(df: float, confidence: float = CONFIDENCE) -> float:
    """Two-sided Student t quantile: ``t(1 - α/2, df)`` (4.303 for df 2 at 95 %)."""
    from scipy.special import stdtrit

    return float(stdtrit(df, 0.5 + confidence / 2))


def t_two_sided_p(t: float, df: float) -> float:
    """Two-sided p-value of ``t`` under Student's t with ``df`` degrees of freedom."""
    from scipy.special import stdtr

    return float(2 * stdtr(df, -abs(t)))


def confidence_interval(
    values: Sequence[float], confidence: float = CONFIDENCE
) -> tuple[float, float] | None:
    """Student t interval of the mean; None for fewer than two values."""
    n = len(values)
    if n < 2:
        return None
    m = statistics.fmean(values)
    half = t_critical(n - 1, confidence) * statistics.stdev(values) / math.sqrt(n)
    return m - half, m + half


def spread(values: Sequence[float], confidence: float = CONFIDENCE) -> Spread | None:
    """The :class:`Spread` of ``values``; None when there are none."""
    vals = [float(v) for v in values]
    if not vals:
        return None
    ci = confidence_interval(vals, confidence)
    return Spread(
        n=len(vals),
        mean=statistics.fmean(vals),
        stddev=stddev(vals),
        ci_low=ci[0] if ci else None,
        ci_high=ci[1] if ci else None,
    )


@dataclass(frozen=True)
class WelchResult:
    t: float  # (mean of b - mean of a) / standard error: positive when b is larger
    df: float  # Welch–Satterthwaite degrees of freedom
    p_value: float  # two-sided


def welch(a: Sequence[float], b: Sequence[float]) -> WelchResult | None:
    """Welch's two-sided t-test of ``b`` against ``a`` (as ``ttest_ind(b, a, equal_var=False)``).

    None when either side has fewer than two values: a difference cannot be tested then.
    When neither side varies at all (every repetition gave the same figure), there is no
    standard error: the p-value is 0 if the means differ and 1 if they are equal.
    """
    if len(a) < 2 or len(b) < 2:
        return None
    va, vb = statistics.variance(a), statistics.variance(b)
    ma, mb = statistics.fmean(a), statistics.fmean(b)
    if va == 0 and vb == 0:
        same = ma == mb
        return WelchResult(
            t=0.0 if same else math.copysign(math.inf, mb - ma),
            df=float(len(a) + len(b) - 2),
            p_value=1.0 if same else 0.0,
        )
    se2a, se2b = va / len(a), vb / len(b)
    t = (mb - ma) / math.sqrt(se2a + se2b)
    df = (se2a + se2b) ** 2 / (se2a**2 / (len(a) - 1) + se2b**2 / (len(b) - 1))
    return WelchResult(t=t, df=df, p_value=t_two_sided_p(t, df))


def change_pct(base: float | None, other: float | None) -> float | None:
    """Relative change of ``other`` against ``base`` in percent; None if ``base`` is 0 or
    either is missing."""
    if base is None or other is None or base == 0:
        return None
    return 100.0 * (other - base) / base
