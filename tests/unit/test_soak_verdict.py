"""The soak suite's verdict: its figures from a point's series, the limits, the plan keys."""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest

from storbench.analysis.soak import judge, soak_row, ticks
from storbench.analysis.summary import PointSummary
from storbench.engines.fio.intervals import StatusStream
from storbench.model.errors import PlanError
from storbench.model.series import Interval, measured
from storbench.plan import Target, parse_plan, suite_text
from storbench.plan.soakkeys import SoakLimits, soak_problem

DATA = Path(__file__).parent.parent / "data" / "fio"
LIMITS = SoakLimits().to_dict()


def _point(runs: int = 1) -> PointSummary:
    return PointSummary(
        key="k",
        index=0,
        target=Target("file", "/x"),
        workload="soak",
        params={},
        axes={},
        runs=runs,
    )


def _series(ios: list[int], p99: list[float] | None = None, ddir: str = "read") -> list[Interval]:
    return [
        Interval(n, (n + 1) * 1000, 1000, ddir, k, k * 4096, p99_ns=(p99 or [1000.0] * len(ios))[n])
        for n, k in enumerate(ios)
    ]


def test_soak_constant_load_is_stable() -> None:
    row = judge(soak_row(_point(), _series([1000] * 20), None), LIMITS)
    assert row.stable and row.reasons == []
    assert row.iops_mean == 1000 and row.iops_cv_pct == 0 and row.trend_pct_per_h == 0
    assert row.first_last_pct == 0 and row.stalls == 0


def test_soak_a_stall_is_counted_and_fails_the_verdict() -> None:
    ios = [1000] * 10 + [0, 0, 0] + [1000] * 10
    row = judge(soak_row(_point(), _series(ios), None), LIMITS)
    assert row.stalls == 3 and row.longest_stall_s == 3.0
    assert row.worst_iops == 0 and row.worst_iops_at_s == 11.0
    assert not row.stable and any("3 stalled intervals" in r for r in row.reasons)


def test_soak_a_decline_shows_in_trend_and_first_against_last() -> None:
    ios = [1000 - 10 * n for n in range(40)]  # 40 s, -1 % of the start a second
    row = judge(soak_row(_point(), _series(ios), None), LIMITS)
    fit = statistics.linear_regression([n + 1.0 for n in range(40)], [float(i) for i in ios])
    assert row.trend_pct_per_h == pytest.approx(fit.slope * 40 / statistics.fmean(ios) * 100)
    assert row.compared_s == 10.0  # a quarter of a run shorter than four hours
    first, last = statistics.fmean(ios[:10]), statistics.fmean(ios[-10:])
    assert row.first_last_pct == pytest.approx((last - first) / first * 100)
    assert not row.stable and any(r.startswith("IOPS trend") for r in row.reasons)


def test_soak_directions_add_up_and_the_worst_p99_counts() -> None:
    rows = _series([300] * 4, [5000.0] * 4, "read") + _series([100] * 4, [9000.0] * 4, "write")
    ts = ticks(rows)
    assert [t.ios for t in ts] == [400] * 4 and [t.p99_ns for t in ts] == [9000.0] * 4


def test_soak_ramp_is_left_out_and_hosts_add_up_without_the_points_own() -> None:
    ramp = Interval(0, 1000, 1000, "read", 5, 20480, ramp=True)
    a = [Interval(n, n * 1000 + 2000, 1000, "read", 100, 409600, host="h1") for n in range(3)]
    b = [Interval(n, n * 1000 + 2000, 1000, "read", 50, 204800, host="h2") for n in range(3)]
    ts = ticks([ramp, *a, *b])
    assert [t.ios for t in ts] == [150, 150, 150]


def test_soak_figures_of_a_real_fio_stream() -> None:
    stream = StatusStream(0.0, 500)
    stream.feed((DATA / "status-plain-jsonplus.stdout").read_text())
    intervals = measured(stream.close())
    row = soak_row(_point(), intervals, None)
    ts = ticks(intervals)
    iops = [t.ios / t.dur_s for t in ts]
    assert row.intervals == len(ts) > 2
    assert row.iops_mean == pytest.approx(statistics.fmean(iops))
    assert row.iops_cv_pct == pytest.approx(statistics.stdev(iops) / statistics.fmean(iops) * 100)


def test_soak_failed_point_is_not_stable() -> None:
    p = _point(runs=0)
    p.errors.append("fio: No space left on device")
    row = judge(soak_row(p, [], None), LIMITS)
    assert not row.stable and "the point failed: fio: No space left" in row.reasons[0]


def test_soak_suite_needs_a_duration() -> None:
    with pytest.raises(PlanError) as e:
        parse_plan(suite_text("soak"), "suite:soak", targets=["/tmp/sb-soak.dat"])
    assert "needs `duration`" in str(e.value) and "--set duration=6h" in (e.value.fix or "")
    p = parse_plan(
        suite_text("soak"), "suite:soak", targets=["/tmp/sb-soak.dat"], sets=["duration=2h"]
    )
    (pt,) = p.expand()
    assert pt.params["runtime"] == 7200 and pt.params["time_based"] == 1 and pt.keep_cut
    assert pt.est_seconds == 7200


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ("strict", "must be a mapping"),
        ({"iops": "5%"}, "has no key 'iops'"),
        ({"trend": "0%"}, "above 0 %"),
        ({"p99_cv": "lots"}, "must be a percentage"),
        ({"stalls": -1}, "whole number ≥ 0"),
    ],
)
def test_soak_limits_refuse_bad_values(value: object, words: str) -> None:
    found = soak_problem(value, {})
    assert found is not None and words in found[0]


def test_soak_duration_refuses_a_fraction_of_a_second() -> None:
    with pytest.raises(PlanError) as e:
        parse_plan(suite_text("soak"), "suite:soak", targets=["/tmp/x.dat"], sets=["duration=1.5"])
    assert "whole seconds" in str(e.value)
