"""A comparison of runs (storbench.analysis.compare) as text cells, shared by the terminal
and the Markdown report, and its terminal form (``storbench compare``)."""

from __future__ import annotations

from typing import Any

from storbench.analysis.compare import (
    BETTER,
    NO_DIFFERENCE,
    NOT_COMPARABLE,
    UNTESTED,
    WORSE,
    Comparison,
    Group,
    PointComparison,
)
from storbench.analysis.ratios import RatioSummary
from storbench.analysis.summary import PointSummary
from storbench.model.units import fmt_iops
from storbench.report.fmt import NO_PERCENTILE, fmt_p, fmt_pct, text_table
from storbench.report.safe import one_line, visible

#: what the latency of a comparison is, said under its tables and in its summary
LAT_MEANING = (
    "latency: fio's total latency lat (submission + completion; clat where an engine "
    "reports no lat), clat: completion latency; a change below zero is lower latency "
    "(\u201clatency \u221212.0 %\u201d: OTHER's is lower)"
)


def fmt_ratio(r: float | None) -> str:
    """A ratio OTHER / BASELINE: 0.87×, 24.2×."""
    if r is None:
        return "-"
    return (f"{r:.2f}" if 0.01 <= r < 100 else f"{r:.3g}") + "\u00d7"


def _points(n: int) -> str:
    return f"{n} point{'s' if n != 1 else ''}"


def _ci(r: RatioSummary) -> str:
    if r.ci95 is None:
        return "no interval from one point"
    lo, hi = r.ci95
    return f"95 % CI {fmt_ratio(lo)[:-1]}\u2013{fmt_ratio(hi)[:-1]}"


def ratio_cell(r: RatioSummary) -> str:
    """A geometric mean as a table cell: ``0.87× (−13.0 %)``."""
    return "-" if r.geomean is None else f"{fmt_ratio(r.geomean)} ({fmt_pct(r.change_pct)})"


def ratios_sentence(other: str, base: str, iops: RatioSummary, lat: RatioSummary) -> str:
    """``OTHER is 0.87× BASELINE in IOPS (−13.0 %; geometric mean of 6 points, 95 % CI
    0.41–1.85); latency +23.0 % (1.23×; ...)``: the geometric means in words."""
    parts = []
    if iops.geomean is not None:
        parts.append(
            f"{other} is {fmt_ratio(iops.geomean)} {base} in IOPS ({fmt_pct(iops.change_pct)}; "
            f"geometric mean of {_points(iops.points)}, {_ci(iops)})"
        )
    if lat.geomean is not None:
        said = "latency" if parts else f"{other} against {base}: latency"
        parts.append(
            f"{said} {fmt_pct(lat.change_pct)} ({fmt_ratio(lat.geomean)}; geometric mean of "
            f"{_points(lat.points)}, {_ci(lat)})"
        )
    return "; ".join(parts)


def verdict_counts(c: Comparison) -> str:
    parts = [
        f"{n} {v}"
        for v in (BETTER, WORSE, NO_DIFFERENCE, UNTESTED, NOT_COMPARABLE)
        if (n := c.count(v))
    ]
    return ", ".join(parts) or "none"


def summary_lines(c: Comparison) -> list[str]:
    """The summary in words, as every presenter says it: the geometric means of the judged
    points' ratios with their intervals, the significant verdicts, the points not
    comparable (and, when no point can be judged, what the figures say, as no verdict)."""
    out = []
    said = ratios_sentence(c.other_name, c.base_name, c.iops, c.lat)
    nc = c.count(NOT_COMPARABLE)
    if said:
        out.append(said)
    else:
        out.append(f"no point of {c.other_name} can be judged against {c.base_name}")
    if c.total:
        higher = "better mean" if any(m.by_latency for m in c.judged) else "higher mean IOPS"
        out.append(
            f"significant differences (Welch's t-test, 95 %): {c.wins} better, {c.losses} "
            f"worse of {c.total} judged point{'s' if c.total != 1 else ''} ({c.ties} no "
            f"significant difference, {c.count(UNTESTED)} untested); {higher} in "
            f"{c.higher} of {c.total} ({c.wins} significantly)"
        )
    if nc:
        reasons = "; ".join(dict.fromkeys(m.reason for m in c.matched if m.reason))
        out.append(f"{nc} of {len(c.matched)} matched points not comparable ({reasons})")
        am = c.as_measured
        if not c.total and (am.iops.geomean is not None or am.lat.geomean is not None):
            out.append(
                "as measured, not a verdict: "
                + ratios_sentence(c.other_name, c.base_name, am.iops, am.lat)
            )
    return out


def summary_sentence(c: Comparison) -> str:
    """:func:`summary_lines` as one paragraph."""
    return ". ".join(summary_lines(c))


def pair_note(m: PointComparison, c: Comparison) -> str:
    """What the reader must know of a pair: why it is not comparable, a side failed, or
    did not reach steady state."""
    notes = []
    if m.reason:
        notes.append(m.reason)
    for name, side in ((c.base_name, m.base), (c.other_name, m.other)):
        if side.runs == 0:  # one note: the baseline's before the other's
            why = "skipped (beyond its knee)" if side.skipped and not side.failed else "failed"
            notes.append(f"{why} in {name}")
            break
    unsteady = [
        name
        for name, s in ((c.base_name, m.base), (c.other_name, m.other))
        if any(not v.reached for v in s.steady)
    ]
    if unsteady:
        notes.append("steady state NOT REACHED in " + " and ".join(unsteady))
    return "; ".join(notes)


def verdict_cell(m: PointComparison) -> str:
    if m.verdict == NOT_COMPARABLE:
        return "NOT COMPARABLE"
    return m.verdict + (" (by latency)" if m.by_latency and m.p_value is not None else "")


def comparison_rows(c: Comparison) -> list[list[str]]:
    rows = []
    p99_label = p99_header(c)
    for m in c.matched:
        rows.append(
            [
                m.label,
                f"{m.base.runs}/{m.other.runs}",
                fmt_iops(m.base.total_iops) if m.base.runs else "-",
                fmt_iops(m.other.total_iops) if m.other.runs else "-",
                fmt_pct(m.iops_change_pct),
                fmt_pct(m.bw_change_pct),
                *lat_changes(m, p99_label),
                verdict_cell(m),
                fmt_p(m.p_value),
                pair_note(m, c),
            ]
        )
    return rows


def p99_header(c: Comparison) -> str:
    """The p99 column's name: "clat p99" or "lat p99" when every row's p99 is of that
    latency, "p99" (each cell saying which) when they differ."""
    metrics = {m.p99_metric for m in c.matched if m.p99_metric}
    return f"{metrics.pop()} p99" if len(metrics) == 1 else "clat p99" if not metrics else "p99"


def lat_changes(m: PointComparison, p99_label: str = "clat p99") -> list[str]:
    """The latency change cells: the judged (total) latency's mean — marked "(clat)" where
    an engine reports no lat —, the clat mean, and the p99 (of lat or of clat: marked when
    the column does not say; rados bench has none)."""
    mean = fmt_pct(m.mean_lat_change_pct)
    if m.lat_metric == "clat":
        mean += " (clat)"
    clat = fmt_pct(m.clat_mean_change_pct)
    if m.base.clat is None and m.other.clat is None and m.base.runs and m.other.runs:
        clat = NO_PERCENTILE
    p99 = fmt_pct(m.p99_lat_change_pct)
    if m.p99_metric is None and m.base.latency_metric == "lat":
        p99 = NO_PERCENTILE
    elif m.p99_metric and p99_label == "p99":
        p99 += f" ({m.p99_metric})"
    return [mean, clat, p99]


def comparison_headers(c: Comparison) -> list[str]:
    return [
        "point",
        "n",
        "IOPS base",
        "IOPS other",
        "IOPS",
        "MiB/s",
        "latency",
        "clat mean",
        p99_header(c),
        "verdict",
        "p",
        "note",
    ]


#: the columns of comparison_rows aligned right (figures)
RIGHT = set(range(1, 9)) | {10}

GROUP_HEADERS = ["points", "IOPS (geometric mean)", "latency (geometric mean)"]


def group_rows(groups: dict[Any, Group]) -> list[list[str]]:
    return [
        [str(k), str(g.iops.points or g.lat.points), ratio_cell(g.iops), ratio_cell(g.lat)]
        for k, g in groups.items()
    ]


def changes_note(c: Comparison) -> str:
    """What the table's changes are, under it in every format."""
    p99 = p99_header(c)
    what = "lat or clat, as each cell says" if p99 == "p99" else p99.split()[0]
    rados = any(m.base.latency_metric == "lat" for m in c.matched)
    return (
        "changes: other against baseline; IOPS and MiB/s: means over repetitions, of all "
        "directions; latency and clat mean: over all I/Os of all repetitions; p99 of "
        f"{what}, from merged histograms. {LAT_MEANING}"
        + (f". {NO_PERCENTILE}: the engine reports no such figure (rados bench)" if rados else "")
    )


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
        out.append(differs_sentence(c))
    out.append("")
    if c.matched:
        rows = comparison_rows(c)
        headers = comparison_headers(c)
        if not any(r[-1] for r in rows):
            headers, rows = headers[:-1], [r[:-1] for r in rows]
        out += [text_table(headers, rows, right=RIGHT), ""]
        out.append(changes_note(c))
        out.append(f"verdicts (Welch's t-test per repetition, 95 %): {verdict_counts(c)}")
        out.append("")
    out += summary_lines(c)
    if len(c.by_iodepth) > 1:  # one group would only repeat the overall summary
        out += ["", "geometric means by iodepth (over block sizes):"]
        out.append(text_table(["iodepth", *GROUP_HEADERS], group_rows(c.by_iodepth)))
    if len(c.by_bs) > 1:
        out += ["", "geometric means by block size:"]
        out.append(text_table(["bs", *GROUP_HEADERS], group_rows(c.by_bs)))
    lines = unmatched_lines(c)
    if lines:
        out += ["", f"unmatched points ({len(lines)}):", *[f"  {ln}" for ln in lines]]
        if not c.matched:
            out.append(f"  ({NO_MATCH_FIX})")
    return visible("\n".join(out) + "\n")  # written as it is, not through a console


#: how to get points that match, when none did
NO_MATCH_FIX = (
    "points match by workload and parameters, not by target; to compare two targets, "
    "filter each side: RUN:target=PATH"
)


def _side_text(name: str, items: list[PointSummary], most: int = 6) -> str:
    """What one side has to match: per workload, each parameter's values."""
    if not items:
        return f"{name} has no point"
    by_wl: dict[str, dict[str, list[str]]] = {}
    for s in items:
        params = by_wl.setdefault(s.workload, {})
        for k, v in s.params.items():
            values = params.setdefault(k, [])
            if str(v) not in values:
                values.append(str(v))
    parts = []
    for wl, params in list(by_wl.items())[:most]:
        shown = " ".join(f"{k}={'|'.join(vs)}" for k, vs in params.items())
        parts.append(f"{wl} ({one_line(shown)})" if shown else wl)
    more = f", and {len(by_wl) - most} more workloads" if len(by_wl) > most else ""
    return f"{name} has {_points(len(items))}: " + "; ".join(parts) + more


def no_match_message(c: Comparison) -> tuple[str, str]:
    """What ``compare`` says, and how to fix it, when no point of ``c`` matched."""
    message = (
        f"nothing to compare: no point of {c.other_name} matches one of {c.base_name} "
        "(points match by workload name and every parameter); "
        + _side_text(c.base_name, c.only_base)
        + "; "
        + _side_text(c.other_name, c.only_other)
    )
    fix = (
        "compare runs of the same plan or suite, or keep on each side the points to pair "
        "(RUN:workload=NAME,bs=4k); to compare two targets of one run: RUN:target=PATH"
    )
    return visible(message), fix


def differs_sentence(c: Comparison) -> str:
    """The options the runs were set to differently, and what that does to the verdicts."""
    text = (
        "the runs differ in "
        + ", ".join(f"{k} ({b} -> {o})" for k, (b, o) in c.differs.items())
        + ": points are matched on everything else"
    )
    if any(m.reason for m in c.matched):
        text += "; those whose settings change what is measured are not comparable"
    return text


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
