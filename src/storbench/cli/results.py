"""`runs`, `show` and `export`: what the database holds (`import` and `merge`: transfer.py).

What ``show`` prints is in runview.py (a run) and pointview.py (a point), imported when a
command runs: this module loads light, for ``--help``."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import click

from storbench import nogc
from storbench.cli.app import (
    CONTEXT,
    cli,
    db_option,
    emit,
    out,
    output_option,
)
from storbench.model.constants import SHOW_LIMIT, default_db_path
from storbench.model.errors import UserError

if TYPE_CHECKING:
    pass


@cli.command(
    context_settings=CONTEXT,
    epilog="""\b
Examples:
  storbench runs
  storbench runs --limit 5 --db results.db
""",
)
@db_option
@click.option("--limit", "-n", type=int, default=None, help="Show only the N newest runs.")
def runs(db_path: str | None, limit: int | None) -> None:
    """List recorded runs, newest first."""
    from rich.table import Table

    from storbench.model.units import fmt_duration, when
    from storbench.store import Store

    path = db_path or default_db_path()
    if "://" not in path:  # a file (SQLite): none there yet is no runs yet
        path = os.path.abspath(os.path.expanduser(path))
        if not os.path.exists(path):
            out.print(f"no runs in {path} yet; try `storbench run quick --target ./x.dat`")
            return
    store = Store(path, write=False)
    rows = store.runs.all(limit)
    if not rows:
        out.print(f"no runs in {store.path} yet; try `storbench run quick --target ./x.dat`")
        return
    t = Table(title=f"runs in {store.path}", title_justify="left")
    for c in ("id", "name", "kind", "status", "started", "duration", "points", "failed", "source"):
        t.add_column(c, justify="right" if c in ("id", "points", "failed") else "left")
    for r in rows:
        dur = fmt_duration(r.ended_at - r.started_at) if r.ended_at else "-"
        t.add_row(
            str(r.id),
            r.name,
            r.kind,
            r.effective_status,
            when(r.started_at),
            dur,
            f"{r.measured}/{r.points}",
            str(r.failed),
            r.source,
        )
    out.print(t)


@cli.command(
    context_settings=CONTEXT,
    epilog=f"""\b
Examples:
  storbench show latest
  storbench show latest~1
  storbench show 12 --all            every point in the table (default: the
                                     first {SHOW_LIMIT})
  storbench show 12 --point 3        point 3: its command, time series (IOPS,
                                     MiB/s, latency per interval), job file and
                                     raw fio output
""",
)
@click.argument("run_ref", metavar="RUN")
@db_option
@click.option(
    "--point",
    "point_no",
    type=int,
    default=None,
    metavar="N",
    help="Show point N (1-based): its time series, job file, fio command and raw fio output.",
)
@click.option(
    "--limit",
    "-n",
    type=int,
    default=SHOW_LIMIT,
    show_default=True,
    metavar="N",
    help="List the first N points in the table (a line says how many more there are).",
)
@click.option("--all", "show_all", is_flag=True, help="List every point in the table.")
def show(
    run_ref: str, db_path: str | None, point_no: int | None, limit: int, show_all: bool
) -> None:
    """Show a run: its suite's answer, a table of its points, then its test bed. RUN is an
    id, latest or latest~N."""
    from storbench.store import Store

    if limit < 1:
        raise click.BadParameter(f"{limit} is not a number of points", param_hint="--limit")

    store = Store(db_path, write=False)
    if point_no is not None:  # one point: the run's counts are not read either
        from storbench.cli.pointview import show_point

        show_point(store, store.runs.resolve(run_ref), point_no)
        return
    from storbench.cli.runview import show_run

    show_run(store, store.runs.get(run_ref), None if show_all else limit)


@cli.command(
    context_settings=CONTEXT,
    epilog="""\b
Examples:
  storbench export latest --format json -o run.json
  storbench export 12 --format csv > run12.csv
  storbench export 12 --series -o series12.csv   every interval of every point
  storbench export 12 --series --format json     the same as JSON
  storbench export 12 --format archive -o run12.sbz   the whole run, for `storbench import`

Points and repetitions count from 1, as `show --point N` and the job files count them (in
every format: `point`, `repetition`, the series', findings' and events' `point`).

JSON gives, per measurement, `params` (the resolved workload) and for read and write:
iops, bw_bytes (bytes/s), io_bytes, runtime_s and clat_ns/lat_ns/slat_ns with mean,
stddev, min, max and p50, p90, p95, p99, p99.9, p99.99 (nanoseconds); and its time
series under `series`: one object per interval with host, direction, seq, t_ms, dur_ms,
ramp, ios, bytes, iops, bw_bytes, lat_mean_ns, p50_ns, p99_ns, p999_ns.

An archive (gzip'd JSON) holds everything the database keeps of the run -- plan,
inventory, events, every measurement with its raw output, job file and histograms, the
time series and host samples -- and `storbench import FILE` (or `storbench merge DB`)
recreates it in another database.
""",
)
@click.argument("run_ref", metavar="RUN")
@db_option
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["csv", "json", "archive"]),
    default=None,
    help="Output format  [default: json; csv with --series]; archive: the whole run, "
    "for import elsewhere",
)
@click.option(
    "--series",
    is_flag=True,
    help="Export the time series instead: every interval of every point (t_s, dur_s, ios, "
    "bytes, iops, bw_bytes, latency mean and p50/p99/p99.9 in ns), one CSV row each; with "
    "--format json, per point a list of intervals (t_ms, dur_ms, ...).",
)
@click.option(
    "--host-samples",
    "host_samples",
    is_flag=True,
    help="Export what the machine running the load did instead: every sample of every "
    "point, one CSV row per figure (cpu_*_pct, mem_*_bytes, net_rx/tx_bytes_per_s and "
    "disk_util_pct, disk_queue, disk_read/write_bytes_per_s, disk_iops per device).",
)
@output_option
def export(
    run_ref: str,
    db_path: str | None,
    fmt: str | None,
    output: str | None,
    series: bool,
    host_samples: bool,
) -> None:
    """Export a run's measurements and their time series (base units: bytes/s, ns, s)."""
    from storbench.report import export as export_mod
    from storbench.report.hostload import host_samples_csv
    from storbench.report.series import series_csv
    from storbench.store import Store

    store = Store(db_path, write=False)
    r = store.runs.get(run_ref)
    if fmt == "archive":
        from storbench.cli.transfer import write_archive

        if series or host_samples:
            raise UserError(
                "an archive holds the series and host samples already",
                fix="drop --series/--host-samples",
            )
        write_archive(store, r, output)
        return
    if host_samples:
        if series or fmt == "json":
            raise UserError(
                "--host-samples writes CSV, on its own",
                fix="export the series and the host samples with two commands",
            )
        idxs = sorted({m.point_idx for m in store.measurements.of_run(r.id, bins=False)})
        samples = [(i, store.host_samples.of_point(r.id, i, None)) for i in idxs]
        text = host_samples_csv(r.id, samples)
        emit(output, text, f"{sum(len(x) for _, x in samples)} host samples of run {r.id}")
        return
    if series:
        counts = store.series.counts(r.id)
        points = {i: store.series.of_point(r.id, i, host=None) for i in sorted(counts)}
        if fmt == "json":
            text = export_mod.series_json(r, store.measurements.of_run(r.id, bins=False), points)
        else:
            text = series_csv(r.id, list(points.items()))
        emit(output, text, f"{sum(counts.values())} intervals of run {r.id}")
        return
    if fmt in (None, "json"):
        from storbench.report import jsonout, model

        with nogc.paused():
            report = model.load_run(store, r.id)
            text = jsonout.run_json(report)
        count = len(report.rows)
    else:
        rows = store.measurements.of_run(r.id, bins=False)
        text = export_mod.to_csv(r, rows)
        count = len(rows)
    emit(output, text, f"{count} measurements of run {r.id}")
