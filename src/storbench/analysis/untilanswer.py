"""The answer of a plan repeated until its verdicts are known (``repeat: {until:
significant}``, ``report: until``): A's points against B's, each pair judged at the look
that stopped it (analysis/sequential.py), with how many repetitions it took and why it
stopped. Plain data; report/until.py draws it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from storbench.analysis.compare import Comparison, compare
from storbench.analysis.summary import PointSummary
from storbench.plan.untilkeys import Until


@dataclass
class UntilAnswer:
    kind: ClassVar[str] = "until"
    rule: Until
    #: what A and B are: the target, or the axis's value, of each side
    names: tuple[str, str]
    comparison: Comparison

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON: the rule, what A and B are, and the comparison as
        ``compare --format json`` gives it (``points``: each pair's verdict and, in
        ``repeat_until``, the look that stopped it)."""
        return {"rule": self.rule.to_dict(), "a": self.names[0], "b": self.names[1]} | {
            "comparison": self.comparison.to_dict()
        }


def _name(s: PointSummary, rule: Until) -> str:
    if rule.compare == "target":
        return s.target.label
    return f"{rule.compare}={s.params.get(rule.compare)}"


def until_answer(
    summaries: list[PointSummary], inventory: dict[str, Any], series: object
) -> UntilAnswer | None:
    """A's points (side 0) against B's (side 1), matched as ``compare`` matches runs; None
    when the run has no rule."""
    a = [s for s in summaries if s.until is not None and s.side == 0]
    b = [s for s in summaries if s.until is not None and s.side == 1]
    if not a or not b:
        return None
    rule = a[0].until
    assert rule is not None
    names = (_name(a[0], rule), _name(b[0], rule))
    if rule.compare != "target":  # one axis's two values: "A" and "B" say which
        names = (f"A ({names[0]})", f"B ({names[1]})")
    return UntilAnswer(rule, names, compare(a, b, base_name=names[0], other_name=names[1]))
