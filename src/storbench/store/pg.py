"""A results database on PostgreSQL (``--db postgresql://USER@HOST/DBNAME``): the connection,
through SQLAlchemy Core 2 and psycopg 3, that the Store uses like its sqlite3 one.

:class:`PgConnection` takes the Store's statements as they are written for both databases
(``?`` parameters: psycopg's are ``%s``) and gives rows read by column name or position,
like ``sqlite3.Row``. It runs in autocommit, as the SQLite connection does
(``isolation_level=None``): a read holds nothing open, a write transaction is the Store's
``BEGIN`` ... ``COMMIT`` (storbench.store.base). Credentials come from the URL, or from
libpq's ~/.pgpass and PG* variables; the password is never shown (the Store's ``path`` is
the URL without it) and never stored (storbench.model.redact cleans it out of any text written).

Imported only when a database is given by URL: SQLAlchemy and psycopg cost a third of a
second to import, which a command on the default SQLite database never pays.
"""

from __future__ import annotations

import functools
import math
import urllib.parse
from collections.abc import Iterable, Iterator
from typing import Any, ClassVar

import psycopg
import sqlalchemy as sa
import sqlalchemy.exc
from sqlalchemy.pool import NullPool

import storbench.store.location as location
from storbench.model import redact
from storbench.store.dialect import Dialect
from storbench.store.faults import StoreError, pg_store_error
from storbench.store.schema import PG_SCHEMA, _statements

#: An arbitrary number every storbench process takes as its advisory lock while it creates
#: or migrates the schema (two processes opening a new database at once: one creates it).
SCHEMA_LOCK = 0x5354_4F52  # "STOR"


class PostgresDialect(Dialect):
    name = "postgresql"
    #: READ COMMITTED; the rows a transaction must hold still it locks itself (lock_row)
    begin = "BEGIN"
    lock_row = " FOR UPDATE"
    errors = (sqlalchemy.exc.DBAPIError, psycopg.Error)
    schema = PG_SCHEMA
    #: a PostgreSQL database starts at schema 7: no step before it exists here
    migrations: ClassVar[dict[int, Any]] = {}

    def tables(self, db: Any) -> set[str]:
        rows = db.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema=current_schema()"
        )
        return {r[0] for r in rows}

    def columns(self, db: Any, table: str) -> list[str]:
        rows = db.execute(
            "SELECT column_name FROM information_schema.columns"
            " WHERE table_schema=current_schema() AND table_name=? ORDER BY ordinal_position",
            (table,),
        )
        return [r[0] for r in rows]

    def read_through(self, db: Any, version: int | None) -> None:
        """A database without tables yet, read by a command that only reads: the tables in
        the session's own temporary schema (pg_temp, looked in first), empty."""
        if version is not None:  # a PostgreSQL database starts at schema 7
            raise StoreError(f"a PostgreSQL results database of schema {version} is unknown")
        for statement in _statements(PG_SCHEMA):
            if statement.startswith("CREATE TABLE"):
                db.execute(statement.replace("CREATE TABLE", "CREATE TEMP TABLE", 1))

    def read_only(self, db: Any) -> None:
        db.execute("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")

    def lock_schema(self, db: Any) -> None:
        db.execute("SELECT pg_advisory_xact_lock(?)", (SCHEMA_LOCK,))

    def error(self, where: str, e: BaseException, timeout: float) -> StoreError:
        return pg_store_error(where, getattr(e, "orig", None) or e, timeout)


POSTGRES = PostgresDialect()


@functools.lru_cache(maxsize=512)
def _sql(statement: str) -> str:
    """A statement in psycopg's parameter style (no ``?`` or ``%`` inside the Store's SQL
    literals: each ``%`` is doubled, each ``?`` becomes ``%s``)."""
    return statement.replace("%", "%%").replace("?", "%s")


def _value(v: Any) -> Any:
    if isinstance(v, str):
        v = redact.clean(v)
        # PostgreSQL's text holds no NUL character (SQLite's does): one in an engine's
        # stderr is kept as U+FFFD rather than failing the measurement
        return v.replace("\x00", "\ufffd") if "\x00" in v else v
    return v


def _params(params: Iterable[Any]) -> tuple[Any, ...]:
    return tuple(_value(v) for v in params)


class Row(tuple):  # type: ignore[type-arg]
    """A row read by position or by column name (like sqlite3.Row)."""

    _names: dict[str, int]

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            return tuple.__getitem__(self, self._names[key])
        return tuple.__getitem__(self, key)

    def keys(self) -> list[str]:
        return list(self._names)


class Cursor:
    """What an execute gave: its rows (read whole by psycopg already), one by one or all."""

    def __init__(self, result: sa.CursorResult[Any]) -> None:
        self._result = result
        self.rowcount = result.rowcount
        self._names = {k: i for i, k in enumerate(result.keys())} if result.returns_rows else None

    def _row(self, raw: Any) -> Row:
        row = Row(raw)
        row._names = self._names or {}
        return row

    def fetchone(self) -> Row | None:
        if self._names is None:
            return None
        raw = self._result.fetchone()
        return None if raw is None else self._row(raw)

    def fetchall(self) -> list[Row]:
        return list(self)

    def __iter__(self) -> Iterator[Row]:
        if self._names is None:
            return iter(())
        return (self._row(r) for r in self._result)


class PgConnection:
    """The Store's connection to PostgreSQL: sqlite3's calls (execute, executemany, close)."""

    def __init__(self, engine: sa.Engine) -> None:
        self.engine = engine
        self.conn = engine.connect()

    def execute(self, sql: str, parameters: Iterable[Any] = (), /) -> Cursor:
        return Cursor(self.conn.exec_driver_sql(_sql(sql), _params(parameters)))

    def executemany(self, sql: str, seq_of_parameters: Iterable[Iterable[Any]], /) -> None:
        rows = [_params(p) for p in seq_of_parameters]
        if rows:
            self.conn.exec_driver_sql(_sql(sql), rows)  # type: ignore[arg-type]

    def close(self) -> None:
        try:
            self.conn.close()
        finally:
            self.engine.dispose()


#: What a URL that cannot be read should have been, and where it was given.
_URL_FIX = (
    "give it as postgresql://USER@HOST[:PORT]/DBNAME (a port from 1 to 65535; an IPv6 "
    "host in brackets, [::1]; characters such as @ : / % in a name or password written "
    "as %XX) with --db or STORBENCH_DB"
)


def _unreadable(url: str, why: str, fix: str = _URL_FIX) -> StoreError:
    return StoreError(
        f"{location.hide_passwords(url)} is not a PostgreSQL URL storbench can use: {why}", fix=fix
    )


def check_url(url: str) -> None:
    """Refuse, in words, a URL that would be read otherwise than it is written: one Python
    cannot split (``[::1``), a port that is not a number of a port, several hosts (libpq's
    ``h1:1,h2:1``, which SQLAlchemy does not read), and a NUL character anywhere (libpq's
    connection string ends at it: a database name ``x%00y`` cut off the port after it)."""
    try:
        parts = urllib.parse.urlsplit(url)
        hostport = parts.netloc.rpartition("@")[2]
        if "," in hostport:
            raise _unreadable(
                url,
                f"it gives several hosts ({hostport})",
                fix="give one host: postgresql://USER@HOST[:PORT]/DBNAME, with --db or "
                "STORBENCH_DB (storbench connects to one server)",
            )
        try:
            parts.port  # noqa: B018 (parses it: ValueError when it is no port)
        except ValueError:
            port = hostport.rpartition("]")[2].rpartition(":")[2]
            raise _unreadable(url, f"port {port!r} is not a number from 1 to 65535") from None
    except ValueError as e:
        raise _unreadable(url, str(e)) from None
    pieces = [parts.username, parts.password, parts.hostname, parts.path]
    pieces += [v for pair in urllib.parse.parse_qsl(parts.query) for v in pair]
    if any("\x00" in urllib.parse.unquote(p or "") for p in pieces) or "\x00" in url:
        raise _unreadable(
            url,
            "it holds a NUL character (%00), which no PostgreSQL name or setting can",
            fix="remove the %00 from the URL given with --db or STORBENCH_DB",
        )


def engine_url(url: str) -> sa.URL:
    """The URL as SQLAlchemy takes it, with psycopg 3 as the driver whatever the scheme
    (``postgresql://`` alone would mean psycopg2 to SQLAlchemy); :func:`check_url` first."""
    check_url(url)
    try:
        parsed = sa.make_url(url)
    except (sqlalchemy.exc.ArgumentError, ValueError):
        raise _unreadable(url, "SQLAlchemy cannot read it") from None
    return parsed.set(drivername="postgresql+psycopg")


def connect(url: str, timeout: float) -> PgConnection:
    """A connection to the database at ``url``. ``timeout`` (STORBENCH_DB_TIMEOUT) bounds
    the wait for the server to answer and for another process's lock on a row or table."""
    target = engine_url(url)
    secret = location.password(url)
    if secret:
        redact.register(secret)  # never written anywhere storbench writes text
    engine = sa.create_engine(
        target,
        poolclass=NullPool,
        isolation_level="AUTOCOMMIT",
        connect_args={
            "connect_timeout": max(1, math.ceil(min(timeout, 60))),
            "options": f"-c lock_timeout={int(timeout * 1000)}",
            "application_name": "storbench",
        },
    )
    try:
        return PgConnection(engine)
    except BaseException:
        engine.dispose()
        raise
