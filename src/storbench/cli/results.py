"""`runs`, `show`, `export` and `import`: what the database holds."""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import gc
import hashlib
import os
import shlex
import sys
from pathlib import Path
from typing import Any

import click

from storbench import __version__, engines
from storbench.analysis.answers import answer_data, suite_answer
from storbench.analysis.objects import S3Answer
from storbench.analysis.soak import SoakAnswer
from storbench.analysis.summary import PointSummary, fill_percentiles, needs_bins, summarize
from storbench.cli.app import (
    CONTEXT,
    cli,
    db_option,
    emit,
    err,
    out,
    output_option,
)
from storbench.engines.base import Imported
from storbench.errors import NotFoundError, UserError
from storbench.hostload import summary
from storbench.metrics import PERCENTILES, Measurement
from storbench.netbaseline import fmt_bits
from storbench.plan import (
    Point,
    Target,
)
from storbench.report import export as export_mod
from storbench.report import suites as suite_report
from storbench.report import terminal as term
from storbench.report.ceph import ceph_report
from storbench.report.drill import drill_text, drills_of
from storbench.report.hostload import host_samples_csv
from storbench.report.objects import s3_text
from storbench.report.series import series_csv, timeline
from storbench.report.soak import host_rows, soak_text
from storbench.report.steady import rounds_text
from storbench.report.terminal import summary_table
from storbench.store import RunRow, Store, StoreError, default_db_path
from storbench.units import fmt_duration


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

    path = os.path.abspath(os.path.expanduser(db_path or default_db_path()))
    if not os.path.exists(path):
        out.print(f"no runs in {path} yet; try `storbench run quick --target ./x.dat`")
        return
    store = Store(path, write=False)
    rows = store.runs(limit)
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
            _when(r.started_at),
            dur,
            f"{r.measured}/{r.points}",
            str(r.failed),
            r.source,
        )
    out.print(t)


def _when(ts: float | None) -> str:
    if ts is None:
        return "-"
    return dt.datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M:%S")


def load_summaries(
    store: Store, run_id: int, *, percentiles: tuple[float, ...] = PERCENTILES, dirs: bool = True
) -> list[PointSummary]:
    """A run's per-point summaries, fast: the measurements without histograms (no raw
    output either), then the clat histograms of only the points whose percentiles need
    merging (repetitions, several directions), streamed one point at a time. Merged
    percentiles are computed for ``percentiles`` only, per direction only with ``dirs``."""
    gc_was_on = gc.isenabled()
    gc.disable()  # a big run is millions of objects and no cycles: collecting only costs time
    try:
        return load_summaries_nogc(store, run_id, percentiles=percentiles, dirs=dirs)
    finally:
        if gc_was_on:
            gc.enable()


def load_summaries_nogc(
    store: Store, run_id: int, *, percentiles: tuple[float, ...], dirs: bool
) -> list[PointSummary]:
    rows = store.iter_measurements(run_id)  # folded one at a time, never all in memory
    summaries = summarize((m.point, m.measurement) for m in rows if m.point is not None)
    need = {s.key: s for s in summaries if needs_bins(s)}
    if need:
        for key, hists in store.point_histograms(run_id, "clat"):  # bins: JSON text
            s = need.get(key)
            if s is not None:
                fill_percentiles(s, hists, percentiles=percentiles, directions=dirs)
    return summaries


def print_run(store: Store, run_id: int, testbed: list[str] | None = None) -> None:
    """A run as a reviewer reads it: its suite's answer first, then the table of its points,
    hosts, drills and timeline, then ``testbed`` (show's inventory lines)."""
    r = store.run(run_id)
    summaries = load_summaries(store, run_id)
    title = f"run {r.id}: {r.name} ({r.effective_status}, {r.measured}/{r.points} points)"
    answer = suite_answer(r.inventory.get("report"), summaries, r.inventory, store.run_series(r.id))
    _print_answer(answer, summaries)
    if summaries:
        out.print(summary_table(summaries, title=title))
    else:
        out.print(title)
    _print_hosts(store, run_id, summaries)
    drill_rows = drills_of(store, run_id)
    if drill_rows:
        out.print(drill_text(drill_rows), markup=False, highlight=False)
    for line in term.timeline_lines(ceph_report(r, store.events(run_id))):
        out.print(line, markup=False, highlight=False, soft_wrap=True)
    if testbed:
        out.print("test bed:", markup=False)
        for line in testbed:
            out.print(line, markup=False, highlight=False)
    out.print(
        f"results: run {r.id} in {store.path}  "
        f"(storbench show {r.id} | storbench export {r.id} --format csv)"
    )


def _print_answer(answer: Any, summaries: list[PointSummary]) -> None:
    kind = answer.kind if answer else None
    if isinstance(answer, SoakAnswer):
        out.print(soak_text(answer), markup=False, highlight=False)
    if isinstance(answer, S3Answer):
        out.print(s3_text(answer), markup=False, highlight=False)
    if answer is not None and kind == "qualify":
        if answer.rows:
            out.print(suite_report.qualify_text(answer.rows))
            out.print()
            out.print(suite_report.qualify_markdown(answer.rows), markup=False)
    elif answer is not None and kind == "profiles":
        out.print(suite_report.profiles_table(answer.rows))
        out.print(suite_report.profiles_latency_table(answer.rows))
    elif answer is not None and kind == "matrix":
        for t in suite_report.matrix_tables(summaries):
            out.print(t)
        for line in suite_report.matrix_saturation(answer.rows):
            out.print(line)


def _show_point(store: Store, r: RunRow, point_no: int) -> None:
    """``show RUN --point N``: the point's command, steady-state rounds, time series, job
    file and raw output."""
    rows = [m for m in store.measurements(r.id) if m.point_idx == point_no - 1]
    if not rows:
        raise NotFoundError(
            f"run {r.id} has no measurement for point {point_no}",
            fix=f"points are numbered 1..{r.points}",
        )
    raw = store.raw(rows[0].id)
    out.print(
        f"# run {r.id} point {point_no}: status {rows[0].status}"
        + (f" ({rows[0].error})" if rows[0].error else ""),
        markup=False,
    )
    for cmd in _commands(raw["command"]):
        out.print("# command: " + shlex.join(cmd), markup=False)
    for e in store.events(r.id, "precondition"):
        if e.data.get("point") == point_no - 1:
            out.print(f"# preconditioning ({e.data.get('mode')}): {e.message}", markup=False)
            if e.data.get("mode") == "purge":  # blkdiscard: no series (storbench.purge)
                out.print("# purge command: " + shlex.join(e.data["command"]), markup=False)
                continue
            phase = store.intervals(r.id, -point_no)  # precondition.phase_index
            if phase:
                out.print(timeline(phase, most=20), markup=False, highlight=False)
    rounds = rounds_text(rows[0].measurement)
    if rounds:
        out.print("# steady state (SNIA PTS rounds):", markup=False)
        out.print(rounds, markup=False, highlight=False)
    series = store.intervals(r.id, point_no - 1)
    if series:
        out.print("# time series (t: end of each interval, s after the engine started):")
        out.print(timeline(series), markup=False, highlight=False)
    for host in store.sampled_hosts(r.id, point_no - 1):
        samples = store.host_samples(r.id, point_no - 1, host)
        for figure, value, _ in host_rows(summary(samples), host or "this host"):
            out.print(f"# {figure}: {value}", markup=False)
    if raw["job_file"]:
        out.print("# job file:", markup=False)
        out.print(raw["job_file"], end="", markup=False)
    out.print("# raw output:", markup=False)
    out.print(raw["raw_output"] or "", markup=False)
    if raw["stderr"]:
        out.print("# stderr:", markup=False)
        out.print(raw["stderr"], markup=False)


def _print_hosts(store: Store, run_id: int, summaries: list[PointSummary]) -> None:
    """A run on several hosts: each point's aggregate beside every host's own figures, the
    points to read with care (partial, hosts overlapping < 90 %), client scaling."""

    rows = [m for m in store.measurements(run_id) if m.measurement.hosts]
    if not rows:
        return
    if all(m.measurement.extra.get("engine") == "rados bench" for m in rows):
        title = "per client (each a rados bench process)"
    else:
        title = "per host (ran: seconds from the servers' start)"
    out.print(term.hosts_table(rows, title=title))
    for line in term.host_notes(rows) + term.client_scaling_lines(summaries):
        out.print(line, markup=False, highlight=False, soft_wrap=True)


@cli.command(
    context_settings=CONTEXT,
    epilog="""\b
Examples:
  storbench show latest
  storbench show latest~1
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
def show(run_ref: str, db_path: str | None, point_no: int | None) -> None:
    """Show a run: its suite's answer, a table of its points, then its test bed. RUN is an
    id, latest or latest~N."""
    store = Store(db_path, write=False)
    r = store.run(run_ref)
    if point_no is not None:
        _show_point(store, r, point_no)
        return
    out.print(
        f"run {r.id}: {r.name}  [{r.effective_status}]  {r.kind} from {r.source}", markup=False
    )
    dur = fmt_duration(r.ended_at - r.started_at) if r.ended_at else "-"
    # the engines' versions as recorded with the measurements (rados bench: "ceph version
    # 16.2.15"), else the run's fio
    engines = dict.fromkeys(
        " ".join(v.split()[:3]) if v.startswith("ceph version") else v
        for m in store.measurements(r.id)
        if (v := m.measurement.engine_version)
    )
    versions = ", ".join(engines) or r.fio_version or "fio ?"
    out.print(
        f"  started {_when(r.started_at)}, took {dur}; {versions}, storbench {r.storbench_version}",
        markup=False,
    )
    if r.overrides:
        out.print("  overrides: " + " ".join(r.overrides), markup=False)
    out.print()
    print_run(store, r.id, testbed=_testbed_lines(store, r))


def _testbed_lines(store: Store, r: RunRow) -> list[str]:
    """The run's test bed as ``show`` lists it after the results: host, power, targets,
    fio servers, the Ceph cluster."""
    lines = []
    host = r.inventory.get("host") or {}
    if host:
        lines.append(
            f"  host {host.get('hostname')}: {host.get('distribution')}, kernel "
            f"{host.get('kernel')}, {host.get('cpu_count')} x {host.get('cpu_model')}"
        )
        pw = host.get("power") or {}
        if pw:
            src = pw.get("source")
            lines.append(f"  power: {src} sensor" if src else f"  power: none ({pw.get('why')})")
    for t in r.inventory.get("targets") or []:
        ident = t.get("identity") or {}
        lines.append(
            f"  target {t.get('path')}: {t.get('kind')}"
            + (f", {ident.get('model')}" if ident.get("model") else "")
            + (f", {ident.get('type')}" if ident.get("type") else "")
            + (f" {ident.get('proto')}" if ident.get("proto") else "")
            + (f", {t.get('fstype')} on {t.get('source')}" if t.get("fstype") else "")
        )
    for h in r.inventory.get("hosts") or []:
        lines.append(
            f"  fio server {h.get('label')}: {h.get('hostname') or '?'}, {h.get('os') or '?'} "
            f"{h.get('arch') or ''}, {h.get('fio_version') or 'fio ?'}; targets "
            + ", ".join(str(t.get("path")) for t in h.get("targets") or [])
        )
        own = h.get("host") or {}
        if own:  # a host with `ssh:`: what its agent said of it
            lines.append(
                f"    over ssh ({(h.get('agent') or {}).get('ssh')}): {own.get('distribution')}, "
                f"kernel {own.get('kernel')}, {own.get('cpu_count')} x {own.get('cpu_model')}"
            )
    for n in r.inventory.get("network") or []:
        lines.append(
            f"  network to {n.get('host')}: {fmt_bits(n.get('to_host_bits_per_s'))}, back "
            f"{fmt_bits(n.get('from_host_bits_per_s'))} (iperf3, {n.get('seconds')} s each way)"
        )
    lines += term.ceph_cluster_lines(ceph_report(r, store.events(r.id)))
    return lines


@cli.command(
    context_settings=CONTEXT,
    epilog="""\b
Examples:
  storbench export latest --format json -o run.json
  storbench export 12 --format csv > run12.csv
  storbench export 12 --series -o series12.csv   every interval of every point
  storbench export 12 --series --format json     the same as JSON

JSON gives, per measurement, `params` (the resolved workload) and for read and write:
iops, bw_bytes (bytes/s), io_bytes, runtime_s and clat_ns/lat_ns/slat_ns with mean,
stddev, min, max and p50, p90, p95, p99, p99.9, p99.99 (nanoseconds); and its time
series under `series`: one object per interval with host, direction, seq, t_ms, dur_ms,
ramp, ios, bytes, iops, bw_bytes, lat_mean_ns, p50_ns, p99_ns, p999_ns.
""",
)
@click.argument("run_ref", metavar="RUN")
@db_option
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["csv", "json"]),
    default=None,
    help="Output format  [default: json; csv with --series]",
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
    store = Store(db_path, write=False)
    r = store.run(run_ref)
    if host_samples:
        if series or fmt == "json":
            raise UserError(
                "--host-samples writes CSV, on its own",
                fix="export the series and the host samples with two commands",
            )
        idxs = sorted({m.point_idx for m in store.measurements(r.id, bins=False)})
        samples = [(i, store.host_samples(r.id, i, None)) for i in idxs]
        text = host_samples_csv(r.id, samples)
        emit(output, text, f"{sum(len(x) for _, x in samples)} host samples of run {r.id}")
        return
    if series:
        counts = store.interval_counts(r.id)
        points = {i: store.intervals(r.id, i, host=None) for i in sorted(counts)}
        if fmt == "json":
            text = export_mod.series_json(r, store.measurements(r.id, bins=False), points)
        else:
            text = series_csv(r.id, list(points.items()))
        emit(output, text, f"{sum(counts.values())} intervals of run {r.id}")
        return
    rows = store.measurements(r.id, bins=False)
    if fmt in (None, "json"):
        answer = None
        if r.inventory.get("report"):
            found = suite_answer(
                r.inventory["report"],
                load_summaries(store, r.id),
                r.inventory,
                store.run_series(r.id),
            )
            answer = answer_data(found) if found else None
        points = {m.point_idx: store.intervals(r.id, m.point_idx, host=None) for m in rows}
        drills = [dataclasses.asdict(d) for d in drills_of(store, r.id)]
        text = export_mod.to_json(r, rows, store.events(r.id), answer, points, drills)
    else:
        text = export_mod.to_csv(r, rows)
    emit(output, text, f"{len(rows)} measurements of run {r.id}")


@cli.command(
    "import",
    context_settings=CONTEXT,
    epilog="""\b
Examples:
  fio --output-format=json+ job.fio > result.json
  storbench import result.json
  storbench import --name lab-ssds results/*.json

Accepts json and json+ output, one or several jobs (with or without group_reporting),
client/server output (client_stats; hosts are aggregated by storbench) and the stream of
documents --status-interval prints (the last one is the final result).
""",
)
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@db_option
@click.option("--name", default="import", show_default=True, help="Name of the imported run.")
def import_(files: tuple[str, ...], db_path: str | None, name: str) -> None:
    """Import fio JSON output produced elsewhere; each FILE becomes one measurement per
    reporting group it holds (jobs after a stonewall or new_group are a group of their own)."""
    engine = engines.importer()
    parsed = []
    for path in files:
        try:
            text = Path(path).read_text(errors="replace")
        except OSError as e:
            raise UserError(
                f"cannot read {path}: {e.strerror}", fix="check the path and its permissions"
            ) from None
        try:
            results = engine.import_output(text)
        except UserError as e:
            e.file = path
            raise
        for got in results:
            parsed.append(_imported_point(len(parsed), got, path, text))
    store = Store(db_path)
    version = next((m.engine_version for _, m, _, _, _ in parsed if m.engine_version), None)
    run_id = store.create_run(
        kind="import",
        name=name,
        source=", ".join(files),
        plan_text=None,
        overrides=[],
        inventory={"imported_from": [os.path.abspath(f) for f in files]},
        fio_version=version,
        storbench_version=__version__,
        argv=sys.argv,
        points=[p for p, *_ in parsed],
    )
    try:
        for point, meas, text, _, _ in parsed:
            store.record(
                run_id,
                point,
                meas,
                engine=engine.label,
                command=None,
                job_file=None,
                raw_output=text,
                stderr=None,
                started_at=None,
                ended_at=None,
            )
        store.set_status(run_id, "completed")
    except BaseException:  # all files or none: the part already stored goes again
        with contextlib.suppress(StoreError):
            store.delete_run(run_id)
        raise
    for *_, path, warnings in parsed:
        for w in warnings:
            err.print(f"{path}: {engine.label} printed: {w}", markup=False)
    groups = f" ({len(parsed)} reporting groups)" if len(parsed) > len(files) else ""
    out.print(f"imported {len(files)} file(s){groups} as run {run_id} in {store.path}")
    print_run(store, run_id)


def _imported_point(
    index: int, got: Imported, path: str, text: str
) -> tuple[Point, Measurement, str, str, list[str]]:
    """The point an imported result becomes: its target, job name and options as the file
    says, the file (and its reporting group, where it has several) as its axes."""
    meas, params, filename = got.measurement, got.params, got.target
    jobname = got.workload or Path(path).stem
    axes: dict[str, Any] = {"file": Path(path).name}
    if got.group is not None:
        axes["group"] = got.group
    group = "" if got.group is None else f"\0{got.group}"
    key = hashlib.sha256(
        f"{filename}\0{jobname}\0{sorted(params.items())}{group}".encode()
    ).hexdigest()[:16]
    kind = "device" if filename.startswith("/dev/") else "file"
    point = Point(
        index=index,
        key=key,
        repetition=0,
        target=Target(kind, filename),
        workload=str(jobname),
        params=params,
        axes=axes,
    )
    return point, meas, text, path, got.warnings


def _commands(command: list[str] | list[list[str]] | None) -> list[list[str]]:
    """A stored command: one argv (fio) or one per process (rados bench clients)."""
    if not command:
        return []
    return [c for c in command if isinstance(c, list)] or [[str(c) for c in command]]
