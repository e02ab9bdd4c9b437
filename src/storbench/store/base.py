"""What the parts of the :class:`~storbench.store.db.Store` share: the connection, its lock
and write transactions, and the database's errors turned into :class:`StoreError` messages
(its dialect says how: storbench.store.dialect).
"""

from __future__ import annotations

import contextlib
import functools
import sqlite3
import threading
from collections.abc import Callable, Iterator
from typing import Any, Concatenate, ParamSpec, TypeVar

from storbench import redact
from storbench.store.dialect import Dialect

_P = ParamSpec("_P")
_R = TypeVar("_R")
_S = TypeVar("_S", bound="_Connection")


def _locked(method: Callable[Concatenate[_S, _P], _R]) -> Callable[Concatenate[_S, _P], _R]:
    """Run a Store method holding the store's lock (see storbench.store's docstring); an error of
    the database becomes a :class:`StoreError`."""

    @functools.wraps(method)
    def wrapper(self: _S, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        with self._lock:
            try:
                return method(self, *args, **kwargs)
            except self.dialect.errors as e:
                raise self.dialect.error(self.path, e, self.timeout) from None

    return wrapper


def _cleaned(params: Any) -> Any:
    if isinstance(params, dict):
        return {k: redact.clean(v) if isinstance(v, str) else v for k, v in params.items()}
    return [redact.clean(v) if isinstance(v, str) else v for v in params]


class RedactingConnection(sqlite3.Connection):
    """A connection that takes every secret this process knows (storbench.redact: an s3
    target's keys) out of the text it writes, whatever the statement: no table holds one."""

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
        return super().execute(sql, _cleaned(parameters) if redact.active() else parameters)

    def executemany(self, sql: str, parameters: Any, /) -> sqlite3.Cursor:
        if redact.active():
            parameters = (_cleaned(p) for p in parameters)
        return super().executemany(sql, parameters)


class _Connection:
    """The state every part of the Store uses (set by ``Store.__init__``)."""

    #: where the database is, as shown in messages (a URL without its password)
    path: str
    timeout: float
    readonly: bool
    #: an sqlite3 connection, or storbench.store.pg's PgConnection (the same calls)
    db: Any
    dialect: Dialect
    #: held by every use of ``db`` (re-entrant: a method may call another)
    _lock: threading.RLock

    def tx(self) -> _Tx:
        """A write transaction (SQLite: ``BEGIN IMMEDIATE``), holding the store's lock
        throughout."""
        return _Tx(self.db, self._lock, self.dialect.begin)

    @contextlib.contextmanager
    def _translated(self) -> Iterator[None]:
        """The database's errors inside as :class:`StoreError` (for the generators)."""
        try:
            yield
        except self.dialect.errors as e:
            raise self.dialect.error(self.path, e, self.timeout) from None


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
