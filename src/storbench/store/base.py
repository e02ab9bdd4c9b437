"""What the parts of the :class:`~storbench.store.db.Store` share: the :class:`Connection`
(the database, its lock and write transactions, its errors turned into :class:`StoreError`
messages by its dialect: storbench.store.dialect), and :class:`Part`, what each part is
built over.
"""

from __future__ import annotations

import contextlib
import functools
import sqlite3
import threading
from collections.abc import Callable, Iterator
from typing import Any, Concatenate, ParamSpec, Protocol, TypeVar

from storbench.model import redact
from storbench.store.dialect import Dialect
from storbench.store.faults import StoreError

_P = ParamSpec("_P")

#: The largest key (a run's id, a point's index) a database holds: SQLite's and
#: PostgreSQL's 64-bit integers. A number beyond it names nothing stored.
MAX_KEY = 2**63 - 1


def storable(*keys: int) -> bool:
    """Whether every key fits the database's integers (a bigger one names nothing there;
    asking for it would be the driver's OverflowError)."""
    return all(-MAX_KEY - 1 <= k <= MAX_KEY for k in keys)


_R = TypeVar("_R")


class _Connected(Protocol):
    conn: Connection


_S = TypeVar("_S", bound=_Connected)


def _locked(method: Callable[Concatenate[_S, _P], _R]) -> Callable[Concatenate[_S, _P], _R]:
    """Run a method of a part (or of the Store) holding the connection's lock (see
    storbench.store's docstring); an error of the database becomes a :class:`StoreError`."""

    @functools.wraps(method)
    def wrapper(self: _S, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        conn = self.conn
        with conn.lock:
            try:
                return method(self, *args, **kwargs)
            except conn.dialect.errors as e:
                raise conn.error(e) from None

    return wrapper


def _cleaned(params: Any) -> Any:
    if isinstance(params, dict):
        return {k: redact.clean(v) if isinstance(v, str) else v for k, v in params.items()}
    return [redact.clean(v) if isinstance(v, str) else v for v in params]


class RedactingConnection(sqlite3.Connection):
    """A connection that takes every secret this process knows (storbench.model.redact: an s3
    target's keys) out of the text it writes, whatever the statement: no table holds one."""

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
        return super().execute(sql, _cleaned(parameters) if redact.active() else parameters)

    def executemany(self, sql: str, parameters: Any, /) -> sqlite3.Cursor:
        if redact.active():
            parameters = (_cleaned(p) for p in parameters)
        return super().executemany(sql, parameters)


class Connection:
    """An open results database, as the Store's parts share it: the connection (``db``: an
    sqlite3 connection, or storbench.store.pg's PgConnection, the same calls), its
    ``dialect``, where it is (``path``: a file, or a URL without its password, as messages
    show it), the busy ``timeout``, whether it is ``readonly``, and the ``lock`` held by
    every use of ``db`` (re-entrant: a method may call another)."""

    def __init__(
        self, db: Any, dialect: Dialect, path: str, *, timeout: float, readonly: bool = False
    ) -> None:
        self.db = db
        self.dialect = dialect
        self.path = path
        self.timeout = timeout
        self.readonly = readonly
        self.lock = threading.RLock()

    def tx(self) -> _Tx:
        """A write transaction (SQLite: ``BEGIN IMMEDIATE``), holding the lock throughout."""
        return _Tx(self.db, self.lock, self.dialect.begin)

    def error(self, e: BaseException) -> StoreError:
        """An error of the database as the message storbench shows."""
        return self.dialect.error(self.path, e, self.timeout)

    @contextlib.contextmanager
    def held(self) -> Iterator[Any]:
        """The lock held and the database's errors inside as :class:`StoreError` (for the
        generators, which :func:`_locked` cannot wrap); gives ``db``."""
        with self.lock:
            try:
                yield self.db
            except self.dialect.errors as e:
                raise self.error(e) from None


class Part:
    """A part of the Store: the rows of its subject, read and written over the
    :class:`Connection` every part shares."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    @property
    def db(self) -> Any:
        return self.conn.db

    def tx(self) -> _Tx:
        return self.conn.tx()


class _Tx:
    def __init__(self, db: Any, lock: threading.RLock, begin: str) -> None:
        self.db = db
        self.lock = lock
        self.begin = begin

    def __enter__(self) -> Any:
        self.lock.acquire()
        try:
            self.db.execute(self.begin)
        except BaseException:
            self.lock.release()
            raise
        return self.db

    def __exit__(self, exc_type: object, *_: object) -> None:
        try:
            self.db.execute("ROLLBACK" if exc_type else "COMMIT")
        finally:
            self.lock.release()
