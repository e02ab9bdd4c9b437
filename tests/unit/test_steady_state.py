"""Steady state (SNIA PTS): the window criteria, the plan key, rounds merged into one
measurement, and how every table shows a point that did not settle."""

from __future__ import annotations

import math
import statistics
from pathlib import Path

import pytest

from storbench.analysis.steady import assess, round_value
from storbench.engines import get as engine
from storbench.engines.fio.parse import parse_output
from storbench.model.errors import PlanError
from storbench.model.metrics import merge_bins, merge_in_time, percentiles_from_bins
from storbench.plan import parse_plan
from storbench.plan.steadykeys import SteadyState, problem, steady_state

DATA = Path(__file__).parent.parent / "data" / "fio"
CFG = SteadyState(window=5, range_pct=20, slope_pct=10)


def test_steady_window_within_both_limits_is_reached() -> None:
    v = assess([50, 100, 101, 99, 100, 102, 98], CFG)
    assert v is not None and v.reached
    assert (v.first, v.last, v.rounds) == (3, 7, 7)
    assert v.mean == pytest.approx(100.0)
    assert v.range_pct == pytest.approx(4.0)  # (102 - 98) / 100


def test_steady_too_few_rounds_give_no_verdict() -> None:
    assert assess([100, 100, 100, 100], CFG) is None


def test_steady_data_excursion_over_20_percent_is_not_steady() -> None:
    v = assess([100, 89, 111, 100, 100], CFG)  # range 22 % of the mean 100; no trend
    assert v is not None and not v.reached
    assert v.range_pct == pytest.approx(22.0)
    assert v.slope_pct < CFG.slope_pct


def test_steady_slope_excursion_is_the_fitted_line_across_the_window() -> None:
    # a steady climb of 3 per round: range 12 % (< 20 %), but the fitted line rises
    # 3 * 4 = 12 % of the mean across the five rounds (> 10 %)
    values = [94.0, 97.0, 100.0, 103.0, 106.0]
    v = assess(values, CFG)
    assert v is not None and not v.reached
    assert v.slope == pytest.approx(3.0)
    assert v.slope_pct == pytest.approx(12.0)
    assert v.range_pct == pytest.approx(12.0)
    # the same criterion as a plain least-squares fit computes it
    fit = statistics.linear_regression(range(5), values)
    assert v.slope == pytest.approx(fit.slope)


def test_steady_limits_hold_at_their_edge() -> None:
    v = assess([90.0, 110.0, 100.0, 100.0, 100.0], SteadyState(range_pct=20, slope_pct=10))
    assert v is not None and v.range_pct == pytest.approx(20.0) and v.reached


def test_steady_plan_key_takes_snia_defaults_and_overrides() -> None:
    assert steady_state(True) == SteadyState()
    assert steady_state(None) is None and steady_state(False) is None
    cfg = steady_state({"metric": "bw", "round": "2s", "window": 3, "rounds": 9, "range": "15%"})
    assert cfg == SteadyState(metric="bw", round_s=2.0, window=3, max_rounds=9, range_pct=15.0)


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ("yes", "must be true, false or a mapping"),
        ({"rouns": 3}, "has no key 'rouns'"),
        ({"metric": "latency"}, "must be one of iops, bw, lat"),
        ({"round": "500ms"}, "whole seconds, at least 1 s"),
        ({"round": "soon"}, "is not a time"),
        ({"window": 1}, "must be from 2 to 1000"),
        ({"rounds": 3}, "fewer than its window (5)"),
        ({"range": "0%"}, "above 0 % and at most 100 %"),
        ({"slope": "x"}, "must be a percentage"),
    ],
)
def test_steady_plan_key_refuses_bad_values(value: object, words: str) -> None:
    found = problem(value, {})
    assert found is not None and words in found[0]


def _plan(extra: str, engine_lines: str = "rw: randread\n    bs: 4k\n    size: 1m") -> str:
    return (
        "name: s\ntargets: [{file: /tmp/storbench-steady-unit.dat}]\n"
        f"{extra}\nworkloads:\n  - name: w\n    {engine_lines}\n"
    )


def test_steady_plan_load_error_names_the_line_and_fix() -> None:
    with pytest.raises(PlanError) as e:
        parse_plan(_plan("steady_state: {window: 0}"), "p.yaml")
    assert e.value.line == 3 and "`steady_state.window`" in str(e.value)


def test_steady_plan_refuses_rados_bench_rounds() -> None:
    text = (
        "name: s\ntargets: [{rados: pool}]\nsteady_state: true\nworkloads:\n"
        "  - {name: w, engine: rados-bench, mode: write, runtime: 5}\n"
    )
    with pytest.raises(PlanError) as e:
        parse_plan(text, "p.yaml")
    assert "cannot run workload 'w' in rounds" in str(e.value) and e.value.line == 3


def test_steady_points_carry_it_and_plan_the_most_rounds() -> None:
    p = parse_plan(_plan("steady_state: {round: 2s, rounds: 8}\n") + "    ramp_time: 1\n", "p")
    (pt,) = p.expand()
    assert pt.steady == SteadyState(round_s=2.0, max_rounds=8)
    assert pt.est_seconds == 8 * (1 + 2)
    assert type(pt).from_dict(pt.to_dict()).steady == pt.steady  # resume reads it back


def test_steady_fio_rounds_are_timed_and_seeded_apart() -> None:
    p = parse_plan(_plan("steady_state: true") + "    runtime: 30\n", "p")
    (pt,) = p.expand()
    fio = engine("fio")
    r1, r2, r3 = (fio.round_point(pt, 7, n) for n in (1, 2, 3))
    for r in (r1, r2, r3):
        assert r.params["runtime"] == 7 and r.params["time_based"] == 1
    assert "randseed" not in r1.extra  # round 1 is the point's own job
    assert len({r2.extra["randseed"], r3.extra["randseed"]}) == 2
    own = parse_plan(_plan("steady_state: true") + "    randseed: 42\n", "p").expand()[0]
    assert "randseed" not in fio.round_point(own, 7, 2).extra  # the plan's seed holds


def _recorded(name: str):  # type: ignore[no-untyped-def]
    meas, _ = parse_output((DATA / name).read_text())
    return meas


def test_steady_rounds_merge_into_one_measurement_from_real_output() -> None:
    # two real runs of different jobs stand for two rounds: what is checked is the rule
    a = _recorded("libaio-randrw-jsonplus.json")
    b = _recorded("percentile-rank-jsonplus.json")
    m = merge_in_time([a, b])
    assert set(m.directions) == {"read", "write"}  # write: a's alone (b wrote nothing)
    for ddir in ("read",):
        da, db, dm = a.directions[ddir], b.directions[ddir], m.directions[ddir]
        assert dm.total_ios == da.total_ios + db.total_ios
        assert dm.io_bytes == da.io_bytes + db.io_bytes
        assert dm.runtime_s == pytest.approx(da.runtime_s + db.runtime_s)
        assert dm.iops == pytest.approx(dm.total_ios / dm.runtime_s)
        assert dm.clat is not None and da.clat is not None and db.clat is not None
        bins = merge_bins([da.clat.bins, db.clat.bins])
        assert bins is not None
        assert dm.clat.percentiles == percentiles_from_bins(bins)  # merged, not averaged
        n = da.clat.samples + db.clat.samples
        mean = (da.clat.samples * da.clat.mean + db.clat.samples * db.clat.mean) / n
        assert dm.clat.mean == pytest.approx(mean)


def test_steady_round_value_of_each_metric_from_real_output() -> None:
    m = _recorded("libaio-randrw-jsonplus.json")
    r, w = m.directions["read"], m.directions["write"]
    assert round_value(m, "iops") == pytest.approx(r.iops + w.iops)
    assert round_value(m, "bw") == pytest.approx(r.bw_bytes + w.bw_bytes)
    assert r.clat is not None and w.clat is not None
    n = r.clat.samples + w.clat.samples
    lat = round_value(m, "lat")
    assert lat is not None and math.isclose(
        lat, (r.clat.samples * r.clat.mean + w.clat.samples * w.clat.mean) / n
    )
