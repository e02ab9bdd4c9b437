"""``RUN:filter`` references: a run and a subset of its points.

``12:target=/dev/sdb``, ``latest:workload=rand4k``, ``latest~1:bs=4k,iodepth=32``: the text
before the first ``:`` names the run (resolved by the store), the rest is ``key=value``
pairs separated by commas; a point is kept when it matches every pair.

- ``target`` matches the target's path or its name (``name:`` in the plan);
- ``workload`` matches the workload name;
- any other key is a workload parameter (a fio option: ``rw``, ``bs``, ``iodepth``, …). Values
  are equal when their text is (ignoring case), or when both read as the same number or
  fio size (``bs=4096`` matches ``4k``).

A key no point has, or a filter that keeps nothing, is an error that names what there is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from storbench.analysis.summary import PointSummary
from storbench.model.errors import UserError, suggestion
from storbench.model.units import UnitError, parse_size

SPECIAL_KEYS = ("target", "workload")


@dataclass(frozen=True)
class RunSpec:
    run: str  # the run part: an id, latest, latest~N
    filters: tuple[tuple[str, str], ...]  # (key, value) pairs, all must match
    text: str  # as given

    @property
    def filter_text(self) -> str:
        return ",".join(f"{k}={v}" for k, v in self.filters)


def parse_run_spec(text: str) -> RunSpec:
    """Split ``RUN[:key=value,...]``; a malformed filter is a :class:`UserError`."""
    run, sep, rest = text.strip().partition(":")
    run = run.strip()
    if not run:
        raise UserError(
            f"{text!r}: no run before the ':'",
            fix="write RUN:key=value, e.g. 12:target=/dev/sdb or latest:bs=4k",
        )
    if not sep:
        return RunSpec(run=run, filters=(), text=text)
    pairs: list[tuple[str, str]] = []
    for part in rest.split(","):
        key, eq, value = part.partition("=")
        key, value = key.strip(), value.strip()
        if not eq or not key or not value:
            raise UserError(
                f"{text!r}: {part.strip()!r} is not key=value",
                fix="filters are key=value pairs separated by commas, e.g. "
                "12:target=/dev/sdb or latest:rw=randread,iodepth=32",
            )
        pairs.append((key, value))
    return RunSpec(run=run, filters=tuple(pairs), text=text)


def _number(v: Any) -> float | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, int | float):
        return float(v)
    try:
        return float(parse_size(str(v)))
    except (UnitError, ValueError, OverflowError):  # OverflowError: beyond any float
        return None


def same_value(have: Any, want: str) -> bool:
    """Whether a parameter value equals a filter's value (text, number or fio size)."""
    if str(have).strip().lower() == want.strip().lower():
        return True
    a, b = _number(have), _number(want)
    return a is not None and a == b


def _matches(s: PointSummary, key: str, value: str) -> bool:
    if key == "target":
        return value in (s.target.path, s.target.name, s.target.label)
    if key == "workload":
        return s.workload == value
    return key in s.params and same_value(s.params[key], value)


def _values(summaries: list[PointSummary], key: str) -> list[str]:
    if key == "target":
        vals = [s.target.label for s in summaries]
    elif key == "workload":
        vals = [s.workload for s in summaries]
    else:
        vals = [str(s.params[key]) for s in summaries if key in s.params]
    return list(dict.fromkeys(vals))


def select(
    summaries: list[PointSummary], filters: tuple[tuple[str, str], ...], *, what: str = "the run"
) -> list[PointSummary]:
    """The points of ``summaries`` that match every filter (module doc)."""
    if not filters:
        return summaries
    keys = set(SPECIAL_KEYS) | {k for s in summaries for k in s.params}
    for key, _ in filters:
        if key not in keys:
            near = suggestion(key, keys)
            raise UserError(
                f"{what} has no point with a parameter {key!r}",
                fix=(near + " " if near else "")
                + "filter by target, workload or one of: "
                + ", ".join(sorted(keys - set(SPECIAL_KEYS))),
            )
    kept = summaries
    for key, value in filters:
        narrowed = [s for s in kept if _matches(s, key, value)]
        if not narrowed:
            shown = ", ".join(_values(kept, key)) or "none"
            raise UserError(
                f"no point of {what} has {key}={value}",
                fix=f"values of {key} there: {shown}",
            )
        kept = narrowed
    return kept
