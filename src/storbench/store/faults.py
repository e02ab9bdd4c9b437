"""The database's faults as messages (busy, locked, full, read-only, not a database) and opening
one on read-only media.
"""

from __future__ import annotations

import os
import sqlite3
import urllib.parse

from storbench.model.errors import UserError


class StoreError(UserError):
    """A fault of the results database itself (damaged, locked, full, read-only), said in
    words with the database's path and what to do; raised in place of sqlite3's errors."""


#: Seconds a command waits for another process's lock on the database (STORBENCH_DB_TIMEOUT).
DEFAULT_TIMEOUT = 30.0


def busy_timeout() -> float:
    raw = os.environ.get("STORBENCH_DB_TIMEOUT")
    if raw is None or not raw.strip():
        return DEFAULT_TIMEOUT
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not (0 < value < 1e6):
        raise UserError(
            f"STORBENCH_DB_TIMEOUT={raw!r} is not a number of seconds",
            fix=f"set it to e.g. 30 (the default, {DEFAULT_TIMEOUT:g} s), or unset it",
        )
    return value


def store_error(path: str, e: sqlite3.Error, timeout: float = DEFAULT_TIMEOUT) -> StoreError:
    """sqlite3's error ``e`` on the database ``path`` as a message a user can act on."""
    text = str(e)
    low = text.lower()
    where = f"the results database {path}"
    if "locked" in low or "busy" in low:
        return StoreError(
            f"{where} is locked: another process has held a lock on it for more than "
            f"{timeout:g} s (sqlite: {text})",
            fix="wait until the other storbench command ends and try again; "
            "STORBENCH_DB_TIMEOUT=SECONDS waits longer",
        )
    if "full" in low:
        return StoreError(
            f"the disk holding {where} is full (sqlite: {text})",
            fix="free space on that disk, then try again",
        )
    if "readonly" in low or "read-only" in low:
        return StoreError(
            f"{where} is read-only: this command records into it (sqlite: {text})",
            fix="make it writable, or give a writable one with --db PATH or STORBENCH_DB "
            "(reading commands such as `runs`, `show`, `report` work on a read-only one)",
        )
    if isinstance(e, sqlite3.DatabaseError) and (
        "not a database" in low or "malformed" in low or "corrupt" in low
    ):
        return StoreError(
            f"{path} is not a storbench results database, or it is damaged (sqlite: {text})",
            fix="check the path given with --db or STORBENCH_DB; a damaged database may be "
            f"partly recoverable with `sqlite3 {path} .recover`",
        )
    if "unable to open" in low or "disk i/o" in low:
        return StoreError(
            f"cannot use {where} (sqlite: {text})",
            fix="check that its directory exists, is writable and its disk works; or choose "
            "another with --db PATH or STORBENCH_DB",
        )
    return StoreError(
        f"{where} failed (sqlite: {text})",
        fix="check the database file; or choose another with --db PATH or STORBENCH_DB",
    )


def _read_only_media(path: str) -> bool:
    """Whether the database at ``path`` exists and cannot be written here: the file or its
    directory is not writable (a read-only mount says so even to root)."""
    if not os.path.exists(path):
        return False
    return not os.access(path, os.W_OK) or not os.access(
        os.path.dirname(path) or ".", os.W_OK | os.X_OK
    )


def _open_read_only(path: str, timeout: float) -> sqlite3.Connection:
    """A read-only connection. A WAL database without its -shm file can only be read as
    ``immutable`` (nobody writes on read-only media, so nothing changes under it)."""
    uri = "file:" + urllib.parse.quote(path) + "?mode=ro"
    try:
        db = sqlite3.connect(uri, uri=True, timeout=timeout, check_same_thread=False)
        db.execute("SELECT 1 FROM sqlite_master LIMIT 1")
        return db
    except sqlite3.OperationalError:
        return sqlite3.connect(
            uri + "&immutable=1", uri=True, timeout=timeout, check_same_thread=False
        )


def _pg_text(e: BaseException) -> str:
    """psycopg's message on one line, without a password (a connection string in it)."""
    from storbench.store.location import hide_passwords

    return hide_passwords(" ".join(str(e).split()))


def pg_store_error(where: str, e: BaseException, timeout: float = DEFAULT_TIMEOUT) -> StoreError:
    """psycopg's error ``e`` on the PostgreSQL database ``where`` (its URL without the
    password) as a message a user can act on."""
    text = _pg_text(e)
    low = text.lower()
    state = getattr(e, "sqlstate", None) or ""
    db = f"the results database {where}"
    detail = f"(postgresql: {text})"
    if state in ("28P01", "28000") or "authentication failed" in low or "no password" in low:
        return StoreError(
            f"PostgreSQL refused the login to {db} {detail}",
            fix="check the user name in the URL and its password: give the password in "
            "~/.pgpass (HOST:PORT:DBNAME:USER:PASSWORD, mode 0600) or PGPASSWORD; the "
            "server's pg_hba.conf must let this user log in from this host",
        )
    if state == "3D000" or ("database" in low and "does not exist" in low):
        return StoreError(
            f"there is no such database on the server of {where} {detail}",
            fix="create it, e.g. `createdb -h HOST -U USER DBNAME` (or CREATE DATABASE DBNAME "
            "OWNER USER as a PostgreSQL superuser), or fix its name in the URL",
        )
    if "connection refused" in low or "could not connect" in low or "timeout expired" in low:
        return StoreError(
            f"cannot reach the PostgreSQL server of {db} {detail}",
            fix="check that the server runs and accepts TCP connections on that host and port "
            "(listen_addresses and port in postgresql.conf, a firewall), or fix the URL "
            "given with --db or STORBENCH_DB",
        )
    if "translate host name" in low or "name or service not known" in low:
        return StoreError(
            f"the host of {db} is not known here {detail}",
            fix="check the host name in the URL given with --db or STORBENCH_DB",
        )
    if state == "42501" or "permission denied" in low:
        return StoreError(
            f"the user of {db} may not do this {detail}",
            fix="let it create tables and write there: GRANT ALL ON SCHEMA public TO USER "
            "(PostgreSQL 15 no longer lets every user create tables in public), or use a "
            "database the user owns",
        )
    if state in ("55P03", "40P01") or "lock timeout" in low:
        return StoreError(
            f"{db} is locked: another process has held a lock on it for more than "
            f"{timeout:g} s {detail}",
            fix="wait until the other storbench command ends and try again; "
            "STORBENCH_DB_TIMEOUT=SECONDS waits longer",
        )
    if state == "53100":
        return StoreError(
            f"the disk of the PostgreSQL server of {db} is full {detail}",
            fix="free space on the server, then try again",
        )
    if state == "25006":
        return StoreError(
            f"{db} is read-only (a standby server?): this command records into it {detail}",
            fix="give the URL of the primary server with --db or STORBENCH_DB",
        )
    return StoreError(
        f"{db} failed {detail}",
        fix="check the server and the URL; or choose another with --db or STORBENCH_DB",
    )
