"""Repetitions until the verdict is known (``repeat: {until: significant}``,
analysis/sequential.py): after each pair, the pair's next repetitions, or none.

The plan expands to ``min`` rounds, as ``repeat: min`` would. Points that differ only in
what the rule compares (the target, or the axis it names) are a *pair*: side A (the first
target or value) and side B. Once every repetition of a pair stored so far is measured and
both sides have as many, the pair is looked at; while its verdict is not known and it has
fewer than ``max`` repetitions a side, the runner runs A again, then B (so drift over time
cancels instead of favouring one side): each a point of its own, after the run's last
index, stored as the run goes. A resumed run rebuilds its pairs from what it recorded and
goes on with those not done. A pair one of whose repetitions carries a finding that says
its number is not the storage's (the page cache answered...) stops: it is not comparable,
however often it runs; so does one a side of which lies beyond its climb's knee
(``stop_at: knee``: skipped).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field

from storbench import hooks
from storbench.analysis import climb, sequential
from storbench.model.findings import unjudged
from storbench.model.metrics import Measurement
from storbench.plan import Point
from storbench.plan.untilkeys import Until


@dataclass
class _Pair:
    sides: tuple[list[Point], list[Point]] = field(default_factory=lambda: ([], []))
    figures: dict[int, float | None] = field(default_factory=dict)  # by point index
    measured: dict[int, Measurement] = field(default_factory=dict)
    done: bool = False

    def unfit(self) -> bool:
        """Whether a repetition found its number is not the storage's (page-cache...: the
        pair is not comparable, however often it runs). A repetition's findings are known
        once it is recorded, while the next runs: the pair's earlier ones decide."""
        return any(unjudged(m.findings) for m in self.measured.values())

    def skipped(self) -> bool:
        """Whether a side lies beyond its climb's knee (``stop_at``): never measured again."""
        return any(m.status == "skipped" for m in self.measured.values())

    def stored(self) -> list[Point]:
        return [*self.sides[0], *self.sides[1]]


def figure(point: Point, meas: Measurement) -> float | None:
    """What a repetition is judged by (compare's rule): its total IOPS, or, when the
    workload caps its own rate, the mean total latency of its I/Os (ns); None: it has no
    figures (failed, skipped). The figures of a climb's step (analysis/climb.py)."""
    step = climb.step_of("iodepth", None, meas)
    if step is None:
        return None
    capped = any(str(point.params.get(k, "")) not in ("", "0") for k in ("rate", "rate_iops"))
    return step.latency_ns if capped else step.throughput


def _key(p: Point, rule: Until) -> Hashable:
    axes = tuple(sorted((k, str(v)) for k, v in p.axes.items() if k != rule.compare))
    target = "" if rule.compare == "target" else p.target.label
    return (p.workload, target, tuple(h.label for h in p.hosts), axes)


class Repetitions:
    """The pairs of a run's points: :meth:`observe` each measured repetition."""

    def __init__(self, next_index: int) -> None:
        self.next_index = next_index
        self._pairs: dict[Hashable, _Pair] = {}

    @classmethod
    def of(
        cls, points: Iterable[Point], measured: Callable[[int], Measurement | None]
    ) -> Repetitions:
        """The pairs of ``points`` (a whole run's, as stored), with what ``measured`` says
        each recorded (a resumed run's)."""
        points = sorted(points, key=lambda p: p.index)
        reps = cls(max((p.index for p in points), default=-1) + 1)
        for p in points:
            if p.until is None or p.side is None:
                continue
            pair = reps._pairs.setdefault(_key(p, p.until), _Pair())
            pair.sides[p.side].append(p)
            meas = measured(p.index)
            if meas is not None:
                pair.figures[p.index] = figure(p, meas)
                pair.measured[p.index] = meas
        return reps

    def unfinished(self, pending: set[int]) -> list[Point]:
        """The next repetitions of each pair whose stored ones were all measured (none in
        ``pending``) but whose verdict is not known: a resumed run's."""
        out = []
        for pair in self._pairs.values():
            if not {p.index for p in pair.stored()} & pending:
                out.extend(self._next(pair))
        return out

    def observe(self, point: Point, meas: Measurement) -> list[Point]:
        """Repetition ``point`` measured ``meas``: its pair's next two (A, then B), or none
        (not a pair's, the pair waits for its other side, or its verdict is known)."""
        if point.until is None or point.side is None:
            return []
        pair = self._pairs.setdefault(_key(point, point.until), _Pair())
        if all(p.index != point.index for p in pair.sides[point.side]):
            pair.sides[point.side].append(point)
        pair.figures[point.index] = figure(point, meas)
        pair.measured[point.index] = meas
        return self._next(pair)

    def _next(self, pair: _Pair) -> list[Point]:
        a, b = pair.sides
        if pair.done or not a or not b or len(a) != len(b):
            return []
        if any(p.index not in pair.figures for p in pair.stored()):
            return []  # a repetition still to run
        rule = a[0].until
        assert rule is not None
        if len(a) < rule.min:  # the plan's own rounds are still to come
            return []
        seen = sequential.look(_figures(pair, a), _figures(pair, b), rule)
        if (
            seen.state != sequential.CONTINUE
            or len(a) >= rule.max
            or pair.unfit()
            or pair.skipped()
        ):
            pair.done = True
            return []
        return [self._again(a[-1], len(a)), self._again(b[-1], len(b))]

    def _again(self, last: Point, rep: int) -> Point:
        """``last`` once more, as repetition ``rep`` (its engine's seed for that round)."""
        params = dict(last.params)
        rule = last.until
        assert rule is not None
        extra = hooks.engine_keys(last.engine).expander([last.target], rule.max)(
            last.target, params, rep
        )
        self.next_index += 1
        return dataclasses.replace(
            last, index=self.next_index - 1, repetition=rep, params=params, extra=extra
        )


def _figures(pair: _Pair, side: list[Point]) -> list[float]:
    return [f for p in side if (f := pair.figures.get(p.index)) is not None]
