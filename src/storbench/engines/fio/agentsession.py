"""``storbench agent --session``: the agent as the controller starts it over ssh (a host's
``ssh:`` in a plan; the controller's side is storbench.hosts.sshagents).

It starts the same servers as ``storbench agent`` -- fio's server, this host's counters on
the fio port + 1000, iperf3's server on the fio port + 2000 -- as its own children, which
die with it (``setpriv --pdeathsig``). Once fio's server listens it prints one line of JSON
to stdout: what it started and this host's inventory (the same as the controller takes of
itself: kernel, CPU, memory, fio and its engines, tuning) and that of the targets it was
told of. Then it waits for its standard input to close: the controller closes it when the
run ends, and ssh closes it when the connection drops or the controller is killed, so the
servers stop on every exit path, with no pid file left behind. SIGTERM and SIGHUP stop it
too.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from typing import Any, NoReturn

from storbench.engines import fio
from storbench.engines.fio import runservice
from storbench.hosts import counters as hostcounters
from storbench.hosts import netbaseline
from storbench.hosts.procguard import environment, pdeathsig_prefix

#: Seconds fio's server has to listen after it started.
LISTEN_TIMEOUT = 10.0
#: The target kinds whose inventory a remote host can take of itself.
LOCAL_KINDS = ("device", "file", "directory")


def target_inventory(spec: str) -> dict[str, Any]:
    """``KIND:PATH`` (a device, file or directory of this host) and what this host knows of
    it: its file system or device, and the disk under it (as preflight takes it locally)."""
    from storbench.hosts import inventory as inv  # only in the agent: it is heavy

    kind, _, path = spec.partition(":")
    if kind not in LOCAL_KINDS or not path.startswith("/"):
        return {"kind": kind, "path": path, "error": "not a device, file or directory"}
    entry: dict[str, Any] = {"kind": kind, "path": path, **inv.target_inventory(kind, path)}
    entry["identity"] = inv.disk_identity(path)
    return entry


def _start(cmd: list[str]) -> subprocess.Popen[bytes]:
    """A server in a process group of its own (fio's server forks a process per connection
    and that one the job's: :func:`_stop` ends them all), dying with the agent."""
    return subprocess.Popen(
        [*pdeathsig_prefix(), *cmd],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd="/",
        process_group=0,
        env=environment(),
    )


def _stop(procs: list[subprocess.Popen[bytes]]) -> None:
    """SIGTERM to each server's group, then SIGKILL to whatever of the group is left: a
    connection's process outlives its server otherwise (its parent gone, pdeathsig is not
    inherited by a fork), holding the job it ran."""
    for p in procs:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(p.pid, signal.SIGTERM)
    for p in procs:
        try:
            p.wait(timeout=5)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait(timeout=5)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(p.pid, signal.SIGKILL)


def _hang_up(signum: int, frame: object) -> NoReturn:
    raise SystemExit(0)


def serve(
    addr: str, port: int, cport: int | None, rport: int | None, targets: list[str]
) -> NoReturn:
    """Start the servers, print the JSON line, wait for stdin's end; stop them all."""
    from storbench.hosts.inventory.host import host_inventory  # only in the agent

    signal.signal(signal.SIGTERM, _hang_up)
    signal.signal(signal.SIGHUP, _hang_up)
    procs: list[subprocess.Popen[bytes]] = []
    notes: list[str] = []
    code = 0
    try:
        server = _start([fio.fio_path() or "fio", f"--server={addr},{port}"])
        procs.append(server)
        probe = "127.0.0.1" if addr in ("0.0.0.0", "::") else addr
        end = time.monotonic() + LISTEN_TIMEOUT
        while not fio.server_listening(probe, port, timeout=0.2):
            if server.poll() is not None or time.monotonic() > end:
                print(
                    f"storbench agent: fio's server did not listen on {addr}:{port}"
                    + (f" (it exited with status {server.returncode})" if server.poll() else ""),
                    file=sys.stderr,
                )
                raise SystemExit(1)
            time.sleep(0.05)
        if cport is not None:
            hostcounters.serve_in_thread(addr, cport)
        if rport is not None:
            runservice.serve_in_thread(addr, rport)
        iport = netbaseline.iperf_port(port)
        if iport is not None and shutil.which("iperf3") is not None:
            if fio.server_listening(probe, iport):
                notes.append(f"{addr}:{iport} is taken: no network baseline for this host")
                iport = None
            else:
                procs.append(_start(netbaseline.server_command(addr, iport)))
        else:
            notes.append("iperf3 is not installed here: no network baseline for this host")
            iport = None
        info = {
            "agent": "session",
            "pid": os.getpid(),
            "fio_pid": server.pid,
            "address": addr,
            "port": port,
            "counters_port": cport,
            "runs_port": rport,
            "iperf_port": iport,
            "host": host_inventory(fio.about()),
            "targets": [target_inventory(t) for t in targets],
            "notes": notes,
        }
        sys.stdout.write(json.dumps(info, default=str) + "\n")
        sys.stdout.flush()
        while sys.stdin.buffer.read(4096):  # nothing is sent: only its end matters
            pass
    except SystemExit as e:
        code = int(e.code or 0)
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        _stop(procs)
    os._exit(code)
