"""The :class:`Store`: opening the database (read-only media, schema checks and migrations),
the parts it is made of, and closing it. Each part is about one subject and holds its own
reads and writes: runs (runs, points, claims), measurements, events, series (the points'
intervals), host samples and the archive (runs as documents); base holds the connection,
lock and transactions they share.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

import storbench.store.location as location
from storbench.model.errors import NotFoundError, UserError
from storbench.store.archive import Archive
from storbench.store.base import Connection, RedactingConnection, _locked
from storbench.store.dialect import SQLITE, Dialect
from storbench.store.events import Events
from storbench.store.faults import (
    StoreError,
    _open_read_only,
    _read_only_media,
    busy_timeout,
    store_error,
)
from storbench.store.hostload import HostSamples
from storbench.store.measurements import Measurements
from storbench.store.rows import default_db_path
from storbench.store.runs import Runs
from storbench.store.schema import SCHEMA_VERSION, SET_VERSION, _statements
from storbench.store.series import RunSeries, Series

#: The page size of a database storbench creates (SQLite's default is 4096).
PAGE_SIZE = 8192


class Store:
    """The results database, and the parts it is made of: :attr:`runs`,
    :attr:`measurements`, :attr:`events`, :attr:`series`, :attr:`host_samples` and
    :attr:`archive`, over the one :class:`~storbench.store.base.Connection` they share.

    ``write``: the command records (run, import, resume, cleanup), so a database that
    cannot take a write is refused at once, before anything else happens, and one of an
    older schema is brought up to date. Otherwise the command only reads, and the database
    is not changed at all: an older schema is read through (:func:`_prepare`), a rollback
    journal stays one, a write is refused by the connection itself; a database on
    read-only media is opened read-only."""

    #: the open database the parts share
    conn: Connection
    #: where the database is, as shown in messages (a URL without its password)
    path: str
    #: the connection itself (sqlite3's, or storbench.store.pg's PgConnection)
    db: Any
    dialect: Dialect
    runs: Runs
    measurements: Measurements
    events: Events
    series: Series
    host_samples: HostSamples
    archive: Archive

    def __init__(self, path: str | None = None, *, write: bool = True) -> None:
        given = path or default_db_path()
        timeout = busy_timeout()
        if location.is_url(given):
            conn = _open_url(given, timeout)
        else:
            conn = _open_sqlite(given, write, timeout)
        try:
            _prepare(conn, write)
            if write:  # a write it cannot take shows now, not after preflight made files
                with conn.tx():
                    pass
        except conn.dialect.errors as e:
            raise conn.error(e) from None
        self.conn = conn
        self.path, self.db, self.dialect = conn.path, conn.db, conn.dialect
        self.runs = Runs(conn)
        self.measurements = Measurements(conn)
        self.events = Events(conn)
        self.series = Series(conn)
        self.host_samples = HostSamples(conn)
        self.archive = Archive(conn)

    def run_series(self, run_id: int) -> RunSeries:
        """A run's intervals and host samples by point index, as analyses read them
        (analysis/soak.py)."""
        return RunSeries(self.series, self.host_samples, run_id)

    def same_database(self, other: Store) -> bool:
        """Whether ``other`` is this very database (the same file, or the same database of
        the same PostgreSQL server however its URL names it)."""
        if self.dialect is not other.dialect:
            return False
        if self.dialect is SQLITE:
            return os.path.samefile(self.path, other.path)
        return bool(self._identity() == other._identity())

    @_locked
    def _identity(self) -> tuple[Any, ...]:
        row = self.db.execute(
            "SELECT (SELECT system_identifier FROM pg_control_system()), inet_server_port(),"
            " current_database(), current_schema()"
        ).fetchone()
        return tuple(row)

    @_locked
    def close(self) -> None:
        self.db.close()


def _open_url(url: str, timeout: float) -> Connection:
    """A PostgreSQL database (storbench.store.pg; SQLAlchemy and psycopg are imported
    only now: a command on the default SQLite database never loads them)."""
    if not location.is_postgres(url):
        raise StoreError(
            f"{location.hide_passwords(url)} is not a database storbench can use",
            fix="give a file path (SQLite) or a PostgreSQL URL, "
            "postgresql://USER@HOST/DBNAME, with --db or STORBENCH_DB",
        )
    import storbench.store.pg as pg

    shown = location.hide_passwords(url)
    try:
        db = pg.connect(url, timeout)
    except pg.POSTGRES.errors as e:
        raise pg.POSTGRES.error(shown, e, timeout) from None
    return Connection(db, pg.POSTGRES, shown, timeout=timeout)


def _open_sqlite(given: str, write: bool, timeout: float) -> Connection:
    path = os.path.abspath(os.path.expanduser(given))
    if not write and not os.path.exists(path):
        # a command that only reads makes no database (a mistyped --db would be one)
        raise NotFoundError(
            f"there is no results database at {path}",
            fix="record a run first (`storbench run quick --target ./x.dat`), or give "
            "the database with --db PATH or STORBENCH_DB",
        )
    readonly = _read_only_media(path)
    if readonly and write:
        raise store_error(path, sqlite3.OperationalError("readonly database"))
    try:
        if readonly:
            db = _open_read_only(path, timeout)
        else:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(
                path,
                timeout=timeout,
                isolation_level=None,
                check_same_thread=False,
                factory=RedactingConnection,
            )
            if write:  # a command that only reads changes nothing, not the journal mode
                # a new database's pages (no effect on one that has tables): a stored point
                # is about 3 KB, and 8 KiB pages hold its rows with less left over than 4 KiB
                # (bench/dbsize: 3.9 against 5.3 KB a point)
                db.execute(f"PRAGMA page_size={PAGE_SIZE}")
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=NORMAL")
        db.execute("PRAGMA foreign_keys=ON")
        db.row_factory = sqlite3.Row
    except OSError as e:
        raise StoreError(
            f"cannot open the results database {path}: {e.strerror or e}",
            fix="choose another with --db PATH or STORBENCH_DB",
        ) from None
    except sqlite3.Error as e:
        raise store_error(path, e, timeout) from None
    return Connection(db, SQLITE, path, timeout=timeout, readonly=readonly)


def _schema_version(conn: Connection) -> int | None:
    tables = conn.dialect.tables(conn.db)
    if "meta" not in tables:
        if tables:
            kind = "an SQLite" if conn.dialect is SQLITE else "a PostgreSQL"
            raise StoreError(
                f"{conn.path} is {kind} database, but not a storbench results database "
                f"(it holds {', '.join(sorted(tables)[:5])})",
                fix="check the path given with --db or STORBENCH_DB",
            )
        return None
    row = conn.db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
    try:
        return int(row[0]) if row is not None else None
    except ValueError:
        raise StoreError(
            f"{conn.path} is not a storbench results database, or it is damaged "
            f"(schema version {row[0]!r})",
            fix="check the path given with --db or STORBENCH_DB",
        ) from None


def _refuse_newer(conn: Connection, version: int | None) -> None:
    if version is not None and version > SCHEMA_VERSION:
        raise UserError(
            f"{conn.path} was written by a newer storbench "
            f"(schema {version}, this one knows {SCHEMA_VERSION})",
            fix="upgrade storbench, or use another --db",
        )


def _prepare(conn: Connection, write: bool) -> None:
    """A command that writes: :func:`_migrate`. One that only reads: the database as it is
    (reading never changes it); one of an older schema, or one without tables yet, is read
    through the current schema (the dialect's ``read_through``: empty tables and views in
    the connection's own TEMP schema), and from then on the connection refuses any write
    (SQLite's ``query_only``; PostgreSQL's read-only transactions)."""
    if write:
        _migrate(conn)
        return
    version = _schema_version(conn)
    _refuse_newer(conn, version)
    if version != SCHEMA_VERSION:
        conn.dialect.read_through(conn.db, version)
    conn.dialect.read_only(conn.db)


def _migrate(conn: Connection) -> None:
    """Create the schema in a new database; bring an older one up to SCHEMA_VERSION in
    place (each step keeps every row); refuse a newer one. In one write transaction, the
    version read again inside it: of two processes opening an old database at once, one
    migrates and the other finds it done."""
    version = _schema_version(conn)
    _refuse_newer(conn, version)
    if version == SCHEMA_VERSION:
        return
    with conn.tx():
        conn.dialect.lock_schema(conn.db)
        version = _schema_version(conn)
        _refuse_newer(conn, version)
        if version == SCHEMA_VERSION:
            return
        scripts: list[Any]
        if version is None:
            scripts = [conn.dialect.schema]
        else:
            scripts = [conn.dialect.migrations[v] for v in range(version + 1, SCHEMA_VERSION + 1)]
        for script in scripts:
            if callable(script):
                script(conn.db)
                continue
            for statement in _statements(script):
                conn.db.execute(statement)
        conn.db.execute(SET_VERSION, (str(SCHEMA_VERSION),))
