"""Hosts reached over SSH: storbench starts its agent there for a run, and stops it.

A host of ``hosts:`` with ``ssh: DESTINATION`` needs no ``storbench agent`` started by hand
(seed 004 ran fio in 32 VMs; CBT does this chore with pdsh). Before preflight, the
controller runs, on every such host at once::

    ssh -o BatchMode=yes -o ConnectTimeout=10 DESTINATION \\
        storbench agent --bind ADDRESS --port PORT --session --inventory-target KIND:PATH ...

The agent there (engines/fio/agentsession.py) starts fio's server (and iperf3's, and the
host's counters), answers with one line of JSON -- that host's inventory and tuning, and
its targets' -- and serves until its standard input closes. The controller keeps each ssh
connection open for the run and closes its standard input at the end; if the controller
dies instead (even SIGKILL), the pipe closes with it, ssh sends the end of input on, and
the agent stops its servers: the host is clean on every exit path.

ssh runs with ``BatchMode=yes``: the user's own keys, agent, ``known_hosts`` and ssh
config, never a prompt and never a password or key of the plan. An unknown or changed
host key is refused with the way to check it; ``$STORBENCH_SSH`` replaces the ``ssh``
command (``ssh -i KEY -o UserKnownHostsFile=FILE``) like git's ``GIT_SSH_COMMAND``.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from storbench.hosts import procguard
from storbench.model.errors import PreflightError, UserError
from storbench.plan import Point, PointHost
from storbench.plan.actionkeys import ssh_words

#: Seconds a host has to answer: ssh's connection (ConnectTimeout=10), the agent's start-up
#: and its inventory ($STORBENCH_SSH_TIMEOUT).
START_TIMEOUT = float(os.environ.get("STORBENCH_SSH_TIMEOUT") or 60)
#: Seconds the agent has to stop its servers once its input closed.
STOP_TIMEOUT = 15.0


@dataclass
class Agent:
    """One host's agent, started over ssh: its connection and what it said of its host."""

    label: str
    destination: str
    proc: subprocess.Popen[bytes]
    log: str  # ssh's standard error (and the agent's), a file of the controller
    info: dict[str, Any] = field(default_factory=dict)
    error: str | None = None


def _remote_command(h: PointHost, targets: list[str]) -> str:
    words = [*h.agent, "--bind", h.address, "--port", str(h.port), "--session"]
    for t in targets:
        words += ["--inventory-target", t]
    return shlex.join(words)  # ssh hands one command line to the remote user's shell


def ssh_hosts(points: list[Point]) -> dict[str, tuple[PointHost, list[str]]]:
    """Each host with ``ssh:`` (by label, plan order) and its targets as ``KIND:PATH``."""
    out: dict[str, tuple[PointHost, list[str]]] = {}
    for p in points:
        for h in p.hosts:
            if h.ssh and not h.local:
                _, targets = out.setdefault(h.label, (h, []))
                spec = f"{h.target.kind}:{h.target.path}"
                if spec not in targets:
                    targets.append(spec)
    return out


_UNKNOWN_KEY = re.compile(r"Host key verification failed|No \S+ host key is known", re.I)
_CHANGED_KEY = re.compile(r"REMOTE HOST IDENTIFICATION HAS CHANGED", re.I)
_DENIED = re.compile(r"Permission denied", re.I)
_UNREACHABLE = re.compile(
    r"Could not resolve hostname|Connection refused|Connection timed out|No route to host|"
    r"Network is unreachable|Connection closed by",
    re.I,
)
_NOT_FOUND = re.compile(r"(command )?not found|No such file or directory", re.I)


def explain(destination: str, code: int | None, stderr: str, agent: tuple[str, ...]) -> str:
    """Why a host's agent did not start, in words that say what to do."""
    last = [ln.strip() for ln in stderr.splitlines() if ln.strip() and not ln.startswith("@@")]
    said = last[-1] if last else f"ssh exited with status {code}"
    if _CHANGED_KEY.search(stderr):
        return (
            f"its SSH host key differs from the one in your known_hosts (ssh: {said}); "
            "storbench will not connect: find out why the key changed"
        )
    if _UNKNOWN_KEY.search(stderr):
        return (
            f"its SSH host key is not known (ssh: {said}); check the key's fingerprint and "
            f"accept it once with `ssh {destination}` (storbench never accepts one for you)"
        )
    if _DENIED.search(stderr):
        return (
            f"ssh could not log in as {destination} (ssh: {said}); storbench runs ssh in "
            "BatchMode: a key of your ssh agent or config, never a password"
        )
    if code == 255 and _UNREACHABLE.search(stderr):
        return f"ssh cannot reach {destination} ({said})"
    if code == 127 or (code not in (0, 255) and _NOT_FOUND.search(stderr)):
        return (
            f"`{shlex.join(agent)}` is not there ({said}): install storbench on that host, "
            "or give its path with the host's `agent:`"
        )
    return f"storbench's agent did not start there ({said})"


class Agents:
    """The agents of a run's ssh hosts (:func:`started`)."""

    def __init__(self) -> None:
        self.agents: list[Agent] = []
        self.on_stop: Callable[[str], None] | None = None  # a line per stopped agent

    def __bool__(self) -> bool:
        return bool(self.agents)

    def merge(self, inventory: dict[str, Any]) -> None:
        """Each agent's inventory into the run's ``hosts`` entry of its host: ``host``
        (kernel, CPU, fio, tuning: as the controller's own), its targets' and ``agent``."""
        by_label = {a.label: a for a in self.agents}
        for entry in inventory.get("hosts") or []:
            a = by_label.get(entry.get("label"))
            if a is None:
                continue
            entry["host"] = a.info.get("host") or {}
            found = {(t.get("kind"), t.get("path")): t for t in a.info.get("targets") or []}
            entry["targets"] = [
                {**t, **found.get((t.get("kind"), t.get("path")), {})}
                for t in entry.get("targets") or []
            ]
            entry["agent"] = {"ssh": a.destination, "notes": a.info.get("notes") or []}

    def stop(self) -> list[str]:
        """Close every agent's input and wait for it to stop its servers (ssh is killed
        after :data:`STOP_TIMEOUT`: the agent then sees its input end all the same)."""
        lines = []
        for a in self.agents:
            with contextlib.suppress(OSError):
                if a.proc.stdin:
                    a.proc.stdin.close()
        end = time.monotonic() + STOP_TIMEOUT
        for a in self.agents:
            try:
                a.proc.wait(timeout=max(0.1, end - time.monotonic()))
                lines.append(f"host {a.label}: stopped storbench's agent there ({a.destination})")
            except subprocess.TimeoutExpired:
                a.proc.kill()
                a.proc.wait(timeout=5)
                lines.append(
                    f"host {a.label}: its agent did not confirm its stop in {STOP_TIMEOUT:.0f} s; "
                    "ssh was closed (the agent stops when its connection ends)"
                )
            with contextlib.suppress(OSError):
                os.unlink(a.log)
        self.agents.clear()
        for line in lines:
            if self.on_stop is not None:
                self.on_stop(line)
        return lines


def _start(label: str, h: PointHost, targets: list[str], logdir: str) -> Agent:
    log = os.path.join(logdir, f"ssh-{len(os.listdir(logdir))}-{os.getpid()}.log")
    with open(log, "wb") as err:
        proc = subprocess.Popen(
            [*ssh_words(), h.ssh, _remote_command(h, targets)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=err,
            start_new_session=True,  # a terminal's Ctrl-C reaches storbench, not ssh
            env=procguard.environment(),
        )
    return Agent(label, h.ssh, proc, log)


def _answer(a: Agent, agent_cmd: tuple[str, ...], deadline: float) -> None:
    """Wait for the agent's JSON line (a thread per host: readline has no timeout)."""
    line: list[bytes] = []
    assert a.proc.stdout is not None
    reader = threading.Thread(target=lambda: line.append(a.proc.stdout.readline()), daemon=True)  # type: ignore[union-attr]
    reader.start()
    reader.join(max(0.1, deadline - time.monotonic()))
    if line and line[0].strip():
        try:
            a.info = json.loads(line[0])
            if isinstance(a.info, dict) and a.info.get("agent") == "session":
                # nothing more comes: drain it anyway, so that the agent never blocks on it
                threading.Thread(target=a.proc.stdout.read, daemon=True).start()  # type: ignore[union-attr]
                return
        except ValueError:
            pass
        a.error = f"its agent answered what storbench cannot read: {line[0][:200]!r}"
        return
    if reader.is_alive():
        a.error = f"no answer in {START_TIMEOUT:.0f} s (ssh or its agent hangs)"
        return
    try:
        code = a.proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        code = None
    with open(a.log, errors="replace") as f:
        a.error = explain(a.destination, code, f.read(), agent_cmd)


def ssh_env_problem() -> str | None:
    given = os.environ.get("STORBENCH_SSH", "")
    try:
        shlex.split(given)
    except ValueError as e:
        return f"$STORBENCH_SSH cannot be split into words ({e})"
    return None


@contextlib.contextmanager
def started(points: list[Point]) -> Iterator[Agents]:
    """The agents of the points' ssh hosts, started at once, stopped when the block ends
    (whatever way). PreflightError naming every host that failed, after stopping the
    others, when any does."""
    agents = Agents()
    hosts = ssh_hosts(points)
    if not hosts:
        yield agents
        return
    problem = ssh_env_problem()
    if problem:
        raise UserError(problem, fix="e.g. STORBENCH_SSH='ssh -i ~/.ssh/bench -p 2222'")
    logdir = tempfile.mkdtemp(prefix="storbench-ssh-")
    try:
        for label, (h, targets) in hosts.items():
            agents.agents.append(_start(label, h, targets, logdir))
        deadline = time.monotonic() + START_TIMEOUT
        waits = [
            threading.Thread(target=_answer, args=(a, hosts[a.label][0].agent, deadline))
            for a in agents.agents
        ]
        for t in waits:
            t.start()
        for t in waits:
            t.join()
        failed = [a for a in agents.agents if a.error]
        if failed:
            raise PreflightError(
                f"{len(failed)} of {len(agents.agents)} ssh host"
                f"{'s' if len(agents.agents) != 1 else ''} did not start storbench's agent; "
                "nothing was run:\n  "
                + "\n  ".join(f"host {a.label} ({a.destination}): {a.error}" for a in failed),
                fix="storbench must be installed on each `ssh:` host (with the controller's "
                "fio version), and `ssh DESTINATION` must log in without a prompt",
            )
        yield agents
    finally:
        agents.stop()
        with contextlib.suppress(OSError):
            os.rmdir(logdir)
