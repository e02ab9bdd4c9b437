"""A host's fio run service: the agent runs a point's fio on its host and streams fio's output
to the controller as fio prints it, so that a many-host point's series arrive while it runs.

Why not fio's own client/server mode alone
    fio's client keeps every host's status reports and prints them only when the point ends
    (fio 3.33 client.c: each host's output goes to a buffer flushed when the host
    disconnects): no series while a point runs, and a long point's reports, all hosts
    together, held in memory to its end. Here each host runs fio itself with
    ``--output-format=json+ --status-interval`` and the controller reads the documents as
    they come (engines/fio/livehosts.py).

The exchange (one TCP connection per point and host, one JSON object per line)::

    controller: {"job": TEXT, "interval_ms": N, "readonly": BOOL}
    agent:      {"ready": true, "host": NAME}       fio started, held at its gate
    controller: {"go": true}                        every host is ready: let them go
    agent:      {"started": EPOCH_S}                on this host's clock
    agent:      {"out": TEXT} ...                   fio's stdout as it grows
    agent:      {"err": TEXT} {"exit": STATUS}      at fio's end; then the agent closes
    controller: {"stop": true}                      at any time: fio gets SIGINT

A connection that closes before ``go`` withdraws the fio held at its gate; one that closes
after it stops fio as ``stop`` does (SIGINT, SIGKILL 15 s later): a controller that died
leaves no job running. The agent serves it on the fio port + 3000 (:func:`runs_port`).

Like fio's server, it runs any job it is sent -- fio's ``exec`` engine runs commands --
without authentication or encryption: the agent binds it where it binds fio's server, a
benchmark network or loopback. It takes nothing but the job's text, the interval and
whether fio runs ``--readonly``: no command line, no environment.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import socketserver
import subprocess
import tempfile
import threading
import time
from typing import Any

from storbench.engines.fio.tool import FIO, fio_path
from storbench.engines.process import Gated, start_gated, wait_logged
from storbench.hosts import procguard

#: The run service listens this far above the agent's fio port.
OFFSET = 3000
#: The longest request line (a job file) the service reads.
MAX_REQUEST = 1 << 20
#: Seconds fio has to stop after SIGINT before it is killed.
STOP_GRACE_S = 15.0
#: How often the service looks at fio's output while it runs (s).
POLL_S = 0.05


def runs_port(fio_port: int) -> int | None:
    """Where the agent of a fio server on ``fio_port`` serves runs (None: above 65535)."""
    port = fio_port + OFFSET
    return port if port <= 65535 else None


def fio_command(job_path: str, interval_ms: int, readonly: bool) -> list[str]:
    """fio's command for a point's job file: json+ (histograms), a status report every
    ``interval_ms`` (its time series), ``--readonly`` where it writes nothing (a local
    point's: spawn._command, and a host's, run here)."""
    ro = ["--readonly"] if readonly else []
    every = f"--status-interval={interval_ms}ms"
    return [fio_path() or FIO, "--output-format=json+", every, *ro, job_path]


def _request(line: bytes) -> tuple[str, int, bool]:
    """The job, interval and read-only flag of a request line; ValueError when it is none."""
    try:
        req: Any = json.loads(line)
        job, interval, ro = req["job"], req["interval_ms"], req.get("readonly", False)
    except (ValueError, KeyError, TypeError) as e:
        raise ValueError(f"not a run request ({e})") from None
    if not isinstance(job, str) or not isinstance(interval, int) or not isinstance(ro, bool):
        raise ValueError("not a run request (job text, interval_ms, readonly)")
    if not 10 <= interval <= 3_600_000:
        raise ValueError(f"interval_ms {interval} is outside 10 ms .. 1 h")
    return job, interval, ro


class _Lines:
    """The lines a connection sends, read from its socket (no file object: a thread waiting
    in one would hold its lock against the handler's close)."""

    def __init__(self, sock: socket.socket, most: int) -> None:
        self.sock, self.most, self.buf = sock, most, b""

    def next(self) -> bytes:
        """The next line (b"" at the connection's end, or past ``most`` bytes)."""
        while b"\n" not in self.buf:
            data = self.sock.recv(1 << 16)
            if not data or len(self.buf) > self.most:
                return b""
            self.buf += data
        line, self.buf = self.buf.split(b"\n", 1)
        return line


class _Handler(socketserver.BaseRequestHandler):
    def send(self, **message: Any) -> None:
        self.request.sendall((json.dumps(message) + "\n").encode())

    def handle(self) -> None:
        with contextlib.suppress(OSError):
            self.lines = _Lines(self.request, MAX_REQUEST)
            try:
                job, interval, ro = _request(self.lines.next())
            except ValueError as e:
                self.send(error=str(e))
                return
            with tempfile.TemporaryDirectory(prefix="storbench-run-") as work:
                self._run(work, job, interval, ro)

    def _run(self, work: str, job: str, interval: int, ro: bool) -> None:
        path = os.path.join(work, "point.fio")
        with open(path, "w") as f:
            f.write(job)
        out, err = os.path.join(work, "out"), os.path.join(work, "err")
        try:
            env = getattr(self.server, "env", None)
            gated = start_gated(fio_command(path, interval, ro), work, out, err, env)
        except OSError as e:
            self.send(error=f"fio did not start: {e}")
            return
        try:
            self.send(ready=True, host=socket.gethostname())
            if b'"go"' not in self.lines.next():
                return  # the controller gave up on the point: withdrawn below
            self.send(started=gated.release())
            self._stream(gated, out)
            with open(err, errors="replace") as f:
                self.send(err=f.read())
            self.send(exit=gated.proc.returncode)
        finally:
            _finish(gated)

    def _stream(self, gated: Gated, out: str) -> None:
        """fio's stdout to the controller until fio exits; SIGINT at its word or its end."""
        told = threading.Event()

        def listen() -> None:
            with contextlib.suppress(OSError):
                while (line := self.lines.next()) and b'"stop"' not in line:
                    pass
            told.set()  # a stop, or the connection's end

        threading.Thread(target=listen, daemon=True, name="storbench-run-stop").start()
        proc, sigint_at = gated.proc, None
        with open(out, errors="replace") as growing:
            while True:
                done = proc.poll() is not None
                if text := growing.read():
                    self.send(out=text)
                if done:
                    return
                if told.is_set() and sigint_at is None:
                    sigint_at = time.monotonic()
                    with contextlib.suppress(ProcessLookupError):
                        proc.send_signal(signal.SIGINT)
                elif sigint_at is not None and time.monotonic() - sigint_at > STOP_GRACE_S:
                    procguard.kill_tree(proc.pid)
                if sigint_at is None:
                    told.wait(POLL_S)
                else:
                    time.sleep(POLL_S)


def _finish(gated: Gated) -> None:
    """Nothing of the point's fio left running: SIGINT, then SIGKILL 15 s later (a fio that
    was never let go is withdrawn at once)."""
    proc = gated.proc
    if gated.released_at is None:
        gated.withdraw()
        return
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            procguard.kill_tree(proc.pid)
            proc.wait()
    wait_logged(proc)


class RunService(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
    #: the environment of the fio it runs (the ``local`` host's: its Ceph settings)
    env: dict[str, str] | None = None


def serve(address: str, port: int, env: dict[str, str] | None = None) -> RunService:
    """A run service listening on ``address``:``port`` (0: any free port; call
    ``serve_forever``)."""
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    RunService.address_family = family
    server = RunService((address, port), _Handler)
    server.env = env
    return server


def serve_in_thread(address: str, port: int, env: dict[str, str] | None = None) -> RunService:
    """The service serving in a daemon thread (the agent's session, the ``local`` host)."""
    server = serve(address, port, env)
    threading.Thread(target=server.serve_forever, name="storbench-runs", daemon=True).start()
    return server


def main(argv: list[str] | None = None) -> None:
    """``python -m storbench.engines.fio.runservice ADDRESS PORT``: the agent's service."""
    import sys

    args = sys.argv[1:] if argv is None else argv
    serve(args[0], int(args[1])).serve_forever()


if __name__ == "__main__":
    main()
