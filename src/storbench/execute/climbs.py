"""The climbs of a run's sweeps that stop at their knee (``stop_at``, analysis/climb.py):
which points the runner skips, and why.

A *climb* is the points of one workload on one target (and hosts) that differ only in the
axis named by ``stop_at``, in the order of its values. Each measured point adds a step to
its climb; once the rule of analysis/climb.py says stop, every point of that climb with
more load than the step that showed it is skipped: recorded as ``skipped`` with the
figures that stopped the climb, never measured, never silently absent. Repetitions share
their climb (the first measurement of each value decides), so every repetition measures
the same values. A resumed run rebuilds its climbs from what it recorded before.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, field

from storbench.analysis import climb
from storbench.model.metrics import Measurement
from storbench.plan import Point
from storbench.plan.workloads import load_value


@dataclass
class _Climb:
    axis: str
    steps: dict[float, climb.Step | None] = field(default_factory=dict)
    stopped: climb.Stop | None = None
    stopped_at: float | None = None  # the load of the step that showed it


def _key(p: Point, axis: str) -> Hashable:
    others = tuple(sorted((k, str(v)) for k, v in p.axes.items() if k != axis))
    hosts = tuple(h.label for h in p.hosts)
    return (p.workload, p.target, hosts, others)


class Climbs:
    """The climbs of a run's points: :meth:`skip` before a point runs, :meth:`observe`
    once it is measured."""

    def __init__(self) -> None:
        self._climbs: dict[Hashable, _Climb] = {}

    @classmethod
    def of(cls, points: list[Point], measured: Callable[[int], Measurement | None]) -> Climbs:
        """The climbs of ``points`` (a whole run's), with what ``measured`` says each
        point's stored measurement is (a resumed run's)."""
        climbs = cls()
        for p in points:
            if p.stop_at is not None and (meas := measured(p.index)) is not None:
                climbs.observe(p, meas)
        return climbs

    def _climb(self, p: Point) -> tuple[_Climb, float] | None:
        axis = p.stop_at
        if axis is None or axis not in p.axes:
            return None
        value = load_value(axis, p.axes[axis])
        if value is None:
            return None
        c = self._climbs.setdefault(_key(p, axis), _Climb(axis))
        return c, value

    def skip(self, p: Point) -> str | None:
        """Why point ``p`` is skipped (its climb stopped below its load), or None."""
        found = self._climb(p)
        if found is None:
            return None
        c, value = found
        if c.stopped is None or c.stopped_at is None or value <= c.stopped_at:
            return None
        return (
            f"skipped: beyond the knee of {c.axis} (at {c.axis}={c.stopped.knee}): "
            f"{c.stopped.reason}"
        )

    def observe(self, p: Point, meas: Measurement) -> climb.Stop | None:
        """Point ``p`` measured ``meas``: its climb's new stop, when this step shows one."""
        found = self._climb(p)
        if found is None or meas.status == "skipped":
            return None
        c, value = found
        if value in c.steps or c.stopped is not None:
            return None  # another repetition of a value the climb has; or it stopped
        c.steps[value] = climb.step_of(c.axis, p.axes[c.axis], meas)
        ordered = [c.steps[v] for v in sorted(c.steps) if v <= value]
        made = climb.stop(c.axis, [s for s in ordered if s is not None])
        if made is None:
            return None
        c.stopped, c.stopped_at = made, value
        return made
