"""The plan's ``slo:`` key: the latency objective a capacity search meets (what is judged
with it and how the search goes: storbench.analysis.capacity)::

    slo:
      latency: 2ms       # the target (a time with its unit: 500us, 2ms, 1s)
      percentile: 99     # of all the step's I/Os' total latency; `mean` for the mean
      resolution: 5%     # the search ends when the load that met it is this close to one
                         # that did not

From the command line: ``--set 'slo={latency: 2ms, percentile: 99.9}'``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from storbench.model.units import UnitError, fmt_ns, parse_time
from storbench.plan.checks import percent
from storbench.plan.yamlpos import _describe

FIX = "e.g. `slo: {latency: 2ms, percentile: 99}` (or `percentile: mean`, `resolution: 5%`)"
KEYS = ("latency", "percentile", "resolution")
_UNIT = re.compile(r"^\s*[0-9.]+(e[+-]?[0-9]+)?\s*[a-zA-Zµ]+\s*$")


@dataclass(frozen=True)
class Slo:
    """A latency objective: ``latency_ns`` at ``percentile`` (None: the mean), searched to
    ``resolution`` (a fraction of the capacity)."""

    latency_ns: float
    percentile: float | None = 99.0
    resolution: float = 0.05

    @property
    def label(self) -> str:
        which = "mean" if self.percentile is None else f"p{self.percentile:g}"
        return f"{which} ≤ {fmt_ns(self.latency_ns)}"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Slo:
        return cls(**{k: d[k] for k in cls.__dataclass_fields__ if k in d})


def problem(value: Any, _: Mapping[Any, Any]) -> tuple[str, str] | None:
    """Why ``slo:`` is refused: (message, fix), or None."""
    if value is None:
        return None
    if not isinstance(value, Mapping):
        return f"`slo` must be a mapping, not {_describe(value)}", FIX
    for k in value:
        if k not in KEYS:
            return f"`slo` has no key {str(k)!r}", f"its keys: {', '.join(KEYS)}; {FIX}"
    if "latency" not in value:
        return "`slo` names no `latency` (the target)", FIX
    lat = value["latency"]
    try:
        if isinstance(lat, bool) or not _UNIT.match(str(lat)):
            raise UnitError("no unit")
        seconds = parse_time(str(lat).replace("µs", "us"))
    except (UnitError, ValueError):
        return f"`slo.latency` is {lat!r}, not a time with its unit", "e.g. `latency: 2ms`"
    if not (0 < seconds <= 3600):
        return f"`slo.latency` is {lat!r}: more than 0 and at most an hour", FIX
    pct = value.get("percentile", 99)
    if pct != "mean":
        try:
            p = percent(pct) if not isinstance(pct, bool) else math.nan
        except ValueError:
            p = math.nan
        if not (0 < p < 100):
            return f"`slo.percentile` is {pct!r}: a percentile above 0 and below 100, or mean", FIX
    res = value.get("resolution", "5%")
    try:
        r = percent(res) if not isinstance(res, bool) else math.nan
    except ValueError:
        r = math.nan
    if not (0.1 <= r <= 50):
        return f"`slo.resolution` is {res!r}: from 0.1% to 50%", FIX
    return None


def slo(value: Any) -> Slo | None:
    """The plan's ``slo:`` (checked by :func:`problem` first); None: no capacity search."""
    if value is None:
        return None
    pct = value.get("percentile", 99)
    return Slo(
        latency_ns=parse_time(str(value["latency"]).replace("µs", "us")) * 1e9,
        percentile=None if pct == "mean" else percent(pct),
        resolution=percent(value.get("resolution", "5%")) / 100,
    )
