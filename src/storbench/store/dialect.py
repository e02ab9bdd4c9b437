"""What differs between the databases a Store keeps its results in: SQLite (here, through
Python's sqlite3) and PostgreSQL (storbench.store.pg, through SQLAlchemy Core and psycopg 3).

The Store's statements are written once, in the SQL both understand (``?`` parameters,
``INSERT ... ON CONFLICT``, ``RETURNING``, ``CASE`` in aggregates); what cannot be said the
same way on both is here: how a write transaction begins, how a run's row is locked while a
process claims it, where the catalogue of tables is, the schema and its migrations, and the
errors of each driver turned into messages.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Any

from storbench.store.faults import StoreError, store_error
from storbench.store.schema import _MIGRATIONS, _SCHEMA, read_through


class Dialect:
    """SQLite's way (the default database)."""

    name = "sqlite"
    #: starts a write transaction: SQLite takes the database's write lock at once, so two
    #: writers queue at BEGIN instead of failing half-way (busy timeout)
    begin = "BEGIN IMMEDIATE"
    #: appended to a SELECT of the row of a run being claimed; nothing here, where the write
    #: transaction already excludes every other writer
    lock_row = ""
    #: the errors of the driver, turned into StoreError by :meth:`error`
    errors: tuple[type[BaseException], ...] = (sqlite3.Error,)
    #: the whole schema of a new database, and what brings one of schema N-1 to N
    schema: str = _SCHEMA
    migrations: dict[int, str | Callable[[Any], None]] = _MIGRATIONS

    def tables(self, db: Any) -> set[str]:
        """The names in the database's catalogue (tables and indexes)."""
        return {r[0] for r in db.execute("SELECT name FROM sqlite_master")} - {"sqlite_sequence"}

    def columns(self, db: Any, table: str) -> list[str]:
        """A table's columns in their order."""
        return [r[1] for r in db.execute(f"PRAGMA table_info({table})")]

    def read_through(self, db: Any, version: int | None) -> None:
        """Let a command that only reads see a database of an older schema, or without
        tables, as the current one, writing nothing to it (storbench.store.schema)."""
        read_through(db, version)

    def read_only(self, db: Any) -> None:
        """From now on the connection refuses to write the database."""
        db.execute("PRAGMA query_only=ON")

    def lock_schema(self, db: Any) -> None:
        """Exclude other processes' migrations until the transaction ends (SQLite's write
        transaction already does)."""

    def error(self, where: str, e: BaseException, timeout: float) -> StoreError:
        assert isinstance(e, sqlite3.Error)
        return store_error(where, e, timeout)


SQLITE = Dialect()


def returned_id(cur: Any) -> int | None:
    """The id an ``INSERT ... RETURNING id`` gave (None: the row was not inserted: ``ON
    CONFLICT DO NOTHING``). Read whole, so that SQLite's statement ends before the commit."""
    rows = cur.fetchall()
    return int(rows[0][0]) if rows else None


def upsert(table: str, key: tuple[str, ...], columns: list[str]) -> str:
    """``INSERT`` of ``columns`` into ``table`` that replaces the row of the same ``key``
    (both databases say it this way; SQLite's ``INSERT OR REPLACE`` is its own)."""
    updated = [c for c in columns if c not in key]
    return (
        f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"
        f" ON CONFLICT ({', '.join(key)}) DO UPDATE SET "
        + ", ".join(f"{c}=excluded.{c}" for c in updated)
    )
