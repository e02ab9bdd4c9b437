"""Summaries of ratios across points: the geometric mean with a bootstrap 95 % interval.

A comparison of two runs gives one ratio per point (OTHER / BASELINE: of the IOPS, of the
mean latency). Their summary is the geometric mean, ``exp(mean(log r))`` (Fleming & Wallace,
"How not to lie with statistics: the correct way to summarize benchmark results", CACM
1986): it does not depend on which run is the baseline (swap them and it becomes its
inverse), and one point at ×24 does not outweigh five at ×0.7 as the arithmetic mean of
percentages lets it (+2,317 % and five −30 % average to +361 %; their geometric mean is
×1.26).

The 95 % interval is a percentile bootstrap over the points: :data:`RESAMPLES` resamples of
the points with replacement, each giving the geometric mean of its ratios; the interval is
the 2.5th and 97.5th percentile of those. It says how much the summary depends on which
points were measured (a run whose points disagree gets a wide interval), not how noisy each
point was (each point's own repetitions give its verdict). The random generator starts from
a fixed seed (:data:`SEED`), so the same ratios in the same order always give the same
interval. With one point there is no interval (None). Above :data:`BOOTSTRAP_MAX` points
the interval is the normal one, the mean of the logarithms ± 1.96 standard errors (the
central limit theorem: with hundreds of points the bootstrap's distribution of that mean
is normal, and its percentiles match these to within their own resampling noise), so that
a comparison of 20,000 points does not draw 40 million resamples per summary (nor one of
500 points per block size, a million each).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

from storbench.analysis.stats import CONFIDENCE

#: Bootstrap resamples of the interval.
RESAMPLES = 2000
#: Seed of the bootstrap's generator: the same comparison always prints the same interval.
SEED = 20241986
#: Points above which the interval is the normal approximation (module doc).
BOOTSTRAP_MAX = 500
#: Resamples drawn at once (memory: CHUNK × points indices).
_CHUNK_CELLS = 4_000_000


@dataclass(frozen=True)
class RatioSummary:
    """The geometric mean of ``points`` ratios and its 95 % interval (None: one point)."""

    geomean: float | None
    ci95: tuple[float, float] | None
    points: int

    @property
    def change_pct(self) -> float | None:
        """The geometric mean as a change in percent (0.87 -> -13.0)."""
        return None if self.geomean is None else 100.0 * (self.geomean - 1.0)


NONE = RatioSummary(None, None, 0)


def usable(ratio: float | None) -> bool:
    """A ratio a geometric mean can take: finite and above 0."""
    return ratio is not None and math.isfinite(ratio) and ratio > 0


def ratio(base: float | None, other: float | None) -> float | None:
    """``other / base``; None when either is missing or the ratio is not usable."""
    if base is None or other is None or base <= 0:
        return None
    r = other / base
    return r if usable(r) else None


def geomean(ratios: Sequence[float]) -> float | None:
    """exp(mean(log r)); None for no ratios."""
    if not ratios:
        return None
    return math.exp(math.fsum(math.log(r) for r in ratios) / len(ratios))


def bootstrap_ci(
    ratios: Sequence[float],
    *,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    confidence: float = CONFIDENCE,
) -> tuple[float, float] | None:
    """Percentile bootstrap interval of the geometric mean of ``ratios`` (module doc)."""
    n = len(ratios)
    if n < 2:
        return None
    import numpy as np  # here: slow to import, and only a comparison needs it

    logs = np.log(np.asarray(ratios, dtype=float))
    if np.all(logs == logs[0]):
        r = float(math.exp(logs[0]))
        return r, r
    if n > BOOTSTRAP_MAX:
        z = NormalDist().inv_cdf(0.5 + confidence / 2.0)
        half = z * float(np.std(logs, ddof=1)) / math.sqrt(n)
        mean = float(np.mean(logs))
        return math.exp(mean - half), math.exp(mean + half)
    rng = np.random.default_rng(seed)
    means = np.empty(resamples)
    step = max(1, _CHUNK_CELLS // n)
    for start in range(0, resamples, step):
        k = min(step, resamples - start)
        idx = rng.integers(0, n, size=(k, n), dtype=np.int32)
        means[start : start + k] = logs[idx].mean(axis=1)
    tail = 100.0 * (1.0 - confidence) / 2.0
    lo, hi = np.percentile(means, [tail, 100.0 - tail])
    return float(math.exp(lo)), float(math.exp(hi))


def summarize_ratios(ratios: Sequence[float | None]) -> RatioSummary:
    """The :class:`RatioSummary` of the usable ones of ``ratios``."""
    vals = [float(r) for r in ratios if r is not None and usable(r)]
    if not vals:
        return NONE
    return RatioSummary(geomean(vals), bootstrap_ci(vals), len(vals))
