"""`history`: the same points over runs, with the test bed's changes and the significant
changes marked."""

from __future__ import annotations

import os

import click

from storbench.cli.app import CONTEXT, cli, db_option, emit, err, output_option, write_output
from storbench.model.errors import UserError

FORMATS = ("table", "markdown", "json")


@cli.command(
    "history",
    context_settings=CONTEXT,
    epilog="""\b
Examples:
  storbench history                          the newest run's plan, its last 10 runs
  storbench history --plan nightly --last 30 --figure p99
  storbench history --label pool=ssd         runs labelled pool=ssd (run --label, labels:)
  storbench history --by ceph                the runs of each Ceph version pooled, in turn
  storbench history 12 15 19 --chart h.svg   these runs, and the chart as a file
  storbench history --plan nightly --format json > history.json

Each point of the runs is followed from run to run (matched as `compare` matches two
runs): its figure per run, its change against its previous run, and a mark where that
change is significant at 95 % (the comparison's Welch test over repetitions: ▼ regression,
▲ improvement; runs of one repetition are untested). Between consecutive runs the test
bed's changes are listed (kernel, fio and Ceph versions, tunables, disks' settings: the
inventory of each run) and the labels' (`run --label ceph=19.2.1`); the chart marks them
with a dotted line. The web view shows the same at /history.
""",
)
@click.argument("run_refs", metavar="[RUN...]", nargs=-1)
@click.option("--plan", "plan", metavar="NAME", help="The runs of the plan named NAME.")
@click.option(
    "--label",
    "labels",
    multiple=True,
    metavar="KEY=VALUE",
    help="Only runs with this label (repeatable: all of them).",
)
@click.option(
    "--last",
    type=int,
    default=10,
    show_default=True,
    help="Follow the newest so many runs of the selection.",
)
@click.option(
    "--by",
    metavar="KEY",
    help="Pool the runs that share a value of label KEY as one column (their repetitions "
    "together), e.g. --by ceph: each Ceph version against the one before.",
)
@click.option(
    "--figure",
    type=click.Choice(["iops", "bw", "lat", "p99"]),
    default="iops",
    show_default=True,
    help="The figure the table and chart show (JSON holds all): IOPS, bytes/s, mean or "
    "p99 latency (fio's total latency, lat).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default="table",
    show_default=True,
    help="The output's format.",
)
@click.option(
    "--chart",
    "chart",
    metavar="FILE",
    help="Also draw the chart into FILE (.png or .svg).",
)
@output_option
@db_option
def history_cmd(
    run_refs: tuple[str, ...],
    plan: str | None,
    labels: tuple[str, ...],
    last: int,
    by: str | None,
    figure: str,
    fmt: str,
    chart: str | None,
    output: str | None,
    db_path: str | None,
) -> None:
    """Follow the same points over runs (of one plan, or labelled alike, or named).

    RUN is an id, latest or latest~N. Without RUN: the runs of --plan (default: the newest
    run's plan) that carry every --label, the newest --last of them, oldest first.
    """
    from storbench.plan.labelkeys import parse_label
    from storbench.report.historymodel import load_history
    from storbench.store import Store

    if run_refs and plan:
        raise UserError("name runs or --plan, not both", fix="storbench history --plan NAME")
    chart_fmt = os.path.splitext(chart or "")[1].lower().lstrip(".")
    if chart and chart_fmt not in ("png", "svg"):
        raise UserError(f"cannot tell the chart format from {chart!r}", fix="name it .png or .svg")
    wanted = dict(parse_label(t) for t in labels)
    store = Store(db_path, write=False)
    report = load_history(
        store, list(run_refs), plan=plan, labels=wanted, last=last, figure=figure, by=by
    )
    emit(output, _text(report, fmt), f"the history of {len(report.history.runs)} runs")
    if chart:
        from storbench.report import charts
        from storbench.report.charts.history import history_chart

        drawn = history_chart(report)
        write_output(chart, charts.render(drawn, chart_fmt))
        err.print(f"wrote the history chart to {chart}", markup=False)


def _text(report: object, fmt: str) -> str:
    from storbench.report.history import history_json, history_tables
    from storbench.report.historymodel import HistoryReport

    assert isinstance(report, HistoryReport)
    if fmt == "json":
        return history_json(report)
    tables = history_tables(report)
    if fmt == "markdown":
        from storbench.report.markdown import answer_markdown

        return answer_markdown(tables)
    from storbench.report.terminal import answer_text

    return answer_text(tables) + "\n"
