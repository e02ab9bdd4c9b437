"""The :class:`Store`: one connection, its lock and transactions, writing and reading runs, points,
measurements and events.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import json
import os
import re
import sqlite3
import threading
import time
import uuid
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar

from storbench import liveness
from storbench.errors import NotFoundError, UserError
from storbench.metrics import Measurement
from storbench.plan import Point
from storbench.store.faults import (
    StoreError,
    _open_read_only,
    _read_only_media,
    busy_timeout,
    store_error,
)
from storbench.store.rows import EventRow, MeasurementRow, RunRow, default_db_path
from storbench.store.schema import _MIGRATIONS, _SCHEMA, SCHEMA_VERSION, _statements

_P = ParamSpec("_P")
_R = TypeVar("_R")


def _locked(method: Callable[Concatenate[Store, _P], _R]) -> Callable[Concatenate[Store, _P], _R]:
    """Run a Store method holding the store's lock (see the module docstring); a sqlite3
    error becomes a :class:`StoreError`."""

    @functools.wraps(method)
    def wrapper(self: Store, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        with self._lock:
            try:
                return method(self, *args, **kwargs)
            except sqlite3.Error as e:
                raise store_error(self.path, e, self.timeout) from None

    return wrapper


class Store:
    """The results database. ``write``: the command records (run, import, resume, cleanup),
    so a database that cannot take a write is refused at once, before anything else
    happens; otherwise a database on read-only media is opened read-only."""

    def __init__(self, path: str | None = None, *, write: bool = True) -> None:
        self.path = os.path.abspath(os.path.expanduser(path or default_db_path()))
        #: held by every use of ``db`` (re-entrant: a method may call another)
        self._lock = threading.RLock()
        self.timeout = busy_timeout()
        if not write and not os.path.exists(self.path):
            # a command that only reads makes no database (a mistyped --db would be one)
            raise NotFoundError(
                f"there is no results database at {self.path}",
                fix="record a run first (`storbench run quick --target ./x.dat`), or give "
                "the database with --db PATH or STORBENCH_DB",
            )
        self.readonly = _read_only_media(self.path)
        if self.readonly and write:
            raise store_error(self.path, sqlite3.OperationalError("readonly database"))
        try:
            if self.readonly:
                self.db = _open_read_only(self.path, self.timeout)
            else:
                Path(self.path).parent.mkdir(parents=True, exist_ok=True)
                self.db = sqlite3.connect(
                    self.path, timeout=self.timeout, isolation_level=None, check_same_thread=False
                )
                self.db.execute("PRAGMA journal_mode=WAL")
                self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.execute("PRAGMA foreign_keys=ON")
            self.db.row_factory = sqlite3.Row
            self._migrate()
            if write:  # a write it cannot take shows now, not after preflight made files
                with self.tx():
                    pass
        except OSError as e:
            raise StoreError(
                f"cannot open the results database {self.path}: {e.strerror or e}",
                fix="choose another with --db PATH or STORBENCH_DB",
            ) from None
        except sqlite3.Error as e:
            raise store_error(self.path, e, self.timeout) from None

    def _schema_version(self) -> int | None:
        tables = {r[0] for r in self.db.execute("SELECT name FROM sqlite_master")}
        if "meta" not in tables:
            if tables - {"sqlite_sequence"}:
                raise StoreError(
                    f"{self.path} is an SQLite database, but not a storbench results database "
                    f"(it holds {', '.join(sorted(tables)[:5])})",
                    fix="check the path given with --db or STORBENCH_DB",
                )
            return None
        row = self.db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        try:
            return int(row[0]) if row is not None else None
        except ValueError:
            raise StoreError(
                f"{self.path} is not a storbench results database, or it is damaged "
                f"(schema version {row[0]!r})",
                fix="check the path given with --db or STORBENCH_DB",
            ) from None

    def _refuse_newer(self, version: int | None) -> None:
        if version is not None and version > SCHEMA_VERSION:
            raise UserError(
                f"{self.path} was written by a newer storbench "
                f"(schema {version}, this one knows {SCHEMA_VERSION})",
                fix="upgrade storbench, or use another --db",
            )

    def _migrate(self) -> None:
        """Create the schema in a new database; bring an older one up to SCHEMA_VERSION in
        place (each step keeps every row); refuse a newer one. In one write transaction, the
        version read again inside it: of two processes opening an old database at once, one
        migrates and the other finds it done."""
        version = self._schema_version()
        self._refuse_newer(version)
        if version == SCHEMA_VERSION:
            return
        if self.readonly:
            raise StoreError(
                f"{self.path} is read-only and "
                + (
                    "holds no storbench results"
                    if version is None
                    else f"was written by an older storbench (schema {version} of {SCHEMA_VERSION})"
                ),
                fix="copy it to a writable place and open that copy once (storbench brings it "
                "up to date), or give another with --db PATH",
            )
        with self.tx():
            version = self._schema_version()
            self._refuse_newer(version)
            if version == SCHEMA_VERSION:
                return
            if version is None:
                scripts = [_SCHEMA]
            else:
                scripts = [_MIGRATIONS[v] for v in range(version + 1, SCHEMA_VERSION + 1)]
            for script in scripts:
                for statement in _statements(script):
                    self.db.execute(statement)
            self.db.execute(
                "INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),)
            )

    def tx(self) -> _Tx:
        """A write transaction (``BEGIN IMMEDIATE``), holding the store's lock throughout."""
        return _Tx(self.db, self._lock)

    @contextlib.contextmanager
    def _translated(self) -> Iterator[None]:
        """sqlite3's errors inside as :class:`StoreError` (for the generators)."""
        try:
            yield
        except sqlite3.Error as e:
            raise store_error(self.path, e, self.timeout) from None

    @_locked
    def close(self) -> None:
        self.db.close()

    # ------------------------------------------------------------------ runs

    @_locked
    def create_run(
        self,
        *,
        kind: str,
        name: str,
        source: str,
        plan_text: str | None,
        overrides: list[str],
        inventory: dict[str, Any],
        fio_version: str | None,
        storbench_version: str,
        argv: list[str],
        points: list[Point],
    ) -> int:
        with self.tx():
            cur = self.db.execute(
                "INSERT INTO runs (kind, name, source, plan_text, overrides, status, started_at,"
                " inventory, fio_version, storbench_version, hostname, pid, argv, token, proc_id,"
                " heartbeat) VALUES (?, ?, ?, ?, ?, 'running', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    kind,
                    name,
                    source,
                    plan_text,
                    json.dumps(overrides),
                    time.time(),
                    json.dumps(inventory, default=str),
                    fio_version,
                    storbench_version,
                    liveness.hostname(),
                    os.getpid(),
                    json.dumps(argv),
                    uuid.uuid4().hex,
                    liveness.process_identity(),
                    time.time(),
                ),
            )
            run_id = int(cur.lastrowid or 0)
            self.db.executemany(
                "INSERT INTO points (run_id, idx, key, repetition, spec) VALUES (?, ?, ?, ?, ?)",
                [(run_id, p.index, p.key, p.repetition, json.dumps(p.to_dict())) for p in points],
            )
        return run_id

    @_locked
    def set_status(self, run_id: int, status: str, *, ended: bool = True) -> None:
        with self.tx():
            self.db.execute(
                "UPDATE runs SET status=?, ended_at=?, pid=? WHERE id=?",
                (status, time.time() if ended else None, None if ended else os.getpid(), run_id),
            )

    @_locked
    def delete_run(self, run_id: int) -> None:
        """Remove a run and everything recorded of it (an import that failed half-way)."""
        with self.tx():
            self.db.execute("DELETE FROM runs WHERE id=?", (run_id,))

    @_locked
    def claim(self, run_id: int, doing: str = "resume") -> RunRow:
        """Make this process the one executing run ``run_id`` (status ``running``, its pid,
        identity and a fresh heartbeat), in one write transaction; refuse with a
        :class:`UserError` when another process executes it right now."""
        with self.tx():
            row = self.run(run_id)
            if row.live and not (row.hostname == liveness.hostname() and row.pid == os.getpid()):
                raise row.busy_error(doing)
            self.db.execute(
                "UPDATE runs SET status='running', ended_at=NULL, hostname=?, pid=?, proc_id=?,"
                " heartbeat=?, token=COALESCE(token, ?) WHERE id=?",
                (
                    liveness.hostname(),
                    os.getpid(),
                    liveness.process_identity(),
                    time.time(),
                    uuid.uuid4().hex,
                    run_id,
                ),
            )
        return self.run(run_id)

    @_locked
    def beat(self, run_id: int) -> None:
        """This process's heartbeat for the run it executes (see liveness.py)."""
        with self.tx():
            self.db.execute(
                "UPDATE runs SET heartbeat=? WHERE id=? AND pid=? AND hostname=?",
                (time.time(), run_id, os.getpid(), liveness.hostname()),
            )

    @_locked
    def live_runs(self) -> list[RunRow]:
        """The runs that a live process executes right now."""
        rows = self.db.execute(
            _RUN_SELECT + " WHERE r.status='running' GROUP BY r.id ORDER BY r.id"
        ).fetchall()
        return [r for r in map(self._run_row, rows) if r.live]

    @_locked
    def runs(self, limit: int | None = None) -> list[RunRow]:
        sql = _RUN_SELECT + " GROUP BY r.id ORDER BY r.id DESC"
        if limit:
            sql += f" LIMIT {int(limit)}"
        return [self._run_row(r) for r in self.db.execute(sql)]

    @_locked
    def run(self, ref: str | int) -> RunRow:
        run_id = self.resolve_run(ref)
        row = self.db.execute(_RUN_SELECT + " WHERE r.id=? GROUP BY r.id", (run_id,)).fetchone()
        return self._run_row(row)

    @_locked
    def resolve_run(self, ref: str | int) -> int:
        """A run id from ``12``, ``latest`` or ``latest~N`` (the Nth run before the latest)."""
        text = str(ref).strip()
        m = re.fullmatch(r"latest(?:~(\d+))?", text)
        if m:
            back = int(m.group(1) or 0)
            row = self.db.execute(
                "SELECT id FROM runs ORDER BY id DESC LIMIT 1 OFFSET ?", (back,)
            ).fetchone()
            if row is None:
                count = self.db.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
                raise NotFoundError(
                    f"there is no run {text} in {self.path} "
                    f"({count} run{'s' if count != 1 else ''} recorded)",
                    fix="list runs with `storbench runs`",
                )
            return int(row[0])
        if not text.isdigit():
            raise NotFoundError(
                f"{text!r} is not a run",
                fix="give a run id (see `storbench runs`), `latest`, or `latest~N`",
            )
        row = self.db.execute("SELECT id FROM runs WHERE id=?", (int(text),)).fetchone()
        if row is None:
            raise NotFoundError(
                f"there is no run {text} in {self.path}",
                fix="list runs with `storbench runs` (or pick the database with --db)",
            )
        return int(row[0])

    @staticmethod
    def _run_row(r: sqlite3.Row) -> RunRow:
        return RunRow(
            id=r["id"],
            kind=r["kind"],
            name=r["name"],
            source=r["source"],
            plan_text=r["plan_text"],
            overrides=json.loads(r["overrides"]),
            status=r["status"],
            started_at=r["started_at"],
            ended_at=r["ended_at"],
            inventory=json.loads(r["inventory"]),
            fio_version=r["fio_version"],
            storbench_version=r["storbench_version"],
            hostname=r["hostname"],
            pid=r["pid"],
            points=r["n_points"],
            measured=r["n_measured"],
            failed=r["n_failed"],
            token=r["token"],
            proc_id=r["proc_id"],
            heartbeat=r["heartbeat"],
        )

    # ------------------------------------------------------------------ points

    @_locked
    def points(self, run_id: int) -> list[Point]:
        rows = self.db.execute("SELECT spec FROM points WHERE run_id=? ORDER BY idx", (run_id,))
        return [Point.from_dict(json.loads(r[0])) for r in rows]

    @_locked
    def pending_points(self, run_id: int) -> list[Point]:
        rows = self.db.execute(
            "SELECT p.spec FROM points p LEFT JOIN measurements m"
            " ON m.run_id=p.run_id AND m.point_idx=p.idx"
            " WHERE p.run_id=? AND m.id IS NULL ORDER BY p.idx",
            (run_id,),
        )
        return [Point.from_dict(json.loads(r[0])) for r in rows]

    # ------------------------------------------------------------------ measurements

    @_locked
    def record(
        self,
        run_id: int,
        point: Point,
        meas: Measurement,
        *,
        engine: str,
        command: list[str] | list[list[str]] | None,
        job_file: str | None,
        raw_output: str | None,
        stderr: str | None,
        started_at: float | None,
        ended_at: float | None,
    ) -> int:
        """Store one measurement and commit at once.

        ``command`` is the engine's argv, or one argv per process when a point ran several
        (the ``rados bench`` clients of one point); it is stored as JSON either way and
        :meth:`raw` gives it back as it was given."""
        data = meas.to_dict()
        hists: list[tuple[str, str, str, dict[int, int]]] = []
        _strip_bins(data, "", hists)
        with self.tx():
            if self.db.execute(
                "SELECT 1 FROM measurements WHERE run_id=? AND point_idx=?", (run_id, point.index)
            ).fetchone():
                raise UserError(
                    f"point {point.index + 1} of run {run_id} is recorded already: another "
                    "process executed it at the same time; this measurement is not stored",
                    fix=f"see `storbench show {run_id}`; run one `storbench resume` at a time",
                )
            cur = self.db.execute(
                "INSERT INTO measurements (run_id, point_idx, status, error, started_at,"
                " ended_at, engine, engine_version, command, job_file, raw_output, stderr, data)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    run_id,
                    point.index,
                    meas.status,
                    meas.error,
                    started_at,
                    ended_at,
                    engine,
                    meas.engine_version,
                    json.dumps(command) if command else None,
                    job_file,
                    zlib.compress(raw_output.encode(), 6) if raw_output is not None else None,
                    stderr,
                    json.dumps(data),
                ),
            )
            mid = int(cur.lastrowid or 0)
            self.db.executemany(
                "INSERT INTO histograms VALUES (?, ?, ?, ?, ?)",
                [(mid, host, ddir, metric, json.dumps(bins)) for host, ddir, metric, bins in hists],
            )
        return mid

    @_locked
    def measurements(self, run_id: int, *, bins: bool = False) -> list[MeasurementRow]:
        """Measurements of a run in point order, each with its point."""
        rows = self.db.execute(
            "SELECT m.id, m.run_id, m.point_idx, m.status, m.error, m.started_at, m.ended_at,"
            " m.engine, m.engine_version, m.data, p.spec FROM measurements m"
            " LEFT JOIN points p ON p.run_id=m.run_id AND p.idx=m.point_idx"
            " WHERE m.run_id=? ORDER BY m.point_idx",
            (run_id,),
        ).fetchall()
        hist: dict[int, list[sqlite3.Row]] = {}
        if bins and rows:
            for h in self.db.execute(
                "SELECT h.* FROM histograms h JOIN measurements m ON m.id=h.measurement_id"
                " WHERE m.run_id=?",
                (run_id,),
            ):
                hist.setdefault(h["measurement_id"], []).append(h)
        out = []
        for r in rows:
            data = json.loads(r["data"])
            for h in hist.get(r["id"], []):
                _put_bins(data, h["host"], h["direction"], h["metric"], json.loads(h["bins"]))
            out.append(
                MeasurementRow(
                    id=r["id"],
                    run_id=r["run_id"],
                    point_idx=r["point_idx"],
                    status=r["status"],
                    error=r["error"],
                    started_at=r["started_at"],
                    ended_at=r["ended_at"],
                    engine=r["engine"],
                    engine_version=r["engine_version"],
                    measurement=Measurement.from_dict(data),
                    point=Point.from_dict(json.loads(r["spec"])) if r["spec"] else None,
                )
            )
        return out

    @_locked
    def raw(self, measurement_id: int) -> dict[str, Any]:
        """The traceable originals of a measurement: command, job file, raw output, stderr."""
        r = self.db.execute(
            "SELECT command, job_file, raw_output, stderr FROM measurements WHERE id=?",
            (measurement_id,),
        ).fetchone()
        if r is None:
            raise NotFoundError(f"there is no measurement {measurement_id}")
        return {
            "command": json.loads(r["command"]) if r["command"] else None,
            "job_file": r["job_file"],
            "raw_output": zlib.decompress(r["raw_output"]).decode()
            if r["raw_output"] is not None
            else None,
            "stderr": r["stderr"],
        }

    def point_histograms(
        self, run_id: int, metric: str = "clat"
    ) -> Iterator[tuple[str, Iterator[tuple[str, str]]]]:
        """The aggregate histograms of ``metric`` of a run's measurements that did not fail,
        grouped by point key: ``(key, ((direction, bins JSON text), ...))`` per point, one
        point at a time (a big run's histograms are hundreds of MiB as objects: streamed,
        parsed by the caller). The store's lock is held until the iteration ends."""
        with self._lock, self._translated():
            cur = self.db.execute(
                "SELECT p.key, h.direction, h.bins FROM histograms h"
                " JOIN measurements m ON m.id = h.measurement_id"
                " JOIN points p ON p.run_id = m.run_id AND p.idx = m.point_idx"
                " WHERE m.run_id = ? AND h.host = '' AND h.metric = ?"
                " AND m.status != 'failed' ORDER BY p.key",
                (run_id, metric),
            )
            for key, group in itertools.groupby(cur, key=lambda row: row[0]):
                yield key, ((d, b) for _, d, b in group)

    def iter_raw(self, run_id: int) -> Iterator[tuple[int, dict[str, Any]]]:
        with self._lock, self._translated():
            ids = self.db.execute(
                "SELECT id FROM measurements WHERE run_id=? ORDER BY point_idx", (run_id,)
            ).fetchall()
        for (mid,) in ids:
            yield mid, self.raw(mid)

    # ------------------------------------------------------------------ events

    @_locked
    def add_event(
        self,
        run_id: int,
        kind: str,
        message: str,
        data: dict[str, Any] | None = None,
        *,
        at: float | None = None,
    ) -> int:
        """Record an event of a run and commit at once; ``at`` (unix time, s) defaults to
        now. Safe to call from any thread. Returns the event's id."""
        with self.tx():
            cur = self.db.execute(
                "INSERT INTO events (run_id, at, kind, message, data) VALUES (?, ?, ?, ?, ?)",
                (
                    run_id,
                    time.time() if at is None else at,
                    kind,
                    message,
                    json.dumps(data or {}, default=str),
                ),
            )
        return int(cur.lastrowid or 0)

    @_locked
    def events(self, run_id: int, kind: str | None = None) -> list[EventRow]:
        """The events of a run (of one ``kind`` only, when given), by time then id."""
        sql = "SELECT id, run_id, at, kind, message, data FROM events WHERE run_id=?"
        args: tuple[Any, ...] = (run_id,)
        if kind is not None:
            sql += " AND kind=?"
            args += (kind,)
        return [
            EventRow(
                id=r["id"],
                run_id=r["run_id"],
                at=r["at"],
                kind=r["kind"],
                message=r["message"],
                data=json.loads(r["data"]),
            )
            for r in self.db.execute(sql + " ORDER BY at, id", args)
        ]


_RUN_SELECT = (
    "SELECT r.*, (SELECT COUNT(*) FROM points p WHERE p.run_id=r.id) AS n_points,"
    " COUNT(m.id) AS n_measured, COALESCE(SUM(m.status != 'ok'), 0) AS n_failed"
    " FROM runs r LEFT JOIN measurements m ON m.run_id=r.id"
)


class _Tx:
    def __init__(self, db: sqlite3.Connection, lock: threading.RLock) -> None:
        self.db = db
        self.lock = lock

    def __enter__(self) -> sqlite3.Connection:
        self.lock.acquire()
        try:
            self.db.execute("BEGIN IMMEDIATE")
        except BaseException:
            self.lock.release()
            raise
        return self.db

    def __exit__(self, exc_type: object, *_: object) -> None:
        try:
            self.db.execute("ROLLBACK" if exc_type else "COMMIT")
        finally:
            self.lock.release()


def _strip_bins(
    data: dict[str, Any], host: str, out: list[tuple[str, str, str, dict[int, int]]]
) -> None:
    for ddir, d in (data.get("directions") or {}).items():
        for metric in ("slat", "clat", "lat"):
            lat = d.get(metric)
            if lat and lat.get("bins"):
                out.append((host, ddir, metric, lat["bins"]))
                lat["bins"] = None
    for h, sub in (data.get("hosts") or {}).items():
        _strip_bins(sub, h, out)


def _put_bins(
    data: dict[str, Any], host: str, ddir: str, metric: str, bins: dict[str, int]
) -> None:
    target = data if not host else (data.get("hosts") or {}).get(host)
    if target is None:
        return
    lat = (target.get("directions") or {}).get(ddir, {}).get(metric)
    if lat is not None:
        lat["bins"] = bins
