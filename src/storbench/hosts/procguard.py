"""The guard: no engine process of a run outlives the storbench process that runs it.

fio's job processes call ``setsid()`` (fio 3.33 backend.c, thread_main): they leave fio's
process group, so neither killing the group nor fio's parent-death signal reaches them, and
when storbench is killed with SIGKILL they go on doing I/O under init until their runtime
ends (for ever with ``time_based`` and a long runtime). What they do keep is the
environment. So every process a run starts carries ``STORBENCH_RUN=<token>`` (the run's
token, see :func:`environment`), and a small guard process, started once per run in a
session of its own, holds the read end of a pipe whose write end only storbench holds. When
storbench ends -- normally, by an exception, or killed by SIGKILL -- the kernel closes the
write end, the guard reads end-of-file and kills every process that carries the token
(:func:`sweep`). ``storbench resume`` and ``storbench cleanup`` sweep the same way before
they start, for the case where the guard itself was killed too.

This file is also the guard's program: ``python -I -S procguard.py TOKEN`` (standard
library only, so it starts in a few milliseconds without the virtual environment).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping


def pdeathsig_prefix(signal_name: str = "KILL") -> list[str]:
    """``setpriv --pdeathsig KILL --``: the engine dies with storbench, even on SIGKILL, so no
    orphan goes on writing. Empty when setpriv (util-linux) is missing. ``INT`` for fio's
    client of many hosts: killed, it could not tell the hosts' servers, whose jobs would run
    on to their end; interrupted, it sends each server its quit and exits."""
    setpriv = shutil.which("setpriv")
    return [setpriv, "--pdeathsig", signal_name, "--"] if setpriv else []


#: The environment variable that marks a run's processes.
ENV = "STORBENCH_RUN"
#: The environment variable of a process that is told to stop rather than killed when
#: storbench dies (fio's client of many hosts, ``pdeathsig INT``): the seconds :func:`sweep`
#: leaves it to finish (to send each host's server its quit) before it kills it.
GRACE_ENV = "STORBENCH_GRACE"
#: The grace of such a process, in seconds.
GRACE_S = 5.0


#: The token of the run this process executes now (see :func:`running`), or None.
_current: str | None = None


@contextlib.contextmanager
def running(token: str) -> Iterator[None]:
    """While a run executes: every engine process started through :func:`environment`
    carries its mark."""
    global _current
    before, _current = _current, token
    try:
        yield
    finally:
        _current = before


#: What no child of storbench is given: the results database's location (a PostgreSQL URL
#: holds its password) and libpq's settings and secrets (PGPASSWORD, PGPASSFILE, PGUSER...),
#: which only storbench's own connection to its database needs.
PRIVATE = ("STORBENCH_DB",)
PRIVATE_PREFIXES = ("PG",)


def private(name: str) -> bool:
    """Whether the environment variable ``name`` stays with storbench (:data:`PRIVATE`)."""
    return name in PRIVATE or name.startswith(PRIVATE_PREFIXES)


def environment(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for any process storbench starts (an engine, a tool, ssh, a drill's
    step): ``base`` (None: this process's own) without what stays with storbench
    (:func:`private`), with the mark of the run executing now, if one does."""
    env = {k: v for k, v in (os.environ if base is None else base).items() if not private(k)}
    if _current is not None:
        env[ENV] = _current
    return env


def processes(token: str) -> list[int]:
    """The pids of the live processes whose environment carries ``STORBENCH_RUN=token``
    (those of this user; root sees all). This process and its parent are never listed."""
    return list(_marked(token))


def _marked(token: str) -> dict[int, float]:
    """:func:`processes` with each one's grace in seconds (:data:`GRACE_ENV`; 0: none)."""
    mark = f"{ENV}={token}".encode()
    grace = f"{GRACE_ENV}=".encode()
    me = {os.getpid(), os.getppid()}
    found = {}
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) in me:
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as f:
                env = f.read().split(b"\0")
        except OSError:  # gone, or another user's
            continue
        if mark in env:
            given = [v[len(grace) :] for v in env if v.startswith(grace)]
            try:
                found[int(name)] = float(given[0]) if given else 0.0
            except ValueError:
                found[int(name)] = 0.0
    return found


def sweep(token: str, timeout: float = 10.0) -> int:
    """SIGKILL every process of the run (:func:`processes`) until none is left or
    ``timeout`` seconds have passed; returns how many were killed. A process with a grace
    (:data:`GRACE_ENV`: it was told to stop when storbench died) is left that many seconds
    to end by itself first."""
    killed: set[int] = set()
    start = time.monotonic()
    end = start + timeout
    while True:
        marked = _marked(token)
        if not marked or time.monotonic() > end:
            return len(killed)
        for pid, grace in marked.items():
            if time.monotonic() - start < grace:
                continue
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
                killed.add(pid)
        time.sleep(0.02)


def kill_tree(pid: int) -> None:
    """SIGKILL ``pid`` and every process below it: fio's job processes are its children, in
    sessions of their own (module docstring), and killing fio alone leaves them running."""
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):  # gone
            continue
        children.setdefault(ppid, []).append(int(name))
    tree, todo = [], [pid]
    while todo:
        tree.append(todo.pop())
        todo += children.get(tree[-1], [])
    for p in reversed(tree):  # listed before any is killed: none is missed as it reparents
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(p, signal.SIGKILL)


class Guard:
    """The guard of one run (module docstring): :meth:`start` before the first engine
    process, :meth:`stop` at the end (it sweeps then too, so a straggler of a second
    Ctrl-C goes with the run)."""

    def __init__(self, token: str) -> None:
        self.token = token
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-I", "-S", os.path.abspath(__file__), self.token],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # Ctrl-C at the terminal does not reach it
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},  # not marked itself
        )

    def stop(self, timeout: float = 15.0) -> None:
        if self.proc is None:
            return
        if self.proc.stdin is not None:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc = None

    def __enter__(self) -> Guard:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _main(token: str) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    while sys.stdin.buffer.read(4096):  # storbench writes nothing: wait for end-of-file
        pass
    sweep(token)


if __name__ == "__main__":
    _main(sys.argv[1])
