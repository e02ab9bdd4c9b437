"""`report`, `compare` and `chart`: runs side by side."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

import click

from storbench import hooks, nogc
from storbench.cli.app import (
    CONTEXT,
    chart_kinds,
    cli,
    db_option,
    emit,
    err,
    output_option,
    write_output,
)
from storbench.model.errors import UserError

if TYPE_CHECKING:
    from storbench.analysis.compare import Comparison
    from storbench.analysis.gate import Rule
    from storbench.report.model import ComparisonReport
    from storbench.store import Store


@cli.command(
    "report",
    context_settings=CONTEXT,
    epilog="""\b
Examples:
  storbench report latest -o run.html              one run: test bed, plan, table, charts
  storbench report 3 4 -o proxmox-vs-vmware.html   several runs: compared with the first
  storbench report latest --raw -o run.html        with each point's raw fio output
  storbench report latest~1 latest --db results.db -o cmp.html
  storbench report 12:target=/dev/sdb 12:target=/dev/sdc -o sdb-vs-sdc.html
  storbench report latest --format markdown        the seeds' tables: qualify -> the Ceph
                                                   disk table, profiles -> the overview,
                                                   matrix -> IOPS by bs x iodepth
  storbench report 3 4 -o cmp.md                   run 4 against run 3 in Markdown (the
                                                   suffix picks the format; seed 004 summary)
  storbench report latest --format json            the report model as JSON (as export's)
  STORBENCH_PLUGINS=mine storbench report 3 --format mine   a plugin's format (README:
                                                   "Extension points")

The HTML file is self-contained (no request leaves it; open it offline, mail it): the test
bed (host and target inventory, versions), the plan, a summary table, charts against iodepth
and numjobs and latency percentiles with the values on hover, and for every point its fio
command and job file one click away; its raw output too with --raw (else the page names
`storbench show RUN --point N`, which prints it). A big run's page holds the first 2,000
points in its table and the details of the first 500, and says how to see the others
(show, export, or a report of a part: RUN:bs=4k). With several runs, each later one is
compared with the first as `compare` does: the verdict, the warnings of either run (iodepth
with a synchronous ioengine), the tables, bars labelled with the % change, and in the test
bed section the settings that differed between the test beds.
""",
)
@click.argument("run_refs", metavar="RUN...", nargs=-1, required=True)
@db_option
@click.option(
    "--format",
    "fmt",
    type=click.Choice(list(hooks.FORMATS)),
    default=None,
    help="Report format: html, markdown, json (the report model), terminal (what show "
    "prints), or a plugin's. Default: the one the -o file's suffix names (.md, .json, .txt, "
    ".html), else html.",
)
@click.option(
    "--raw",
    is_flag=True,
    help="HTML: put each point's raw engine output in the page (compressed; off by default: "
    "it is most of a big run's size, and `storbench show RUN --point N` prints it).",
)
@output_option
def report_cmd(
    run_refs: tuple[str, ...], db_path: str | None, fmt: str | None, raw: bool, output: str | None
) -> None:
    """Report one or several runs; the first is the base every other run is compared with.

    RUN is an id, latest or latest~N, optionally with a filter keeping some of its points:
    RUN:target=/dev/sdb, RUN:bs=4k,iodepth=32 (target, workload or any workload option).
    """
    from storbench.report import present
    from storbench.store import Store

    store = Store(db_path, write=False)
    fmt = fmt or hooks.format_for(output)
    if fmt == "html":
        from storbench.report.html import HtmlPresenter

        draw: present.Presenter = HtmlPresenter(raw=raw)
    else:
        draw = present.presenter(fmt)
    text = present.render(draw, store, list(run_refs), detail=fmt == "html")
    if output:
        write_output(output, text)
        size = len(text.encode())
        err.print(
            f"wrote a {fmt} report of {len(run_refs)} run(s) to {output} ({size:,} bytes)",
            markup=False,
        )
    else:
        sys.stdout.write(text)


class _CompareFormat(click.Choice):
    """compare's formats; ``html`` passes, for compare_cmd to name the command that writes
    it (``report``), with the runs given."""

    def convert(
        self, value: object, param: click.Parameter | None, ctx: click.Context | None
    ) -> str:
        if str(value).strip().lower() == "html":
            return "html"
        return str(super().convert(value, param, ctx))


@cli.command(
    "compare",
    context_settings=CONTEXT,
    epilog="""\b
Examples:
  storbench compare 12 13                       run 13 against run 12, point by point
  storbench compare latest~1 latest --format markdown > cmp.md
  storbench compare 12:target=/dev/sdb 12:target=/dev/sdc   two targets of one run
  storbench compare 12 13 14 --format json      runs 13 and 14, each against run 12
  storbench compare 7:workload=rand4k,bs=4k 9:bs=4k

\b
RUN is an id, latest or latest~N; RUN:key=value,... keeps the points that match every
pair: target=PATH|NAME, workload=NAME, or any workload parameter (rw=randread, bs=4k,
iodepth=32). Points match by workload name and parameters (not by target); those
without a partner are listed at the end.

\b
Per point: the change of IOPS, MiB/s, latency (fio's total latency lat: submission +
completion), clat mean and p99, all directions ("latency -12 %" means OTHER's is lower),
and a verdict: better / worse / no significant difference by Welch's t-test at 95 % on
the IOPS of each repetition (mean latency for rate-capped workloads); "untested" without
repetitions on both sides (plan `repeat: 3`); "not comparable" when the points' settings
change what is measured (direct/buffered, ioengine, engine, sync, fsync, rate). Then the
summary over the comparable points: the geometric mean of the ratios OTHER / BASELINE of
IOPS and latency with a 95 % interval, the significant verdicts, the same per iodepth and
per block size. Exits 2 when no point matched. For HTML: storbench report A B -o r.html.

\b
A gate for CI: --fail-if 'FIGURE < or > CHANGE%' (repeatable; figures iops, bw, lat,
clat, p99) exits 1 when any matched point breaks a rule, naming each; --significant
counts only points whose verdict is significant; --junit FILE writes JUnit XML (a test
case per point and rule). Points the comparison does not judge are skipped, with why.
  storbench compare 12 13 --fail-if 'iops < -5%' --fail-if 'p99 > +10%' --junit gate.xml
""",
)
@click.argument("baseline", metavar="BASELINE")
@click.argument("others", metavar="OTHER...", nargs=-1, required=True)
@db_option
@click.option(
    "--format",
    "fmt",
    type=_CompareFormat(["table", "json", "markdown"]),
    default="table",
    show_default=True,
    help="table for the terminal, json for machines, markdown for GitHub "
    "(HTML: storbench report BASELINE OTHER -o report.html).",
)
@output_option
@click.option(
    "--fail-if",
    "fail_if",
    multiple=True,
    metavar="RULE",
    help="Exit 1 when a matched point breaks RULE: 'FIGURE < or > CHANGE%' of OTHER against "
    "BASELINE, e.g. 'iops < -5%', 'p99 > +10%' (figures: iops, bw, lat, clat, p99). "
    "Repeatable.",
)
@click.option(
    "--significant",
    is_flag=True,
    help="With --fail-if: count only points whose verdict is significant at 95 %.",
)
@click.option(
    "--junit",
    type=click.Path(dir_okay=False, writable=True),
    metavar="FILE",
    help="With --fail-if: write the rules' outcomes as JUnit XML (a test case per point "
    "and rule) for CI to display.",
)
def compare_cmd(
    baseline: str,
    others: tuple[str, ...],
    db_path: str | None,
    fmt: str,
    output: str | None,
    fail_if: tuple[str, ...],
    significant: bool,
    junit: str | None,
) -> None:
    """Compare runs (or subsets of runs) point by point against BASELINE."""
    from storbench.analysis.gate import parse_rule
    from storbench.store import Store

    if fmt == "html":
        raise UserError(
            "compare writes no HTML: the HTML report is where runs are compared in a page",
            fix=f"storbench report {' '.join([baseline, *others])} -o report.html",
        )
    rules = [parse_rule(r) for r in fail_if]
    if (significant or junit) and not rules:
        raise UserError(
            "--significant and --junit go with --fail-if: there is no rule to check",
            fix="add a rule, e.g. --fail-if 'iops < -5%'",
        )
    store = Store(db_path, write=False)
    with nogc.paused():  # two big runs are millions of objects and no cycles
        report = _comparison(store, [baseline, *others])
        text = _compare_text(report, fmt)
    emit(output, text, f"{len(others)} comparison(s)")
    if rules:
        _gate(report.comparisons, rules, significant, junit)


def _gate(
    comparisons: list[Comparison], rules: list[Rule], significant: bool, junit: str | None
) -> None:
    """Check the rules (analysis/gate.py), write the JUnit file, exit 1 when one broke."""
    from storbench.analysis.gate import check
    from storbench.report.junit import junit_xml

    outcomes = check(comparisons, rules, significant)
    if junit:
        write_output(junit, junit_xml(outcomes))
    broken = [o for o in outcomes if o.broken]
    skipped = sum(o.skipped is not None for o in outcomes)
    held = len(outcomes) - len(broken) - skipped
    rules_text = ", ".join(r.text for r in rules)
    note = f"; {skipped} skipped (not judged)" if skipped else ""
    if not broken:
        err.print(f"gate: {held} point check(s) hold {rules_text}{note}", markup=False)
        return
    for o in broken:
        err.print(f"gate: {o.comparison}: {o.said()}", style="red", markup=False)
    err.print(f"gate: {len(broken)} broken, {held} hold{note}", style="red", markup=False)
    sys.exit(1)


def _comparison(store: Store, refs: list[str]) -> ComparisonReport:
    """The comparison report model of ``refs`` (its warnings printed on stderr); a
    UserError when a side matched nothing."""
    from storbench.report import model

    report = model.load_comparison(store, refs)
    for line in report.advice:
        err.print(f"warning: {line}", style="yellow", markup=False)
    for c in report.comparisons:
        if not c.matched:
            from storbench.report.comparison import no_match_message

            message, fix = no_match_message(c)
            raise UserError(message, fix=fix)
    return report


def _compare_text(report: ComparisonReport, fmt: str) -> str:
    """``compare``'s output in ``fmt``."""
    from storbench.report.present import presenter

    return presenter("terminal" if fmt == "table" else fmt).comparison(report)


@cli.command(
    "chart",
    context_settings=CONTEXT,
    epilog="""\b
Examples:
  storbench chart latest --kind iops-vs-iodepth -o iops.png
  storbench chart 3 4 --kind lat-vs-iodepth -o latency.svg     a line per run
  storbench chart 3 4 --kind compare -o gain.png               % change of run 4 vs run 3
  storbench chart latest --kind iops-vs-numjobs -o jobs.svg
  storbench chart 12:rw=randread --kind lat-percentiles -o tail.png
  storbench chart latest --kind capacity -o curve.svg          a capacity search's steps

\b
Kinds:
  iops-vs-iodepth, bw-vs-iodepth, lat-vs-iodepth   against queue depth, a line per block
                                                   size (one run) or per run (several)
  iops-vs-numjobs, bw-vs-numjobs, lat-vs-numjobs   against the number of jobs
  iops-vs-bs, bw-vs-bs, lat-vs-bs                  against the block (s3: object) size
  lat-percentiles                                  clat p50 ... p99.99, a line per point
  compare                                          % change of each run against the first
  capacity                                         a capacity search (slo:): latency against
                                                   offered load, the target line, saturated
                                                   steps and the capacity found marked
A run's line is named by what tells it apart (name, filter, target, an option, a test-bed
setting; else "run N"); a panel holds at most 6 lines, more are split over panels.
The format follows the file name: .png (150 dpi) or .svg (each point shows its value on hover).
""",
)
@click.argument("run_refs", metavar="RUN...", nargs=-1, required=True)
@db_option
@click.option(
    "--kind",
    required=True,
    metavar="KIND",
    type=click.Choice(chart_kinds()),
    help="What to draw (see below).",
)
@click.option(
    "-o",
    "--output",
    required=True,
    type=click.Path(dir_okay=False, writable=True),
    metavar="FILE",
    help="The chart file: FILE.png or FILE.svg.",
)
def chart_cmd(run_refs: tuple[str, ...], db_path: str | None, kind: str, output: str) -> None:
    """Draw one chart of one or several runs into a PNG or SVG file (for documents).

    RUN is an id, latest or latest~N, optionally filtered: RUN:target=/dev/sdb,bs=4k.
    """
    from storbench.report import charts
    from storbench.store import Store

    fmt = os.path.splitext(output)[1].lower().lstrip(".")
    if fmt not in ("png", "svg"):
        raise UserError(
            f"cannot tell the chart format from {output!r}",
            fix="name the file .png or .svg, e.g. -o iops.png",
        )
    store = Store(db_path, write=False)
    runs = charts.load_runs(store, list(run_refs))
    chart = charts.build_chart(kind, runs)
    data = charts.render(chart, fmt)
    write_output(output, data)
    err.print(
        f"wrote {kind} of {', '.join(r.short for r in runs)} to {output} "
        f"({len(chart.panels)} panel(s), {chart.marks} points)",
        markup=False,
    )
    if chart.note:
        err.print(f"note: {chart.note}", markup=False)
