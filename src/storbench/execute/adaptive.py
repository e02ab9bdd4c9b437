"""What a run decides as it goes, from what it measured: the climbs that stop at their knee
(climbs.py: the points beyond are recorded as skipped), the capacity searches that add
their next step (searches.py) and the pairs repeated until their verdict is known
(repetitions.py), each rebuilt from the run's records when it is resumed.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from storbench import engines
from storbench.analysis import climb
from storbench.engines.base import RunContext
from storbench.execute.climbs import Climbs
from storbench.execute.later import Later
from storbench.execute.repetitions import Repetitions
from storbench.execute.searches import Searches
from storbench.model.metrics import Measurement
from storbench.plan import Point
from storbench.store import Store


class Adaptive:
    """What a run decides as it goes: the climbs that stop at their knee (climbs.py) and
    the capacity searches that add their next step (searches.py)."""

    def __init__(self, store: Store, run: RunContext, points: list[Point], later: Later) -> None:
        self.store, self.run, self.later = store, run, later
        self.climbs = _climbs(store, run.run_id, points)
        self.searches = _searches(store, run.run_id, points)
        self.repetitions = _repetitions(store, run.run_id, points)
        self.points = list(points)
        #: whether the run chooses its next points from what it measures
        self.decides = any(p.stop_at or p.slo or p.until for p in points)
        pending = {p.index for p in points}
        for nxt in [  # a resumed run's
            *self.searches.unfinished(pending),
            *self.repetitions.unfinished(pending),
        ]:
            store.runs.add_point(run.run_id, nxt)
            self.points.append(nxt)

    def skipped(self, point: Point) -> Measurement | None:
        """The measurement of ``point`` when it lies beyond its climb's knee (recorded as
        skipped), or None: it runs."""
        why = self.climbs.skip(point)
        if why is None:
            return None
        skipped = Measurement(status="skipped", error=why)
        self.later.defer(_record_skipped, self.store, self.run.run_id, point, skipped)
        self.repetitions.observe(point, skipped)  # its pair is done
        return skipped

    def measured(self, point: Point, meas: Measurement, n: int) -> None:
        """``point`` (the ``n``-th) measured ``meas``: its climb may stop, its search's
        next step runs next, and so do its pair's next repetitions."""
        stopped = self.climbs.observe(point, meas)
        if stopped is not None:
            self.later.defer(_climb_stopped, self.run, point, stopped)
        nxt = self.searches.observe(point, meas)
        again = [nxt] if nxt is not None else self.repetitions.observe(point, meas)
        for i, p in enumerate(again):
            self.store.runs.add_point(self.run.run_id, p)
            self.points.insert(n + i, p)


def measured_of(store: Store, run_id: int) -> Callable[[int], Measurement | None]:
    """What run ``run_id`` recorded of its point N, as a function of N (None: nothing)."""

    def measured(index: int) -> Measurement | None:
        row = store.measurements.of_point(run_id, index)
        return row.measurement if row is not None else None

    return measured


def _climbs(store: Store, run_id: int, points: list[Point]) -> Climbs:
    """The climbs of the run's sweeps that stop at their knee (climbs.py), with what the
    run recorded before (a resume); none to follow when no point has ``stop_at``."""
    if not any(p.stop_at for p in points):
        return Climbs()

    return Climbs.of(store.runs.points(run_id), measured_of(store, run_id))


def _searches(store: Store, run_id: int, points: list[Point]) -> Searches:
    """The run's capacity searches (searches.py), with the steps it recorded before (a
    resume); none when no point has an ``slo``."""
    if not any(p.slo for p in points):
        return Searches(0)

    return Searches.of(store.runs.points(run_id), measured_of(store, run_id))


def _repetitions(store: Store, run_id: int, points: list[Point]) -> Repetitions:
    """The run's pairs repeated until their verdict is known (repetitions.py), with what
    the run recorded before (a resume); none when no point has the rule."""
    if not any(p.until for p in points):
        return Repetitions(0)

    return Repetitions.of(store.runs.points(run_id), measured_of(store, run_id))


def _climb_stopped(run: RunContext, point: Point, stopped: climb.Stop) -> None:
    axis = point.stop_at
    run.events.add(
        "knee",
        f"point {point.index + 1}: the climb of {axis} stops at its knee, {axis}="
        f"{stopped.knee}: {stopped.reason}; its points above {axis}={stopped.last} are skipped",
        {"point": point.index, "axis": axis, "knee": stopped.knee, "last": stopped.last},
    )


def _record_skipped(store: Store, run_id: int, point: Point, meas: Measurement) -> None:
    """A point beyond its climb's knee: recorded as skipped (never measured, never
    absent), with why."""
    now = time.time()
    store.measurements.record(
        run_id,
        point,
        meas,
        engine=engines.get(point.engine).label,
        command=None,
        job_file=None,
        raw_output=None,
        stderr=None,
        started_at=now,
        ended_at=now,
    )
