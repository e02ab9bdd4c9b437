"""The capacity suite's answer (``report: capacity``): each search of a run with ``slo:``,
its steps in the order they ran, and what it found (analysis/capacity.py). Plain data, in
base units; report/capacity.py draws it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from storbench.analysis.capacity import Capacity, Step, capacity
from storbench.analysis.summary import PointSummary
from storbench.plan.slokeys import Slo


@dataclass
class CapacityStep:
    """A step as the answer lists it: the point (its number, from 1), what it offered
    (None: the probe) and what it showed (None: it failed)."""

    point: int
    offered_iops: int | None
    step: Step | None


@dataclass
class CapacityRow:
    """One search: a workload on a target (with its other axes' values), its objective,
    its answer and its steps in the order they ran."""

    target: str
    workload: str
    axes: dict[str, Any]
    slo: Slo
    capacity: Capacity
    steps: list[CapacityStep]


@dataclass
class CapacityAnswer:
    kind: ClassVar[str] = "capacity"
    rows: list[CapacityRow]


def capacity_answer(
    summaries: list[PointSummary], inventory: dict[str, Any], series: object
) -> CapacityAnswer:
    """Each search of a run with ``slo:`` (its steps: the points with that objective, by
    workload, target and other axes) and what it found."""
    groups: dict[tuple[Any, ...], list[PointSummary]] = {}
    for s in sorted(summaries, key=lambda s: s.index):
        if s.slo is None:
            continue
        axes = tuple(sorted((k, str(v)) for k, v in s.axes.items() if k != "offered_iops"))
        groups.setdefault((s.workload, s.target.label, axes), []).append(s)
    rows = []
    for (workload, target, _), group in groups.items():
        slo = group[0].slo
        assert slo is not None
        steps = [CapacityStep(s.index + 1, s.offered_iops, s.capacity_step) for s in group]
        axes = {k: v for k, v in group[0].axes.items() if k != "offered_iops"}
        found = capacity(slo, [c.step for c in steps])
        rows.append(CapacityRow(target, workload, axes, slo, found, steps))
    return CapacityAnswer(rows)
