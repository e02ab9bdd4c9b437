"""What every engine adapter does the same way with the engine's process."""

from __future__ import annotations

import contextlib
import os
import subprocess
import threading
import time
import weakref
from collections.abc import Callable
from typing import IO

from storbench.hosts import procguard

#: What waits for the next engine process to start (:func:`when_started`), and the
#: thread that asked (only that thread does it).
_waiting: list[Callable[[], None]] = []
_waiting_thread: int | None = None


def tool_version(path: str | None) -> str | None:
    """First words of ``TOOL --version`` (``fio-3.33``), or None when it is missing or fails."""
    if path is None:
        return None
    try:
        out = subprocess.run(
            [path, "--version"],
            capture_output=True,
            text=True,
            timeout=10,
            env=procguard.environment(),
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() or None


def when_started(work: Callable[[], None], *, first: bool = False) -> None:
    """Have ``work`` done the moment an engine has started the process(es) of its next
    load (:func:`started`), by this thread: the runner's bookkeeping of the point before
    (recording, progress) then overlaps the engine's start-up (fio takes 0.1 to 0.4 s to
    load, check its clock and lay files out before its first I/O) instead of delaying
    it. ``work`` must not raise; the runner does what is left itself when no process
    starts (:func:`started` again). ``first``: before what waits already (the host
    sampler's first readings, before the point before is recorded)."""
    global _waiting_thread
    _waiting.insert(0 if first else len(_waiting), work)
    _waiting_thread = threading.get_ident()


def started() -> None:
    """The load's process(es) just started: do what waits for that (:func:`when_started`).
    Called by the engines, and by the runner for what is still waiting."""
    if threading.get_ident() != _waiting_thread:
        return
    while _waiting:
        _waiting.pop(0)()


#: The threads that copy a cleaned process's output into its files (:func:`start_logged`).
_pumps: weakref.WeakKeyDictionary[subprocess.Popen[bytes], list[threading.Thread]] = (
    weakref.WeakKeyDictionary()
)


def start_logged(
    cmd: list[str],
    workdir: str,
    out_path: str,
    err_path: str,
    env: dict[str, str] | None = None,
    clean: Callable[[str], str] | None = None,
    death: str = "KILL",
) -> subprocess.Popen[bytes]:
    """Start an engine's process, its stdout and stderr into files, in a session of its own
    (a terminal's Ctrl-C reaches storbench, which stops it), dying with storbench and
    watched by procguard. With ``clean``, what the process prints goes through a pipe and
    ``clean`` line by line before it reaches the files (fio echoes an S3 key it read from
    its environment: it never reaches the disk); :func:`wait_logged` waits for the last
    line. ``death``: the signal it gets when storbench dies (procguard.pdeathsig_prefix)."""
    prefix = procguard.pdeathsig_prefix(death)
    if death != "KILL":  # told to stop, not killed: the guard lets it (procguard.GRACE_ENV)
        env = {**procguard.environment(env), procguard.GRACE_ENV: str(procguard.GRACE_S)}
    if clean is None:
        with open(out_path, "w") as out, open(err_path, "w") as err:
            return subprocess.Popen(
                prefix + cmd,
                stdout=out,
                stderr=err,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                cwd=workdir,
                env=procguard.environment(env),
            )
    proc = subprocess.Popen(
        prefix + cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
        cwd=workdir,
        env=procguard.environment(env),
    )
    assert proc.stdout is not None and proc.stderr is not None
    for path in (out_path, err_path):  # there (empty) at once, as without ``clean``
        open(path, "w").close()
    pumps = [
        threading.Thread(target=_pump, args=(pipe, path, clean), daemon=True)
        for pipe, path in ((proc.stdout, out_path), (proc.stderr, err_path))
    ]
    for t in pumps:
        t.start()
    _pumps[proc] = pumps
    return proc


#: What a gated process runs until it is released (:func:`start_gated`): one line from its
#: stdin, a pipe storbench holds, then the engine in its place with stdin from /dev/null as
#: :func:`start_logged` gives it; the pipe closed without a line (withdrawn), it exits 125.
_GATE = 'read -r go || exit 125; exec "$@" </dev/null'


class Gated:
    """An engine's process started ahead, waiting at its gate (:func:`start_gated`) until
    :meth:`release` lets it go on: the next point's fio spawned while the point before
    runs, released the moment that one exits (execute/runner.py, "handoff")."""

    def __init__(self, proc: subprocess.Popen[bytes], gate: int) -> None:
        self.proc, self._gate = proc, gate
        #: when it was let go (epoch seconds), None while it waits
        self.released_at: float | None = None

    def release(self) -> float:
        """Let it go on (once); when, in epoch seconds."""
        if self.released_at is None:
            try:
                os.write(self._gate, b"go\n")
            finally:
                os.close(self._gate)
            self.released_at = time.time()
        return self.released_at

    def withdraw(self) -> None:
        """Stop it, released or not, and its children (a released fio's job processes)."""
        if self.released_at is None:
            os.close(self._gate)
            self.released_at = 0.0
        if self.proc.poll() is None:
            procguard.kill_tree(self.proc.pid)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=30)
        wait_logged(self.proc)


def start_gated(
    cmd: list[str], workdir: str, out_path: str, err_path: str, env: dict[str, str] | None = None
) -> Gated:
    """:func:`start_logged` of ``cmd``, held at a gate until :meth:`Gated.release`: a shell
    (``sh``) waits for a line on a pipe, then becomes ``cmd`` (``exec``: the same process, its
    session, files and death signal)."""
    gate_r, gate_w = os.pipe()
    try:
        with open(out_path, "w") as out, open(err_path, "w") as err:
            proc = subprocess.Popen(
                [*procguard.pdeathsig_prefix(), "sh", "-c", _GATE, "storbench-gate", *cmd],
                stdout=out,
                stderr=err,
                stdin=gate_r,
                start_new_session=True,
                cwd=workdir,
                env=procguard.environment(env),
            )
    except BaseException:
        os.close(gate_w)
        raise
    finally:
        os.close(gate_r)
    return Gated(proc, gate_w)


def _pump(pipe: IO[bytes], path: str, clean: Callable[[str], str]) -> None:
    """Copy ``pipe`` into the file ``path`` a line at a time, each line cleaned first."""
    with pipe, open(path, "a", errors="replace") as f:
        for line in iter(pipe.readline, b""):
            f.write(clean(line.decode(errors="replace")))
            f.flush()


def wait_logged(proc: subprocess.Popen[bytes], timeout: float = 30.0) -> None:
    """Wait until the files of ``proc`` (:func:`start_logged`) hold all it printed."""
    for t in _pumps.pop(proc, []):
        t.join(timeout)
