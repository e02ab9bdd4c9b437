"""Repetition statistics: Student t intervals and Welch's t-test, checked against values
computed here without scipy (the t distribution integrated numerically) and against
printed t tables."""

from __future__ import annotations

import math
import statistics

import pytest
from scipy import stats as scipy_stats

from storbench.analysis.stats import (
    Spread,
    change_pct,
    confidence_interval,
    spread,
    t_critical,
    welch,
)

# --------------------------------------------------------------------------- an independent t


def _t_pdf(x: float, df: float) -> float:
    logc = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)
    return math.exp(logc - (df + 1) / 2 * math.log1p(x * x / df))


def _t_cdf_upper(x: float, df: float, steps: int = 20000) -> float:
    """P(T > x) for x >= 0: 1/2 minus Simpson's rule of the density over [0, x]."""
    h = x / steps
    s = _t_pdf(0, df) + _t_pdf(x, df)
    s += sum((4 if i % 2 else 2) * _t_pdf(i * h, df) for i in range(1, steps))
    return 0.5 - s * h / 3


def _t_quantile_975(df: float) -> float:
    lo, hi = 0.0, 100.0
    for _ in range(80):
        mid = (lo + hi) / 2
        if _t_cdf_upper(mid, df, 4000) > 0.025:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


# The 0.975 column of a printed Student t table (two-sided 95 %).
T_TABLE = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 10: 2.228, 30: 2.042}


@pytest.mark.parametrize(("df", "value"), sorted(T_TABLE.items()))
def test_t_critical_is_the_printed_table(df: int, value: float) -> None:
    assert t_critical(df) == pytest.approx(value, abs=5e-4)


def test_t_critical_matches_the_integrated_density() -> None:
    for df in (2, 3, 7):
        assert t_critical(df) == pytest.approx(_t_quantile_975(df), rel=1e-6)


def test_confidence_interval_is_mean_plus_minus_t_s_over_root_n() -> None:
    values = [8000.0, 7969.0, 8031.0, 8031.0]
    n = len(values)
    m = sum(values) / n
    s = math.sqrt(sum((v - m) ** 2 for v in values) / (n - 1))
    half = _t_quantile_975(n - 1) * s / math.sqrt(n)
    lo, hi = confidence_interval(values) or (0, 0)
    assert lo == pytest.approx(m - half, rel=1e-9)
    assert hi == pytest.approx(m + half, rel=1e-9)
    sp = spread(values)
    assert sp is not None
    assert (sp.n, sp.mean) == (4, pytest.approx(m))
    assert sp.stddev == pytest.approx(s)
    assert sp.half_width == pytest.approx(half, rel=1e-9)
    assert sp.rel_half_width_pct == pytest.approx(100 * half / m, rel=1e-9)
    # 3 repetitions: the interval is t(2) = 4.30 standard errors wide each way, not 1.96
    three = spread([10.0, 12.0, 14.0])
    assert three is not None and three.half_width == pytest.approx(4.3027 * 2 / math.sqrt(3), 1e-4)


def test_spread_of_one_or_no_value() -> None:
    assert spread([]) is None
    one = spread([5.0])
    assert one == Spread(n=1, mean=5.0, stddev=None, ci_low=None, ci_high=None)
    assert one.half_width is None and one.rel_half_width_pct is None
    assert confidence_interval([5.0]) is None


def _welch_by_hand(a: list[float], b: list[float]) -> tuple[float, float, float]:
    na, nb = len(a), len(b)
    ma, mb = sum(a) / na, sum(b) / nb
    va = sum((x - ma) ** 2 for x in a) / (na - 1)
    vb = sum((x - mb) ** 2 for x in b) / (nb - 1)
    se = math.sqrt(va / na + vb / nb)
    t = (mb - ma) / se
    df = (va / na + vb / nb) ** 2 / ((va / na) ** 2 / (na - 1) + (vb / nb) ** 2 / (nb - 1))
    return t, df, 2 * _t_cdf_upper(abs(t), df)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ([8000.0, 7969.0, 8031.0, 8031.0], [12642.0, 12488.0]),  # clearly apart
        ([8000.0, 7969.0], [8031.0, 8031.0, 8010.0]),  # close
        ([1.0, 2.0, 3.5], [2.0, 4.0, 7.0, 9.0]),
        ([100.0, 101.0, 99.0], [100.5, 99.5, 100.0]),  # the same
    ],
)
def test_welch_matches_the_hand_computation_and_scipy(a: list[float], b: list[float]) -> None:
    t, df, p = _welch_by_hand(a, b)
    res = welch(a, b)
    assert res is not None
    assert res.t == pytest.approx(t, rel=1e-12)
    assert res.df == pytest.approx(df, rel=1e-12)
    assert res.p_value == pytest.approx(p, rel=1e-5, abs=1e-12)
    ref = scipy_stats.ttest_ind(b, a, equal_var=False)
    assert res.p_value == pytest.approx(float(ref.pvalue), rel=1e-9)
    assert res.t == pytest.approx(float(ref.statistic), rel=1e-12)


def test_welch_sign_and_significance() -> None:
    lo, hi = [8000.0, 7969.0, 8031.0, 8031.0], [12642.0, 12488.0]
    up, down = welch(lo, hi), welch(hi, lo)
    assert up is not None and down is not None
    assert up.t > 0 > down.t
    assert up.p_value == pytest.approx(down.p_value) and up.p_value < 0.05


def test_welch_needs_two_values_on_each_side() -> None:
    assert welch([1.0], [1.0, 2.0]) is None
    assert welch([1.0, 2.0], []) is None


def test_welch_without_any_variance() -> None:
    same = welch([3.0, 3.0], [3.0, 3.0, 3.0])
    apart = welch([3.0, 3.0], [4.0, 4.0])
    assert same is not None and same.p_value == 1.0 and same.t == 0
    assert apart is not None and apart.p_value == 0.0 and apart.t == math.inf
    # one side varying is an ordinary test (df from the varying side alone)
    one = welch([3.0, 3.0, 3.0], [4.0, 5.0, 6.0])
    assert one is not None
    assert one.df == pytest.approx(2.0)
    assert one.t == pytest.approx(2 / (statistics.stdev([4.0, 5.0, 6.0]) / math.sqrt(3)))


def test_change_pct() -> None:
    assert change_pct(100.0, 148.9) == pytest.approx(48.9)
    assert change_pct(200.0, 134.8) == pytest.approx(-32.6)
    assert change_pct(0.0, 5.0) is None
    assert change_pct(None, 5.0) is None and change_pct(5.0, None) is None
