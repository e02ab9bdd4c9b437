"""Repetitions until the verdict is known (``repeat: {until: significant}``): after each
new pair of repetitions of A and B, whether B is significantly better or worse, equal to
within a stated margin, or still unknown.

Looking at a test after every repetition and stopping at the first p < 0.05 would find a
"difference" far more often than 5 % of the time when there is none: every look is one more
chance. The looks are paid for by **alpha spending** (Lan & DeMets, "Discrete sequential
boundaries for clinical trials", Biometrika 70(3), 1983): the whole error α = 0.05 is spent
over the looks by the Pocock-type function ``α(t) = α · ln(1 + (e − 1) · t)``, where
``t = n / max`` is the share of the most repetitions taken (Kim & DeMets, 1987: it spends
about evenly, so an early look can stop when the difference is large). The look with ``n``
repetitions of each side may spend ``α(n / max) − α((n − 1) / max)`` (the first look, at
``min``, what ``α(min / max)`` allows); each look's test is held to its own share, so the
chance of a false verdict over all looks is at most their sum, α (Bonferroni's inequality:
conservative, it ignores that the looks' tests are correlated, never too lenient).

At each look, with ``level`` its share:

- **equal**: the ``1 − 2·level`` confidence interval of the ratio B / A (of the geometric
  means: Welch's interval of the difference of the logarithms) lies within
  ``1 ± equal``: two one-sided tests at ``level`` (TOST, Schuirmann 1987) both reject a
  difference larger than ``equal``. This holds even where the next test finds a
  difference: one the interval keeps inside the margin is one the plan said does not
  matter (two alike devices whose IOPS differ by 0.1 % every time are equal, not "worse");
- **significant**: else, Welch's two-sided t-test (the verdict's, analysis/compare.py) of
  B's repetitions against A's gives p < ``level``;
- **max**: neither, with ``max`` repetitions of each: the verdict is not known; the report
  says so and shows the interval reached;
- otherwise the point runs again (A, then B).

A look before ``max`` at which neither side varied (each side's repetitions gave the very
same figure) judges nothing: it has no estimate of the noise, and fio's figures are
rounded (IOPS are I/Os over whole milliseconds: 804 writes in 1,004 or 1,005 ms), so two
repetitions alike to the last digit are common where the noise is a few steps of that
rounding. Welch's test would give p = 0 there and call a one-step difference
significant; the pair runs again instead. At ``max`` the test's own rule holds (p = 0 when
the sides differ).

A point is judged by its total IOPS per repetition, or, when the workload caps its own
rate, by its mean total latency (compare's rule).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from storbench.analysis.stats import t_critical, welch
from storbench.plan.untilkeys import Until

#: The error spent over all looks.
ALPHA = 0.05

SIGNIFICANT = "significant"
EQUAL = "equal"
MAX = "max"
CONTINUE = "continue"


def spent(t: float, alpha: float = ALPHA) -> float:
    """The error spent by information fraction ``t`` (0..1): Pocock-type (module doc)."""
    t = min(max(t, 0.0), 1.0)
    return alpha * math.log(1 + (math.e - 1) * t)


def level(n: int, rule: Until) -> float:
    """The significance level of the look with ``n`` repetitions of each side."""
    if n < rule.min:
        return 0.0
    before = 0.0 if n == rule.min else spent((n - 1) / rule.max)
    return spent(n / rule.max) - before


@dataclass(frozen=True)
class Look:
    """What one look found: its ``state`` (SIGNIFICANT, EQUAL, MAX or CONTINUE), with ``n``
    repetitions of each side, at ``level``; the test's ``p`` and the ratio B / A with its
    ``1 − 2·level`` interval (None where there is nothing to estimate)."""

    state: str
    n: int
    level: float
    p: float | None
    ratio: float | None
    ratio_low: float | None
    ratio_high: float | None

    @property
    def known(self) -> bool:
        return self.state in (SIGNIFICANT, EQUAL)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def ratio_interval(
    a: Sequence[float], b: Sequence[float], confidence: float
) -> tuple[float, float, float] | None:
    """The ratio of ``b``'s geometric mean to ``a``'s with its Welch interval at
    ``confidence`` (on the logarithms); None with fewer than two positive values a side."""
    if len(a) < 2 or len(b) < 2 or min(a) <= 0 or min(b) <= 0:
        return None
    la, lb = [math.log(v) for v in a], [math.log(v) for v in b]
    d = statistics.fmean(lb) - statistics.fmean(la)
    sa, sb = statistics.variance(la) / len(la), statistics.variance(lb) / len(lb)
    if sa + sb == 0:
        return math.exp(d), math.exp(d), math.exp(d)
    df = (sa + sb) ** 2 / (sa**2 / (len(la) - 1) + sb**2 / (len(lb) - 1))
    half = t_critical(df, confidence) * math.sqrt(sa + sb)
    return math.exp(d), math.exp(d - half), math.exp(d + half)


def look(a: Sequence[float], b: Sequence[float], rule: Until) -> Look:
    """The look at the first ``n`` repetitions of each side (``n``: the fewer of the two)."""
    n = min(len(a), len(b))
    a, b = a[:n], b[:n]
    lvl = level(n, rule)
    res = welch(a, b) if n >= 2 else None
    est = ratio_interval(a, b, 1 - 2 * lvl) if n >= 2 and lvl > 0 else None
    ratio, low, high = est if est is not None else (None, None, None)
    state = CONTINUE
    if n < rule.min or res is None or (n < rule.max and _unvaried(a, b)):
        state = CONTINUE
    elif low is not None and high is not None and _within(low, high, rule.equal):
        state = EQUAL
    elif res.p_value < lvl:
        state = SIGNIFICANT
    if state == CONTINUE and n >= rule.max:
        state = MAX
    return Look(state, n, lvl, res.p_value if res else None, ratio, low, high)


def _unvaried(a: Sequence[float], b: Sequence[float]) -> bool:
    """Neither side varied: no estimate of the noise yet (module doc)."""
    return len(set(a)) == 1 and len(set(b)) == 1


def _within(low: float, high: float, equal: float) -> bool:
    return low >= 1 - equal and high <= 1 + equal


def replay(a: Sequence[float], b: Sequence[float], rule: Until) -> Look:
    """The look at which repetitions ``a`` and ``b`` (in the order they ran) stopped: the
    first known one (or the one at ``max``), else the last, still going on."""
    n = min(len(a), len(b))
    last = look(a, b, rule)
    for k in range(rule.min, n + 1):
        seen = look(a[:k], b[:k], rule)
        if seen.state != CONTINUE:
            return seen
    return last
