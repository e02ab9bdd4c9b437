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

from dataclasses import dataclass, field
from typing import Any

from storbench.analysis.answers import suite_answer
from storbench.analysis.compare import Comparison
from storbench.analysis.drill import DrillRow
from storbench.analysis.objects import S3Answer
from storbench.analysis.soak import SeriesSource, SoakAnswer
from storbench.analysis.summary import PointSummary
from storbench.metrics import DIRECTIONS, Measurement
from storbench.report import suites
from storbench.report.ceph import CephReport, ceph_markdown
from storbench.report.comparison import (
    COMPARISON_HEADERS,
    comparison_rows,
    group_rows,
    lat_compared,
    summary_sentence,
    unmatched_lines,
    verdict_counts,
)
from storbench.report.drill import drill_markdown
from storbench.report.fmt import LAT_NOTE, SummaryLead, fmt_latency, fmt_spread, latency_label
from storbench.report.hosts import host_rows
from storbench.report.objects import s3_markdown
from storbench.report.safe import md_cell as _cell
from storbench.report.safe import md_code, md_text
from storbench.report.safe import md_table as table
from storbench.report.soak import soak_markdown
from storbench.units import fmt_iops, fmt_ns, fmt_rate


@dataclass
class RunReport:
    """What the Markdown of one run needs (built by the command from the store)."""

    id: int
    name: str
    status: str
    report: str | None  # the suite's report kind: qualify, profiles, matrix, rados, or None
    summaries: list[PointSummary]
    inventory: dict[str, Any] = field(default_factory=dict)
    # (point label, measurement) of every measurement that ran on several hosts
    hosts: list[tuple[str, Measurement]] = field(default_factory=list)
    # the run's Ceph clusters and timeline (report/ceph.py: ceph_report), None without
    ceph: CephReport | None = None
    # a point's intervals by its index (the soak answer is made of them)
    series: SeriesSource | None = None
    drills: list[DrillRow] = field(default_factory=list)  # report/drill.py

    @property
    def title(self) -> str:
        return f"run {self.id} ({self.name})"


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
            err = s.errors[0] if s.errors else "no measurement"
            rows.append([*lead, "-", f"failed: {err}", *[""] * (len(headers) - len(lead) - 2)])
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


def qualify_markdown(rows: list[suites.QualifyRow]) -> str:
    """The qualify answer's rows: seed 002's table, then each target's best and knee."""
    if not rows:
        return "(no numjobs sweep in this run)\n"
    notes = [
        "- "
        + md_text(
            f"{r.target}: best {r.best_jobs} jobs, {r.best_iops:,.0f} IOPS; "
            f"{r.saturation_jobs} job{'s' if str(r.saturation_jobs) != '1' else ''} reach 95 % "
            "of it; " + suites.knee_text(r.knee, "numjobs")
        )
        for r in rows
    ]
    return suites.qualify_markdown(rows) + "\n" + "\n".join(notes) + "\n"


def matrix_markdown(summaries: list[PointSummary], mrows: list[suites.MatrixRow]) -> str:
    """IOPS by block size (rows) × iodepth (columns) per target and rw, then per block size
    the best iodepth, the optimal one (95 % of the best) and the latency knee."""
    out = []
    groups: dict[tuple[str, str], list[PointSummary]] = {}
    for s in summaries:
        groups.setdefault((s.target.label, str(s.params.get("rw", "read"))), []).append(s)
    for (target, rw), items in groups.items():
        qds = list(dict.fromkeys(s.params.get("iodepth", 1) for s in items))
        bss = list(dict.fromkeys(s.params.get("bs", "4k") for s in items))
        cell = {(s.params.get("bs", "4k"), s.params.get("iodepth", 1)): s for s in items}
        out.append(f"### {md_text(target)}: {md_text(rw)} IOPS by block size and iodepth\n")
        rows = [
            [str(bs)]
            + [
                fmt_iops(cell[(bs, q)].total_iops)
                if (bs, q) in cell and cell[(bs, q)].runs
                else "-"
                for q in qds
            ]
            for bs in bss
        ]
        out.append(table(["bs \\ iodepth", *map(str, qds)], rows))
    if mrows:
        t = suites.matrix_optimal_table(mrows)
        out.append(f"### {t.title}\n")
        out.append(table(t.headers, t.rows, right=t.right))
    return "\n".join(out)


def run_markdown(run: RunReport) -> str:
    """The Markdown of one run, in the layout of its suite (module doc)."""
    s = run.summaries
    head = f"## {md_text(run.title)}\n\n"
    if not s:
        return head + "(no measurements)\n" + ceph_markdown(run.ceph)
    answer = suite_answer(run.report, s, run.inventory, run.series)
    if answer is None:
        body = summary_markdown(s)
    elif isinstance(answer, suites.QualifyAnswer):
        body = qualify_markdown(answer.rows)
    elif isinstance(answer, suites.ProfilesAnswer):
        body = suites.profiles_markdown(answer.rows)
    elif isinstance(answer, suites.MatrixAnswer):
        body = matrix_markdown(s, answer.rows)
    elif isinstance(answer, SoakAnswer):
        body = soak_markdown(answer, summary_markdown(s))
    elif isinstance(answer, S3Answer):
        body = s3_markdown(answer) + "\n" + summary_markdown(s)
    else:
        body = rados_markdown(s, answer.rows)
    if run.drills:
        body += "\n" + drill_markdown(run.drills) + "\n"
    return head + body + hosts_markdown(run.hosts) + ceph_markdown(run.ceph)


def rados_markdown(summaries: list[PointSummary], groups: list[suites.RadosGroup]) -> str:
    """Seed 000's tables of the rados bench points (suites.rados_markdown), then the summary
    table of any other point of the run."""
    others = [s for s in summaries if not suites.is_rados_bench(s)]
    body = suites.rados_markdown(groups)
    return body + ("\n" + summary_markdown(others) if others else "")


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
    """Seed 004's comparison: headline, averages per iodepth and per block size, then
    (``points``) every matched point, then the points without a partner."""
    base, other = md_text(c.base_name), md_text(c.other_name)
    out = [f"## {other} vs {base}\n"]
    out.append(f"**{md_text(summary_sentence(c))}.**\n")
    out.append(
        f"Verdicts (Welch's t-test on IOPS per repetition, 95 %): {verdict_counts(c)}. "
        f"{len(c.matched)} matched points, {len(c.only_base)} only in {base}, "
        f"{len(c.only_other)} only in {other}.\n"
    )
    if c.differs:
        out.append(
            "The runs differ in "
            + ", ".join(
                f"{md_code(k)} ({md_text(b)} → {md_text(o)})" for k, (b, o) in c.differs.items()
            )
            + "; points are matched on everything else.\n"
        )
    if len(c.by_iodepth) > 1:  # one group would only repeat the overall average
        out.append("### Average by queue depth (over block sizes)\n")
        out.append(table(["iodepth", "IOPS gain", "latency reduction"], group_rows(c.by_iodepth)))
    if len(c.by_bs) > 1:
        out.append("### Average by block size\n")
        out.append(table(["bs", "IOPS gain", "latency reduction"], group_rows(c.by_bs)))
    if points and c.matched:
        out.append("### Points\n")
        rows = comparison_rows(c)
        headers = list(COMPARISON_HEADERS)
        if not any(r[-1] for r in rows):
            headers, rows = headers[:-1], [r[:-1] for r in rows]
        out.append(table(headers, rows, right=set(range(1, 8)) | {9}))
        out.append(
            "Changes are the other run against the baseline: IOPS and MiB/s as means over "
            "repetitions, of all directions; clat as the mean and p99 over all I/Os of all "
            "repetitions, from merged histograms (negative is lower latency).\n"
        )
        if lat_compared(c):
            out.append(LAT_NOTE.replace("lat:", "(lat):", 1) + "\n")
    lines = unmatched_lines(c)
    if lines:
        out.append("### Unmatched points\n")
        out.append("\n".join(f"- {_cell(ln)}" for ln in lines) + "\n")
    return "\n".join(out)


def report_markdown(runs: list[RunReport], comparisons: list[Comparison]) -> str:
    """One run: its own tables. Several: the comparisons of the later runs with the first."""
    if comparisons:
        return "\n".join(comparison_markdown(c) for c in comparisons)
    return "\n".join(run_markdown(r) for r in runs)
