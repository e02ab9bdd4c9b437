"""The :class:`Store`: opening the database (read-only media, schema checks and migrations)
and closing it. What it writes and reads comes from its parts: runs (runs, points, claims),
measurements, events; base holds the connection, lock and transactions they share.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from pathlib import Path
from typing import Any

import storbench.store.location as location
from storbench.errors import NotFoundError, UserError
from storbench.store.archive import _Archive
from storbench.store.base import RedactingConnection, _locked
from storbench.store.dialect import SQLITE, Dialect
from storbench.store.events import _Events
from storbench.store.faults import (
    StoreError,
    _open_read_only,
    _read_only_media,
    busy_timeout,
    store_error,
)
from storbench.store.hostload import _HostSamples
from storbench.store.measurements import _Measurements
from storbench.store.rows import default_db_path
from storbench.store.runs import _Runs
from storbench.store.schema import SCHEMA_VERSION, SET_VERSION, _statements
from storbench.store.series import _Series

#: The page size of a database storbench creates (SQLite's default is 4096).
PAGE_SIZE = 8192


class Store(_Runs, _Measurements, _Events, _Series, _HostSamples, _Archive):
    """The results database. ``write``: the command records (run, import, resume, cleanup),
    so a database that cannot take a write is refused at once, before anything else
    happens; otherwise a database on read-only media is opened read-only."""

    def __init__(self, path: str | None = None, *, write: bool = True) -> None:
        given = path or default_db_path()
        #: held by every use of ``db`` (re-entrant: a method may call another)
        self._lock = threading.RLock()
        self.timeout = busy_timeout()
        self.readonly = False
        self.dialect: Dialect = SQLITE
        if location.is_url(given):
            self._open_url(given)
        else:
            self._open_sqlite(given, write)
        try:
            self._migrate()
            if write:  # a write it cannot take shows now, not after preflight made files
                with self.tx():
                    pass
        except self.dialect.errors as e:
            raise self.dialect.error(self.path, e, self.timeout) from None

    def _open_url(self, url: str) -> None:
        """A PostgreSQL database (storbench.store.pg; SQLAlchemy and psycopg are imported
        only now: a command on the default SQLite database never loads them)."""
        if not location.is_postgres(url):
            raise StoreError(
                f"{location.hide_passwords(url)} is not a database storbench can use",
                fix="give a file path (SQLite) or a PostgreSQL URL, "
                "postgresql://USER@HOST/DBNAME, with --db or STORBENCH_DB",
            )
        import storbench.store.pg as pg

        self.path = location.hide_passwords(url)
        self.dialect = pg.POSTGRES
        try:
            self.db = pg.connect(url, self.timeout)
        except self.dialect.errors as e:
            raise self.dialect.error(self.path, e, self.timeout) from None

    def _open_sqlite(self, path: str, write: bool) -> None:
        self.path = os.path.abspath(os.path.expanduser(path))
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
                    self.path,
                    timeout=self.timeout,
                    isolation_level=None,
                    check_same_thread=False,
                    factory=RedactingConnection,
                )
                # a new database's pages (no effect on one that has tables): a stored point
                # is about 3 KB, and 8 KiB pages hold its rows with less left over than 4 KiB
                # (bench/dbsize: 3.9 against 5.3 KB a point)
                self.db.execute(f"PRAGMA page_size={PAGE_SIZE}")
                self.db.execute("PRAGMA journal_mode=WAL")
                self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.execute("PRAGMA foreign_keys=ON")
            self.db.row_factory = sqlite3.Row
        except OSError as e:
            raise StoreError(
                f"cannot open the results database {self.path}: {e.strerror or e}",
                fix="choose another with --db PATH or STORBENCH_DB",
            ) from None
        except sqlite3.Error as e:
            raise store_error(self.path, e, self.timeout) from None

    def _schema_version(self) -> int | None:
        tables = self.dialect.tables(self.db)
        if "meta" not in tables:
            if tables:
                kind = "an SQLite" if self.dialect is SQLITE else "a PostgreSQL"
                raise StoreError(
                    f"{self.path} is {kind} database, but not a storbench results database "
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
            self.dialect.lock_schema(self.db)
            version = self._schema_version()
            self._refuse_newer(version)
            if version == SCHEMA_VERSION:
                return
            scripts: list[Any]
            if version is None:
                scripts = [self.dialect.schema]
            else:
                scripts = [
                    self.dialect.migrations[v] for v in range(version + 1, SCHEMA_VERSION + 1)
                ]
            for script in scripts:
                if callable(script):
                    script(self.db)
                    continue
                for statement in _statements(script):
                    self.db.execute(statement)
            self.db.execute(SET_VERSION, (str(SCHEMA_VERSION),))

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
