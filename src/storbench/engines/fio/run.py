"""Running fio for one point (on this machine, or through the hosts' fio servers) and stopping it
cleanly.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

from storbench.engines.fio.hosts import HostContext, run_hosts_point
from storbench.engines.fio.intervals import StatusStream
from storbench.engines.fio.jobfile import ceph_env, job_file
from storbench.engines.fio.parse import _error_message, parse_output
from storbench.engines.fio.spawn import Exited, FioRun, _command, _run_fio_ended
from storbench.engines.fio.tool import FioOutputError, fio_version
from storbench.engines.fio.watchdog import Watchdog
from storbench.model.metrics import DIRECTIONS, Measurement
from storbench.model.series import Interval
from storbench.plan import (
    Point,
)


def run_point(
    point: Point,
    workdir: str,
    *,
    run_id: int | None = None,
    total: int | None = None,
    should_stop: Callable[[], bool] = lambda: False,
    hosts: HostContext | None = None,
    on_intervals: Callable[[list[Interval]], None] | None = None,
    tag: str | None = None,
) -> FioRun:
    """Run fio for one point; parse its output into a measurement (:func:`run_point_ended`,
    read at once)."""
    return run_point_ended(
        point,
        workdir,
        run_id=run_id,
        total=total,
        should_stop=should_stop,
        hosts=hosts,
        on_intervals=on_intervals,
        tag=tag,
    ).finish()


@dataclass
class FioEnded:
    """A point whose fio has exited; :meth:`finish` reads the rest of its output (the last
    status reports into the series, the result) and parses it (call it once)."""

    started_at: float
    ended_at: float
    interrupted: bool
    finish: Callable[[], FioRun]

    @classmethod
    def of(cls, run: FioRun) -> FioEnded:
        """A run whose output is read already."""
        return cls(run.started_at, run.ended_at, run.interrupted, lambda: run)


@dataclass(frozen=True)
class Job:
    """A local point's job file, written, and the command that runs it."""

    text: str
    path: str
    command: list[str]


def prepare_job(
    point: Point,
    workdir: str,
    *,
    run_id: int | None = None,
    total: int | None = None,
    tag: str | None = None,
) -> Job:
    """Write a local point's job file into ``workdir`` and make its command (what
    :func:`run_point_ended` does first; done ahead while the point before runs)."""
    text = job_file(point, run_id=run_id, total=total, tag=tag)
    path = os.path.join(workdir, f"point-{point.index:05d}.fio")
    with open(path, "w") as f:
        f.write(text)
    return Job(text, path, _command(path, point))


def run_point_ended(
    point: Point,
    workdir: str,
    *,
    run_id: int | None = None,
    total: int | None = None,
    should_stop: Callable[[], bool] = lambda: False,
    hosts: HostContext | None = None,
    on_intervals: Callable[[list[Interval]], None] | None = None,
    tag: str | None = None,
    job: Job | None = None,
) -> FioEnded:
    """Run fio for one point up to its exit; its output is parsed into a measurement by
    :meth:`FioEnded.finish`.

    ``should_stop`` is polled while fio runs; when it turns true fio gets SIGINT (it stops
    its jobs cleanly) and the run is flagged interrupted. A point with hosts runs through
    fio's client/server mode (see :func:`run_hosts_point`; read before this returns);
    ``hosts`` says where the ``local`` host's fio server listens and the servers' own host
    names. A local point's intervals (its time series) go to ``on_intervals`` as fio
    reports them, the last ones by :meth:`FioEnded.finish`. ``tag`` names the run's S3
    objects (jobfile.s3_run_tag). ``job``: the local point's job file written and command
    made already (:func:`prepare_job`, with the same arguments).
    """
    if point.hosts:
        return FioEnded.of(
            run_hosts_point(
                point,
                workdir,
                run_id=run_id,
                total=total,
                should_stop=should_stop,
                context=hosts or HostContext(),
                on_intervals=on_intervals,
                tag=tag,
            )
        )
    job = job or prepare_job(point, workdir, run_id=run_id, total=total, tag=tag)
    job_text, job_path, cmd = job.text, job.path, job.command
    t = point.target
    watch = Watchdog.of(point.params, f"the S3 service at {t.endpoint}") if t.kind == "s3" else None
    reader = _Reader(point.interval_ms, on_intervals, watch)
    done = _run_fio_ended(
        cmd,
        workdir,
        job_path[:-4],
        should_stop,
        env=ceph_env([point.target]),
        on_output=reader.feed,
        stalled=watch,
    )
    return FioEnded(
        done.started_at,
        done.ended_at,
        done.interrupted,
        lambda: reader.result(done, cmd, job_text),
    )


class _Reader:
    """A local point's fio output as it comes (its status reports into the time series),
    then its result."""

    def __init__(
        self,
        interval_ms: int,
        on_intervals: Callable[[list[Interval]], None] | None,
        watch: Watchdog | None,
    ) -> None:
        self.interval_ms, self.on_intervals, self.watch = interval_ms, on_intervals, watch
        self.stream: StatusStream | None = None

    def feed(self, started: float, text: str) -> None:
        """More of what fio printed (``started``: when it was started)."""
        if self.stream is None:
            self.stream = StatusStream(started, self.interval_ms, self.on_intervals)
        self.stream.feed(text)
        if self.watch is not None:
            self.watch.progress(self.stream.completed)

    def result(self, done: Exited, cmd: list[str], job_text: str) -> FioRun:
        """The run's result: what fio printed last read (the last reports into the series),
        its result parsed."""
        _, stderr = done.output()
        stream, watch, rc = self.stream, self.watch, done.exit_code
        intervals = stream.close() if stream is not None else []
        raw, reports = stream.kept() if stream is not None else ("", 0)
        # stopped by us (SIGINT), fio still prints the result of the time it ran and exits
        # 128: that result stands (the runner decides whether a cut point is kept)
        meas, warnings = _local_measurement(
            raw, stderr, 0 if done.interrupted and raw.strip() else rc
        )
        if reports:
            meas.extra["status_reports"] = reports  # read into the series, not kept as text
        if watch is not None and watch.fired:  # what it did until then stays, failed
            meas.status, meas.error = "failed", watch.fired
        return FioRun(
            measurement=meas,
            command=cmd,
            job_text=job_text,
            raw_output=raw,
            stderr=stderr,
            exit_code=rc,
            started_at=done.started_at,
            ended_at=done.ended_at,
            interrupted=done.interrupted,
            warnings=warnings,
            intervals=intervals,
        )


def _local_measurement(raw: str, stderr: str, rc: int | None) -> tuple[Measurement, list[str]]:
    """A local point's measurement from fio's output and exit status, failed with fio's
    own words when it printed no result, exited with an error or did no I/O (as a host's
    measurement fails: hosts.py)."""
    meas: Measurement | None
    warnings: list[str] = []
    try:
        meas, warnings = parse_output(raw)
    except FioOutputError:
        meas = None
    if meas is None:
        meas = Measurement(
            status="failed",
            error_code=rc or -1,
            error=_error_message(stderr, raw)
            or f"fio exited with status {rc} and printed no result",
        )
    elif rc != 0 and meas.status == "ok":
        meas.status = "failed"
        meas.error_code = meas.error_code or rc or -1
        meas.error = _error_message(stderr, raw) or f"fio exited with status {rc}"
    elif meas.status != "ok" and not meas.error:
        meas.error = _error_message(stderr, raw)
    if meas.status == "ok" and not any(meas.direction(d) for d in DIRECTIONS):
        # fio says error 0 and exits 0, yet did nothing: e.g. size=200% of a file it may
        # not extend ("failed allocating random map"); 0 IOPS is no measurement
        said = _error_message(stderr, raw)
        meas.status, meas.error_code = "failed", -1
        meas.error = "it did no I/O" + (f" (fio: {said.replace('fio: ', '')})" if said else "")
    meas.engine_version = meas.engine_version or fio_version()
    return meas, warnings
