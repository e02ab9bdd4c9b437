"""`storbench serve` for the tests: started on a database, on any free port of loopback, and
ended (its whole process group) however the test ends."""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator


def end_group(proc: subprocess.Popen[str]) -> None:
    """SIGTERM to the process group ``proc`` leads (started with start_new_session), then
    SIGKILL when it has not ended within 10 s."""
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=10)
    except ProcessLookupError:
        pass
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)


@contextlib.contextmanager
def serving(db: str, timeout: float) -> Iterator[tuple[str, str]]:
    """``storbench serve --db DB --port 0``: (its base URL, the line it printed first); a
    PostgreSQL URL goes by STORBENCH_DB, so that its password is on no command line. Its
    log (stderr) goes to a file: a pipe no one reads would fill with the tracebacks of a
    failing server and stop it mid-request."""
    url = db.startswith(("postgresql:", "postgres:"))  # by the environment, not argv
    where = [] if url else ["--db", db]
    env = {**os.environ, "STORBENCH_DB": db} if url else None
    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "storbench", "serve", *where, "--port", "0"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
            start_new_session=True,  # its own process group: ended whole at the end
        )
        try:
            assert proc.stdout is not None
            ready, _, _ = select.select([proc.stdout], [], [], timeout)
            assert ready, "storbench serve said nothing"
            line = proc.stdout.readline()
            assert line.startswith("storbench serve: http://127.0.0.1:"), line
            yield line.split()[2].rstrip("/"), line
        finally:
            end_group(proc)
