"""storbench's command line: parse arguments, call the pipeline, print. Nothing else."""

from __future__ import annotations

import contextlib
import datetime as dt
import gc
import hashlib
import json
import os
import shlex
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click
from rich.console import Console

from storbench import __version__, engines
from storbench.analysis.compare import Comparison
from storbench.analysis.compare import compare as compare_points
from storbench.analysis.select import parse_run_spec, select
from storbench.analysis.summary import PointSummary, fill_percentiles, needs_bins, summarize
from storbench.errors import NotFoundError, PreflightError, UserError
from storbench.metrics import PERCENTILES
from storbench.plan import (
    MAX_POINTS,
    Plan,
    Point,
    Target,
    load_plan,
    suite_names,
)
from storbench.preflight import Preflight, run_preflight
from storbench.preflight.ceph import remove_images
from storbench.report import export as export_mod
from storbench.report import markdown as md
from storbench.report import safe
from storbench.report import suites as suite_report
from storbench.report import terminal as term
from storbench.report.ceph import ceph_report
from storbench.report.terminal import ProgressReporter, comparison_text, summary_table
from storbench.runner import (
    HEALTH_INTERVAL,
    cleanup_engines,
    cleanup_files,
    concurrent_refusal,
    execute,
    note_scratch_files,
    remove_leftovers,
    scratch_files,
)
from storbench.store import Store, StoreError, default_db_path
from storbench.units import fmt_duration

F = TypeVar("F", bound=Callable[..., Any])


def _console(stderr: bool = False) -> Console:
    """A console that prints every string as text (report/safe.py): names, paths and fio's
    messages are never read as markup or emoji codes, and control characters show as \\x1b."""
    c = safe.console(stderr)
    if not c.is_terminal and "COLUMNS" not in os.environ:
        c = safe.console(stderr, width=160)  # logs: no 80-column wrap
    return c


out = _console()
err = _console(stderr=True)

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


def chart_kinds() -> list[str]:
    from storbench.report.charts import KINDS

    return list(KINDS)


def db_option(f: F) -> F:
    return click.option(
        "--db",
        "db_path",
        envvar="STORBENCH_DB",
        metavar="PATH",
        help=f"Results database (SQLite). Default: $STORBENCH_DB, else {default_db_path()}. "
        "$STORBENCH_DB_TIMEOUT: seconds to wait for another process's lock (30).",
    )(f)


def output_option(f: F) -> F:
    return click.option(
        "-o",
        "--output",
        type=click.Path(dir_okay=False, writable=True),
        default=None,
        metavar="FILE",
        help="Write to FILE instead of standard output.",
    )(f)


def health_interval_option(f: F) -> F:
    return click.option(
        "--health-interval",
        type=click.FloatRange(min=0),
        default=HEALTH_INTERVAL,
        show_default=True,
        metavar="SECONDS",
        help="Ceph targets: sample the cluster's health this often during the run (each "
        "sample is one `ceph status`); 0: only at the start.",
    )(f)


def plan_options(f: F) -> F:
    f = click.option(
        "--set",
        "sets",
        multiple=True,
        metavar="KEY=VALUE",
        help="Override a value in every workload (read as YAML: "
        "--set runtime=2, --set iodepth=[1,32]). Repeatable.",
    )(f)
    f = click.option(
        "--target",
        "-t",
        "targets",
        multiple=True,
        metavar="PATH",
        help="Measure PATH instead of the plan's targets: a file (created by "
        "storbench), a block device, or a directory; prefix with file:, "
        "device: or directory: to be explicit. Ceph: rbd:POOL/IMAGE (an image; "
        "created, filled and removed at the end when missing) or rados:POOL. Repeatable.",
    )(f)
    f = click.option(
        "--max-points",
        type=click.IntRange(min=1),
        default=MAX_POINTS,
        show_default=True,
        metavar="N",
        help="Refuse a plan that expands to more than N points (counted before expanding).",
    )(f)
    f = click.option(
        "--ceph-conf",
        "ceph_conf",
        metavar="PATH",
        type=click.Path(dir_okay=False),
        help="The ceph.conf of rbd and rados targets that name none. "
        "Default: $CEPH_CONF, else /etc/ceph/ceph.conf.",
    )(f)
    return f


@click.group(
    context_settings=CONTEXT,
    epilog="""\b
Examples:
  storbench run quick --target ./scratch.dat        a 30 s first look at a disk
  storbench run qualify --target /dev/sdb --destroy-data /dev/sdb
  storbench run rados -t rados:bench --ceph-conf /etc/ceph/ceph.conf
  storbench plan show my-plan.yaml                  what would run, job file by job file
  storbench runs                                    what is recorded
  storbench show latest                             the last run's table
  storbench compare latest~1 latest                 A vs B: changes, verdicts, summary
  storbench report latest --format markdown         the seeds' tables, for GitHub
  storbench export latest --format csv -o run.csv

Run `storbench COMMAND --help` for a command's options.""",
)
@click.version_option(__version__, "-V", "--version", prog_name="storbench")
def cli() -> None:
    """storbench: storage benchmarks from a plan file, recorded and comparable.

    Runs fio (or rados bench, for Ceph pools) for every point of a plan (a YAML file or a
    built-in suite), stores each result with the engine's raw output and job file or command
    in a SQLite database, and prints the tables.
    """


# ---------------------------------------------------------------------------- run


@cli.command(
    context_settings=CONTEXT,
    epilog=f"""\b
Built-in suites: {", ".join(suite_names())}
  quick     4k randread/randwrite at iodepth 1 and 32, 1 MiB seq read/write (~30 s)
  qualify   4k sync writes (direct=1 sync=1 iodepth=1), numjobs 1..10: best job count
  profiles  seq 1 MiB readwrite iodepth 16 + 4k randrw 70/30 iodepth 64, per target
  matrix    bs 512..128k x iodepth 1..128, randread and randwrite
  rados     rados bench write then seq, 4 MiB objects, 16 threads, 1/2/3 clients (seed 000)
  rbd       fio rbd engine: read/write/randread/randwrite x 4k/4m x numjobs 1/4 x iodepth 1/32

\b
Examples:
  storbench run quick --target ./scratch.dat
  storbench run quick -t ./scratch.dat --set runtime=2 --set iodepth=[1,8]
  storbench run profiles -t /mnt/nfs/sb.dat -t /mnt/ceph/sb.dat --set size=4g
  storbench run qualify -t /dev/sdb --destroy-data /dev/sdb
  storbench run rados -t rados:bench --set clients=[1,2] --set runtime=30
  storbench run rbd -t rbd:bench/storbench --ceph-conf ./ceph.conf --set size=4g
  storbench run my-plan.yaml --db results.db --fail-fast
""",
)
@click.argument("plan")
@plan_options
@db_option
@click.option("--fail-fast", is_flag=True, help="Stop at the first point that fails.")
@click.option(
    "--destroy-data",
    "destroy_data",
    multiple=True,
    metavar="DEVICE",
    help="Allow writing to DEVICE although it carries partitions or a signature "
    "(its data will be destroyed). Must name the device exactly. On a remote host of the "
    "plan: HOST:PATH (a device or file there that storbench cannot check). Repeatable.",
)
@click.option(
    "--dry-run", is_flag=True, help="Show the points and job files (like `plan show`), run nothing."
)
@click.option(
    "--keep-files",
    is_flag=True,
    help="Keep the scratch files and rbd images storbench created (default: remove them "
    "at the end).",
)
@click.option(
    "--allow-unhealthy",
    is_flag=True,
    help="Run on a Ceph cluster that is HEALTH_ERR or has inactive PGs in a benchmarked "
    "pool (refused otherwise); its health is stored with the run either way.",
)
@health_interval_option
def run(
    plan: str,
    sets: tuple[str, ...],
    targets: tuple[str, ...],
    ceph_conf: str | None,
    max_points: int,
    db_path: str | None,
    fail_fast: bool,
    destroy_data: tuple[str, ...],
    dry_run: bool,
    keep_files: bool,
    allow_unhealthy: bool,
    health_interval: float,
) -> None:
    """Run a plan file or a built-in suite and record every point.

    Preflight checks run first (fio and its engines present, fio accepts every job, targets
    safe to write, enough space); nothing is recorded unless they pass. Each point is
    committed to the database as soon as it finishes; Ctrl-C stops fio cleanly and keeps
    what finished (finish later with `storbench resume RUN`).
    """
    p = load_plan(
        plan, sets=list(sets), targets=list(targets), ceph_conf=ceph_conf, max_points=max_points
    )
    points = p.expand()
    if dry_run:
        _show_plan(p, points)
        return
    store = Store(db_path)
    _header(p, points)
    busy = concurrent_refusal(store, points)
    if busy:
        raise PreflightError(busy, fix="wait until that run ends, then run again")
    pre = run_preflight(points, destroy_data=list(destroy_data), allow_unhealthy=allow_unhealthy)
    overrides = [f"--set {s}" for s in sets] + [f"--target {t}" for t in targets]
    if ceph_conf:
        overrides.append(f"--ceph-conf {ceph_conf}")
    try:
        run_id = store.create_run(
            kind="run",
            name=p.name,
            source=p.source,
            plan_text=p.text,
            overrides=overrides,
            inventory={**pre.inventory, "report": p.report},
            fio_version=engines.run_version(points),
            storbench_version=__version__,
            argv=sys.argv,
            points=points,
        )
    except BaseException:  # nothing recorded, so nothing runs: what preflight made goes
        _undo_preflight(points, pre)
        raise
    out.print(f"run {run_id}: recording to {store.path}")
    _execute(store, run_id, points, len(points), fail_fast, pre, keep_files, health_interval)


def _execute(
    store: Store,
    run_id: int,
    points: list[Point],
    total: int,
    fail_fast: bool,
    pre: Preflight,
    keep_files: bool,
    health_interval: float = HEALTH_INTERVAL,
) -> None:
    try:
        for w in pre.warnings:
            err.print(f"warning: {w}", style="yellow", markup=False)
            store.add_event(run_id, "preflight", w)
        note_scratch_files(store, run_id, pre.created)
        for _, pool, image in pre.images:
            store.add_event(
                run_id,
                "rbd-image",
                f"created rbd image {pool}/{image} (written once end to end)",
                {"pool": pool, "image": image, "created": True},
            )
        with ProgressReporter(out, points) as rep:
            outcome = execute(
                store,
                run_id,
                points,
                rep,
                total=total,
                fail_fast=fail_fast,
                clusters=pre.inventory.get("ceph"),
                health_interval=health_interval,
            )
    except StoreError as e:
        # the database failed under the run (disk full, ...): what it recorded stays
        raise StoreError(
            f"{e.message}; run {run_id} stopped there and keeps the points recorded before",
            fix=f"{(e.fix or 'repair the database').split(', then')[0]}, then finish the "
            f"run with `storbench resume {run_id}`",
        ) from None
    finally:
        try:
            if not keep_files:
                # this session's files, and those an earlier (killed) session of the run made
                created = list(pre.created)
                with contextlib.suppress(StoreError):
                    created += scratch_files(store, run_id)
                cleanup_files(points, created, pre.locks)
                for name in remove_images(pre.images):
                    with contextlib.suppress(StoreError):
                        store.add_event(
                            run_id, "rbd-image", f"removed rbd image {name}", {"removed": name}
                        )
        finally:
            pre.locks.release()
    out.print()
    _print_run(store, run_id)
    if outcome.status == "interrupted":
        out.print(f"run {run_id} interrupted; finish it with: storbench resume {run_id}")
        sys.exit(130)
    if outcome.failed:
        err.print(f"{outcome.failed} point(s) failed; see `storbench show {run_id}`", style="red")
        sys.exit(1)


def _undo_preflight(points: list[Point], pre: Preflight) -> None:
    """Remove what preflight made (scratch files, rbd images) and let go of the targets:
    for when the run cannot start after all."""
    try:
        cleanup_files(points, pre.created, pre.locks)
        remove_images(pre.images)
    finally:
        pre.locks.release()


def _header(p: Plan, points: list[Point]) -> None:
    est = [pt.est_seconds for pt in points]
    planned = fmt_duration(sum(e for e in est if e)) + ("+" if None in est else "")
    targets = ", ".join(dict.fromkeys(pt.target.label for pt in points))
    if p.hosts:
        targets += f" across {len(p.hosts)} host{'s' if len(p.hosts) != 1 else ''}"
    out.print(
        safe.styled(
            f"storbench {__version__}: plan ",
            (p.name, "bold"),
            f" ({p.source}), {len(points)} point{'s' if len(points) != 1 else ''} on "
            f"{targets}, planned {planned}",
        )
    )


@cli.command(
    context_settings=CONTEXT,
    epilog="""\b
Examples:
  storbench resume latest
  storbench resume 12 --destroy-data /dev/sdb
""",
)
@click.argument("run_ref", metavar="RUN")
@db_option
@click.option("--fail-fast", is_flag=True, help="Stop at the first point that fails.")
@click.option(
    "--destroy-data",
    "destroy_data",
    multiple=True,
    metavar="DEVICE",
    help="As for `run`: needed again if the run writes to such a device.",
)
@click.option(
    "--keep-files", is_flag=True, help="Keep the scratch files and rbd images storbench created."
)
@click.option(
    "--allow-unhealthy", is_flag=True, help="As for `run`: measure an unhealthy Ceph cluster."
)
@health_interval_option
def resume(
    run_ref: str,
    db_path: str | None,
    fail_fast: bool,
    destroy_data: tuple[str, ...],
    keep_files: bool,
    allow_unhealthy: bool,
    health_interval: float,
) -> None:
    """Run the points of RUN that have no measurement yet (after Ctrl-C, a crash or a kill).

    RUN is a run id, `latest`, or `latest~N`. The same preflight checks run again first.
    """
    store = Store(db_path)
    r = store.run(run_ref)
    if r.kind != "run":
        raise UserError(f"run {r.id} was imported, there is nothing to resume")
    if r.live:
        raise r.busy_error("resume")
    pending = store.pending_points(r.id)
    if not pending:
        out.print(f"run {r.id} has a measurement for every point; nothing to resume")
        return
    was = r.effective_status
    r = store.claim(r.id, "resume")  # from here on no other process resumes it
    try:
        for done in remove_leftovers(store, r):
            out.print(f"run {r.id}: {done}", markup=False)
        remote = sorted({h.label for p in pending for h in p.hosts if not h.local})
        if was == "aborted" and remote:
            longest = max((p.est_seconds or 0 for p in pending), default=0)
            err.print(
                f"warning: run {r.id} was killed; a fio server on a remote host ("
                f"{', '.join(remote[:3])}{', ...' if len(remote) > 3 else ''}) goes on with "
                f"the job it was sent until that job's runtime ends (up to {longest:.0f} s "
                "after the kill), and a point measured before then measures beside it",
                style="yellow",
                markup=False,
            )
        busy = concurrent_refusal(store, pending, r.id)
        if busy:
            raise PreflightError(busy, fix="wait until that run ends, then resume")
        out.print(f"resuming run {r.id} ({r.name}): {len(pending)} of {r.points} points to run")
        pre = run_preflight(
            pending, destroy_data=list(destroy_data), allow_unhealthy=allow_unhealthy
        )
    except BaseException:
        store.set_status(r.id, "interrupted" if was in ("running", "aborted") else was)
        raise
    _execute(store, r.id, pending, r.points, fail_fast, pre, keep_files, health_interval)


@cli.command(
    context_settings=CONTEXT,
    epilog="""\b
Examples:
  storbench cleanup latest      after an interrupted or killed run you will not resume
""",
)
@click.argument("run_ref", metavar="RUN")
@db_option
def cleanup(run_ref: str, db_path: str | None) -> None:
    """Remove what RUN left behind, without resuming it.

    A run killed outright (SIGKILL, a crash, a power cut) cannot tidy up: this stops any
    engine process it left running, removes its work directory and the scratch files it
    created (not one that another run measures right now). An interrupted run also keeps
    the objects of its finished rados bench writes in its Ceph pools, for the seq and rand
    points `storbench resume` would run; this removes them (and any object of fio's rados
    engine named after the run). `storbench resume` does the same at its start and end.
    """
    store = Store(db_path)
    r = store.run(run_ref)
    if r.live:
        raise r.busy_error("clean up")
    points = store.points(r.id)
    for done in remove_leftovers(store, r):
        out.print(f"run {r.id}: {done}", markup=False)
    removed = cleanup_files(points, scratch_files(store, r.id))
    for path in removed:
        out.print(f"run {r.id}: removed {path}", markup=False)
    if r.status == "running":  # a killed session: it is not running any more
        store.set_status(r.id, "interrupted")
    if not any(p.target.ceph or any(h.target.ceph for h in p.hosts) for p in points):
        out.print(f"run {r.id}: nothing left to remove", markup=False)
        return
    left = cleanup_engines(store, r.id, points)
    if left:
        err.print(f"{len(left)} object(s) could not be removed: {', '.join(left[:10])}")
        sys.exit(1)
    out.print(f"run {r.id}: its benchmark objects are removed")


# ---------------------------------------------------------------------------- plan


@cli.group(context_settings=CONTEXT)
def plan() -> None:
    """Check a plan or show what it would run, without running it.

    \b
    A plan file:
      name: nvme-vs-sata
      targets:
        - file: /mnt/nvme/storbench.dat
        - device: /dev/sdb
      workloads:
        - name: rand4k
          rw: [randread, randwrite]     # a list makes an axis of the matrix
          bs: 4k
          iodepth: [1, 32]
          size: 10g
          runtime: 60
          ramp_time: 10
          direct: 1
      repeat: 3

    Every workload key is a fio option; `global:` holds options for all workloads.
    """


@plan.command(
    "check",
    context_settings=CONTEXT,
    epilog="""\b
Examples:
  storbench plan check my-plan.yaml
  storbench plan check matrix --target ./x.dat --set runtime=5
""",
)
@click.argument("plan_ref", metavar="PLAN")
@plan_options
def plan_check(
    plan_ref: str,
    sets: tuple[str, ...],
    targets: tuple[str, ...],
    ceph_conf: str | None,
    max_points: int,
) -> None:
    """Validate PLAN (file or suite) without any I/O; fio parses every job when installed.

    Refused with the line and a fix: values that would change fio's job file (control
    characters, `;`, `#`, `${`), options that run commands or replay I/O logs, log files
    that are not absolute paths, negative times, sizes of 0, a `bs` larger than `size`, and
    plans of more than --max-points points (counted before expanding).
    """
    p = load_plan(
        plan_ref, sets=list(sets), targets=list(targets), ceph_conf=ceph_conf, max_points=max_points
    )
    points = p.expand()
    checked = "; ".join(engine.validate(pts) for engine, pts in engines.of_points(points))
    est = [pt.est_seconds for pt in points]
    planned = fmt_duration(sum(e for e in est if e)) + ("+" if None in est else "")
    out.print(f"{p.source}: OK: {len(points)} points, planned {planned}; {checked}")


@plan.command(
    "show",
    context_settings=CONTEXT,
    epilog="""\b
Examples:
  storbench plan show quick --target ./x.dat
  storbench plan show my-plan.yaml --set iodepth=[1,8,64]
""",
)
@click.argument("plan_ref", metavar="PLAN")
@plan_options
def plan_show(
    plan_ref: str,
    sets: tuple[str, ...],
    targets: tuple[str, ...],
    ceph_conf: str | None,
    max_points: int,
) -> None:
    """Print the expanded points of PLAN and the exact fio job file of each (a dry run)."""
    p = load_plan(
        plan_ref, sets=list(sets), targets=list(targets), ceph_conf=ceph_conf, max_points=max_points
    )
    _show_plan(p, p.expand())


def _show_plan(p: Plan, points: list[Point]) -> None:
    _header(p, points)
    for pt in points:
        out.print()
        out.print(
            f"# point {pt.index + 1}/{len(points)}: {pt.target.label} {pt.label()}"
            + (f" (repetition {pt.repetition + 1})" if p.repeat > 1 else "")
            + (f" on {', '.join(h.label for h in pt.hosts)}" if pt.hosts else ""),
            style="bold",
            markup=False,
        )
        out.print(
            engines.get(pt.engine).describe(pt, len(points)),
            end="",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )


def _commands(command: list[str] | list[list[str]] | None) -> list[list[str]]:
    """A stored command: one argv (fio) or one per process (rados bench clients)."""
    if not command:
        return []
    return [c for c in command if isinstance(c, list)] or [[str(c) for c in command]]


# ---------------------------------------------------------------------------- results


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


def _load_summaries(
    store: Store, run_id: int, *, percentiles: tuple[float, ...] = PERCENTILES, dirs: bool = True
) -> list[PointSummary]:
    """A run's per-point summaries, fast: the measurements without histograms (no raw
    output either), then the clat histograms of only the points whose percentiles need
    merging (repetitions, several directions), streamed one point at a time. Merged
    percentiles are computed for ``percentiles`` only, per direction only with ``dirs``."""
    gc_was_on = gc.isenabled()
    gc.disable()  # a big run is millions of objects and no cycles: collecting only costs time
    try:
        return _load_summaries_nogc(store, run_id, percentiles=percentiles, dirs=dirs)
    finally:
        if gc_was_on:
            gc.enable()


def _load_summaries_nogc(
    store: Store, run_id: int, *, percentiles: tuple[float, ...], dirs: bool
) -> list[PointSummary]:
    rows = store.measurements(run_id, bins=False)
    summaries = summarize([(m.point, m.measurement) for m in rows if m.point is not None])
    need = {s.key: s for s in summaries if needs_bins(s)}
    if need:
        for key, hists in store.point_histograms(run_id, "clat"):  # bins: JSON text
            s = need.get(key)
            if s is not None:
                fill_percentiles(s, hists, percentiles=percentiles, directions=dirs)
    return summaries


def _print_run(store: Store, run_id: int) -> None:
    r = store.run(run_id)
    summaries = _load_summaries(store, run_id)
    title = f"run {r.id}: {r.name} ({r.effective_status}, {r.measured}/{r.points} points)"
    if summaries:
        out.print(summary_table(summaries, title=title))
    else:
        out.print(title)
    report = r.inventory.get("report")
    if report == "qualify":
        qrows = suite_report.qualify_rows(summaries, r.inventory)
        if qrows:
            out.print(suite_report.qualify_text(qrows))
            out.print()
            out.print(suite_report.qualify_markdown(qrows), markup=False)
    elif report == "profiles":
        prow = suite_report.profiles_rows(summaries)
        out.print(suite_report.profiles_table(prow))
        out.print(suite_report.profiles_latency_table(prow))
    elif report == "matrix":
        for t in suite_report.matrix_tables(summaries):
            out.print(t)
        for line in suite_report.matrix_saturation(summaries):
            out.print(line)
    _print_hosts(store, run_id, summaries)
    for line in term.timeline_lines(ceph_report(r, store.events(run_id))):
        out.print(line, markup=False, highlight=False, soft_wrap=True)
    out.print(
        f"results: run {r.id} in {store.path}  "
        f"(storbench show {r.id} | storbench export {r.id} --format csv)"
    )


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
  storbench show 12 --point 3        job file, command and raw fio output of point 3
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
    help="Show point N (1-based): its job file, fio command and raw fio output.",
)
def show(run_ref: str, db_path: str | None, point_no: int | None) -> None:
    """Show a run: its test bed and a table of its points. RUN is an id, latest or latest~N."""
    store = Store(db_path, write=False)
    r = store.run(run_ref)
    if point_no is not None:
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
        if raw["job_file"]:
            out.print("# job file:", markup=False)
            out.print(raw["job_file"], end="", markup=False)
        out.print("# raw output:", markup=False)
        out.print(raw["raw_output"] or "", markup=False)
        if raw["stderr"]:
            out.print("# stderr:", markup=False)
            out.print(raw["stderr"], markup=False)
        return
    host = r.inventory.get("host") or {}
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
    if host:
        out.print(
            f"  host {host.get('hostname')}: {host.get('distribution')}, kernel "
            f"{host.get('kernel')}, {host.get('cpu_count')} x {host.get('cpu_model')}",
            markup=False,
        )
    for t in r.inventory.get("targets") or []:
        ident = t.get("identity") or {}
        out.print(
            f"  target {t.get('path')}: {t.get('kind')}"
            + (f", {ident.get('model')}" if ident.get("model") else "")
            + (f", {ident.get('type')}" if ident.get("type") else "")
            + (f" {ident.get('proto')}" if ident.get("proto") else "")
            + (f", {t.get('fstype')} on {t.get('source')}" if t.get("fstype") else ""),
            markup=False,
        )
    for h in r.inventory.get("hosts") or []:
        out.print(
            f"  fio server {h.get('label')}: {h.get('hostname') or '?'}, {h.get('os') or '?'} "
            f"{h.get('arch') or ''}, {h.get('fio_version') or 'fio ?'}; targets "
            + ", ".join(str(t.get("path")) for t in h.get("targets") or []),
            markup=False,
        )
    for line in term.ceph_cluster_lines(ceph_report(r, store.events(r.id))):
        out.print(line, markup=False, highlight=False)
    if r.overrides:
        out.print("  overrides: " + " ".join(r.overrides), markup=False)
    out.print()
    _print_run(store, r.id)


@cli.command(
    context_settings=CONTEXT,
    epilog="""\b
Examples:
  storbench export latest --format json -o run.json
  storbench export 12 --format csv > run12.csv

JSON gives, per measurement, `params` (the resolved workload) and for read and write:
iops, bw_bytes (bytes/s), io_bytes, runtime_s and clat_ns/lat_ns/slat_ns with mean,
stddev, min, max and p50, p90, p95, p99, p99.9, p99.99 (nanoseconds).
""",
)
@click.argument("run_ref", metavar="RUN")
@db_option
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["csv", "json"]),
    default="json",
    show_default=True,
    help="Output format.",
)
@output_option
def export(run_ref: str, db_path: str | None, fmt: str, output: str | None) -> None:
    """Export a run's measurements (base units: bytes/s, ns, s)."""
    store = Store(db_path, write=False)
    r = store.run(run_ref)
    rows = store.measurements(r.id, bins=False)
    text = (
        export_mod.to_json(r, rows, store.events(r.id))
        if fmt == "json"
        else export_mod.to_csv(r, rows)
    )
    if output:
        _write_output(output, text)
        err.print(f"wrote {len(rows)} measurements of run {r.id} to {output}")
    else:
        sys.stdout.write(text)


@cli.command(
    "report",
    context_settings=CONTEXT,
    epilog="""\b
Examples:
  storbench report latest -o run.html              one run: test bed, plan, table, charts
  storbench report 3 4 -o proxmox-vs-vmware.html   several runs: compared with the first
  storbench report latest~1 latest --db results.db -o cmp.html
  storbench report 12:target=/dev/sdb 12:target=/dev/sdc -o sdb-vs-sdc.html
  storbench report latest --format markdown        the seeds' tables: qualify -> the Ceph
                                                   disk table, profiles -> the overview,
                                                   matrix -> IOPS by bs x iodepth
  storbench report 3 4 --format markdown -o cmp.md run 4 against run 3 (seed 004 summary)

The HTML file is self-contained (no request leaves it; open it offline, mail it): the test
bed (host and target inventory, versions), the plan, a summary table, charts against iodepth
and numjobs and latency percentiles with the values on hover, comparison bars labelled with
the % change when several runs are given, and for every point its fio job file and raw
output one click away.
""",
)
@click.argument("run_refs", metavar="RUN...", nargs=-1, required=True)
@db_option
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["html", "markdown"]),
    default="html",
    show_default=True,
    help="Report format.",
)
@output_option
def report_cmd(
    run_refs: tuple[str, ...], db_path: str | None, fmt: str, output: str | None
) -> None:
    """Report one or several runs; the first is the base every other run is compared with.

    RUN is an id, latest or latest~N, optionally with a filter keeping some of its points:
    RUN:target=/dev/sdb, RUN:bs=4k,iodepth=32 (target, workload or any workload option).
    """
    store = Store(db_path, write=False)
    if fmt == "html":
        from storbench.report import html as html_report

        text = html_report.render_report(store, list(run_refs))
    else:
        text = _markdown_report(store, list(run_refs))
    if output:
        _write_output(output, text)
        size = len(text.encode())
        err.print(
            f"wrote a {fmt} report of {len(run_refs)} run(s) to {output} ({size:,} bytes)",
            markup=False,
        )
    else:
        sys.stdout.write(text)


def _side_name(run_id: int, run_name: str, filters: tuple[tuple[str, str], ...]) -> str:
    if not filters:
        return f"run {run_id} ({run_name})"
    if len(filters) == 1 and filters[0][0] == "target":
        return f"{filters[0][1]} (run {run_id})"
    return f"run {run_id} [{','.join(f'{k}={v}' for k, v in filters)}]"


def _comparisons(store: Store, refs: list[str]) -> list[Comparison]:
    """Each of refs[1:] against refs[0]; refs are RUN or RUN:key=value,... (each run loaded
    once, however many subsets of it are compared)."""
    loaded: dict[int, list[PointSummary]] = {}
    sides: list[tuple[str, list[PointSummary]]] = []
    for text in refs:
        spec = parse_run_spec(text)
        r = store.run(spec.run)
        if r.id not in loaded:  # compare shows only the p99 of each point's I/Os
            loaded[r.id] = _load_summaries(store, r.id, percentiles=(99.0,), dirs=False)
        what = f"run {r.id} ({text})"
        sides.append(
            (_side_name(r.id, r.name, spec.filters), select(loaded[r.id], spec.filters, what=what))
        )
    (base_name, base), others = sides[0], sides[1:]
    return [compare_points(base, o, base_name=base_name, other_name=name) for name, o in others]


def _markdown_report(store: Store, refs: list[str]) -> str:
    if len(refs) > 1:
        return md.report_markdown([], _comparisons(store, refs))
    spec = parse_run_spec(refs[0])
    r = store.run(spec.run)
    summaries = select(_load_summaries(store, r.id), spec.filters, what=f"run {r.id}")
    return md.run_markdown(
        md.RunReport(
            id=r.id,
            name=r.name,
            status=r.effective_status,
            report=r.inventory.get("report"),
            summaries=summaries,
            inventory=r.inventory,
            ceph=ceph_report(r, store.events(r.id)),
            hosts=[
                (f"{m.point_idx + 1} {m.point.label() if m.point else ''}".strip(), m.measurement)
                for m in store.measurements(r.id)
                if m.measurement.hosts
            ],
        )
    )


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
Per point: the change of IOPS, MiB/s, mean and p99 completion latency (all directions),
and a verdict: better / worse / no significant difference by Welch's t-test at 95 % on
the IOPS of each repetition (mean latency for rate-capped workloads); "untested" without
repetitions on both sides (plan `repeat: 3`). Then seed 004's summary: in how many points
OTHER beat BASELINE (higher mean IOPS), the average IOPS gain and latency reduction,
per iodepth (averaged over block sizes) and per block size.
""",
)
@click.argument("baseline", metavar="BASELINE")
@click.argument("others", metavar="OTHER...", nargs=-1, required=True)
@db_option
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "json", "markdown"]),
    default="table",
    show_default=True,
    help="table for the terminal, json for machines, markdown for GitHub.",
)
@output_option
def compare_cmd(
    baseline: str, others: tuple[str, ...], db_path: str | None, fmt: str, output: str | None
) -> None:
    """Compare runs (or subsets of runs) point by point against BASELINE."""
    store = Store(db_path, write=False)
    cmps = _comparisons(store, [baseline, *others])
    if fmt == "json":
        doc = {"comparisons": [c.to_dict() for c in cmps]}
        text = json.dumps(doc, default=str) + "\n"
    elif fmt == "markdown":
        text = "\n".join(md.comparison_markdown(c) for c in cmps)
    else:
        text = "\n".join(comparison_text(c) for c in cmps)
    if output:
        _write_output(output, text)
        err.print(f"wrote {len(cmps)} comparison(s) to {output}")
    else:
        sys.stdout.write(text)


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

\b
Kinds:
  iops-vs-iodepth, bw-vs-iodepth, lat-vs-iodepth   against queue depth, a line per block
                                                   size (one run) or per run (several)
  iops-vs-numjobs, bw-vs-numjobs, lat-vs-numjobs   against the number of jobs
  lat-percentiles                                  clat p50 ... p99.99, a line per point
  compare                                          % change of each run against the first
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

    fmt = Path(output).suffix.lower().lstrip(".")
    if fmt not in ("png", "svg"):
        raise UserError(
            f"cannot tell the chart format from {output!r}",
            fix="name the file .png or .svg, e.g. -o iops.png",
        )
    store = Store(db_path, write=False)
    runs = charts.load_runs(store, list(run_refs))
    chart = charts.build_chart(kind, runs)
    data = charts.render(chart, fmt)
    _write_output(output, data)
    err.print(
        f"wrote {kind} of {', '.join(r.short for r in runs)} to {output} "
        f"({len(chart.panels)} panel(s), {chart.marks} points)",
        markup=False,
    )
    if chart.note:
        err.print(f"note: {chart.note}", markup=False)


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
    """Import fio JSON output produced elsewhere; each FILE becomes one measurement."""
    engine = engines.importer()
    parsed = []
    for i, path in enumerate(files):
        try:
            text = Path(path).read_text(errors="replace")
        except OSError as e:
            raise UserError(
                f"cannot read {path}: {e.strerror}", fix="check the path and its permissions"
            ) from None
        try:
            got = engine.import_output(text)
        except UserError as e:
            e.file = path
            raise
        meas, params, filename = got.measurement, got.params, got.target
        jobname = got.workload or Path(path).stem
        key = hashlib.sha256(
            f"{filename}\0{jobname}\0{sorted(params.items())}".encode()
        ).hexdigest()[:16]
        kind = "device" if filename.startswith("/dev/") else "file"
        point = Point(
            index=i,
            key=key,
            repetition=0,
            target=Target(kind, filename),
            workload=str(jobname),
            params=params,
            axes={"file": Path(path).name},
        )
        warnings = got.warnings
        parsed.append((point, meas, text, path, warnings))
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
    out.print(f"imported {len(parsed)} file(s) as run {run_id} in {store.path}")
    _print_run(store, run_id)


@cli.command(context_settings=CONTEXT)
def suites() -> None:
    """List the built-in suites."""
    from storbench.plan import parse_plan, suite_text

    example = {"rados": "rados:POOL", "rbd": "rbd:POOL/IMAGE"}
    for name in suite_names():
        target = example.get(name, "file:./x")
        p = parse_plan(suite_text(name), f"suite:{name}", targets=[target])
        out.print(f"{name:10} {p.description.strip().splitlines()[0] if p.description else ''}")


def _write_output(path: str, text: str | bytes) -> None:
    try:
        if isinstance(text, bytes):
            Path(path).write_bytes(text)
        else:
            Path(path).write_text(text)
    except OSError as e:
        raise UserError(
            f"cannot write {path}: {e.strerror}",
            fix="check that the directory exists and is writable",
        ) from None


for _engine in engines.all_engines():  # commands of the engines' own: `storbench agent`
    for _command in _engine.commands():
        cli.add_command(_command)


def main() -> None:
    try:
        cli.main(standalone_mode=False, prog_name="storbench")
    except UserError as e:
        err.print(f"storbench: error: {e}", markup=False, highlight=False, soft_wrap=True)
        sys.exit(e.exit_status)
    except click.exceptions.Abort:
        err.print("aborted")
        sys.exit(130)
    except click.ClickException as e:
        e.show()
        sys.exit(e.exit_code)
    except click.exceptions.Exit as e:
        sys.exit(e.exit_code)
    except BrokenPipeError:
        sys.exit(0)
    except sqlite3.Error as e:  # the Store says what failed in words; this is the last net
        err.print(
            f"storbench: error: the results database failed (sqlite: {e})\n"
            "  fix: check the database given with --db or STORBENCH_DB",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
        sys.exit(2)


__all__ = ["PreflightError", "cli", "main"]
