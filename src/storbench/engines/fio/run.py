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
from storbench.engines.fio.livehosts import run_live_point
from storbench.engines.fio.parse import Known, _error_message, parse_output
from storbench.engines.fio.spawn import FioRun, _command, _run_fio
from storbench.engines.fio.tool import FioOutputError, fio_version
from storbench.engines.fio.watchdog import Watchdog
from storbench.engines.process import Gated, start_gated
from storbench.model.metrics import DIRECTIONS, Measurement
from storbench.model.series import Interval
from storbench.plan import (
    Point,
)


@dataclass
class Prepared:
    """A local point's fio started ahead and held at its gate (process.start_gated): its
    job file written, its command, the process."""

    point: Point
    job_path: str
    job_text: str
    command: list[str]
    gated: Gated

    def job(self) -> tuple[str, str, list[str]]:
        """Its job file's text and path, and fio's command."""
        return self.job_text, self.job_path, self.command


def prepare_point(
    point: Point,
    workdir: str,
    *,
    run_id: int | None = None,
    total: int | None = None,
    tag: str | None = None,
) -> Prepared:
    """A local point's fio, spawned now and held until released (:func:`run_point` with
    it, or :meth:`Gated.release` the moment the point before ends): what lies between two
    points, the job file, the command and the process' start, done while the point
    before runs. Raises OSError when it cannot start."""
    job_text, job_path, cmd = _job(point, workdir, run_id, total, tag)
    stem = job_path[:-4]
    gated = start_gated(cmd, workdir, stem + ".out", stem + ".err", ceph_env([point.target]))
    return Prepared(point, job_path, job_text, cmd, gated)


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
    prepared: Prepared | None = None,
    on_exit: Callable[[int | None], None] | None = None,
) -> FioRun:
    """Run fio for one point; parse its output into a measurement. ``should_stop`` is
    polled while fio runs; when it turns true fio gets SIGINT (it stops its jobs cleanly)
    and the run is flagged interrupted. A point with hosts runs on each host through its
    agent's run service, read while it runs (livehosts.py), or else through fio's
    client/server mode (:func:`run_hosts_point`; ``hosts``: where the ``local`` host's
    fio server and run service listen, the servers' own names). A point's intervals (its
    time series) go to ``on_intervals`` as fio reports them (through fio's client: at its
    end); ``prepared``: its fio started ahead (:func:`prepare_point`); ``on_exit(status)``:
    called the moment its fio exits, before its output is read. ``tag`` names the run's S3
    objects (jobfile.s3_run_tag)."""
    if point.hosts:
        return _run_hosts(
            point, workdir, hosts or HostContext(), on_intervals, should_stop, run_id, total, tag
        )
    job = prepared.job() if prepared else _job(point, workdir, run_id, total, tag)
    job_text, job_path, cmd = job
    stream: StatusStream | None = None
    t = point.target
    watch = Watchdog.of(point.params, f"the S3 service at {t.endpoint}") if t.kind == "s3" else None

    def on_output(started: float, text: str) -> None:
        nonlocal stream
        if stream is None:
            stream = StatusStream(started, point.interval_ms, on_intervals)
        stream.feed(text)
        if watch is not None:
            watch.progress(stream.completed)

    rc, interrupted, started, ended, raw, stderr = _run_fio(
        cmd,
        workdir,
        job_path[:-4],
        should_stop,
        env=ceph_env([point.target]),
        on_output=on_output,
        stalled=watch,
        gated=prepared.gated if prepared is not None else None,
        on_exit=on_exit,
    )
    intervals = stream.close() if stream is not None else []
    (raw, reports), known = (stream.kept(), stream.last_document) if stream else (("", 0), None)
    # stopped by us (SIGINT), fio still prints the result of the time it ran and exits 128:
    # that result stands (the runner decides whether a cut point is kept)
    rc_seen = 0 if interrupted and raw.strip() else rc
    meas, warnings = _local_measurement(raw, stderr, rc_seen, known)
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
        started_at=started,
        ended_at=ended,
        interrupted=interrupted,
        warnings=warnings,
        intervals=intervals,
    )


def _run_hosts(
    point: Point,
    workdir: str,
    ctx: HostContext,
    on_intervals: Callable[[list[Interval]], None] | None,
    should_stop: Callable[[], bool],
    run_id: int | None,
    total: int | None,
    tag: str | None,
) -> FioRun:
    """A point with hosts: through their run services when each has one, else through
    fio's client."""
    live = run_live_point(
        point,
        workdir,
        context=ctx,
        run_id=run_id,
        total=total,
        should_stop=should_stop,
        on_intervals=on_intervals,
        tag=tag,
    )
    if live is not None:
        return live
    return run_hosts_point(
        point,
        workdir,
        context=ctx,
        run_id=run_id,
        total=total,
        should_stop=should_stop,
        on_intervals=on_intervals,
        tag=tag,
    )


def _job(
    point: Point, workdir: str, run_id: int | None, total: int | None, tag: str | None
) -> tuple[str, str, list[str]]:
    """A local point's job file (its text, written to its path in ``workdir``) and fio's
    command for it."""
    job_text = job_file(point, run_id=run_id, total=total, tag=tag)
    job_path = os.path.join(workdir, f"point-{point.index:05d}.fio")
    with open(job_path, "w") as f:
        f.write(job_text)
    return job_text, job_path, _command(job_path, point)


def _local_measurement(
    raw: str, stderr: str, rc: int | None, known: Known | None = None
) -> tuple[Measurement, list[str]]:
    """A local point's measurement from fio's output and exit status, failed with fio's
    own words when it printed no result, exited with an error or did no I/O (as a host's
    measurement fails: hosts.py). ``known``: the last document the status stream decoded
    and checked (not decoded again: parse.final_document)."""
    meas: Measurement | None
    warnings: list[str] = []
    try:
        meas, warnings = parse_output(raw, known)
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
