"""One fio process: its command line, starting it with the run's mark, waiting for it, and stopping
it cleanly (SIGINT) when the run is asked to stop.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from storbench.engines.fio.files import workload_writes
from storbench.engines.fio.runservice import fio_command
from storbench.engines.process import Gated, start_logged, wait_logged
from storbench.engines.process import started as started_hook
from storbench.hosts import procguard
from storbench.model import redact
from storbench.model.metrics import (
    Measurement,
)
from storbench.model.series import Interval
from storbench.plan import (
    Point,
    Target,
)


@dataclass
class FioRun:
    measurement: Measurement | None
    command: list[str]
    job_text: str
    raw_output: str
    stderr: str
    exit_code: int | None
    started_at: float
    ended_at: float
    interrupted: bool = False
    warnings: list[str] = field(default_factory=list)
    intervals: list[Interval] = field(default_factory=list)  # its time series


def read_only(point: Point, target: Target | None = None) -> bool:
    """Whether fio runs the point with ``--readonly``: a point that writes nothing on a file
    or device (``target``, default the point's). fio then refuses any write, trim or layout
    of it (fio 3.33 init.c, filesetup.c extend_file): a second line of defence behind
    preflight, for files storbench did not create. Not for directories, where fio lays out
    files of its own before reading them."""
    t = target or point.target
    # the job's own options: a point whose target was preconditioned (written before it)
    # still reads read-only
    return not workload_writes(point.params) and t.kind in ("file", "device")


def _command(job_path: str, point: Point) -> list[str]:
    """fio's command for a local point: json+ (histograms), a status report every
    ``point.interval_ms`` (its time series) and ``--readonly`` where it writes nothing."""
    return fio_command(job_path, point.interval_ms, read_only(point))


def _run_fio(
    cmd: list[str],
    workdir: str,
    stem: str,
    should_stop: Callable[[], bool],
    env: dict[str, str] | None = None,
    on_output: Callable[[float, str], None] | None = None,
    stalled: Callable[[], bool] | None = None,
    death: str = "KILL",
    gated: Gated | None = None,
    on_exit: Callable[[int | None], None] | None = None,
) -> tuple[int | None, bool, float, float, str, str]:
    """Run fio, stdout and stderr to ``stem``.out/.err; (exit status, interrupted, start,
    end, stdout, stderr). SIGINT when ``should_stop`` turns true, SIGKILL (fio and its job
    processes) 15 s later, or at once when ``stalled`` turns true (watchdog.py: fio is stuck
    in a request; that is no interruption). ``on_output(started, text)`` gets what fio
    printed to stdout as it prints it (and the returned stdout is then empty). ``death``:
    the signal fio gets should storbench die (process.start_logged). ``gated``: the fio of
    ``cmd`` started ahead (process.start_gated) and released, which is waited for instead
    of a new one. ``on_exit(status)`` is called the moment fio has exited, before its
    output is read (the session releases the next point's fio: engine.py); the end
    returned is that moment."""
    out_path = stem + ".out"
    err_path = stem + ".err"
    interrupted = False
    if gated is not None:
        proc, started = gated.proc, gated.release()
    else:
        started = time.time()
        # a run with S3 keys: fio echoes them (its JSON's "job options"), cleaned before
        # they reach the .out file (model/redact.py)
        clean = redact.clean if redact.active() else None
        proc = start_logged(cmd, workdir, out_path, err_path, env, clean=clean, death=death)
    started_hook()  # the runner's bookkeeping of the point before, while fio starts up
    with open(out_path, errors="replace") as growing:

        def read_more() -> None:
            if on_output is not None and (text := growing.read()):
                on_output(started, text)

        sigint_at: float | None = None
        # wake the moment fio exits (pidfd), yet look at should_stop every 50 ms
        waiter = _exit_waiter(proc)
        while True:
            if waiter(50):
                proc.wait()
                ended = time.time()
                if on_exit is not None:
                    on_exit(proc.returncode)
                break
            read_more()
            if stalled is not None and stalled():
                procguard.kill_tree(proc.pid)
            elif should_stop() and sigint_at is None:
                interrupted = True
                sigint_at = time.monotonic()
                proc.send_signal(signal.SIGINT)
            elif sigint_at is not None and time.monotonic() - sigint_at > 15:
                procguard.kill_tree(proc.pid)
        wait_logged(proc)
        read_more()
    raw = ""  # with on_output, the caller has had all of it (a long point's is large)
    if on_output is None:
        with open(out_path, errors="replace") as f:
            raw = f.read()
    with open(err_path, errors="replace") as f:
        stderr = f.read()
    return proc.returncode, interrupted, started, ended, raw, stderr


def _exit_waiter(proc: subprocess.Popen[bytes]) -> Callable[[int], bool]:
    """A function that waits up to N ms for ``proc`` to exit and says whether it did."""
    try:
        fd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):

        def poll_wait(ms: int) -> bool:
            try:
                proc.wait(timeout=ms / 1000)
                return True
            except subprocess.TimeoutExpired:
                return False

        return poll_wait
    poller = select.poll()
    poller.register(fd, select.POLLIN)

    def pidfd_wait(ms: int) -> bool:
        if poller.poll(ms):
            os.close(fd)
            return True
        return False

    return pidfd_wait
