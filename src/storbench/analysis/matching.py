"""How the points of two sides pair up in a comparison (storbench.analysis.compare): the
match key of a point (workload name and parameters as text), the options that each side
sets to one value but the two sides set differently (``differs``: left out of the match),
and the orderings of iodepth and block size values for the summary's groups."""

from __future__ import annotations

import json
from typing import Any

from storbench.analysis.summary import PointSummary
from storbench.model.units import UnitError, parse_size


def text(v: Any) -> str:
    if isinstance(v, bool):
        return "1" if v else "0"
    return str(v)


def param_key(s: PointSummary, ignore: frozenset[str] = frozenset()) -> str:
    params = sorted((k, text(v)) for k, v in s.params.items() if k not in ignore)
    return json.dumps([s.workload, params])


def constant_options(items: list[PointSummary]) -> dict[str, str]:
    """Options that every point of ``items`` sets, to the same value."""
    if not items:
        return {}
    first = {k: text(v) for k, v in items[0].params.items()}
    for s in items[1:]:
        first = {k: v for k, v in first.items() if text(s.params.get(k, object())) == v}
    return first


def differing_options(
    base: list[PointSummary], other: list[PointSummary]
) -> dict[str, tuple[Any, Any]]:
    """Options constant within each side but different between the sides: what the two runs
    were set up to compare (ioengine, direct, ...). Matching ignores them."""
    cb, co = constant_options(base), constant_options(other)
    return {k: (base[0].params[k], other[0].params[k]) for k in cb if k in co and cb[k] != co[k]}


def with_target(items: list[PointSummary], keys: list[str]) -> list[str]:
    return [s.target.label + "\0" + k for s, k in zip(items, keys, strict=True)]


def size_key(v: Any) -> tuple[int, float, str]:
    try:
        return (0, float(parse_size(v)), "")
    except (UnitError, ValueError):
        return (1, 0.0, str(v))


def num_key(v: Any) -> tuple[int, float, str]:
    try:
        return (0, float(v), "")
    except (TypeError, ValueError):
        return (1, 0.0, str(v))
