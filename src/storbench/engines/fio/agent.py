"""``storbench agent``: a fio server on a host to be measured, started and stopped with a
pid file (the ``hosts:`` of a plan reach it). The command is the fio engine's own (its
``commands()``); the CLI adds it without knowing what it does.

A fio server runs any job it is sent -- including fio's ``exec`` engine, which runs
commands -- with no authentication and no encryption, so the agent binds to a benchmark
network or loopback: all addresses (0.0.0.0, ::) and public (globally routable) addresses
only with ``--any-address``.
"""

from __future__ import annotations

import ipaddress
import os
import socket
from pathlib import Path

import click

from storbench.engines import fio
from storbench.errors import PreflightError, UserError


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

A fio server runs ANY job it is sent - including fio's `exec` engine, which runs
commands - with no authentication and no encryption. Bind it to a benchmark network or
loopback, never to a public address; `agent` refuses 0.0.0.0 and public addresses unless
told --any-address. Stop it when the benchmark is done.
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
def agent(
    bind: str,
    port: int,
    pid_file: str | None,
    any_address: bool,
    foreground: bool,
    stop: bool,
) -> None:
    """Start a fio server on this host so that a controller can measure it (`hosts:` in a
    plan), with a pid file; `--stop` stops it."""
    pid_file = os.path.abspath(pid_file or _agent_pid_file(port))
    if stop:
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
            f"will not bind the fio server to {bind}: {reason}",
            fix="give this host's address on the benchmark network (--bind 10.0.0.5) or "
            "loopback; --any-address overrides this",
        )
    try:
        addr = resolve_bind(bind)
    except OSError:
        raise UserError(f"cannot resolve {bind!r} to an IPv4 address", fix="--bind ADDR") from None
    unavailable = bind_unavailable(addr)
    if unavailable:
        raise UserError(unavailable, fix="--bind one of this host's addresses (ip -br addr)")
    running = fio.fio_server_pid(pid_file)
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
    warning = (
        f"it runs any job a controller sends, without authentication or encryption: keep "
        f"{addr}:{port} on a benchmark network, and stop it when done"
    )
    if foreground:
        os.makedirs(os.path.dirname(pid_file), exist_ok=True)
        Path(pid_file).write_text(f"{os.getpid()}\n")
        _warn(f"storbench agent: fio server on {addr}:{port}, pid {os.getpid()}; {warning}")
        path = fio.fio_path() or "fio"
        os.execv(path, [path, f"--server={addr},{port}"])
    try:
        pid = fio.start_agent(addr, port, pid_file)
    except OSError as e:
        raise UserError(f"the fio server did not start: {e}") from None
    _say(
        f"storbench agent: {fio.fio_version()} server listening on {addr}:{port} "
        f"(pid {pid}, pid file {pid_file})"
    )
    _warn(f"warning: {warning}")
    stop_cmd = f"storbench agent --stop --port {port}"
    if pid_file != os.path.abspath(_agent_pid_file(port)):
        stop_cmd = f"storbench agent --stop --pid-file {pid_file}"
    _say(f"stop it with: {stop_cmd}")


def bind_refusal(address: str, any_address: bool) -> str | None:
    """Why ``storbench agent`` must not bind its fio server to ``address``, or None.

    A fio server runs any job it is sent — including fio's ``exec`` engine, which runs
    commands — with no authentication and no encryption. So the agent binds to a benchmark
    network or loopback: all addresses (0.0.0.0, ::) and public (globally routable)
    addresses only with ``any_address``.
    """
    if any_address:
        return None
    if address in ("", "*", "0.0.0.0", "::", "[::]"):
        return (
            f"binding the fio server to all addresses ({address or 'empty'}) exposes it on every "
            "network of this host; fio's server runs any job it is sent, without authentication"
        )
    try:
        infos = socket.getaddrinfo(address, None)
    except OSError:
        return f"{address!r} is not an address or a name this host can resolve"
    for info in infos:
        ip = ipaddress.ip_address(info[4][0].split("%")[0])
        if ip.is_unspecified:
            return f"{address} means all addresses of this host"
        if ip.is_global:
            shown = address if address == str(ip) else f"{address} ({ip})"
            return (
                f"{shown} is a public address; fio's server runs any job it is sent, "
                "without authentication or encryption"
            )
    return None


def resolve_bind(address: str) -> str:
    """The IP literal the agent binds to (fio wants one)."""
    try:
        ipaddress.ip_address(address)
        return address
    except ValueError:
        return socket.getaddrinfo(address, None, socket.AF_INET)[0][4][0]


def bind_unavailable(address: str) -> str | None:
    """Why no socket can be bound to ``address`` on this host (not one of its addresses)."""
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        try:
            s.bind((address, 0))
        except OSError as e:
            return f"cannot bind to {address}: {e.strerror} (is it an address of this host?)"
    return None
