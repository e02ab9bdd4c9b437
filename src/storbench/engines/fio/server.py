"""fio servers: the ``local`` host's private one, probing remote ones before a run, and ``storbench
agent``'s (pid file, start, stop).
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field

from storbench.engines.fio.hosts import _CONNECT_REASON, _MISMATCH
from storbench.engines.fio.jobfile import _job_line
from storbench.engines.fio.tool import FIO, fio_path
from storbench.hosts import procguard
from storbench.hosts.procguard import pdeathsig_prefix
from storbench.plan import (
    job_section_name,
)


def server_listening(address: str, port: int, timeout: float = 0.5) -> bool:
    """Whether something accepts TCP connections at ``address``:``port``."""
    try:
        with socket.create_connection((address, port), timeout=timeout):
            return True
    except OSError:
        return False


def free_port(address: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((address, 0))
        return int(s.getsockname()[1])


class FioServer:
    """A fio server storbench runs itself: the ``local`` host of a plan (on loopback, for
    the duration of a run). It leads its own process group (the server, the process it
    forks per connection and the job process share it), so :meth:`stop` ends all three."""

    def __init__(
        self,
        address: str = "127.0.0.1",
        port: int | None = None,
        cwd: str = "/",
        env: dict[str, str] | None = None,
    ):
        self.address = address
        self.port = port
        self.cwd = cwd
        self.env = env
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 10.0) -> None:
        port = self.port or free_port(self.address)
        if server_listening(self.address, port):
            raise OSError(f"something already listens on {self.address}:{port}")
        self.port = port
        self.proc = subprocess.Popen(
            [*pdeathsig_prefix(), fio_path() or FIO, f"--server={self.address},{port}"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
            cwd=self.cwd,
            env=procguard.environment(self.env),
        )
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                err = (self.proc.stderr.read() if self.proc.stderr else b"").decode().strip()
                raise OSError(f"fio --server={self.address},{port} exited: {err or 'no message'}")
            if server_listening(self.address, port, timeout=0.2):
                return
            time.sleep(0.05)
        self.stop()
        raise OSError(f"fio --server={self.address},{port} did not listen within {timeout:.0f} s")

    def stop(self) -> None:
        """SIGKILL to the group: a private server holds nothing worth a graceful exit (fio's
        server takes a second or more to act on SIGTERM)."""
        if self.proc is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        if self.proc.stderr:
            self.proc.stderr.close()
        self.proc = None


@dataclass
class ServerProbe:
    """What a fio server said to storbench's preflight probe (see :func:`probe_servers`)."""

    address: str
    port: int
    error: str | None = None  # no answer, refused, protocol mismatch, fio failed
    hostname: str | None = None  # the server's own host name (fio's probe reply)
    os: str | None = None
    arch: str | None = None
    fio_version: str | None = None
    missing_engines: list[str] = field(default_factory=list)
    output: str = ""


_PROBE_REPLY = re.compile(
    r"^hostname=(?P<host>.*), be=\d+, (?P<bits>\d+)-bit, os=(?P<os>\S+), arch=(?P<arch>\S+), "
    r"fio=(?P<fio>\S+), flags=",
    re.MULTILINE,
)
_NOT_LOADABLE = re.compile(r"engine (\S+) not loadable")


def probe_job(engines: list[str]) -> str:
    """A job file that loads every engine in ``engines`` on a server and does no I/O:
    one section per engine, ``create_only=1`` (setup only) on /dev/zero, read-only. fio
    loads an engine when it parses the job, so a missing one is named ("engine X not
    loadable") before anything runs; an engine that needs more (rbd: a pool) fails its
    setup, which proves it is there."""
    sections = []
    for e in engines or ["null"]:
        sections.append(
            f"[probe-{job_section_name(e)}]\n{_job_line('ioengine', e)}\nfilename=/dev/zero\n"
            "rw=read\nbs=4k\nsize=4k\ncreate_only=1\n"
        )
    return "".join(sections)


def probe_servers(
    servers: list[tuple[str, int]], engines: list[str], *, timeout: float = 15.0
) -> list[ServerProbe]:
    """Ask every fio server at once (one fio client each, in parallel): does it answer,
    which fio it runs (its probe reply), on which host and OS, and does it have ``engines``.

    One fio client per server so that each answer is that server's alone (fio prefixes a
    server's messages with its host name, which several VMs may share). A server that has
    not answered within ``timeout`` seconds is reported as not answering."""
    path = fio_path() or FIO
    results: list[ServerProbe] = []
    with tempfile.TemporaryDirectory(prefix="storbench-probe-") as tmp:
        job = os.path.join(tmp, "probe.fio")
        with open(job, "w") as f:
            f.write(probe_job(engines))
        procs = []
        for i, (addr, port) in enumerate(servers):
            out = open(os.path.join(tmp, f"{i}.out"), "w+")  # noqa: SIM115 - closed below
            err = open(os.path.join(tmp, f"{i}.err"), "w+")  # noqa: SIM115
            p = subprocess.Popen(
                [
                    *pdeathsig_prefix(),
                    path,
                    # this client's own clock: given, fio skips its clock test (~0.1 s of
                    # CPU per client, 16 at once on 2 cores); an option before --client stays
                    # with the client (fio 3.33 init.c parse_cmd_line), the server's is its own
                    "--clocksource=clock_gettime",
                    "--output-format=normal",
                    f"--client={addr},{port}",
                    job,
                ],
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                cwd=tmp,
                start_new_session=True,
                env=procguard.environment(),
            )
            procs.append((addr, port, p, out, err))
        deadline = time.monotonic() + timeout
        for addr, port, p, out, err in procs:
            timed_out = False
            try:
                p.wait(timeout=max(deadline - time.monotonic(), 0.01))
            except subprocess.TimeoutExpired:
                timed_out = True
                p.kill()
                p.wait()
            out.seek(0)
            err.seek(0)
            text, stderr = out.read(), err.read()
            out.close()
            err.close()
            results.append(
                _probe_result(addr, port, text, stderr, p.returncode, timed_out, timeout)
            )
    return results


def _probe_result(
    addr: str,
    port: int,
    text: str,
    stderr: str,
    rc: int | None,
    timed_out: bool,
    timeout: float,
) -> ServerProbe:
    r = ServerProbe(address=addr, port=port, output=text + stderr)
    m = _PROBE_REPLY.search(text)
    if m:
        r.hostname, r.os, r.arch, r.fio_version = m["host"], m["os"], m["arch"], m["fio"]
    r.missing_engines = list(dict.fromkeys(_NOT_LOADABLE.findall(text + stderr)))
    reason = next((x.group(1) for x in map(_CONNECT_REASON.search, stderr.splitlines()) if x), None)
    if mm := _MISMATCH.search(stderr):
        r.error = (
            f"fio's client/server protocol differs (server {mm.group(1)}, this fio "
            f"{mm.group(2)}): it runs another fio version than this controller"
        )
    elif "failed to connect" in stderr or reason:
        r.error = f"cannot connect to {addr}:{port} ({reason or 'connection failed'})"
    elif timed_out and m is None:
        r.error = f"no answer from {addr}:{port} within {timeout:.0f} s"
    elif m is None:
        lines = [ln.strip() for ln in (stderr + text).splitlines() if ln.strip()]
        r.error = (
            f"fio's client got no answer from {addr}:{port} (exit status {rc}"
            + (f": {'; '.join(lines[-3:])}" if lines else "")
            + ")"
        )
    return r


# ---------------------------------------------------------------------------- agent


def fio_server_pid(pid_file: str) -> int | None:
    """The pid in ``pid_file`` when it is a running fio server, else None."""
    try:
        with open(pid_file) as f:
            pid = int(f.read().split()[0])
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            argv = f.read().split(b"\0")
    except (OSError, ValueError, IndexError):
        return None
    name = os.path.basename(argv[0].decode(errors="replace")) if argv else ""
    if "fio" in name and any(a.startswith(b"--server") for a in argv):
        return pid
    return None


def start_agent(address: str, port: int, pid_file: str, *, timeout: float = 10.0) -> int:
    """Start ``fio --server=ADDRESS,PORT`` in the background (fio's own --daemonize, which
    writes ``pid_file``); wait until it listens. Returns its pid. The caller has checked
    that nothing listens there yet: fio 3.33 sets SO_REUSEPORT, so a second server on the
    same address and port starts without complaint and takes half the connections."""
    os.makedirs(os.path.dirname(os.path.abspath(pid_file)), exist_ok=True)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(pid_file)
    subprocess.run(
        [fio_path() or FIO, f"--server={address},{port}", f"--daemonize={pid_file}"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=os.path.dirname(os.path.abspath(pid_file)),
        timeout=timeout,
        check=False,
        env=procguard.environment(),
    )
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        pid = fio_server_pid(pid_file)
        if pid is not None and server_listening(address, port, timeout=0.2):
            return pid
        time.sleep(0.05)
    pid = fio_server_pid(pid_file)
    if pid is not None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    raise OSError(f"fio --server={address},{port} did not start listening")


def stop_agent(pid_file: str, *, timeout: float = 10.0) -> int | None:
    """Stop the fio server of ``pid_file`` (SIGTERM, then SIGKILL) and remove the file;
    returns its pid, or None when none was running (a stale file is removed too)."""
    pid = fio_server_pid(pid_file)
    if pid is None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(pid_file)
        return None

    def signal_all(sig: int) -> None:
        # fio's --daemonize makes the server a session leader; the processes it forks per
        # connection (and their jobs) share its group and keep the listening socket open
        with contextlib.suppress(ProcessLookupError):
            if os.getpgid(pid) == pid:
                os.killpg(pid, sig)
            else:
                os.kill(pid, sig)

    signal_all(signal.SIGTERM)
    end = time.monotonic() + timeout
    while time.monotonic() < end and fio_server_pid(pid_file) == pid:
        time.sleep(0.05)
    if fio_server_pid(pid_file) == pid:
        signal_all(signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)  # a connection process left behind
    with contextlib.suppress(FileNotFoundError):
        os.unlink(pid_file)
    return pid
