"""A comparison as a pass/fail a CI pipeline can act on (``compare A B --fail-if RULE``).

A rule is ``FIGURE OP CHANGE``: ``iops < -5%`` is broken by every matched point whose IOPS
changed by less than -5 % (OTHER against BASELINE), ``p99 > +10%`` by every point whose p99
latency grew by more than 10 %. Figures (the comparison's own changes, analysis/compare.py):

- ``iops``, ``bw`` (bytes/s): higher is better;
- ``lat``: the mean latency the comparison judges (fio's total latency, submission and
  completion; clat where there is no lat), ``clat``: the mean completion latency, ``p99``:
  the p99 latency (lat's, else clat's): lower is better.

Every matched point's change counts; with ``significant`` only points whose verdict is
significant at 95 % (better or worse: the comparison's test on its judged figure, IOPS or,
for a rate-capped workload, mean latency). A point the comparison does not judge (not
comparable: direct against buffered, a page-cache finding; or measured on one side only)
breaks no rule: it is *skipped*, with why, and so is a point without that figure.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from storbench.analysis.compare import Comparison, PointComparison
from storbench.model.errors import UserError, clipped

__all__ = ["FIGURES", "Outcome", "Rule", "check", "parse_rule"]

#: figure -> what it is (for messages)
FIGURES = {
    "iops": "IOPS",
    "bw": "bytes/s",
    "lat": "mean latency (lat)",
    "clat": "mean completion latency (clat)",
    "p99": "p99 latency",
}
_RULE = re.compile(r"^\s*([a-z0-9]+)\s*([<>]=?)\s*([+-]?\d+(?:\.\d+)?)\s*%\s*$")
_FIX = "e.g. --fail-if 'iops < -5%' or --fail-if 'p99 > +10%' (figures: " + ", ".join(FIGURES) + ")"


@dataclass(frozen=True)
class Rule:
    """``FIGURE OP CHANGE%``."""

    figure: str
    op: str
    pct: float
    text: str

    def broken_by(self, change_pct: float) -> bool:
        return {
            "<": change_pct < self.pct,
            "<=": change_pct <= self.pct,
            ">": change_pct > self.pct,
            ">=": change_pct >= self.pct,
        }[self.op]


def parse_rule(text: str) -> Rule:
    """A ``--fail-if`` rule; a UserError naming the fix when it is not one."""
    m = _RULE.match(text.lower())
    if m is None:
        raise UserError(
            f"--fail-if {clipped(text)!r}: not a rule (FIGURE < or > CHANGE%)", fix=_FIX
        )
    figure, op, pct = m.group(1), m.group(2), float(m.group(3))
    if figure not in FIGURES:
        raise UserError(f"--fail-if {clipped(text)!r}: no figure {figure!r}", fix=_FIX)
    return Rule(figure, op, pct, f"{figure} {op} {m.group(3)}%")


def change_of(p: PointComparison, figure: str) -> float | None:
    """The point's change of ``figure``, in % (None: not measured)."""
    return {
        "iops": p.iops_change_pct,
        "bw": p.bw_change_pct,
        "lat": p.mean_lat_change_pct,
        "clat": p.clat_mean_change_pct,
        "p99": p.p99_lat_change_pct,
    }[figure]


@dataclass(frozen=True)
class Outcome:
    """One rule on one point: ``broken``, or ``skipped`` (with why), else it holds."""

    comparison: str  # "OTHER against BASELINE"
    point: str
    rule: Rule
    change_pct: float | None
    broken: bool
    skipped: str | None = None

    def said(self) -> str:
        change = "-" if self.change_pct is None else f"{self.change_pct:+.1f} %"
        return f"{self.point}: {self.rule.figure} {change} breaks {self.rule.text}"


def check(
    comparisons: Iterable[Comparison], rules: list[Rule], significant: bool = False
) -> list[Outcome]:
    """Every rule on every matched point of every comparison (module docstring)."""
    out = []
    for c in comparisons:
        name = f"{c.other_name} against {c.base_name}"
        for p in c.matched:
            for rule in rules:
                out.append(_one(name, p, rule, significant))
    return out


def _one(name: str, p: PointComparison, rule: Rule, significant: bool) -> Outcome:
    change = change_of(p, rule.figure)
    why = None
    if not p.comparable:
        why = f"not comparable: {p.reason}" if p.reason else "not comparable"
    elif not p.judged:
        why = "measured on one side only"
    elif change is None:
        why = f"no {FIGURES[rule.figure]} on both sides"
    elif significant and not p.significant:
        why = f"not significant at 95 % ({p.verdict})"
    if why is not None:
        return Outcome(name, p.label, rule, change, False, why)
    assert change is not None
    return Outcome(name, p.label, rule, change, rule.broken_by(change))
