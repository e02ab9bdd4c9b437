"""A point measured through its engine's session (the runner's part of it, runner.py):
its preconditioning first (precondition.py), its hosts sampled while its load runs
(sampling.py), in steady-state rounds (rounds.py) or beside a failure drill (drills.py)
when it asks for them.

A plain point is measured up to its engine process's end (``engines.base.run_ended``): the
runner reads its result (``Ended.finish``) while the next point's engine starts up; the
last host sample is then the first thing read. The others are read whole before the
runner goes on.
"""

from __future__ import annotations

import contextlib
import dataclasses

from storbench import engines
from storbench.engines.base import Ended, PointResult, RunContext, Session, run_ended
from storbench.execute.drills import Drill
from storbench.execute.precondition import Preconditioner
from storbench.execute.rounds import RoundHook, run_steady
from storbench.execute.runstore import StoreSeries
from storbench.execute.sampling import (
    CpuTally,
    note_host_cpu,
    note_power,
    note_unsampled,
    sample_sources,
)
from storbench.hosts import power
from storbench.hosts.load import Sampler
from storbench.model.metrics import Measurement
from storbench.plan import Point


def measure(
    run: RunContext,
    session: Session,
    point: Point,
    series: StoreSeries,
    on_round: RoundHook,
    pre: Preconditioner,
) -> Ended:
    """A point's preconditioning (precondition.py), then the point: a phase that failed
    fails the point (what it would measure is not what the plan asked for); one that was
    interrupted is the point's interruption."""
    engine = engines.get(point.engine)
    phase = pre.run(engine, session, point)
    if phase is not None:
        meas = phase.measurement
        if phase.interrupted or run.should_stop():
            return Ended.of(phase)
        if meas is None or meas.status != "ok":
            why = meas.error if meas is not None and meas.error else "no result"
            failed = Measurement(status="failed", error=f"preconditioning failed: {why}")
            return Ended.of(dataclasses.replace(phase, measurement=failed))
    if point.actions or point.steady is not None:
        return Ended.of(_run_whole(run, session, point, series, on_round))
    return _run_point(run, session, point, series)


def _run_point(run: RunContext, session: Session, point: Point, series: StoreSeries) -> Ended:
    """One point through its engine up to its process's end, its hosts sampled from
    before it starts to ``finish``, which reads its result (``Ended.finish``): the last
    host sample is taken first, the moment the runner reads it."""
    sink = CpuTally(series.host_sink(point))
    sampler = Sampler(point.interval_ms, sink, sample_sources(point), power.meter())
    sampling = contextlib.ExitStack()
    sampling.enter_context(sampler)
    try:
        ended = run_ended(session, point)
    except BaseException:
        _stop_sampling(run, point, sampling, sampler)
        raise

    def finish() -> PointResult:
        _stop_sampling(run, point, sampling, sampler)
        result = ended.finish()
        note_power(result, sampler.power_samples)
        note_host_cpu(result, sink)
        return result

    return dataclasses.replace(ended, finish=finish)


def _stop_sampling(
    run: RunContext, point: Point, sampling: contextlib.ExitStack, sampler: Sampler
) -> None:
    """The point's last host sample, and an event for a host that could not be sampled."""
    try:
        sampling.close()
    finally:
        note_unsampled(run.events, point, sampler.errors)


def _run_whole(
    run: RunContext, session: Session, point: Point, series: StoreSeries, on_round: RoundHook
) -> PointResult:
    """One point through its engine, read at once: in steady-state rounds when it asks for
    them, with its drill's actions (drills.py) in a thread beside the load when it has some."""
    drill = Drill(point, run.events, should_stop=run.should_stop) if point.actions else None
    if drill is not None:
        drill.start()
    sink = CpuTally(series.host_sink(point))
    sampler = Sampler(point.interval_ms, sink, sample_sources(point), power.meter())
    try:
        with sampler:
            if point.steady is None:
                result = session.run(point)
            else:
                engine = engines.get(point.engine)
                result = run_steady(engine, session, point, series, on_round)
        note_power(result, sampler.power_samples)
        note_host_cpu(result, sink)
    finally:
        if drill is not None:
            drill.stop()
        note_unsampled(run.events, point, sampler.errors)
    if drill is not None and drill.error is not None:
        return _drill_failed(result, drill.error)
    return result


def _drill_failed(result: PointResult, why: str) -> PointResult:
    """The point of a drill that storbench could not carry out as planned: failed, with
    why (its load is not the load under the drill the plan asked for)."""
    meas = result.measurement or Measurement()
    error = f"the failure drill failed: {why}"
    meas = dataclasses.replace(meas, status="failed", error=error)
    return dataclasses.replace(result, measurement=meas)
