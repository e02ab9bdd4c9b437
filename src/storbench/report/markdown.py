"""Markdown (GitHub) in the seeds' own layouts: `storbench report RUN --format markdown`.

- a ``qualify`` run: seed 002's device table (ID, Size, Type, Proto, IOPS, #Jobs, Notes);
- a ``profiles`` run: seed 001's overview (per backend: seq MiB/s, random 4k IOPS, clat);
- a ``matrix`` run: IOPS by block size × iodepth per target and rw (seeds 003/004) and the
  optimal iodepth of each block size;
- a ``rados`` run: seed 000's appendix, per rados bench mode (write, seq, rand) a table with
  one column per client count and rados bench's own summary lines as rows;
- any other run: the summary table (one row per point and direction);
- two or more runs: seed 004's comparison of each later run against the first.

Figures with repetitions carry their spread (the 95 % confidence interval's half width).
Names and messages show as themselves: every one passes through safe.md_text (or md_code).
"""

from __future__ import annotations

from storbench.analysis.compare import Comparison
from storbench.analysis.summary import PointSummary
from storbench.model.metrics import DIRECTIONS, Measurement
from storbench.model.units import fmt_iops, fmt_ns, fmt_rate
from storbench.report.ceph import ceph_markdown
from storbench.report.comparison import (
    GROUP_HEADERS,
    RIGHT,
    changes_note,
    comparison_headers,
    comparison_rows,
    differs_sentence,
    group_rows,
    summary_lines,
    testbed_lines,
    unmatched_lines,
    verdict_counts,
)
from storbench.report.drill import drill_markdown
from storbench.report.findings import findings_markdown
from storbench.report.fmt import (
    LAT_NOTE,
    AnswerTable,
    SummaryLead,
    fmt_latency,
    fmt_spread,
    latency_label,
)
from storbench.report.hosts import host_rows
from storbench.report.model import ComparisonReport, RunReport
from storbench.report.safe import md_cell as _cell
from storbench.report.safe import md_code, md_text
from storbench.report.safe import md_table as table

# ---------------------------------------------------------------------------- one run


def summary_markdown(summaries: list[PointSummary]) -> str:
    """One row per point and direction: swept values, IOPS (± with repetitions), MiB/s, clat."""
    layout = SummaryLead.of(summaries)
    reps = layout.reps
    metrics = [ds.latency_metric for s in summaries for ds in s.dirs.values()]
    label = latency_label(metrics)
    headers = (
        layout.columns()
        + ["dir", "IOPS"]
        + (["±95%"] if reps > 1 else [])
        + ["MiB/s", f"{label} mean", f"{label} p99"]
    )
    rows = []
    for s in summaries:
        lead = layout.cells(s)
        if not s.dirs:
            err = s.note if s.only_skipped else f"failed: {s.note or 'no measurement'}"
            rows.append([*lead, "-", err, *[""] * (len(headers) - len(lead) - 2)])
            continue
        for d in DIRECTIONS:
            ds = s.dirs.get(d)
            if ds is None:
                continue
            lat, metric = ds.latency, ds.latency_metric
            rows.append(
                [
                    *lead,
                    d,
                    fmt_iops(ds.iops_mean),
                    *([fmt_spread(ds.iops_spread)] if reps > 1 else []),
                    fmt_rate(ds.bw_mean),
                    fmt_ns(None) if lat is None else fmt_latency(lat, metric, "mean", label),
                    fmt_ns(None) if lat is None else fmt_latency(lat, metric, "99", label),
                ]
            )
    left = {i for i, h in enumerate(headers) if h in ("target", "workload", "dir")}
    text = table(headers, rows, right=set(range(len(headers))) - left)
    return text + (f"\n{LAT_NOTE}\n" if "lat" in metrics else "")


def answer_markdown(tables: list[AnswerTable], kind: str | None = None) -> str:
    """A suite's answer (the report model's tables): per table its title as a heading, the
    table, its notes as a list."""
    if not tables:
        return f"(no point of this run answers the {md_text(str(kind))} report)\n"
    out: list[str] = []
    for t in tables:
        out += [f"### {md_text(t.title)}", "", table(t.headers, t.rows, t.right).rstrip("\n"), ""]
        if t.notes:
            out += [*(f"- {md_text(n)}" for n in t.notes), ""]
    return "\n".join(out)


def run_markdown(report: RunReport) -> str:
    """The Markdown of one run: its warnings, its suite's answer (or its point table), its
    drills, hosts and Ceph clusters."""
    r, s = report.run, report.summaries
    advice = [f"run {r.id}: {line}" for line in report.advice]
    head = advice_markdown(advice) + f"## {md_text(f'run {r.id} ({r.name})')}\n\n"
    if not s:
        return head + "(no measurements)\n" + ceph_markdown(report.ceph)
    if report.answer is None:
        body = summary_markdown(s)
    else:
        body = answer_markdown(report.tables, report.kind)
        if report.rest:
            body += "\n" + summary_markdown(report.rest)
    found = findings_markdown(report.findings)
    if found:
        body += "\n" + found
    if report.drills:
        body += "\n" + drill_markdown(report.drills) + "\n"
    return head + body + hosts_markdown(report.hosts) + ceph_markdown(report.ceph)


def advice_markdown(lines: list[str]) -> str:
    """What a reviewer would warn of in the runs, before anything else."""
    if not lines:
        return ""
    return "**Warnings**\n\n" + "".join(f"- {md_text(line)}\n" for line in lines) + "\n"


def hosts_markdown(items: list[tuple[str, Measurement]]) -> str:
    """Each multi-host point: the aggregate, then every host's own figures."""
    rows = []
    for label, meas in items:
        for i, r in enumerate(host_rows(meas)):
            rows.append(
                [
                    label if i == 0 else "",
                    r["host"],
                    r["status"],
                    r["dir"],
                    r["iops"],
                    r["mibs"],
                    r["mean"],
                    r["p99"],
                    r["ran"],
                ]
            )
    if not rows:
        return ""
    headers = ["point", "host", "status", "dir", "IOPS", "MiB/s", "clat mean", "clat p99", "ran"]
    return "\n### Per host\n\n" + table(headers, rows, right={4, 5, 6, 7})


# ---------------------------------------------------------------------------- comparisons


def comparison_markdown(c: Comparison, *, points: bool = True) -> str:
    """Seed 004's comparison: the summary (geometric means of ratios, significant verdicts,
    points not comparable), geometric means per iodepth and per block size, then
    (``points``) every matched point, then the points without a partner."""
    base, other = md_text(c.base_name), md_text(c.other_name)
    out = [f"## {other} vs {base}\n"]
    lines = summary_lines(c)
    out.append(f"**{md_text(lines[0])}.**\n")
    out += [f"{md_text(ln)}.\n" for ln in lines[1:]]
    out.append(
        f"Verdicts (Welch's t-test per repetition, 95 %): {verdict_counts(c)}. "
        f"{len(c.matched)} matched points, {len(c.only_base)} only in {base}, "
        f"{len(c.only_other)} only in {other}.\n"
    )
    if c.differs:
        nc = "; those whose settings change what is measured are not comparable"
        out.append(
            "The runs differ in "
            + ", ".join(
                f"{md_code(k)} ({md_text(b)} → {md_text(o)})" for k, (b, o) in c.differs.items()
            )
            + "; points are matched on everything else"
            + (nc if "not comparable" in differs_sentence(c) else "")
            + ".\n"
        )
    if len(c.by_iodepth) > 1:  # one group would only repeat the overall summary
        out.append("### Geometric means by queue depth (over block sizes)\n")
        out.append(table(["iodepth", *GROUP_HEADERS], group_rows(c.by_iodepth)))
    if len(c.by_bs) > 1:
        out.append("### Geometric means by block size\n")
        out.append(table(["bs", *GROUP_HEADERS], group_rows(c.by_bs)))
    if points and c.matched:
        out.append("### Points\n")
        rows = comparison_rows(c)
        headers = comparison_headers(c)
        if not any(r[-1] for r in rows):
            headers, rows = headers[:-1], [r[:-1] for r in rows]
        out.append(table(headers, rows, right=RIGHT))
        out.append(md_text(changes_note(c)[0].upper() + changes_note(c)[1:]) + ".\n")
    unmatched = unmatched_lines(c)
    if unmatched:
        out.append("### Unmatched points\n")
        out.append("\n".join(f"- {_cell(ln)}" for ln in unmatched) + "\n")
    return "\n".join(out)


def comparisons_markdown(report: ComparisonReport) -> str:
    """Several runs: the warnings of every run, then each later one against the first with
    the test beds' differences."""
    pairs = zip(report.comparisons, report.differences, strict=True)
    return advice_markdown(report.advice) + "\n".join(
        comparison_markdown(c) + testbed_lines(d, "- ") for c, d in pairs
    )


class MarkdownPresenter:
    """``report --format markdown``: GitHub Markdown in the seeds' layouts."""

    name = "markdown"

    def run(self, report: RunReport) -> str:
        return run_markdown(report)

    def comparison(self, report: ComparisonReport) -> str:
        return comparisons_markdown(report)


PRESENTER = MarkdownPresenter()
