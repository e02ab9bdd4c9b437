"""Repetitions until the verdict is known (``repeat: {until: significant}``): the
sequential rule (analysis/sequential.py), the plan key (plan/untilkeys.py), the pairs
a run repeats A, B, A, B... (execute/repetitions.py) and the verdict compare gives them.
Figures are recorded fio output of a real throttled device (tests/data/climb)."""

from __future__ import annotations

import dataclasses
import math
import random
from pathlib import Path

import pytest

from storbench.analysis import sequential
from storbench.analysis.compare import EQUAL, compare
from storbench.analysis.stats import welch
from storbench.analysis.summary import summarize
from storbench.engines import fio
from storbench.execute.repetitions import Repetitions
from storbench.model.errors import PlanError
from storbench.model.findings import Finding
from storbench.model.metrics import Measurement
from storbench.plan import Point, parse_plan
from storbench.plan.untilkeys import NOT_COMPARED, Until

DATA = Path(__file__).resolve().parents[1] / "data" / "climb"

PLAN = """\
name: ab
targets: [{{file: /tmp/storbench-until-a.dat}}, {{file: /tmp/storbench-until-b.dat}}]
global: {{size: 16m, runtime: 1, time_based: 1, direct: 1}}
repeat: {repeat}
workloads:
  - {{name: r, rw: randread, bs: [4k, 8k]}}
"""
RULE = "{until: significant, max: 6, equal: 0.1%}"


def recorded(name: str) -> Measurement:
    meas, _ = fio.parse_output((DATA / f"{name}.json").read_text())
    return meas


def points(repeat: str = RULE) -> list[Point]:
    return parse_plan(PLAN.format(repeat=repeat), "ab.yaml").expand()


# --------------------------------------------------------------------------- the rule


def test_until_looks_spend_alpha_and_no_more() -> None:
    rule = Until("target", min=2, max=10)
    levels = [sequential.level(n, rule) for n in range(2, 11)]
    assert all(lv > 0 for lv in levels)
    assert sum(levels) == pytest.approx(0.05)
    assert sequential.level(1, rule) == 0


def test_until_peeking_is_paid_for_where_naive_peeking_is_not() -> None:
    """Alike A and B (the same normal noise), looked at after every pair: the rule finds a
    difference in at most 5 % of trials; stopping at the first p < 0.05 finds one far more
    often (the reason for the rule)."""
    rng = random.Random(7)
    rule = Until("target", min=2, max=10)
    trials, ruled, naive = 600, 0, 0
    for _ in range(trials):
        a = [rng.gauss(1000, 30) for _ in range(10)]
        b = [rng.gauss(1000, 30) for _ in range(10)]
        ruled += sequential.replay(a, b, rule).state == sequential.SIGNIFICANT
        naive += any(welch(a[:n], b[:n]).p_value < 0.05 for n in range(2, 11))
    assert ruled / trials <= 0.05, ruled
    assert naive / trials > 0.1, naive


def test_until_known_better_at_the_first_look_and_replay_keeps_it() -> None:
    rule = Until("target", min=2, max=10)
    a, b = [1000.0, 1004.0], [2000.0, 2010.0]
    seen = sequential.look(a, b, rule)
    assert seen.state == sequential.SIGNIFICANT and seen.n == 2 and seen.p < seen.level
    assert 1.98 < seen.ratio < 2.02 and seen.ratio_low < seen.ratio < seen.ratio_high
    # repetitions after it (a run that went on) do not move the look that stopped it
    assert sequential.replay([*a, 1500, 1500], [*b, 1500, 1500], rule).n == 2


def test_until_equal_when_the_ratio_interval_lies_within_the_margin() -> None:
    a, b = [1000.0, 1002.0, 999.0], [1001.0, 1000.0, 1002.0]
    assert sequential.look(a, b, Until("target", equal=0.02)).state == sequential.EQUAL
    tight = sequential.look(a, b, Until("target", equal=0.001))
    assert tight.state == sequential.CONTINUE and not tight.known
    assert sequential.look(a[:2], b[:2], Until("target", max=2, equal=0.001)).state == "max"


def test_until_a_difference_inside_the_margin_is_equal_even_where_significant() -> None:
    """Two alike devices whose IOPS differ by 0.2 % every time: Welch's test finds the
    difference, the interval keeps it inside ±5 %: equal, not "worse" (a flake of the
    real test, tests/integration/test_until_runs.py, on a busy machine)."""
    a, b = [800.0, 800.8, 800.0, 800.8], [801.6, 802.4, 801.6, 802.4]
    rule = Until("target", min=4, max=12, equal=0.05)
    assert welch(a, b).p_value < sequential.level(4, rule)  # significant by itself
    seen = sequential.look(a, b, rule)
    assert seen.state == sequential.EQUAL and 0.95 < seen.ratio_low < seen.ratio_high < 1.05
    # with a margin the interval does not fit, the same figures are a difference
    assert sequential.look(a, b, dataclasses.replace(rule, equal=0.001)).state == "significant"


def test_until_sides_that_did_not_vary_judge_nothing_before_max() -> None:
    """fio's IOPS are I/Os over whole milliseconds (804 in 1,004 or 1,005 ms): two
    repetitions of each side alike to the last digit say nothing of the noise, so the look
    waits; at ``max`` Welch's own rule (p 0 where they differ) holds."""
    a, b = [800.796813] * 2, [802.39521] * 2
    rule = Until("target", min=2, max=4, equal=0.001)
    assert welch(a, b).p_value == 0
    assert sequential.look(a, b, rule).state == sequential.CONTINUE
    assert sequential.look(a * 2, b * 2, rule).state == sequential.SIGNIFICANT  # at max
    assert sequential.look([*a, 800.0], [*b, 802.39521], rule).state != "significant"


# --------------------------------------------------------------------------- the plan


def test_until_plan_expands_min_rounds_each_point_with_its_side() -> None:
    pts = points()
    assert len(pts) == 2 * 2 * 2  # min 2 rounds of 2 targets × 2 block sizes
    assert [p.side for p in pts[:4]] == [0, 0, 1, 1]  # A's target first
    assert {p.until for p in pts} == {Until("target", max=6, equal=0.001)}
    again = Point.from_dict(pts[2].to_dict())
    assert again == pts[2] and again.side == 1
    assert "until" not in points("2")[0].to_dict()  # older specs stay as they were


def test_until_plan_compares_an_axis_of_two_values() -> None:
    text = PLAN.format(repeat="{until: significant, compare: bs}")
    pts = parse_plan(text, "ab.yaml").expand()
    assert [p.side for p in pts[:2]] == [0, 1] and pts[0].params["bs"] == "4k"


@pytest.mark.parametrize(
    ("repeat", "says"),
    [
        ("{until: soon}", "`repeat.until` is 'soon'"),
        ("{until: significant, max: 1}", "`repeat.max` is 1"),
        ("{until: significant, min: 1}", "`repeat.min` is 1"),
        ("{until: significant, equal: 90%}", "`repeat.equal` is '90%'"),
        ("{until: significant, often: 3}", "`repeat` has no key 'often'"),
        ("{until: significant, compare: iodepth}", "has no axis 'iodepth' of two values"),
        ("{until: significant, compare: direct}", "compares direct, which changes what"),
    ],
)
def test_until_plan_key_refuses_with_the_fix(repeat: str, says: str) -> None:
    with pytest.raises(PlanError) as e:
        parse_plan(PLAN.format(repeat=repeat), "ab.yaml")
    assert says in e.value.message, e.value.message
    assert e.value.fix and e.value.line == 4


def test_until_plan_needs_two_targets_to_compare_them() -> None:
    one = PLAN.format(repeat=RULE).replace(", {file: /tmp/storbench-until-b.dat}", "")
    with pytest.raises(PlanError, match="compares two targets, and the plan has 1"):
        parse_plan(one, "ab.yaml")


def test_until_refuses_the_options_compare_never_judges() -> None:
    from storbench.analysis.comparable import OPTIONS

    assert set(OPTIONS) | {"direct", "buffered"} <= set(NOT_COMPARED)


# --------------------------------------------------------------------------- the run's pairs


def _pair(pts: list[Point]) -> tuple[Point, Point, Point, Point]:
    """The 4k pair's two rounds: A, B of round 1, A, B of round 2."""
    four = [p for p in pts if p.params["bs"] == "4k"]
    a = [p for p in four if p.side == 0]
    b = [p for p in four if p.side == 1]
    return a[0], b[0], a[1], b[1]


def test_until_pair_unknown_runs_a_then_b_again_as_its_next_repetition() -> None:
    pts = points()
    reps = Repetitions.of(pts, lambda i: None)  # as a run starts: its points, none measured
    a0, b0, a1, b1 = _pair(pts)
    assert reps.observe(a0, recorded("throttled-qd1")) == []
    assert reps.observe(b0, recorded("throttled-qd4")) == []
    assert reps.observe(a1, recorded("throttled-qd2")) == []  # B's second still to run
    nxt = reps.observe(b1, recorded("throttled-qd8"))
    assert [p.side for p in nxt] == [0, 1] and [p.index for p in nxt] == [8, 9]
    assert [p.repetition for p in nxt] == [2, 2] and nxt[0].target == a0.target
    assert nxt[0].key == a0.key and nxt[0].extra["randseed"] != a1.extra["randseed"]


def test_until_pair_known_stops_and_so_does_one_not_comparable() -> None:
    pts = points()
    a0, b0, a1, b1 = _pair(pts)
    reps = Repetitions(len(pts))
    for p, name in ((a0, "rate-1000"), (b0, "throttled-qd1"), (a1, "rate-1000")):
        reps.observe(p, recorded(name))
    assert reps.observe(b1, recorded("throttled-qd2")) == []  # twice as fast: known
    cached = Repetitions(len(pts))
    first = recorded("throttled-qd1")
    first.findings = [Finding("page-cache", "reads from RAM", "direct: 1")]
    for p, m in ((a0, first), (b0, recorded("throttled-qd4")), (a1, recorded("throttled-qd2"))):
        cached.observe(p, m)
    assert cached.observe(b1, recorded("throttled-qd8")) == []  # however often it ran


def test_until_pair_a_side_of_which_lies_beyond_its_knee_is_done() -> None:
    pts = points()
    reps = Repetitions.of(pts, lambda i: None)
    a0, b0, a1, b1 = _pair(pts)
    for p, name in ((a0, "throttled-qd1"), (b0, "throttled-qd4"), (a1, "throttled-qd2")):
        reps.observe(p, recorded(name))
    beyond = Measurement(status="skipped", error="skipped: beyond the knee of iodepth")
    assert reps.observe(b1, beyond) == []
    text = PLAN.format(repeat=RULE).replace(
        "bs: [4k, 8k]}", "bs: 4k, iodepth: [1, 2, 4], stop_at: knee}"
    )
    assert parse_plan(text, "ab.yaml").until is not None  # a climb may be repeated until known


def test_until_pair_stops_at_the_most_repetitions() -> None:
    pts = points("{until: significant, max: 2, equal: 0.1%}")
    reps = Repetitions(len(pts))
    a0, b0, a1, b1 = _pair(pts)
    for p, name in ((a0, "throttled-qd1"), (b0, "throttled-qd4"), (a1, "throttled-qd2")):
        reps.observe(p, recorded(name))
    assert reps.observe(b1, recorded("throttled-qd8")) == []


def test_until_resumed_run_goes_on_with_its_unfinished_pairs() -> None:
    pts = points()
    a0, b0, a1, b1 = _pair(pts)
    measured = {
        a0.index: recorded("throttled-qd1"),
        b0.index: recorded("throttled-qd4"),
        a1.index: recorded("throttled-qd2"),
        b1.index: recorded("throttled-qd8"),
    }
    reps = Repetitions.of(pts, measured.get)
    others = {p.index for p in pts if p.params["bs"] == "8k"}
    nxt = reps.unfinished(others)  # the 8k pair still runs; the 4k pair goes on
    assert [(p.side, p.repetition, p.index) for p in nxt] == [(0, 2, 8), (1, 2, 9)]
    assert Repetitions.of(pts, measured.get).unfinished({b1.index}) == []  # B still to run


# --------------------------------------------------------------------------- the verdict


def test_until_compare_judges_the_pair_at_its_look() -> None:
    pts = points()
    a0, b0, a1, b1 = _pair(pts)
    got = [
        (a0, "throttled-qd1"),
        (b0, "throttled-qd4"),
        (a1, "throttled-qd2"),
        (b1, "throttled-qd8"),
    ]
    sums = summarize([(p, recorded(n)) for p, n in got])
    a = [s for s in sums if s.side == 0]
    b = [s for s in sums if s.side == 1]
    (m,) = compare(a, b, base_name="A", other_name="B").matched
    assert m.sequential is not None and m.sequential.state == sequential.CONTINUE
    assert m.verdict == "no significant difference"
    wide = Until("target", max=6, equal=0.02)  # the same figures, a looser margin
    sums = summarize([(dataclasses.replace(p, until=wide), recorded(n)) for p, n in got])
    c = compare(
        [s for s in sums if s.side == 0],
        [s for s in sums if s.side == 1],
        base_name="A",
        other_name="B",
    )
    (m,) = c.matched
    assert m.verdict == EQUAL and c.ties == 1 and c.wins == c.losses == 0
    d = m.to_dict()["repeat_until"]
    assert d["state"] == "equal" and d["n"] == 2 and d["rule"]["equal"] == 0.02
    assert math.isclose(d["ratio"], m.sequential.ratio)
