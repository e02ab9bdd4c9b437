"""A real PostgreSQL server for tests, on loopback, made and removed by the harness itself.

Debian's ``postgresql`` package (``make setup`` installs it) gives ``initdb`` and ``pg_ctl``
in /usr/lib/postgresql/VERSION/bin; they must run as the ``postgres`` user when the tests
run as root (``runuser``). The data directory is made under /tmp (not under pytest's
tmp_path, whose mode 700 the server's user cannot enter), logins over TCP need a password
(scram-sha-256): the tests log in as ``bench`` with :data:`PASSWORD` in the URL, to check
that it is shown and stored nowhere.

:func:`pg_server` (a fixture) starts one server for the whole session, the first time a
test asks for it, and stops it at the end of the session -- and at exit of the interpreter
whatever happened, and at once if it fails to start. A test skips, saying why, only where
no server can be started (no PostgreSQL installed, or not root and not ``postgres``).
:func:`pg_url` gives each test a database of its own on it.
"""

from __future__ import annotations

import atexit
import contextlib
import glob
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

USER = "bench"
PASSWORD = "pw-" + secrets.token_hex(8)
ADMIN_PASSWORD = "admin-" + secrets.token_hex(8)


def pg_bin() -> str | None:
    """The newest installed PostgreSQL's bin directory (None: none is installed)."""
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"),
        key=lambda p: int(p.split("/")[4]) if p.split("/")[4].isdigit() else 0,
    )
    return os.path.dirname(found[-1]) if found else None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class PgServer:
    bindir: str
    datadir: str
    port: int
    as_user: list[str]

    def url(self, dbname: str, *, user: str = USER, password: str | None = PASSWORD) -> str:
        auth = f"{user}:{password}" if password is not None else user
        return f"postgresql://{auth}@127.0.0.1:{self.port}/{dbname}"

    def admin(self, sql: str) -> None:
        """One statement as the superuser (autocommit: CREATE DATABASE may not be in a
        transaction)."""
        import psycopg

        with psycopg.connect(
            host="127.0.0.1",
            port=self.port,
            user="postgres",
            password=ADMIN_PASSWORD,
            dbname="postgres",
            autocommit=True,
        ) as con:
            con.execute(sql)  # type: ignore[arg-type]

    def create_database(self, name: str) -> str:
        """A new database owned by :data:`USER`; its URL (with the password)."""
        self.admin(f'CREATE DATABASE "{name}" OWNER {USER}')
        return self.url(name)

    def _run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*self.as_user, *args], capture_output=True, text=True, timeout=120, check=False
        )

    def start(self) -> None:
        pwfile = os.path.join(self.datadir, "..", os.path.basename(self.datadir) + ".pw")
        with open(pwfile, "w") as f:
            f.write(ADMIN_PASSWORD + "\n")
        self._chown(pwfile)
        try:
            r = self._run(
                f"{self.bindir}/initdb", "-D", self.datadir, "-U", "postgres",
                "--auth-host=scram-sha-256", "--auth-local=trust", f"--pwfile={pwfile}",
                "-E", "UTF8", "--no-sync",
            )  # fmt: skip
        finally:
            os.unlink(pwfile)
        if r.returncode:
            raise RuntimeError(f"initdb failed: {r.stderr.strip()[-500:]}")
        opts = (
            f"-c listen_addresses=127.0.0.1 -c port={self.port} -c fsync=off"
            f" -c unix_socket_directories={self.datadir} -c max_connections=40"
        )
        r = self._run(
            f"{self.bindir}/pg_ctl", "-D", self.datadir, "-o", opts, "-w", "-t", "60",
            "-l", os.path.join(self.datadir, "server.log"), "start",
        )  # fmt: skip
        if r.returncode:
            raise RuntimeError(f"pg_ctl start failed: {(r.stderr or r.stdout).strip()[-500:]}")
        self.admin(f"CREATE ROLE {USER} LOGIN PASSWORD '{PASSWORD}'")

    def stop(self) -> None:
        if os.path.exists(os.path.join(self.datadir, "postmaster.pid")):
            self._run(f"{self.bindir}/pg_ctl", "-D", self.datadir, "-m", "immediate", "-w", "stop")
        shutil.rmtree(self.datadir, ignore_errors=True)

    def _chown(self, path: str) -> None:
        if os.geteuid() == 0:
            shutil.chown(path, "postgres", "postgres")


_server: PgServer | None = None
_failure: str | None = None


def _start() -> PgServer:
    """The session's server, started the first time (pytest.skip where none can be)."""
    global _server, _failure
    if _server is not None:
        return _server
    if _failure is not None:
        pytest.skip(_failure)
    bindir = pg_bin()
    if bindir is None:
        _failure = "PostgreSQL is not installed (Debian package postgresql: make setup)"
        pytest.skip(_failure)
    if os.geteuid() == 0:
        as_user = ["runuser", "-u", "postgres", "--"]
    elif os.environ.get("USER") == "postgres":
        as_user = []
    else:
        _failure = "starting a PostgreSQL server needs root (runuser -u postgres) here"
        pytest.skip(_failure)
    datadir = tempfile.mkdtemp(dir="/tmp", prefix="storbench-pg-")
    server = PgServer(bindir, datadir, free_port(), as_user)
    server._chown(datadir)
    atexit.register(server.stop)
    try:
        server.start()
    except (RuntimeError, OSError, subprocess.SubprocessError) as e:
        server.stop()
        _failure = f"cannot start a PostgreSQL server: {e}"
        pytest.skip(_failure)
    _server = server
    return server


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    server = _start()
    try:
        yield server
    finally:
        global _server
        if _server is not None:
            _server = None
            server.stop()


@pytest.fixture
def pg_url(pg_server: PgServer) -> str:
    """A new, empty database of the test's own on the session's server: its URL."""
    return pg_server.create_database("t_" + secrets.token_hex(6))


@pytest.fixture(params=["sqlite", "postgresql"])
def location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A new results database of each kind: a file, and a database on the server (a module
    using it takes ``pg_server`` and ``pg_url`` too)."""
    if request.param == "sqlite":
        return str(tmp_path / "results.db")
    return str(request.getfixturevalue("pg_url"))


@contextlib.contextmanager
def environ(**values: str | None) -> Iterator[None]:
    """Environment variables set (None: unset) while inside."""
    old = {k: os.environ.get(k) for k in values}
    try:
        for k, v in values.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def storbench(*args: str, db: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``storbench ARGS`` with ``STORBENCH_DB=db``, a wide terminal; the URL's password is
    printed nowhere and no traceback either (checked here)."""
    r = subprocess.run(
        [sys.executable, "-m", "storbench", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
        env={**os.environ, "STORBENCH_DB": db, "COLUMNS": "200"},
    )
    assert PASSWORD not in r.stdout + r.stderr, "the URL's password is never printed"
    assert "Traceback" not in r.stderr, r.stderr
    return r


def ok(r: subprocess.CompletedProcess[str]) -> str:
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout
