"""The answer of a plan repeated until its verdicts are known (analysis/untilanswer.py) as
a table every presenter draws: per pair, A's and B's figure, the change, the verdict, how
many repetitions it took and why it stopped."""

from __future__ import annotations

from storbench.analysis import sequential
from storbench.analysis.compare import PointComparison
from storbench.analysis.untilanswer import UntilAnswer
from storbench.model.units import fmt_iops, fmt_ns
from storbench.report.fmt import AnswerTable, fmt_p, fmt_pct

SPENDING = (
    "each pair ran A, B, A, B... and was looked at after each pair of repetitions; the "
    "looks share α = 0.05 by alpha spending (Lan & DeMets 1983, Pocock-type function): a "
    "look's verdict counts only below its own level, so peeking does not make a "
    "difference more likely to be found (README: Repetitions until known)"
)


def until_tables(answer: UntilAnswer) -> list[AnswerTable]:
    a, b = answer.names
    rows = [_row(m) for m in answer.comparison.matched]
    c = answer.comparison
    notes = [
        f"{answer.rule.label}; {c.wins} better, {c.losses} worse, {c.count('equal')} equal, "
        f"{c.count('no significant difference')} not known at the most repetitions",
        SPENDING,
    ]
    return [
        AnswerTable(
            f"{b} against {a}, repeated until known",
            ["Point", "A", "B", "Change", "Verdict", "Repetitions", "Why it stopped", "p"],
            rows,
            right={1, 2, 3, 5, 7},
            notes=notes,
        )
    ]


def _figure(m: PointComparison, side: int) -> str:
    s = m.other if side else m.base
    if m.by_latency:
        lat = s.judged_latency
        return fmt_ns(lat.mean if lat else None)
    return fmt_iops(s.total_iops) if s.runs else "-"


def _row(m: PointComparison) -> list[str]:
    change = m.mean_lat_change_pct if m.by_latency else m.iops_change_pct
    what = " latency" if m.by_latency else " IOPS"
    seen = m.sequential
    reps = f"{seen.n} each" if seen else f"{m.base.runs} / {m.other.runs}"
    return [
        m.label,
        _figure(m, 0),
        _figure(m, 1),
        fmt_pct(change) + what if change is not None else "-",
        m.verdict,
        reps,
        m.reason if m.reason else _why(seen),
        fmt_p(m.p_value),
    ]


def _why(seen: sequential.Look | None) -> str:
    if seen is None:
        return "-"
    interval = (
        f"B/A {seen.ratio:.3f} ({seen.ratio_low:.3f}–{seen.ratio_high:.3f})"
        if seen.ratio is not None and seen.ratio_low is not None and seen.ratio_high is not None
        else ""
    )
    if seen.state == sequential.SIGNIFICANT:
        return f"significant: p {fmt_p(seen.p)} < its look's level {seen.level:.4f}"
    if seen.state == sequential.EQUAL:
        return f"equal: {interval}, within the margin"
    if seen.state == sequential.MAX:
        return f"not known at the most repetitions: {interval}".rstrip(": ")
    return "unfinished (the run stopped before its verdict was known)"
