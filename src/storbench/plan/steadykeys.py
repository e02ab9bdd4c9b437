"""The plan's ``steady_state:`` key: read and checked into a :class:`SteadyState` (what
is judged with it: storbench.analysis.steady).

``steady_state: true`` takes SNIA PTS's defaults; a mapping changes any of them::

    steady_state:
      metric: iops      # iops | bw | lat (the mean latency)
      round: 60s        # each round's length (whole seconds, after the workload's ramp_time)
      window: 5         # rounds in the measurement window
      rounds: 25        # at most this many rounds
      range: 20%        # max - min of the window, at most this % of its mean
      slope: 10%        # the least-squares line's excursion across the window, at most
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from storbench.model.units import UnitError, parse_time
from storbench.plan.checks import percent
from storbench.plan.yamlpos import _describe

#: What a round can be tracked by: its IOPS, its bytes/s, or the mean latency of its I/Os.
METRICS = ("iops", "bw", "lat")
METRIC_WORDS = {"iops": "IOPS", "bw": "bytes/s", "lat": "mean latency (ns)"}


@dataclass(frozen=True)
class SteadyState:
    """How a point's steady state is looked for (the plan's ``steady_state:``)."""

    metric: str = "iops"
    round_s: float = 60.0  # the length of a round, seconds (after the workload's ramp_time)
    window: int = 5  # rounds in the measurement window
    max_rounds: int = 25
    range_pct: float = 20.0  # data excursion allowed, % of the window's mean
    slope_pct: float = 10.0  # slope excursion allowed, % of the window's mean

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> SteadyState:
        return cls(**{k: d[k] for k in cls.__dataclass_fields__ if k in d})


#: The keys of a ``steady_state:`` mapping, and the field of SteadyState each sets.
FIELDS = {
    "metric": "metric",
    "round": "round_s",
    "window": "window",
    "rounds": "max_rounds",
    "range": "range_pct",
    "slope": "slope_pct",
}
MAX_ROUNDS = 1000
FIX = "e.g. `steady_state: true` (SNIA's defaults) or `steady_state: {round: 60s, window: 5}`"


def steady_state(value: Any) -> SteadyState | None:
    """The plan's ``steady_state:`` (checked by :func:`problem` first); None: fixed time."""
    if value is None or value is False:
        return None
    if value is True:
        return SteadyState()
    got = {FIELDS[k]: _value(str(k), v) for k, v in value.items()}
    return SteadyState(**got)


def _value(key: str, v: Any) -> Any:
    if key == "metric":
        return str(v)
    if key == "round":
        return parse_time(v)
    if key in ("range", "slope"):
        return percent(v)
    return int(v)


def problem(value: Any, _: Mapping[Any, Any]) -> tuple[str, str] | None:
    """Why ``steady_state:`` is refused: (message, fix), or None."""
    if value is None or isinstance(value, bool):
        return None
    if not isinstance(value, Mapping):
        return f"`steady_state` must be true, false or a mapping, not {_describe(value)}", FIX
    for k, v in value.items():
        if k not in FIELDS:
            keys = ", ".join(FIELDS)
            return f"`steady_state` has no key {str(k)!r}", f"its keys: {keys}"
        why = _field_problem(str(k), v)
        if why:
            return f"`steady_state.{k}` {why}", FIX
    cfg = steady_state(value)
    assert cfg is not None
    if cfg.max_rounds < cfg.window:
        return (
            f"`steady_state.rounds` ({cfg.max_rounds}) is fewer than its window ({cfg.window})",
            f"allow at least {cfg.window} rounds (SNIA: 25)",
        )
    return None


def _field_problem(key: str, v: Any) -> str | None:
    if key == "metric":
        return None if v in METRICS else f"must be one of {', '.join(METRICS)}, not {v!r}"
    if key == "round":
        try:
            secs = parse_time(v) if not isinstance(v, bool) else -1.0
        except (UnitError, ValueError):
            return f"is not a time: {v!r}"
        if secs < 1 or not secs.is_integer():
            return f"must be whole seconds, at least 1 s, not {v!r}"
        return None
    if key in ("range", "slope"):
        try:
            pct = percent(v) if not isinstance(v, bool) else -1.0
        except ValueError:
            return f"must be a percentage (e.g. 20%), not {v!r}"
        return None if 0 < pct <= 100 else f"must be above 0 % and at most 100 %, not {v!r}"
    if isinstance(v, bool) or not isinstance(v, int):
        return f"must be a whole number, not {_describe(v)}"
    low = 2 if key == "window" else 1
    if not low <= v <= MAX_ROUNDS:
        return f"must be from {low} to {MAX_ROUNDS}, not {v}"
    return None
