"""A point's result read while the next point's engine starts (execute/runner.py, issue 26):
the engine reports its process's end (``Session.run_ended``) before it reads and parses
what it printed (``Ended.finish``), and the runner starts the next point first where
nothing waits for that result; fail-fast then stops the next point it started, as if it
had never begun. The session here is a stand-in that says when its process would start
(engines.process.started, as fio's does) and ends at once; the measurements are what
storbench made of recorded fio outputs."""

from __future__ import annotations

import copy
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from storbench.engines import process
from storbench.engines.base import Ended, PointResult, RunContext, prepare, run_ended
from storbench.execute.runner import Outcome, _Points, _Stop
from storbench.execute.runstore import StoreEvents, StoreSeries
from storbench.hosts.netpath import Paths
from storbench.model.metrics import Measurement
from storbench.model.series import Interval
from storbench.plan import Point, parse_plan
from storbench.store import Store

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the harness modules
from stored_runs import recorded

PLAN = """\
name: three
targets:
  - file: {dir}/x.dat
workloads:
  - name: w
    rw: randread
    bs: 4k
    size: 1m
    iodepth: [1, 2, 4]
{more}"""

OK = recorded("psync-randread-json")
FAILED = Measurement(status="failed", error="fio: engine refused the file")


class _Session:
    """Says what happens, in order: each point's engine process starting (``start N``:
    what waits for that start is done then), ending (``exit N``), being read (``read
    N``), and the head start on a point (``prepare N``)."""

    def __init__(self, said: list[str], ctx: RunContext, results: dict[int, Measurement]):
        self.said, self.ctx, self.results = said, ctx, results
        self.stop_in: int | None = None  # the point during which a Ctrl-C comes

    def prepare(self, point: Point) -> None:
        self.said.append(f"prepare {point.index + 1}")

    def run(self, point: Point) -> PointResult:
        return self.run_ended(point).finish()

    def run_ended(self, point: Point) -> Ended:
        n = point.index + 1
        started = time.time()
        self.said.append(f"start {n}")
        process.started()  # the engine's process has started
        if self.stop_in == n:
            self.ctx.should_stop.request()  # type: ignore[attr-defined]
        interrupted = self.ctx.should_stop()  # a stop asked by now stops it
        self.said.append(f"exit {n}")
        ended = time.time()

        def finish() -> PointResult:
            self.said.append(f"read {n}")
            self.ctx.series(point, [Interval(0, 100, 100, "read", 10, 40960, 1000.0)])
            return PointResult(
                measurement=copy.deepcopy(self.results.get(point.index, OK)),
                command=["stand-in", str(n)],
                job_text=None,
                raw_output="",
                stderr="",
                started_at=started,
                ended_at=ended,
                interrupted=interrupted,
            )

        return Ended(started, ended, interrupted, finish)

    def close(self) -> None:
        pass


class _Observer:
    def __init__(self, said: list[str], store: Store, run_id: int) -> None:
        self.said, self.store, self.run_id = said, store, run_id

    def point_started(self, point: Point, n: int, total: int) -> None:
        self.said.append(f"started {n}")

    def point_finished(self, point: Point, meas: Measurement, n: int, *_: Any) -> None:
        recorded_by_now = self.store.measurements.of_point(self.run_id, point.index)
        assert recorded_by_now is not None  # the record comes before its progress line
        self.said.append(f"finished {n} {meas.status}")

    def point_interrupted(self, point: Point) -> None:
        self.said.append(f"interrupted {point.index + 1}")

    def round_finished(self, *_: Any) -> None: ...
    def intervals(self, *_: Any) -> None: ...
    def phase(self, *_: Any) -> None: ...
    def finding(self, *_: Any) -> None: ...


def _stored(tmp_path: Path, more: str = "", plan: str = PLAN) -> tuple[Store, int, list[Point]]:
    """A new run of the plan's points (three) in a database of its own."""
    points = parse_plan(plan.format(dir=tmp_path, more=more), "p.yaml").expand()
    store = Store(str(tmp_path / "r.db"))
    run_id = store.runs.create(
        kind="run",
        name="three",
        source="test",
        plan_text="name: three\n",
        overrides=[],
        inventory={},
        fio_version="fio-3.33",
        storbench_version="0.1.0",
        argv=[],
        points=points,
    )
    return store, run_id, points


def _run(
    tmp_path: Path,
    results: dict[int, Measurement] | None = None,
    *,
    fail_fast: bool = False,
    stop_in: int | None = None,
    more: str = "",
    plan: str = PLAN,
) -> tuple[list[str], Outcome, Store, int]:
    store, run_id, points = _stored(tmp_path, more, plan)
    said: list[str] = []
    stop = _Stop()
    observer = _Observer(said, store, run_id)
    series = StoreSeries(store, run_id, observer)
    ctx = RunContext(
        run_id=run_id,
        workdir=str(tmp_path),
        total=len(points),
        events=StoreEvents(store, run_id),
        should_stop=stop,
        series=series,
    )
    session = _Session(said, ctx, results or {})
    session.stop_in = stop_in
    outcome = Outcome(status="completed")
    each = _Points(
        store, ctx, series, points, {"fio": session}, {}, Paths({}, {}), observer, outcome, stop
    )
    each.fail_fast = fail_fast
    each.all()
    return said, outcome, store, run_id


def test_runner_overlap_reads_a_point_once_the_next_has_started(tmp_path: Path) -> None:
    said, outcome, store, run_id = _run(tmp_path)
    assert said == [
        "started 1",
        "start 1",
        "prepare 2",  # the next point's head start, while point 1 starts up
        "exit 1",
        "start 2",  # point 2's engine first: point 1 is read, recorded and said after
        "read 1",
        "finished 1 ok",
        "started 2",
        "prepare 3",
        "exit 2",
        "start 3",
        "read 2",
        "finished 2 ok",
        "started 3",
        "exit 3",
        "read 3",  # the last point: nothing follows, read at once
        "finished 3 ok",
    ]
    assert outcome.status == "completed" and outcome.ran == 3 and outcome.failed == 0
    assert [m.point_idx for m in store.measurements.of_run(run_id)] == [0, 1, 2]
    assert all(store.series.of_point(run_id, i) for i in range(3))


def test_runner_overlap_fail_fast_stops_the_point_it_started(tmp_path: Path) -> None:
    """Point 1 failed; it is read once point 2's engine started, so fail-fast stops point 2
    (a stop the engine sees) and forgets it: never said, recorded, nor left in a series."""
    said, outcome, store, run_id = _run(tmp_path, {0: FAILED}, fail_fast=True)
    assert said == [
        "started 1",
        "start 1",
        "prepare 2",
        "exit 1",
        "start 2",
        "read 1",
        "finished 1 failed",
        "exit 2",  # stopped: the run asked it to, the moment point 1 was read
        "read 2",
    ]
    assert outcome.status == "failed" and outcome.failed == 1 and outcome.ran == 1
    assert [m.point_idx for m in store.measurements.of_run(run_id)] == [0]
    assert store.series.of_point(run_id, 0) and not store.series.of_point(run_id, 1)


def test_runner_overlap_without_fail_fast_a_failure_goes_on(tmp_path: Path) -> None:
    said, outcome, _, _ = _run(tmp_path, {0: FAILED})
    assert said[said.index("start 2") :][:3] == ["start 2", "read 1", "finished 1 failed"]
    assert outcome.status == "completed" and outcome.failed == 1 and outcome.ran == 3


def test_runner_overlap_a_point_stopped_by_ctrl_c_is_read_at_once(tmp_path: Path) -> None:
    """Ctrl-C during point 2: it is read before anything else (whether it is kept is
    decided now) and the run ends there; point 1, read while point 2 started, is kept."""
    said, outcome, store, run_id = _run(tmp_path, stop_in=2)
    assert said[said.index("start 2") :] == [
        "start 2",
        "read 1",
        "finished 1 ok",
        "started 2",
        "prepare 3",
        "exit 2",
        "read 2",
        "interrupted 2",
    ]
    assert outcome.status == "interrupted"
    assert [m.point_idx for m in store.measurements.of_run(run_id)] == [0]


@pytest.mark.parametrize(
    "more",
    [
        "    stop_at: knee\n",  # a climb: its knee decides whether the next point runs
        "steady_state: {round: 1s, window: 3, rounds: 3}\n",  # read round by round
    ],
)
def test_runner_overlap_not_past_a_point_the_next_depends_on(tmp_path: Path, more: str) -> None:
    said, outcome, _, _ = _run(tmp_path, more=more)
    assert outcome.status == "completed"
    reads = [s for s in said if s.startswith(("read 1", "start 2"))]
    assert reads[0] == "read 1"  # point 1 read before point 2 starts


UNTIL = """\
name: ab
targets: [{{file: {dir}/a.dat}}, {{file: {dir}/b.dat}}]
global: {{size: 1m, runtime: 1, time_based: 1}}
repeat: {{until: significant, max: 4, equal: 0.1%}}
workloads:
  - {{name: r, rw: randread, bs: 4k}}
{more}"""


def test_runner_overlap_not_past_a_side_of_a_pair_repeated_until_its_verdict(
    tmp_path: Path,
) -> None:
    """``repeat: {until: ...}``: whether a pair runs again follows from each side's
    measurement (execute/repetitions.py), so each is read before the next starts."""
    said, outcome, _, _ = _run(tmp_path, plan=UNTIL)
    assert outcome.status == "completed"
    for n in range(1, len([s for s in said if s.startswith("start ")])):
        assert said.index(f"read {n}") < said.index(f"start {n + 1}")


def test_runner_overlap_an_engine_without_run_ended_runs_whole() -> None:
    """engines/base.py: a session with only ``run`` (a plugin's) is run whole, and has no
    head start to take."""
    result = PointResult(OK, ["toy"], None, "", "", 1.0, 2.0)

    class Whole:
        def run(self, point: Point) -> PointResult:
            return result

        def close(self) -> None:
            pass

    point = parse_plan(PLAN.format(dir="/tmp", more=""), "p.yaml").expand()[0]
    ended = run_ended(Whole(), point)
    assert (ended.started_at, ended.ended_at, ended.interrupted) == (1.0, 2.0, False)
    assert ended.finish() is result
    prepare(Whole(), point)  # nothing to do, nothing raised


def test_runner_overlap_a_point_clears_its_series_only_where_there_may_be_one(
    tmp_path: Path,
) -> None:
    """A point's start clears what an earlier try of it left (runstore.StoreSeries.clear):
    in a new run only a point this process wrote rows of can have any (the one fail-fast
    stopped); a resumed run's points may all have some."""
    store, run_id, points = _stored(tmp_path)
    row = Interval(0, 100, 100, "read", 10, 40960, 1000.0)
    series = StoreSeries(store, run_id)
    assert not series.earlier and not store.series.has(run_id)
    series(points[0], [row])
    assert store.series.has(run_id, 0) and not store.series.has(run_id, 1)
    series.clear(0)
    assert not store.series.has(run_id)
    store.series.add(run_id, 1, [row])  # a try of point 2 before this process (resume)
    resumed = StoreSeries(store, run_id)
    assert resumed.earlier
    resumed.clear(1)
    assert not store.series.has(run_id) and not store.host_samples.has(run_id, 1)
