"""``storbench agent``: a fio server on a host to be measured, started and stopped with a
pid file (the ``hosts:`` of a plan reach it). The command is the fio engine's own (in
``engines.COMMANDS``); the CLI adds it without knowing what it does.

A fio server runs any job it is sent -- including fio's ``exec`` engine, which runs
commands -- with no authentication and no encryption, so the agent binds to a benchmark
network or loopback: all addresses (0.0.0.0, ::) and public (globally routable) addresses
only with ``--any-address``.
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import shutil
import signal
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import click

# what serving needs (sockets, processes, the counters, iperf3) is imported where it is used:
# `storbench --help` lists this command, and loads this module for it
from storbench.engines import fio
from storbench.hosts import binding
from storbench.model.errors import PreflightError, UserError, clipped


def _say(text: str) -> None:
    click.echo(text)


def _warn(text: str) -> None:
    click.echo(text, err=True)


def _agent_pid_file(port: int) -> str:
    if os.geteuid() == 0:
        base = "/run/storbench"
    elif os.environ.get("XDG_RUNTIME_DIR"):
        base = os.path.join(os.environ["XDG_RUNTIME_DIR"], "storbench")
    else:
        base = os.path.expanduser("~/.local/state/storbench")
    return os.path.join(base, f"agent-{port}.pid")


@click.command(
    "agent",
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
    epilog="""\b
Examples:
  storbench agent --bind 10.0.0.5               on each host to be measured
  storbench agent --bind 10.0.0.5 --port 8766   a second server on the same host
  storbench agent --stop                         stop the server of port 8765
  storbench agent --bind 10.0.0.5 --foreground   stay in the foreground (systemd, containers)

Beside the fio server, the agent serves this host's CPU, memory, network and disk counters
(read-only, what /proc tells) on the fio port + 1000, so that the controller samples this
host's utilisation while a point runs, and a run service on the fio port + 3000: fio run on
this host, its reports streamed to the controller as they come (the point's series while it
runs).

A fio server (and the run service) runs ANY job it is sent - including fio's `exec`
engine, which runs commands - with no authentication and no encryption. Bind it to a
benchmark network or loopback, never to a public address; `agent` refuses 0.0.0.0 and
public addresses unless told --any-address. Stop it when the benchmark is done.
""",
)
@click.option(
    "--bind",
    "bind",
    default="127.0.0.1",
    show_default=True,
    metavar="ADDR",
    help="Address to listen on: this host's address on the benchmark network.",
)
@click.option(
    "--port",
    type=click.IntRange(1, 65535),
    default=8765,
    show_default=True,
    help="TCP port (fio's default is 8765).",
)
@click.option(
    "--pid-file",
    type=click.Path(dir_okay=False),
    default=None,
    help="Pid file. Default: /run/storbench/agent-PORT.pid as root, else under "
    "$XDG_RUNTIME_DIR or ~/.local/state/storbench.",
)
@click.option(
    "--any-address",
    is_flag=True,
    help="Allow binding to all addresses (0.0.0.0) or a public one. Think twice.",
)
@click.option("--foreground", is_flag=True, help="Run the fio server in the foreground.")
@click.option("--stop", is_flag=True, help="Stop the agent's fio server (of --port or --pid-file).")
@click.option(
    "--session",
    is_flag=True,
    help="As a run starts it over ssh (a host's `ssh:`): print this host's inventory as JSON, "
    "then serve until standard input closes (no pid file).",
)
@click.option(
    "--inventory-target",
    "inventory_targets",
    multiple=True,
    metavar="KIND:PATH",
    help="With --session: a device, file or directory of this host to take the inventory of.",
)
def agent(
    bind: str,
    port: int,
    pid_file: str | None,
    any_address: bool,
    foreground: bool,
    stop: bool,
    session: bool,
    inventory_targets: tuple[str, ...],
) -> None:
    """Start a fio server on this host so that a controller can measure it (`hosts:` in a
    plan), with a pid file; `--stop` stops it."""
    pid_file = os.path.abspath(pid_file or _agent_pid_file(port))
    if stop:
        _stop_endpoint(pid_file, "storbench.hosts.counters")
        _stop_endpoint(pid_file, "storbench.engines.fio.runservice")
        _stop_iperf(pid_file)
        pid = fio.stop_agent(pid_file)
        if pid is None:
            _say(f"no storbench agent runs with pid file {pid_file}")
        else:
            _say(f"stopped the fio server (pid {pid}, pid file {pid_file})")
        return
    if fio.fio_path() is None:
        raise PreflightError(
            "fio is not installed (no `fio` on PATH)", fix="install it: apt-get install fio"
        )
    reason = bind_refusal(bind, any_address)
    if reason:
        raise UserError(
            f"will not bind the fio server to {clipped(bind)}: {reason}",
            fix="give this host's address on the benchmark network (--bind 10.0.0.5) or "
            "loopback; --any-address overrides this",
        )
    try:
        addr = resolve_bind(bind)
    except (OSError, UnicodeError):  # UnicodeError: a label longer than DNS allows
        raise UserError(
            f"cannot resolve {clipped(bind)!r} to an IPv4 address", fix="--bind ADDR"
        ) from None
    unavailable = bind_unavailable(addr)
    if unavailable:
        raise UserError(unavailable, fix="--bind one of this host's addresses (ip -br addr)")
    _refuse_taken(addr, port, None if session else pid_file)
    warning = (
        f"it runs any job a controller sends, without authentication or encryption: keep "
        f"{addr}:{port} on a benchmark network, and stop it when done"
    )
    cport = _counters_port_free(addr, port)
    rport = _runs_port_free(addr, port)
    if session:
        from storbench.engines.fio import agentsession

        agentsession.serve(addr, port, cport, rport, list(inventory_targets))
    if foreground:
        _foreground(addr, port, (cport, rport), pid_file, warning)
    try:
        pid = fio.start_agent(addr, port, pid_file)
    except OSError as e:
        raise UserError(f"the fio server did not start: {e}") from None
    _say(
        f"storbench agent: {fio.fio_version()} server listening on {addr}:{port} "
        f"(pid {pid}, pid file {pid_file})"
    )
    if cport is not None:
        cpid = _start_counters(addr, cport, pid_file)
        if cpid is not None:
            _say(f"storbench agent: this host's counters on {addr}:{cport} (pid {cpid})")
    if rport is not None:
        rpid = _start_runs(addr, rport, pid_file)
        if rpid is not None:
            _say(f"storbench agent: its run service on {addr}:{rport} (pid {rpid})")
    iport = _iperf(addr, port, pid_file, daemon=True)
    if iport is not None:
        _say(f"storbench agent: iperf3 server on {addr}:{iport} (the network baseline)")
    _warn(f"warning: {warning}")
    stop_cmd = f"storbench agent --stop --port {port}"
    if pid_file != os.path.abspath(_agent_pid_file(port)):
        stop_cmd = f"storbench agent --stop --pid-file {pid_file}"
    _say(f"stop it with: {stop_cmd}")


def _refuse_taken(addr: str, port: int, pid_file: str | None) -> None:
    """UserError when an agent of ``pid_file`` runs, or something listens on the port."""
    running = fio.fio_server_pid(pid_file) if pid_file else None
    if running:
        raise UserError(
            f"a storbench agent already runs (pid {running}, pid file {pid_file})",
            fix=f"stop it first: storbench agent --stop --pid-file {pid_file}",
        )
    probe = "127.0.0.1" if addr in ("0.0.0.0", "::") else addr
    if fio.server_listening(probe, port):
        raise UserError(
            f"something already listens on {addr}:{port}",
            fix="choose another --port (fio's server sets SO_REUSEPORT: a second server on "
            "the same port would start silently and take half the connections)",
        )


def bind_refusal(address: str, any_address: bool) -> str | None:
    """Why ``storbench agent`` must not bind its fio server to ``address``, or None.

    A fio server runs any job it is sent — including fio's ``exec`` engine, which runs
    commands — with no authentication and no encryption. So the agent binds to a benchmark
    network or loopback: all addresses (0.0.0.0, ::) and public (globally routable)
    addresses only with ``any_address`` (hosts/binding.py, as ``serve`` binds).
    """
    return binding.refusal(
        address,
        any_address,
        scope="private",
        exposes="fio's server runs any job it is sent, without authentication or encryption",
    )


def resolve_bind(address: str) -> str:
    """The IP literal the agent binds to (fio wants one)."""
    import socket

    try:
        ipaddress.ip_address(address)
        return address
    except ValueError:
        return socket.getaddrinfo(address, None, socket.AF_INET)[0][4][0]


def bind_unavailable(address: str) -> str | None:
    """Why no socket can be bound to ``address`` on this host (not one of its addresses)."""
    import socket

    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        try:
            s.bind((address, 0))
        except OSError as e:
            return f"cannot bind to {address}: {e.strerror} (is it an address of this host?)"
    return None


def _foreground(
    addr: str, port: int, ports: tuple[int | None, int | None], pid_file: str, warning: str
) -> None:
    """Become the fio server (exec), the counters and the run service (``ports``) served
    by a child process."""
    os.makedirs(os.path.dirname(pid_file), exist_ok=True)
    Path(pid_file).write_text(f"{os.getpid()}\n")
    _warn(f"storbench agent: fio server on {addr}:{port}, pid {os.getpid()}; {warning}")
    cport, rport = ports
    if cport is not None or rport is not None:
        _fork_endpoints(addr, cport, rport)
    if cport is not None:
        _warn(f"storbench agent: this host's counters on {addr}:{cport}")
    if rport is not None:
        _warn(f"storbench agent: its run service on {addr}:{rport}")
    iport = _iperf(addr, port, pid_file, daemon=False)
    if iport is not None:
        _warn(f"storbench agent: iperf3 server on {addr}:{iport} (the network baseline)")
    path = fio.fio_path() or "fio"
    from storbench.hosts import procguard

    os.execve(path, [path, f"--server={addr},{port}"], procguard.environment())


def _iperf(addr: str, port: int, pid_file: str, *, daemon: bool) -> int | None:
    """iperf3's server beside the fio server (netbaseline.py), when iperf3 is installed and
    its port is free: in a session of its own with a pid file (daemon), or dying with this
    process (foreground, which becomes the fio server). Its port, or None (with a word)."""
    import subprocess

    from storbench.hosts import netbaseline
    from storbench.hosts.procguard import environment, pdeathsig_prefix

    iport = netbaseline.iperf_port(port)
    probe = "127.0.0.1" if addr in ("0.0.0.0", "::") else addr
    if shutil.which("iperf3") is None or iport is None:
        _warn("note: iperf3 is not installed: no network baseline for this host")
        return None
    if fio.server_listening(probe, iport):
        _warn(f"note: {addr}:{iport} is taken: no network baseline for this host")
        return None
    cmd = netbaseline.server_command(addr, iport)
    proc = subprocess.Popen(
        cmd if daemon else [*pdeathsig_prefix(), *cmd],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd="/",
        start_new_session=daemon,
        env=environment(),
    )
    if daemon:
        Path(_iperf_pid_file(pid_file)).write_text(f"{proc.pid}\n")
    return iport


def _iperf_pid_file(pid_file: str) -> str:
    stem = pid_file[: -len(".pid")] if pid_file.endswith(".pid") else pid_file
    return stem + ".iperf3.pid"


def _stop_iperf(pid_file: str) -> None:
    path = _iperf_pid_file(pid_file)
    with contextlib.suppress(FileNotFoundError, ValueError, ProcessLookupError):
        pid = int(Path(path).read_text().strip())
        if b"iperf3" in Path(f"/proc/{pid}/cmdline").read_bytes():  # not a reused pid
            os.kill(pid, signal.SIGTERM)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


def _counters_port_free(addr: str, port: int) -> int | None:
    """The port of the host's counters (storbench.hosts.counters) when it is free, else None
    (with a word: the controller then samples no utilisation of this host)."""
    from storbench.hosts import counters as hostcounters

    what = ("no counters endpoint", "this host's utilisation will not be sampled")
    return _port_free(addr, port, hostcounters.OFFSET, what)


def _runs_port_free(addr: str, port: int) -> int | None:
    """The port of the host's run service (runservice.py) when it is free, else None (with a
    word: the controller then runs the host's points through fio's client)."""
    from storbench.engines.fio import runservice

    what = ("no run service", "this host's series come at each point's end")
    return _port_free(addr, port, runservice.OFFSET, what)


def _port_free(addr: str, port: int, offset: int, what: tuple[str, str]) -> int | None:
    """The fio port + ``offset`` when it is a port and free, else None with a word: ``what``
    is missing, and what that costs."""
    other = port + offset
    probe = "127.0.0.1" if addr in ("0.0.0.0", "::") else addr
    if other > 65535:
        _warn(f"note: {what[0]} (fio port {port} + {offset} is above 65535)")
        return None
    if fio.server_listening(probe, other):
        _warn(f"note: {addr}:{other} is taken: {what[1]}")
        return None
    return other


def _start_counters(addr: str, cport: int, pid_file: str) -> int | None:
    """The counters endpoint in a process of its own session, its pid in a pid file beside
    the fio server's; None (with a word) when it did not start listening."""
    from storbench.hosts import counters as hostcounters

    def ready(probe: str) -> bool:
        with contextlib.suppress(OSError, ValueError):
            hostcounters.fetch(probe, cport, timeout=0.5)
            return True
        return False

    pid = _start_endpoint("storbench.hosts.counters", addr, cport, pid_file, ready)
    if pid is None:
        _warn(f"note: the counters endpoint did not start on {addr}:{cport}: no utilisation")
    return pid


def _start_runs(addr: str, rport: int, pid_file: str) -> int | None:
    """The run service (runservice.py) in a process of its own session, as the counters."""

    def ready(probe: str) -> bool:
        return fio.server_listening(probe, rport)

    pid = _start_endpoint("storbench.engines.fio.runservice", addr, rport, pid_file, ready)
    if pid is None:
        _warn(f"note: the run service did not start on {addr}:{rport}: series at points' ends")
    return pid


def _start_endpoint(
    module: str, addr: str, port: int, pid_file: str, ready: Callable[[str], bool]
) -> int | None:
    """``python -m MODULE ADDR PORT`` in a session of its own, its pid in the pid file
    :func:`_endpoint_pid_file` names; its pid once ``ready``, None when it is not in 10 s."""
    import subprocess

    from storbench.hosts.procguard import environment

    proc = subprocess.Popen(
        [sys.executable, "-m", module, addr, str(port)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd="/",
        start_new_session=True,
        env=environment(),
    )
    Path(_endpoint_pid_file(pid_file, module)).write_text(f"{proc.pid}\n")
    probe = "127.0.0.1" if addr in ("0.0.0.0", "::") else addr
    end = time.monotonic() + 10
    while time.monotonic() < end and proc.poll() is None:
        if ready(probe):
            return proc.pid
        time.sleep(0.05)
    _stop_endpoint(pid_file, module)
    return None


def _endpoint_pid_file(pid_file: str, module: str) -> str:
    """The pid file of an endpoint (``agent.counters.pid``, ``agent.runs.pid``)."""
    stem = pid_file[: -len(".pid")] if pid_file.endswith(".pid") else pid_file
    return stem + (".counters.pid" if module.endswith("counters") else ".runs.pid")


def _stop_endpoint(pid_file: str, module: str) -> None:
    path = _endpoint_pid_file(pid_file, module)
    with contextlib.suppress(FileNotFoundError, ValueError, ProcessLookupError):
        pid = int(Path(path).read_text().strip())
        # only the endpoint: a stale file's pid may be another process's by now
        if module.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
            os.kill(pid, signal.SIGTERM)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


def _fork_endpoints(addr: str, cport: int | None, rport: int | None) -> None:
    """The foreground agent's counters and run service: a child process that serves them
    until the fio server (this process, after its exec) is gone."""
    from storbench.engines.fio import runservice
    from storbench.hosts import counters as hostcounters

    parent = os.getpid()
    if os.fork() != 0:
        return
    try:
        if cport is not None:
            server = hostcounters.serve(addr, cport)
            threading.Thread(target=server.serve_forever, daemon=True).start()
        if rport is not None:
            runservice.serve_in_thread(addr, rport)
        while os.getppid() == parent:
            time.sleep(1)
    finally:
        os._exit(0)
