"""The soak suite's answer for people (analysis/soak.py computes it): per point the verdict
first, then each figure beside its limit; the same table in the terminal, Markdown and HTML
(as :class:`~storbench.report.suites.AnswerTable`, which each presenter draws)."""

from __future__ import annotations

from typing import Any

from storbench.analysis.soak import SoakAnswer, SoakRow
from storbench.model.units import fmt_duration, fmt_iops, fmt_ns, fmt_rate
from storbench.report.fmt import AnswerTable


def _pct(v: float | None, signed: bool = False) -> str:
    if v is None:
        return "-"
    return f"{v:+.1f} %" if signed else f"{v:.1f} %"


def _at(t: float | None) -> str:
    return f"at {fmt_duration(t)}" if t is not None else ""


def verdict_line(r: SoakRow) -> str:
    """The answer of one point in a line: STABLE, or NOT STABLE and why."""
    where = f"{r.target} {r.workload}"
    if r.stable:
        return f"{where}: STABLE over {fmt_duration(r.measured_s)}"
    return f"{where}: NOT STABLE: " + "; ".join(r.reasons)


TREND = "IOPS trend per hour (run, if shorter)"


def soak_rows(r: SoakRow, limits: dict[str, Any]) -> list[list[str]]:
    """figure | value | limit, for one point."""
    first_last = _pct(r.first_last_pct, signed=True)
    if r.first_iops is not None and r.last_iops is not None:
        first_last += f" ({fmt_iops(r.first_iops)} -> {fmt_iops(r.last_iops)} IOPS)"
    worst = "-"
    if r.worst_iops is not None:
        worst = f"{fmt_iops(r.worst_iops)} IOPS {_at(r.worst_iops_at_s)}"
        if r.worst_p99_ns is not None:
            worst += f"; p99 {fmt_ns(r.worst_p99_ns)} {_at(r.worst_p99_at_s)}"
    measured = f"{fmt_duration(r.measured_s)} ({r.intervals:,} intervals)"
    if r.cut_short_s is not None:
        measured += f", ended by Ctrl-C after {fmt_duration(r.cut_short_s)}"
    window = fmt_duration(r.compared_s) if r.compared_s else "-"
    return [
        ["measured", measured, ""],
        ["IOPS, mean of the intervals", fmt_iops(r.iops_mean) if r.iops_mean else "-", ""],
        ["IOPS variation (CV)", _pct(r.iops_cv_pct), f"≤ {limits['iops_cv']:g} %"],
        ["p99, median of the intervals", fmt_ns(r.p99_median_ns), ""],
        ["p99 variation (CV)", _pct(r.p99_cv_pct), f"≤ {limits['p99_cv']:g} %"],
        [
            "IOPS trend per hour (run, if shorter)",
            _pct(r.trend_pct_per_h, signed=True),
            f"±{limits['trend']:g} %",
        ],
        [f"last {window} against the first", first_last, f"±{limits['first_last']:g} %"],
        ["worst interval", worst, ""],
        [
            "stalls (intervals without I/O)",
            f"{r.stalls}" + (f", longest {fmt_duration(r.longest_stall_s)}" if r.stalls else ""),
            f"≤ {limits['stalls']}",
        ],
        ["engine errors", "; ".join(r.errors) or "none", "none"],
        *host_rows(r.host),
    ]


def host_rows(h: dict[str, Any], what: str = "host") -> list[list[str]]:
    """The load's host over a span (storbench.hosts.load.summary), rows of figure | value."""
    if not h:
        return []
    rows = [
        [
            f"{what} CPU busy (user+system)",
            f"{h['cpu_busy_pct_mean']:.1f} % mean, {h['cpu_busy_pct_max']:.1f} % max; "
            f"iowait {h['cpu_iowait_pct_mean']:.1f} %",
            "",
        ]
    ]
    if "disk" in h:
        util = f"{h['disk_util_pct_mean']:.1f} % mean, {h['disk_util_pct_max']:.1f} % max"
        rows.append([f"{what} busiest disk ({h['disk']})", f"utilisation {util}", ""])
    if "net" in h:
        rate = fmt_rate(h["net_bytes_per_s_mean"])
        rows.append([f"{what} busiest interface ({h['net']})", f"{rate} MiB/s mean (rx+tx)", ""])
    if "watts_mean" in h:
        rows.append([f"{what} power", f"{h['watts_mean']:,.1f} W mean", ""])
    return rows


NOTES = [
    "Each figure is computed from the point's time series (its measured intervals, every "
    "direction together; p99: the worst direction's of each interval). CV: standard "
    "deviation / mean of the intervals. Trend: the least-squares line of IOPS against time.",
]


HEADERS = ["figure", "value", "limit"]


def soak_tables(answer: SoakAnswer) -> list[AnswerTable]:
    """One table per point for presenters that draw their own (the HTML report)."""
    last = len(answer.rows) - 1
    return [
        AnswerTable(
            verdict_line(r), HEADERS, soak_rows(r, answer.limits), notes=NOTES if i == last else []
        )
        for i, r in enumerate(answer.rows)
    ]
