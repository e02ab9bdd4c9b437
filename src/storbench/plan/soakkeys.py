"""The plan's ``duration:`` and ``soak:`` keys, read and checked (what a soak run's verdict
judges: storbench.analysis.soak).

``duration: 6h`` makes every workload run that long (fio: ``runtime`` and ``time_based``);
the ``soak`` suite needs it. ``soak:`` changes the verdict's thresholds::

    soak:
      iops_cv: 10%        # the intervals' IOPS: standard deviation within 10 % of the mean
      p99_cv: 50%         # the intervals' p99 latency, the same
      trend: 5%           # the fitted line of IOPS moves at most 5 % of the mean per hour
      first_last: 10%     # the last hour's IOPS within 10 % of the first hour's
      stalls: 0           # intervals that completed no I/O, at most
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from storbench.model.units import UnitError, parse_time
from storbench.plan.checks import percent
from storbench.plan.yamlpos import _describe

DURATION_FIX = "e.g. `duration: 6h` (or --set duration=30m); whole seconds, at least 1 s"
SOAK_FIX = "e.g. `soak: {iops_cv: 10%, trend: 5%}` (iops_cv, p99_cv, trend, first_last, stalls)"


@dataclass(frozen=True)
class SoakLimits:
    """When a soak run is stable: each figure at most its limit (percent, or a count)."""

    iops_cv: float = 10.0
    p99_cv: float = 50.0
    trend: float = 5.0  # % of the mean per hour
    first_last: float = 10.0
    stalls: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


def duration_s(value: Any) -> int | None:
    """``duration:`` in whole seconds, or None when it is left out."""
    return None if value is None else int(parse_time(value))


def duration_problem(value: Any, _: Mapping[Any, Any]) -> tuple[str, str] | None:
    if value is None:
        return None
    try:
        secs = parse_time(value) if not isinstance(value, bool) else -1.0
    except (UnitError, ValueError):
        return f"`duration` is not a time: {value!r}", DURATION_FIX
    if secs < 1 or not secs.is_integer():
        return f"`duration` must be whole seconds, at least 1 s, not {value!r}", DURATION_FIX
    return None


def soak_limits(value: Any) -> SoakLimits:
    """The plan's ``soak:`` (checked by :func:`soak_problem` first)."""
    if not value:
        return SoakLimits()
    got = {str(k): _number(str(k), v) for k, v in value.items()}
    return SoakLimits(**got)


def _number(key: str, v: Any) -> float | int:
    return int(v) if key == "stalls" else percent(v)


def soak_problem(value: Any, _: Mapping[Any, Any]) -> tuple[str, str] | None:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        return f"`soak` must be a mapping of limits, not {_describe(value)}", SOAK_FIX
    names = [f.name for f in fields(SoakLimits)]
    for k, v in value.items():
        if k not in names:
            return f"`soak` has no key {str(k)!r}", f"its keys: {', '.join(names)}"
        if k == "stalls":
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                return f"`soak.stalls` must be a whole number ≥ 0, not {_describe(v)}", SOAK_FIX
            continue
        try:
            pct = _number(str(k), v) if not isinstance(v, bool) else -1.0
        except ValueError:
            return f"`soak.{k}` must be a percentage (e.g. 10%), not {v!r}", SOAK_FIX
        if not 0 < pct <= 1000:
            return f"`soak.{k}` must be above 0 % and at most 1000 %, not {v!r}", SOAK_FIX
    return None
