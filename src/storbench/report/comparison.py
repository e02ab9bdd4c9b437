"""A comparison of runs (storbench.analysis.compare) as text cells, shared by the terminal
and the Markdown report, and its terminal form (``storbench compare``)."""

from __future__ import annotations

from typing import Any

from storbench.analysis.compare import (
    BETTER,
    NO_DIFFERENCE,
    UNTESTED,
    WORSE,
    Comparison,
    PointComparison,
)
from storbench.analysis.summary import PointSummary
from storbench.model.units import fmt_iops
from storbench.report.fmt import LAT_NOTE, NO_PERCENTILE, fmt_p, fmt_pct, text_table
from storbench.report.safe import one_line, visible


def verdict_counts(c: Comparison) -> str:
    parts = [f"{n} {v}" for v in (BETTER, WORSE, NO_DIFFERENCE, UNTESTED) if (n := c.count(v))]
    return ", ".join(parts) or "none"


def summary_sentence(c: Comparison) -> str:
    """Seed 004's headline: who beat whom in how many points, by how much on average."""
    lat = c.avg_lat_reduction_pct
    return (
        f"{c.other_name} beat {c.base_name} in {c.wins} of {c.total} point"
        f"{'s' if c.total != 1 else ''}; {fmt_pct(c.avg_iops_gain_pct)} IOPS on average, "
        f"{fmt_pct(-lat if lat is not None else None)} latency"
    )


def pair_note(m: PointComparison, c: Comparison) -> str:
    """What the reader must know of a pair: a side failed, or did not reach steady state."""
    if m.base.runs == 0:
        return f"failed in {c.base_name}"
    if m.other.runs == 0:
        return f"failed in {c.other_name}"
    unsteady = [
        name
        for name, s in ((c.base_name, m.base), (c.other_name, m.other))
        if any(not v.reached for v in s.steady)
    ]
    if unsteady:
        return "steady state NOT REACHED in " + " and ".join(unsteady)
    return ""


def comparison_rows(c: Comparison) -> list[list[str]]:
    rows = []
    for m in c.matched:
        rows.append(
            [
                m.label,
                f"{m.base.runs}/{m.other.runs}",
                fmt_iops(m.base.total_iops) if m.base.runs else "-",
                fmt_iops(m.other.total_iops) if m.other.runs else "-",
                fmt_pct(m.iops_change_pct),
                fmt_pct(m.bw_change_pct),
                *_lat_changes(m),
                m.verdict + (" (by latency)" if m.by_latency and m.p_value is not None else ""),
                fmt_p(m.p_value),
                pair_note(m, c),
            ]
        )
    return rows


def _lat_changes(m: PointComparison) -> list[str]:
    """The mean and p99 latency change cells: of clat, or of lat marked "(lat)" for an
    engine without clat (rados bench), whose p99 does not exist."""
    mean, p99 = fmt_pct(m.mean_lat_change_pct), fmt_pct(m.p99_lat_change_pct)
    if m.base.latency_metric == "lat" and m.other.latency_metric == "lat":
        if m.mean_lat_change_pct is not None:
            mean += " (lat)"
        if m.p99_lat_change_pct is None:
            p99 = NO_PERCENTILE
    return [mean, p99]


def lat_compared(c: Comparison) -> bool:
    """Whether a matched point of ``c`` is compared by lat (an engine without clat)."""
    return any(m.base.latency_metric == "lat" for m in c.matched)


COMPARISON_HEADERS = [
    "point",
    "n",
    "IOPS base",
    "IOPS other",
    "IOPS",
    "MiB/s",
    "clat mean",
    "clat p99",
    "verdict",
    "p",
    "note",
]


def group_rows(groups: dict[Any, tuple[float | None, float | None]]) -> list[list[str]]:
    return [[str(k), fmt_pct(g), fmt_pct(r)] for k, (g, r) in groups.items()]


def unmatched_lines(c: Comparison) -> list[str]:
    out = []
    for name, items in ((c.base_name, c.only_base), (c.other_name, c.only_other)):
        for s in items:
            out.append(f"only in {name}: {s.target.label} {s.workload} " + _params_text(s))
    return out


def _params_text(s: PointSummary) -> str:
    shown = s.axes or s.params
    return " ".join(f"{k}={v}" for k, v in shown.items())


def comparison_text(c: Comparison) -> str:
    """The terminal form of ``storbench compare``: per point, the summary, per iodepth and
    per block size, then the points without a partner."""
    out = [
        f"baseline {c.base_name}  vs  {c.other_name}: {len(c.matched)} matched point"
        f"{'s' if len(c.matched) != 1 else ''}, {len(c.only_base)} only in the baseline, "
        f"{len(c.only_other)} only in {c.other_name}",
    ]
    if c.differs:
        out.append(
            "the runs differ in "
            + ", ".join(f"{k} ({b} -> {o})" for k, (b, o) in c.differs.items())
            + ": points are matched on everything else"
        )
    out.append("")
    if c.matched:
        rows = comparison_rows(c)
        headers = list(COMPARISON_HEADERS)
        if not any(r[-1] for r in rows):
            headers, rows = headers[:-1], [r[:-1] for r in rows]
        out += [text_table(headers, rows, right=set(range(1, 8)) | {9}), ""]
        out.append(
            "changes: other against baseline; IOPS and MiB/s: means over repetitions, of all "
            "directions; clat: mean and p99 over all I/Os of all repetitions (merged "
            "histograms; lower is better)"
        )
        if lat_compared(c):
            out.append(LAT_NOTE.replace("lat:", "(lat):", 1))
        out.append(f"verdicts (Welch's t-test on IOPS per repetition, 95 %): {verdict_counts(c)}")
        out.append("")
    out.append(summary_sentence(c))
    if len(c.by_iodepth) > 1:  # one group would only repeat the overall average
        out += ["", "average by iodepth (over block sizes):"]
        out.append(
            text_table(["iodepth", "IOPS gain", "latency reduction"], group_rows(c.by_iodepth))
        )
    if len(c.by_bs) > 1:
        out += ["", "average by block size:"]
        out.append(text_table(["bs", "IOPS gain", "latency reduction"], group_rows(c.by_bs)))
    lines = unmatched_lines(c)
    if lines:
        out += ["", f"unmatched points ({len(lines)}):", *[f"  {ln}" for ln in lines]]
        if not c.matched:
            out.append(
                "  (points match by workload and parameters, not by target; to compare two "
                "targets, filter each side: RUN:target=PATH)"
            )
    return visible("\n".join(out) + "\n")  # written as it is, not through a console


def testbed_lines(diffs: list[tuple[str, Any, Any]], bullet: str) -> str:
    """The settings that differed between two test beds (the first MAX_DIFFS), as a list."""
    if not diffs:
        return "\ntest beds: no setting storbench records differs\n"
    lines = [f"{bullet}{k}: {_shown(a)} -> {_shown(b)}" for k, a, b in diffs[:MAX_DIFFS]]
    if len(diffs) > MAX_DIFFS:
        lines.append(f"{bullet}... and {len(diffs) - MAX_DIFFS} more (`export --format json`)")
    return "\ntest beds differ (base -> other):\n" + "\n".join(lines) + "\n"


def _shown(value: Any) -> str:
    return "(none)" if value is None else one_line(str(value))


#: settings listed in the text of a comparison (all of them in the JSON)
MAX_DIFFS = 40
