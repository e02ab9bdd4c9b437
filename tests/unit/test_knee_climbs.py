"""`stop_at: knee` (analysis/climb.py, execute/climbs.py, plan key): a sweep of load stops
climbing once two steps in a row each gain under 5 % throughput while latency grows; the
points above are skipped, with the figures that stopped it. The figures are recorded fio
output of a real climb to a real knee (tests/data/climb: a throttled loop device)."""

from __future__ import annotations

from pathlib import Path

import pytest

from storbench.analysis import climb
from storbench.engines import fio
from storbench.execute.climbs import Climbs
from storbench.model.errors import PlanError
from storbench.model.metrics import Measurement
from storbench.plan import parse_plan

DATA = Path(__file__).resolve().parents[1] / "data" / "climb"


def recorded(qd: int) -> Measurement:
    meas, _ = fio.parse_output((DATA / f"throttled-qd{qd}.json").read_text())
    return meas


PLAN = """\
name: climb
repeat: {repeat}
targets:
  - file: /tmp/storbench-climb-test.dat
workloads:
  - name: w
    rw: randread
    bs: [4k, 8k]
    size: 16m
    runtime: 1
    iodepth: [1, 2, 4, 8, 16]
    stop_at: {stop_at}
"""


def points(stop_at: str = "knee", repeat: int = 1) -> list:
    return parse_plan(PLAN.format(stop_at=stop_at, repeat=repeat), "climb.yaml").expand()


def test_knee_rule_on_a_recorded_climb_stops_after_two_flat_steps() -> None:
    steps = [climb.step_of("iodepth", qd, recorded(qd)) for qd in (1, 2, 4, 8)]
    assert all(s is not None for s in steps)
    flat = [s for s in steps if s is not None]
    assert 1900 < flat[0].throughput < 2100  # the throttle's 2,000 IOPS
    assert flat[2].latency_ns > 3 * flat[0].latency_ns  # fio's lat: the queue grows
    assert climb.stop("iodepth", flat[:2]) is None  # two steps say nothing yet
    stop = climb.stop("iodepth", flat[:3])
    assert stop is not None and stop.knee == 1 and stop.last == 4
    assert "iodepth 1 → 2 → 4: IOPS +" in stop.reason and "(each under 5 %)" in stop.reason
    assert "ms" in stop.reason  # latency said in its unit
    # a step that gained enough throughput is no knee; nor flat throughput at equal latency
    gained = [climb.Step(1, 1000, 1e5), climb.Step(2, 1900, 1.2e5), climb.Step(4, 1950, 2e5)]
    assert climb.stop("iodepth", gained) is None
    calm = [climb.Step(1, 1000, 1e5), climb.Step(2, 1001, 1e5), climb.Step(4, 1002, 1e5)]
    assert climb.stop("iodepth", calm) is None


def test_knee_a_failed_point_is_no_step() -> None:
    assert climb.step_of("iodepth", 1, Measurement(status="failed", error="x")) is None
    assert climb.step_of("iodepth", 1, Measurement()) is None  # no I/O


def test_knee_climbs_skip_what_lies_above_and_each_climb_stops_on_its_own() -> None:
    pts = points()
    by = {(p.axes["bs"], p.axes["iodepth"]): p for p in pts}
    climbs = Climbs()
    for qd in (1, 2):
        assert climbs.skip(by[("4k", qd)]) is None
        assert climbs.observe(by[("4k", qd)], recorded(qd)) is None
    stop = climbs.observe(by[("4k", 4)], recorded(4))
    assert stop is not None and stop.knee == 1
    for qd in (8, 16):
        why = climbs.skip(by[("4k", qd)])
        assert why is not None and why.startswith(
            "skipped: beyond the knee of iodepth (at iodepth=1)"
        )
    assert climbs.skip(by[("4k", 4)]) is None  # what showed the knee was measured
    assert climbs.skip(by[("8k", 8)]) is None  # another climb (bs=8k) has not stopped


def test_knee_repetitions_share_their_climb_and_a_resume_rebuilds_it() -> None:
    pts = points(repeat=2)
    first = [p for p in pts if p.repetition == 0 and p.axes["bs"] == "4k"]
    measured = {p.index: recorded(p.axes["iodepth"]) for p in first[:3]}
    climbs = Climbs.of(pts, measured.get)  # what a resumed run recorded before
    again = {p.axes["iodepth"]: p for p in pts if p.repetition == 1 and p.axes["bs"] == "4k"}
    assert climbs.skip(again[2]) is None
    assert climbs.skip(again[8]) is not None  # the second round measures the same values
    assert Climbs.of(pts, lambda i: None).skip(again[8]) is None  # nothing recorded yet


@pytest.mark.parametrize(
    ("stop_at", "says"),
    [
        ("{bs: knee}", "`stop_at` names 'bs', which is not an axis of load it sweeps"),
        ("soon", "`stop_at` is 'soon'"),
        ("{iodepth: top}", "`stop_at` is"),
    ],
)
def test_knee_plan_key_refuses_what_is_no_climb(stop_at: str, says: str) -> None:
    with pytest.raises(PlanError, match="stop_at") as e:
        points(stop_at)
    assert says in e.value.message and "fix" not in e.value.message
    assert e.value.line == 12 and e.value.fix


def test_knee_plan_key_refuses_a_climb_that_does_not_go_up() -> None:
    text = PLAN.format(stop_at="knee", repeat=1).replace("[1, 2, 4, 8, 16]", "[1, 8, 4]")
    with pytest.raises(PlanError, match="each more load than the one before"):
        parse_plan(text, "climb.yaml")
    short = PLAN.format(stop_at="knee", repeat=1).replace("[1, 2, 4, 8, 16]", "[1, 8]")
    with pytest.raises(PlanError, match="3 values or more"):
        parse_plan(short, "climb.yaml")


def test_knee_points_carry_their_axis_and_say_it_in_their_spec() -> None:
    pts = points("{iodepth: knee}")
    assert {p.stop_at for p in pts} == {"iodepth"}
    again = type(pts[0]).from_dict(pts[0].to_dict())
    assert again.stop_at == "iodepth" and again == pts[0]
    text = PLAN.format(stop_at="knee", repeat=1).replace("    stop_at: knee\n", "")
    plain = parse_plan(text, "plain.yaml")
    assert "stop_at" not in plain.expand()[0].to_dict()  # older specs stay as they were


def test_knee_skipped_points_are_skipped_in_a_comparison_not_failed() -> None:
    from storbench.analysis.compare import UNTESTED, compare
    from storbench.analysis.summary import summarize
    from storbench.report.comparison import pair_note

    pts = [p for p in points() if p.axes["bs"] == "4k"]
    skipped = Measurement(status="skipped", error="skipped: beyond the knee of iodepth")
    base = summarize([(p, recorded(min(p.axes["iodepth"], 8))) for p in pts])
    other = summarize([(p, recorded(1) if p.axes["iodepth"] < 16 else skipped) for p in pts])
    top = other[-1]
    assert (top.skipped, top.failed, top.runs, top.errors) == (1, 0, 0, [])
    c = compare(base, other, base_name="run 1", other_name="run 2")
    m = next(m for m in c.matched if m.params["iodepth"] == 16)
    assert m.verdict == UNTESTED and pair_note(m, c) == "skipped (beyond its knee) in run 2"
    assert m.to_dict()["other"]["skipped"] == 1
