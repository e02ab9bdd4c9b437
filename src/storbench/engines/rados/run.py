"""Running rados bench processes (one per client, all at once) and the points of a plan."""

from __future__ import annotations

import os
import re
import select
import signal
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from storbench.engines.process import start_logged
from storbench.engines.rados.clients import aggregate_clients
from storbench.engines.rados.command import (
    RUN_NAME_PREFIX,
    RadosOutputError,
    bench_command,
    check_run_name,
    client_run_name,
    object_prefix_for,
    rados_version,
)
from storbench.engines.rados.parse import parse_rados_bench
from storbench.engines.rados.result import RadosBenchResult
from storbench.engines.rados.series import client_intervals
from storbench.engines.rados.validate import to_measurement
from storbench.hosts.ceph import CephClient, error_message
from storbench.model.metrics import Measurement
from storbench.model.series import Interval
from storbench.model.units import parse_size, parse_time
from storbench.plan import Point

# ---------------------------------------------------------------------------- running


@dataclass
class RadosRun:
    """One rados bench process: what ran, what it printed, what storbench made of it."""

    command: list[str]
    run_name: str
    raw_output: str
    stderr: str
    exit_code: int | None
    pid: int
    started_at: float
    ended_at: float
    object_prefix: str | None  # of a write: printed, or derived from the pid
    result: RadosBenchResult | None
    measurement: Measurement
    interrupted: bool = False
    timed_out: bool = False


def run_commands(
    commands: Sequence[tuple[str, list[str]]],
    workdir: str,
    *,
    mode: str,
    fmt: str,
    timeout: float,
    should_stop: Callable[[], bool] = lambda: False,
) -> list[RadosRun]:
    """Start every ``(run_name, command)`` at once, wait for all, parse each.

    ``timeout`` (s) bounds the whole: rados bench waits forever on a pool whose PGs are not
    active; then every process still running is killed and its run marked ``timed_out``.
    ``should_stop`` is polled; when true the processes get SIGINT, then SIGKILL 10 s later.
    """
    procs = []
    try:
        for i, (run_name, cmd) in enumerate(commands):
            out_path = os.path.join(workdir, f"rados-{run_name}-{i}.out")
            err_path = out_path[:-4] + ".err"
            started = time.time()
            p = start_logged(cmd, workdir, out_path, err_path)
            procs.append((run_name, cmd, p, out_path, err_path, started))
        ended, interrupted, timed_out = _wait_all(
            [p for _, _, p, *_ in procs], timeout, should_stop
        )
    except BaseException:
        # KeyboardInterrupt or any error while waiting: no rados process outlives us
        for _, _, p, *_ in procs:
            if p.poll() is None:
                p.kill()
            p.wait()
        raise
    return [
        _collect(
            run_name,
            cmd,
            p,
            (out_path, err_path),
            (started, ended.get(i, time.time())),
            mode=mode,
            fmt=fmt,
            timeout=timeout,
            interrupted=interrupted,
            timed_out=timed_out,
        )
        for i, (run_name, cmd, p, out_path, err_path, started) in enumerate(procs)
    ]


def _collect(
    run_name: str,
    cmd: list[str],
    p: subprocess.Popen[bytes],
    paths: tuple[str, str],
    times: tuple[float, float],
    *,
    mode: str,
    fmt: str,
    timeout: float,
    interrupted: bool,
    timed_out: bool,
) -> RadosRun:
    """One finished rados bench process: its output files ``paths`` (stdout, stderr) read
    and parsed; ``times``: when it started and ended."""
    with open(paths[0], errors="replace") as f:
        raw = f.read()
    with open(paths[1], errors="replace") as f:
        stderr = f.read()
    result: RadosBenchResult | None = None
    try:
        result = parse_rados_bench(raw, fmt, mode)
        meas = to_measurement(result)
    except RadosOutputError as e:
        meas = Measurement(
            status="failed",
            error_code=p.returncode or -1,
            error=error_message(stderr) or str(e),
            engine_version=rados_version(),
        )
    if p.returncode != 0 and meas.status == "ok":
        meas.status = "failed"
        meas.error_code = p.returncode or -1
        meas.error = error_message(stderr) or f"rados exited with status {p.returncode}"
    if timed_out and p.returncode != 0:
        meas.error = (
            f"rados bench did not finish within {timeout:g} s and was killed "
            "(are all PGs of the pool active?)"
        )
    prefix = result.object_prefix if result else object_prefix_in(raw)
    if prefix is None and mode == "write":
        prefix = object_prefix_for(p.pid)
    return RadosRun(
        command=cmd,
        run_name=run_name,
        raw_output=raw,
        stderr=stderr,
        exit_code=p.returncode,
        pid=p.pid,
        started_at=times[0],
        ended_at=times[1],
        object_prefix=prefix,
        result=result,
        measurement=meas,
        interrupted=interrupted,
        timed_out=timed_out,
    )


def _wait_all(
    procs: Sequence[subprocess.Popen[bytes]],
    timeout: float,
    should_stop: Callable[[], bool],
) -> tuple[dict[int, float], bool, bool]:
    """Wait for every process: (index -> end time, interrupted, timed out)."""
    deadline = time.monotonic() + timeout
    interrupted = timed_out = False
    sigint_at: float | None = None
    ended: dict[int, float] = {}
    while len(ended) < len(procs):
        for i, p in enumerate(procs):
            if i not in ended and p.poll() is not None:
                ended[i] = time.time()
        if len(ended) == len(procs):
            break
        now = time.monotonic()
        if should_stop() and sigint_at is None:
            interrupted = True
            sigint_at = now
            for p in procs:
                if p.poll() is None:
                    p.send_signal(signal.SIGINT)
        if now > deadline or (sigint_at is not None and now - sigint_at > 10):
            timed_out = not interrupted
            for p in procs:
                if p.poll() is None:
                    p.kill()
            for p in procs:
                p.wait()
            continue
        _wait_any([p for i, p in enumerate(procs) if i not in ended], 0.05)
    return ended, interrupted, timed_out


def object_prefix_in(text: str) -> str | None:
    """The object prefix a write printed, even in output cut short (no summary)."""
    m = re.search(r"Object prefix: (\S+)|\"object_prefix\":\"([^\"]+)\"", text)
    return (m.group(1) or m.group(2)) if m else None


def _wait_any(procs: Sequence[subprocess.Popen[bytes]], seconds: float) -> None:
    """Sleep up to ``seconds``, waking as soon as one of ``procs`` exits (pidfd)."""
    fds = []
    try:
        for p in procs:
            try:
                fds.append(os.pidfd_open(p.pid))
            except (AttributeError, OSError):
                time.sleep(seconds)
                return
        if fds:
            select.select(fds, [], [], seconds)
        else:
            time.sleep(seconds)
    finally:
        for fd in fds:
            os.close(fd)


def run_bench(
    pool: str,
    mode: str,
    seconds: int,
    object_size: int | None,
    threads: int,
    run_name: str,
    conf: str | os.PathLike[str] | None = None,
    *,
    clients: int = 1,
    no_cleanup: bool = True,
    fmt: str = "plain",
    workdir: str,
    timeout: float | None = None,
    should_stop: Callable[[], bool] = lambda: False,
) -> tuple[Measurement, list[RadosRun]]:
    """Run ``clients`` rados bench processes at once (run names from
    :func:`client_run_name`) and return the measurement (aggregated over the clients when
    there are several, see :func:`aggregate_clients`) and each process's run.

    ``timeout`` defaults to the duration plus 60 s.
    """
    commands = [
        (
            name,
            bench_command(
                pool, mode, seconds, object_size, threads, name, conf, no_cleanup, fmt=fmt
            ),
        )
        for name in (client_run_name(run_name, c, clients) for c in range(1, clients + 1))
    ]
    runs = run_commands(
        commands,
        workdir,
        mode=mode,
        fmt=fmt,
        timeout=timeout if timeout is not None else seconds + 60.0,
        should_stop=should_stop,
    )
    if clients == 1:
        return runs[0].measurement, runs
    ok = [r for r in runs if r.result is not None and r.measurement.status == "ok"]
    if len(ok) < 2:
        failed = Measurement(
            status="failed" if not ok else "partial",
            error="; ".join(f"{r.run_name}: {r.measurement.error}" for r in runs if r not in ok),
            hosts={r.run_name: r.measurement for r in runs},
            engine_version=rados_version(),
        )
        return failed, runs
    try:
        meas = aggregate_clients(
            [r.result for r in ok if r.result is not None],
            [r.run_name for r in ok],
            [r.started_at for r in ok],
        )
    except ValueError as e:
        # e.g. seq readers that each ran out of objects at different times
        return (
            Measurement(
                status="failed",
                error=f"no aggregate of the clients: {e} (each client's result is in hosts)",
                hosts={r.run_name: r.measurement for r in runs},
                jobs=len(runs),
                engine_version=rados_version(),
            ),
            runs,
        )
    if len(ok) < len(runs):
        meas.status = "partial"
        meas.error = "; ".join(f"{r.run_name}: {r.measurement.error}" for r in runs if r not in ok)
        meas.hosts.update({r.run_name: r.measurement for r in runs if r not in ok})
    return meas, runs


# ---------------------------------------------------------------------------- plan points


@dataclass
class PointRun:
    """What the runner records for one rados bench point (its clients' processes)."""

    measurement: Measurement
    command: list[list[str]]  # each client's argv
    raw_output: str  # each client's output under a ``==> RUN_NAME (pid N) <==`` line
    stderr: str
    started_at: float
    ended_at: float
    interrupted: bool
    #: the write runs of this point: (run name, object prefix), for cleanup at the end
    writes: list[tuple[str, str | None]] = field(default_factory=list)
    #: its time series: one client's as the point's own, several clients' each by run name
    intervals: list[Interval] = field(default_factory=list)
    job_text: None = None  # rados bench has no job file: the command is all there is


def point_run_name(point: Point, run_id: int | None) -> str:
    """The rados bench run name of a point (client c of several adds ``-c<c>``): the run and
    the dataset the plan gave it (a write's objects, read by the seq/rand points after it).
    ``RUN`` stands for the run id before the run exists (`storbench plan show`)."""
    run = run_id if run_id is not None else "RUN"
    return check_run_name(f"{RUN_NAME_PREFIX}r{run}-{point.extra['dataset']}")


def _bench_args(point: Point) -> tuple[str, str, int, int | None, int]:
    """``run_bench``/``bench_command``'s pool, mode, seconds, object size and threads."""
    p = point.params
    mode = str(p["mode"])
    size = parse_size(p["bs"]) if mode == "write" else None
    return point.target.pool, mode, int(parse_time(p["runtime"])), size, int(p["threads"])


def point_client(point: Point) -> CephClient:
    return CephClient(point.target.conf, point.target.client)


def point_commands(point: Point, run_id: int | None = None) -> list[list[str]]:
    """The rados bench command of each client of a point (``RUN`` for the run id when the
    run does not exist yet, as `storbench plan show` prints them)."""
    clients = int(point.params.get("clients", 1))
    base = point_run_name(point, run_id)
    return [
        bench_command(*_bench_args(point), client_run_name(base, c, clients), point_client(point))
        for c in range(1, clients + 1)
    ]


def run_point(
    point: Point,
    workdir: str,
    *,
    run_id: int,
    should_stop: Callable[[], bool] = lambda: False,
) -> PointRun:
    """Run the ``clients`` rados bench processes of one plan point at once."""
    mode = str(point.params["mode"])
    meas, runs = run_bench(
        *_bench_args(point),
        point_run_name(point, run_id),
        point_client(point),
        clients=int(point.params.get("clients", 1)),
        workdir=workdir,
        should_stop=should_stop,
    )
    several = len(runs) > 1

    def block(r: RadosRun, text: str) -> str:
        return f"==> {r.run_name} (pid {r.pid}) <==\n{text}" if several else text

    return PointRun(
        measurement=meas,
        command=[r.command for r in runs],
        raw_output="\n".join(block(r, r.raw_output) for r in runs),
        stderr="\n".join(block(r, r.stderr) for r in runs if r.stderr or several),
        started_at=min(r.started_at for r in runs),
        ended_at=max(r.ended_at for r in runs),
        interrupted=any(r.interrupted for r in runs),
        writes=[(r.run_name, r.object_prefix) for r in runs] if mode == "write" else [],
        intervals=[
            i
            for r in runs
            if r.result is not None
            for i in client_intervals(r.result, r.run_name if several else "")
        ],
    )
