"""The plan's ``repeat:`` as a rule, repetitions until the verdict is known (how they are
judged: storbench.analysis.sequential)::

    repeat:
      until: significant   # the rule (the only one)
      compare: target      # what tells A from B: `target` (the plan's two targets, A
                           # first), or an axis of every workload with two values
      min: 2               # repetitions of each before the first look
      max: 10              # the most of each
      equal: 2%            # known equal when the ratio's interval lies within ±2 %

A whole number (``repeat: 3``) still repeats every point that many times.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from storbench.plan.checks import percent
from storbench.plan.yamlpos import _describe

FIX = "e.g. `repeat: {until: significant, compare: target, max: 10}`, or `repeat: 3`"
KEYS = ("until", "compare", "min", "max", "equal")
#: The most repetitions of each side a rule may ask for.
MOST = 100
#: Options that change what is measured: two points that differ in one are never judged
#: one against the other (storbench.analysis.comparable), so no rule compares them.
NOT_COMPARED = (
    "direct",
    "buffered",
    "engine",
    "ioengine",
    "sync",
    "fsync",
    "fdatasync",
    "rate",
    "rate_iops",
    "rate_min",
    "rate_iops_min",
)


@dataclass(frozen=True)
class Until:
    """The rule: at least ``min`` and at most ``max`` repetitions of each side, equal when
    the ratio's interval lies within ``1 ± equal``; ``compare`` names what tells A from B
    (an axis of the workloads, or ``target``)."""

    compare: str
    min: int = 2
    max: int = 10
    equal: float = 0.02
    until: str = "significant"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Until:
        return cls(**{k: d[k] for k in cls.__dataclass_fields__ if k in d})

    @property
    def label(self) -> str:
        return (
            f"until significant (α 0.05 spent over the looks) or equal within "
            f"±{self.equal * 100:g} %, {self.min} to {self.max} repetitions of each"
        )


def _whole(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def problem(value: Any) -> tuple[str, str] | None:
    """Why ``repeat:`` as a mapping is refused: (message, fix), or None."""
    if not isinstance(value, Mapping):
        return f"`repeat` must be a whole number ≥ 1 or a mapping, not {_describe(value)}", FIX
    for k in value:
        if k not in KEYS:
            return f"`repeat` has no key {str(k)!r}", f"its keys: {', '.join(KEYS)}; {FIX}"
    if value.get("until") != "significant":
        return f"`repeat.until` is {value.get('until')!r}: the rule is `significant`", FIX
    lo, hi = _whole(value.get("min", 2)), _whole(value.get("max", 10))
    if lo is None or lo < 2:
        return f"`repeat.min` is {value.get('min')!r}: a whole number, 2 or more", FIX
    if hi is None or not lo <= hi <= MOST:
        return f"`repeat.max` is {value.get('max')!r}: from `min` ({lo}) to {MOST}", FIX
    eq = value.get("equal", "2%")
    try:
        e = percent(eq) if not isinstance(eq, bool) else math.nan
    except ValueError:
        e = math.nan
    if not 0.1 <= e <= 50:
        return f"`repeat.equal` is {eq!r}: from 0.1% to 50%", FIX
    compare = value.get("compare", "target")
    if not isinstance(compare, str) or not compare:
        return f"`repeat.compare` is {compare!r}: `target` or an axis of the workloads", FIX
    return None


def until(value: Any) -> Until | None:
    """The rule of ``repeat:`` (checked by :func:`problem` first); None: a whole number."""
    if not isinstance(value, Mapping):
        return None
    return Until(
        compare=str(value.get("compare", "target")),
        min=int(value.get("min", 2)),
        max=int(value.get("max", 10)),
        equal=percent(value.get("equal", "2%")) / 100,
    )


def rounds(value: Any) -> int:
    """How many rounds the plan expands to: ``repeat`` itself, or the rule's ``min``."""
    rule = until(value)
    return rule.min if rule is not None else int(value)
