"""The capacity search (analysis/capacity.py): steps judged by a latency objective, bracketing
then bisection, saturated steps never meeting it, and the answer in words. Its figures are
recorded fio output of real open-loop steps against a device throttled to 2,000 read IOPS
(tests/data/climb/record.sh): a closed-loop probe and offered rates of 1,000 to 2,200
I/Os per second."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from storbench.analysis.capacity import Step, capacity, next_rate, shortfall, step_of
from storbench.engines import fio
from storbench.model.metrics import Measurement
from storbench.model.units import fmt_ns
from storbench.plan.slokeys import Slo

DATA = Path(__file__).resolve().parents[1] / "data" / "climb"
MS = 1e6


def recorded(name: str) -> Measurement:
    meas, _ = fio.parse_output((DATA / f"rate-{name}.json").read_text())
    return meas


def step(slo: Slo, rate: int | None) -> Step:
    found = step_of(slo, rate, recorded(str(rate) if rate else "probe"))
    assert found is not None
    return found


def test_capacity_steps_judge_total_latency_at_the_percentile_and_saturation() -> None:
    slo = Slo(latency_ns=2 * MS, percentile=99)
    probe = step(slo, None)
    assert 1900 < probe.achieved_iops < 2100 and not probe.saturated  # a probe has no offer
    assert probe.latency_ns is not None and probe.latency_ns > 50 * MS and not probe.meets
    low = step(slo, 1000)
    # 977 of 1,000 offered over 3 s: 2.3 % short, within what Poisson arrivals miss by
    # chance (3 standard deviations of 3,000 arrivals: 5.5 %), so not saturated
    assert 0.97 < low.achieved_iops / 1000 < 0.98
    assert shortfall(1000, recorded("1000")) == pytest.approx(3 / math.sqrt(3000), rel=0.01)
    assert shortfall(1e6, recorded("1000")) == 0.02  # many arrivals: the 2 % rule
    assert low.meets and not low.saturated and low.latency_ns is not None
    assert low.latency_ns <= 2 * MS
    over = step(slo, 2200)  # the device took ~2,000 of 2,200 offered
    assert over.saturated and not over.meets
    # the same step by a mean objective, and a target nothing meets
    assert step(Slo(latency_ns=1 * MS, percentile=None), 1000).meets
    assert not step(Slo(latency_ns=1_000, percentile=99), 1000).meets


def test_capacity_search_brackets_then_bisects_to_the_resolution() -> None:
    slo = Slo(latency_ns=2 * MS, percentile=99)
    probe = step(slo, None)
    first = next_rate(slo, [probe])
    assert first == pytest.approx(probe.achieved_iops / 2)
    at = {1000: step(slo, 1000), 1500: step(slo, 1500), 1800: step(slo, 1800)}
    # a step that met: the next is the midpoint between it and the probe
    assert next_rate(slo, [probe, at[1000]]) == pytest.approx((1000 + probe.achieved_iops) / 2)
    assert next_rate(slo, [probe, at[1000], at[1500]]) == pytest.approx(
        (1500 + probe.achieved_iops) / 2
    )
    # within 5 % of the probe: done
    near = step(slo, 1950)
    assert near.meets
    assert next_rate(slo, [probe, at[1000], at[1500], at[1800], near]) is None
    # a failed probe ends the search; a failed step is no step
    assert next_rate(slo, [None]) is None
    assert next_rate(slo, [probe, None]) == pytest.approx(probe.achieved_iops / 2)


def test_capacity_saturated_step_bounds_the_search_from_above() -> None:
    slo = Slo(latency_ns=2 * MS, percentile=99, resolution=0.01)
    probe, low, over = step(slo, None), step(slo, 1950), step(slo, 2200)
    # 2,200 offered and saturated sits above the probe's achieved rate: the probe bounds it
    assert next_rate(slo, [probe, low, over]) == pytest.approx((1950 + probe.achieved_iops) / 2)


def test_capacity_answer_says_the_load_the_target_and_the_step_above() -> None:
    slo = Slo(latency_ns=2 * MS, percentile=99)
    steps = [step(slo, None), step(slo, 1000), step(slo, 1500), step(slo, 1800), step(slo, 1950)]
    answer = capacity(slo, steps)
    assert answer.met is steps[-1] and answer.above is steps[0]
    assert answer.iops == pytest.approx(steps[-1].achieved_iops)
    assert answer.text.startswith(f"{steps[-1].achieved_iops:,.0f} IOPS at p99 ≤ 2.00 ms")
    assert "; resolution 5 %; next step 2,0" in answer.text and "p99 " in answer.text
    # the met step's latency and its interval, before the resolution
    met = steps[-1]
    assert met.interval is not None
    assert f"(p99 {fmt_ns(met.latency_ns)} [95 % CI {fmt_ns(met.interval.low_ns)}–" in answer.text
    # a target nothing meets, and a device whose most meets it
    strict = Slo(latency_ns=1_000, percentile=99)
    none = capacity(strict, [step(strict, None), step(strict, 1000)])
    assert none.iops is None and none.text.startswith("no load meets p99 ≤ 1.0 µs")
    loose = Slo(latency_ns=1e9, percentile=99)
    most = capacity(loose, [step(loose, None)])
    assert most.iops is not None and "the most the device does at this concurrency" in most.text
    assert next_rate(loose, [step(loose, None)]) is None


def test_capacity_steps_carry_their_latency_interval() -> None:
    """Each step's judged latency comes with its 95 % interval, which holds the figure; a
    p99 of ~3,000 I/Os rests on ~30 of them, so its interval is wide, and the step at 1,000
    offered (p99 1.22 ms) holds the 2 ms target inside it: within chance."""
    slo = Slo(latency_ns=2 * MS, percentile=99)
    for rate in (None, 1000, 1500, 1800, 1950, 2200):
        s = step(slo, rate)
        assert s.interval is not None and s.latency_ns is not None
        assert s.interval.low_ns <= s.latency_ns <= s.interval.high_ns
    low = step(slo, 1000)
    assert low.meets and low.within_chance(slo)
    assert not step(slo, 1800).within_chance(slo)  # p99 330 µs: far below 2 ms either way
    assert not step(slo, 2200).within_chance(slo)  # saturated: misses whatever its figure
    # a mean objective: mean ± 1.96 s/√n
    mean = Slo(latency_ns=1 * MS, percentile=None)
    m = step(mean, 1000)
    assert m.interval is not None and m.latency_ns is not None
    lat = recorded("1000").direction("read").lat
    assert lat is not None and lat.stddev is not None
    half = 1.959964 * lat.stddev / math.sqrt(lat.samples)
    assert m.interval.high_ns - m.latency_ns == pytest.approx(half, rel=1e-4)
