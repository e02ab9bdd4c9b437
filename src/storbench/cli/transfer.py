"""`import` and `merge`: results made elsewhere into this database.

``import`` takes fio's JSON output (each file read, stored in one transaction and let go
before the next: memory does not grow with the number of files; a file that cannot be
read undoes the whole import) or storbench's own archives (``export --format archive``:
a run with everything it had; one whose run is here already is skipped, as merge skips
it). ``merge`` copies runs from another results database. Both keep where a run came from
in its inventory's ``provenance``.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import sys
import zlib
from typing import TYPE_CHECKING, Any

import click

from storbench import __version__, engines
from storbench.cli.app import CONTEXT, cli, db_option, err, out, write_output
from storbench.model.errors import UserError

if TYPE_CHECKING:
    from storbench.engines.base import Imported
    from storbench.model.metrics import Measurement
    from storbench.plan import Point
    from storbench.store import RunRow, Store

GZIP_MAGIC = b"\x1f\x8b"


def write_archive(store: Store, r: RunRow, output: str | None) -> None:
    """``export --format archive``: run ``r`` as gzip'd JSON, to ``output`` or stdout."""
    if r.live:
        raise UserError(
            f"run {r.id} is still running: its archive would miss what it measures next",
            fix="export it when it has ended",
        )
    if output is None and sys.stdout.isatty():
        raise UserError(
            "an archive is binary (gzip) and standard output is a terminal",
            fix=f"storbench export {r.id} --format archive -o run{r.id}.sbz",
        )
    doc = store.archive.dump(r.id)
    data = gzip.compress(json.dumps(doc, separators=(",", ":")).encode(), 6)
    if output:
        write_output(output, data)
        err.print(f"wrote run {r.id} ({len(doc['measurements'])} measurements) to {output}")
    else:
        sys.stdout.buffer.write(data)


def read_archive(path: str, head: bytes) -> dict[str, Any] | None:
    """The archive document in file ``path`` (``head``: its first bytes), or None when it
    is not one (fio's output, say). Its gzip is undone up to a bound (store/archive.py's
    unpack_limit: a gzip bomb is refused, not unpacked), its JSON read whole; what it
    holds is checked member by member when it is stored (store/archivecheck.py)."""
    from storbench.store.archive import FIX, MAX_UNPACK_RATIO, MIN_UNPACK_LIMIT, unpack_limit

    if not _is_archive(head):
        return None
    try:
        with open(path, "rb") as raw:
            size = os.fstat(raw.fileno()).st_size
            limit = unpack_limit(size)
            if not head.startswith(GZIP_MAGIC):
                data = raw.read()
            else:
                with gzip.GzipFile(fileobj=raw, mode="rb") as f:
                    data = f.read(limit + 1)
    except (OSError, EOFError, zlib.error) as e:
        raise UserError(
            f"{path} is gzip'd but not a whole storbench archive ({e})", fix=FIX
        ) from None
    if len(data) > limit:
        raise UserError(
            f"{path} unpacks to more than {limit / 2**20:,.0f} MiB, the most storbench reads of "
            f"an archive of {size:,} bytes ({MAX_UNPACK_RATIO} times its size, at least "
            f"{MIN_UNPACK_LIMIT / 2**20:,.0f} MiB; its own archives unpack to about 5 times "
            "theirs): it is no storbench archive",
            fix=FIX,
        )
    try:
        doc = json.loads(data)
    except (ValueError, RecursionError) as e:
        why = str(e) if isinstance(e, ValueError) else "it nests too deeply"
        raise UserError(f"{path} is not a whole storbench archive ({why})", fix=FIX) from None
    return doc if isinstance(doc, dict) else {}


def _is_archive(head: bytes) -> bool:
    """Whether a file whose first bytes are ``head`` is an archive (gzip'd, or its JSON)."""
    from storbench.store.archive import FORMAT

    return head.startswith(GZIP_MAGIC) or (b'"format"' in head and FORMAT.encode() in head)


@cli.command(
    "import",
    context_settings=CONTEXT,
    epilog="""\b
Examples:
  fio --output-format=json+ job.fio > result.json
  storbench import result.json
  storbench import --name lab-ssds results/*.json
  storbench import run12.sbz                 a run exported with --format archive

Accepts json and json+ output, one or several jobs (with or without group_reporting),
client/server output (client_stats; hosts are aggregated by storbench) and the stream of
documents --status-interval prints (the last one is the final result). Each file is stored
in one transaction as it is read; if one cannot be read, nothing of the import stays.

An archive (`storbench export RUN --format archive`) becomes a run with everything it had
(its name, plan, inventory, events, raw outputs, series); where it came from is kept in
its inventory's `provenance`. An archive whose run is here already (imported or merged
before, or this database's own run: recognised by its token, as merge does) is skipped,
so importing it twice makes one run. Several archives are read and stored one at a time,
each in a transaction of its own: when one cannot be read, those before it stay imported.
An archive is checked member by member before anything of it is stored (one that holds
what storbench does not write is refused, naming the member), and is unpacked up to 100
times its size (at least 256 MiB). A run whose unfinished points `resume` would refuse
(what no plan may say, or a command of the archive's author) is imported with a warning
that names it.
""",
)
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@db_option
@click.option("--name", default="import", show_default=True, help="Name of the imported run.")
def import_(files: tuple[str, ...], db_path: str | None, name: str) -> None:
    """Import fio JSON output produced elsewhere (each FILE one measurement per reporting
    group it holds: jobs after a stonewall or new_group are a group of their own), or runs
    exported with `storbench export RUN --format archive`."""
    from storbench.cli.runview import print_run
    from storbench.store import Store

    archives = sum(_is_archive(_head(path)) for path in files)  # a file at a time: streams
    if 0 < archives < len(files):
        raise UserError(
            "archives and fio outputs cannot be imported together",
            fix="import the archives with one command and the fio outputs with another",
        )
    store = Store(db_path)
    if archives:
        skipped = 0
        for path in files:  # each archive read, then stored in a transaction of its own
            doc = read_archive(path, _head(path)) or {}
            here = store.archive.run_of(doc, path)
            if here is not None:  # imported before, merged, or this database's own run
                origin = doc.get("from") if isinstance(doc.get("from"), dict) else {}
                out.print(
                    f"{path} (run {origin.get('run')} of {origin.get('db')}) is here already"
                    f" as run {here}: skipped",
                    markup=False,
                    soft_wrap=True,
                )
                skipped += 1
                continue
            run_id = store.archive.load(doc, os.path.abspath(path))
            out.print(
                f"imported {path} as run {run_id} in {store.path}", markup=False, soft_wrap=True
            )
            print_run(store, run_id)
            _warn_unresumable(store, run_id)
        if skipped:
            out.print(
                f"imported {len(files) - skipped} of {len(files)} archive(s) into {store.path};"
                f" {skipped} here already",
                markup=False,
                soft_wrap=True,
            )
        return
    run_id, stored = _import_outputs(store, files, name)
    groups = f" ({stored} reporting groups)" if stored > len(files) else ""
    out.print(f"imported {len(files)} file(s){groups} as run {run_id} in {store.path}")
    print_run(store, run_id)


def _warn_unresumable(store: Store, run_id: int) -> None:
    """Say so when the points of a run that came from elsewhere cannot be resumed here:
    ``resume`` checks them by the rules of a plan, and refuses (cli/running.py)."""
    from storbench.cli.running import checked_pending

    r = store.runs.get(run_id)
    if r.kind != "run":
        return
    try:
        checked_pending(store, r)
    except UserError as e:
        err.print(f"warning: {e.message}", style="yellow", markup=False, soft_wrap=True)


def _head(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read(4096)
    except OSError as e:
        raise UserError(
            f"cannot read {path}: {e.strerror}", fix="check the path and its permissions"
        ) from None


def _import_outputs(store: Store, files: tuple[str, ...], name: str) -> tuple[int, int]:
    """fio outputs as one run, file after file (module comment): its id, the measurements."""
    from pathlib import Path

    from storbench.store import StoreError

    engine = engines.importer()
    run_id: int | None = None
    stored = 0
    try:
        for path in files:
            try:
                text = Path(path).read_text(errors="replace")
                results = engine.import_output(text)
            except OSError as e:
                raise UserError(
                    f"cannot read {path}: {e.strerror}", fix="check the path and its permissions"
                ) from None
            except UserError as e:
                e.file = path
                raise
            items = [_imported_point(stored + i, got, path) for i, got in enumerate(results)]
            if run_id is None:
                version = next((m.engine_version for _, m in items if m.engine_version), None)
                run_id = store.runs.create(
                    kind="import",
                    name=name,
                    source=", ".join(files),
                    plan_text=None,
                    overrides=[],
                    inventory={"imported_from": [os.path.abspath(f) for f in files]},
                    fio_version=version,
                    storbench_version=__version__,
                    argv=sys.argv,
                    points=[],
                )
            times = [(got.started_at, got.ended_at) for got in results]
            rows = [(p, m, text, t) for (p, m), t in zip(items, times, strict=True)]
            store.measurements.record_file(run_id, engine.label, rows)
            stored += len(items)
            for got in results[:1]:
                for w in got.warnings:
                    err.print(f"{path}: {engine.label} printed: {w}", markup=False, soft_wrap=True)
        assert run_id is not None  # files is never empty (click: required)
        store.runs.set_status(run_id, "completed")
    except BaseException:  # all files or none: the part already stored goes again
        if run_id is not None:
            with contextlib.suppress(StoreError):
                store.runs.delete(run_id)
        raise
    return run_id, stored


def _imported_point(index: int, got: Imported, path: str) -> tuple[Point, Measurement]:
    """The point an imported result becomes: its target, job name and options as the file
    says, the file (and its reporting group, where it has several) as its axes."""
    import hashlib
    from pathlib import Path

    from storbench.plan import Point, Target

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
    return point, meas


@cli.command(
    "merge",
    context_settings=CONTEXT,
    epilog="""\b
Examples:
  storbench merge ~/lab-b/results.db              every run of lab B's database
  storbench merge other.db --run 12 --run 14      two of its runs
  storbench merge ./mine.db --db postgresql://bench@dbhost/storbench
                                                  my runs into the team's database

OTHER_DB and --db are each a file (SQLite) or a PostgreSQL URL: runs move both ways.

Each run is copied whole (plan, inventory, events, measurements with their raw outputs,
series) as a new run here, in one transaction each; its inventory's `provenance` says
which database and run it came from. A run that is here already (copied before, or this
database's own) is skipped, so merging twice copies nothing twice; a run still running
there is skipped too. A run whose unfinished points `resume` would refuse (what no plan may
say, or a command of its author) is copied with a warning that names it.
""",
)
@click.argument("other", metavar="OTHER_DB")
@db_option
@click.option("--run", "runs", multiple=True, metavar="RUN", help="Only this run of OTHER_DB.")
def merge(other: str, db_path: str | None, runs: tuple[str, ...]) -> None:
    """Copy the runs of another results database into this one, keeping where they came
    from."""
    from storbench.store import Store
    from storbench.store.archive import provenance

    source = Store(other, write=False)
    store = Store(db_path)
    if source.same_database(store):
        raise UserError("OTHER_DB is this database", fix="name another results database")
    chosen = [source.runs.get(ref) for ref in runs] if runs else list(reversed(source.runs.all()))
    copied = 0
    for r in chosen:
        tokens = {r.token or "", *(p.get("token", "") for p in provenance(r.inventory))} - {""}
        here = store.archive.run_with_token(tokens)
        if here is not None:
            out.print(
                f"run {r.id} ({r.name}) is here already as run {here}: skipped",
                markup=False,
                soft_wrap=True,
            )
        elif r.live:
            out.print(
                f"run {r.id} ({r.name}) is still running there: skipped",
                markup=False,
                soft_wrap=True,
            )
        else:
            run_id = store.archive.load(
                _dumped(source, r.id), source.path, f"run {r.id} of {source.path}"
            )
            out.print(f"run {r.id} ({r.name}) copied as run {run_id}", markup=False, soft_wrap=True)
            _warn_unresumable(store, run_id)
            copied += 1
    out.print(
        f"merged {copied} run(s) of {source.path} into {store.path}", markup=False, soft_wrap=True
    )


def _dumped(source: Store, run_id: int) -> dict[str, Any]:
    """Run ``run_id`` of the database ``merge`` copies from, as an archive document (checked
    member by member as it is stored, as an archive file is); a UserError when what the
    database holds of it cannot be read (edited by hand, or damaged)."""
    try:
        return source.archive.dump(run_id)
    except (ValueError, TypeError, KeyError, zlib.error, RecursionError) as e:
        raise UserError(
            f"run {run_id} of {source.path} cannot be read to copy it ({type(e).__name__}: {e})",
            fix=f"leave it out (merge it with --run for each other run), or repair {source.path}",
        ) from None
