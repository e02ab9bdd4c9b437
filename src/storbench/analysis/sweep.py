"""Sweeps: how a figure changes along one swept option (numjobs, iodepth, bs, ...)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from storbench.analysis.summary import PointSummary


@dataclass
class Sweep:
    axis: str
    fixed: dict[str, Any]  # the other axes' values, plus the target
    values: list[tuple[Any, float, PointSummary]]  # (axis value, figure, point), in plan order

    @property
    def best(self) -> tuple[Any, float, PointSummary]:
        return max(self.values, key=lambda v: v[1])

    def saturation(self, fraction: float = 0.95) -> tuple[Any, float, PointSummary]:
        """The first value (in sweep order) that reaches ``fraction`` of the best figure."""
        top = self.best[1]
        for v in self.values:
            if v[1] >= fraction * top:
                return v
        return self.best


def sweeps(
    summaries: list[PointSummary],
    axis: str,
    figure: Callable[[PointSummary], float] = lambda s: s.total_iops,
) -> list[Sweep]:
    """Group points that differ only in ``axis``; one sweep per group, in plan order."""
    groups: dict[str, Sweep] = {}
    for s in summaries:
        if axis not in s.axes or s.runs == 0:
            continue
        fixed = {
            "target": s.target.label,
            "workload": s.workload,
            **{k: v for k, v in s.axes.items() if k != axis},
        }
        key = repr(sorted(fixed.items(), key=lambda kv: kv[0]))
        sw = groups.setdefault(key, Sweep(axis=axis, fixed=fixed, values=[]))
        sw.values.append((s.axes[axis], figure(s), s))
    return list(groups.values())
