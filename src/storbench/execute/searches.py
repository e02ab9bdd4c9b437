"""The capacity searches of a run (``slo:``, analysis/capacity.py): after each step, the
point of the next one.

A plan with ``slo:`` expands each workload (on each target, with each value of its other
axes) to one point: the search's *probe*, the workload as planned. Once a step is measured,
:func:`~storbench.analysis.capacity.next_rate` says what the next offers, and the runner
runs it next: a point of its own (its index after the run's last), stored as the run goes,
with fio's ``rate_iops`` (the offered rate split over its jobs and hosts, whole I/Os per
second per job: the offered rate is what they add up to) and ``rate_process=poisson``.
A resumed run rebuilds its searches from the steps it recorded, and goes on with those
that were not done.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field

from storbench.analysis import capacity
from storbench.model.metrics import Measurement
from storbench.plan import Point
from storbench.plan.model import point_key

#: The most steps a search takes (a probe, bracketing down to 1/1024 of it, bisection to
#: 0.1 %: 22): beyond it, the search stops where it is.
MAX_STEPS = 30


@dataclass
class _Search:
    probe: Point
    steps: list[tuple[Point, capacity.Step | None]] = field(default_factory=list)
    indexes: set[int] = field(default_factory=set)  # every point of it the run stored
    done: bool = False


def _key(p: Point) -> Hashable:
    axes = tuple(sorted((k, str(v)) for k, v in p.axes.items() if k != "offered_iops"))
    return (p.workload, p.target, tuple(h.label for h in p.hosts), axes, p.repetition)


class Searches:
    """The searches of a run's points: :meth:`observe` each measured step."""

    def __init__(self, next_index: int) -> None:
        self.next_index = next_index
        self._searches: dict[Hashable, _Search] = {}

    @classmethod
    def of(cls, points: list[Point], measured: Callable[[int], Measurement | None]) -> Searches:
        """The searches of ``points`` (a whole run's, as stored), with the steps
        ``measured`` says were recorded (a resumed run's)."""
        searches = cls(max((p.index for p in points), default=-1) + 1)
        for p in sorted(points, key=lambda p: p.index):
            if p.slo is None:
                continue
            search = searches._searches.setdefault(_key(p), _Search(p))
            search.indexes.add(p.index)
            if p.offered_iops is None:
                search.probe = p
            meas = measured(p.index)
            if meas is not None:
                search.steps.append((p, capacity.step_of(p.slo, p.offered_iops, meas)))
        return searches

    def unfinished(self, pending: set[int]) -> list[Point]:
        """The next step of each search whose steps were all measured (none of them in
        ``pending``, the indexes still to run) but that is not done: a resumed run's."""
        out = []
        for search in self._searches.values():
            if search.steps and not search.indexes & pending:
                nxt = self._next(search)
                if nxt is not None:
                    out.append(nxt)
        return out

    def observe(self, point: Point, meas: Measurement) -> Point | None:
        """Step ``point`` measured ``meas``: the point of its search's next step, or None
        (not a step, or its search is done)."""
        if point.slo is None:
            return None
        search = self._searches.setdefault(_key(point), _Search(point))
        search.steps.append((point, capacity.step_of(point.slo, point.offered_iops, meas)))
        return self._next(search)

    def _next(self, search: _Search) -> Point | None:
        slo = search.probe.slo
        if search.done or slo is None or len(search.steps) >= MAX_STEPS:
            return None
        rate = capacity.next_rate(slo, [s for _, s in search.steps])
        step = None if rate is None else self._step(search.probe, rate)
        offered = {p.offered_iops for p, _ in search.steps}
        if step is None or step.offered_iops in offered:  # nothing new to learn
            search.done = True
            return None
        self.next_index += 1
        return step

    def _step(self, probe: Point, rate: float) -> Point:
        """The probe's workload offered ``rate`` I/Os per second (module docstring)."""
        jobs = _whole(probe.params.get("numjobs", 1)) * max(1, len(probe.hosts))
        per_job = max(1, round(rate / jobs))
        params = {**probe.params, "rate_iops": per_job, "rate_process": "poisson"}
        offered = per_job * jobs
        return dataclasses.replace(
            probe,
            index=self.next_index,
            key=point_key(probe.target, probe.workload, params, probe.hosts),
            params=params,
            axes={**probe.axes, "offered_iops": offered},
            offered_iops=offered,
        )


def _whole(value: object) -> int:
    try:
        return max(1, int(str(value)))
    except ValueError:
        return 1
