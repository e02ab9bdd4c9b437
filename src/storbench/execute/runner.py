"""Execute points in order, record each measurement at once, handle Ctrl-C and fail-fast.

The runner knows nothing about presentation: it reports progress to an observer the CLI
passes in. Ctrl-C (or SIGTERM) sends fio SIGINT so it stops cleanly; the point that was
cut short is not recorded, every finished one is, and the run is marked interrupted so
``storbench resume`` can finish it.

Points with hosts run through fio's client/server mode; when one of them includes the
``local`` host, the runner starts a private fio server on loopback for the run (and stops
it at the end). A host that fails during a point leaves that point ``partial`` (recorded,
with the other hosts' data); the run goes on unless ``fail_fast``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shutil
import signal
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from types import FrameType
from typing import Any, Protocol

from storbench import engines
from storbench.analysis import findings
from storbench.analysis.steady import Verdict
from storbench.engines import process
from storbench.engines.base import PointResult, RunContext, Session
from storbench.execute.adaptive import Adaptive, measured_of
from storbench.execute.drills import Drill
from storbench.execute.handoff import hand_off, starts_at_once, withdraw
from storbench.execute.later import Later
from storbench.execute.leftovers import cleanup_engines, host_names
from storbench.execute.monitor import HealthMonitor, HealthSample
from storbench.execute.precondition import Preconditioner
from storbench.execute.rounds import run_steady
from storbench.execute.runstore import StoreEvents, StoreSeries, _Heartbeat
from storbench.execute.sampling import (
    CpuTally,
    note_host_cpu,
    note_power,
    note_unsampled,
    sample_sources,
)
from storbench.hosts import netpath, power, procguard
from storbench.hosts.ceph import CephClient
from storbench.hosts.inventory.host import memory_available
from storbench.hosts.load import Sampler
from storbench.model.constants import HEALTH_INTERVAL
from storbench.model.findings import Facts, Finding
from storbench.model.metrics import Measurement
from storbench.model.series import Interval
from storbench.plan import Point
from storbench.preflight import (
    ceph,
    restore_layout,
    scratch_sizes,
)
from storbench.store import Store, StoreError, liveness

#: Seconds between two samples of a Ceph cluster's health (HEALTH_INTERVAL) while a run with
#: a failure drill executes (the time to heal is measured with it)
DRILL_HEALTH_INTERVAL = 2.0


class Observer(Protocol):
    def point_started(self, point: Point, n: int, total: int) -> None: ...
    def point_finished(
        self, point: Point, meas: Measurement, n: int, total: int, seconds: float
    ) -> None: ...
    def point_interrupted(self, point: Point) -> None: ...
    def round_finished(
        self, point: Point, n: int, value: float, verdict: Verdict | None
    ) -> None: ...
    def intervals(self, point: Point, rows: list[Interval]) -> None: ...
    def phase(self, point: Point, text: str) -> None: ...
    def finding(self, point: Point, finding: Finding) -> None: ...
    def ceph_health(self, cluster: str, sample: HealthSample) -> None: ...


@dataclass
class Outcome:
    status: str  # completed | failed | interrupted
    ran: int = 0
    failed: int = 0
    skipped: int = 0  # beyond the knee of their climb (climbs.py)
    failures: list[tuple[Point, str]] = field(default_factory=list)


class _Stop:
    def __init__(self) -> None:
        self.requested = False
        self.count = 0

    def __call__(self) -> bool:
        return self.requested

    def request(self) -> None:
        """Stop as after one Ctrl-C (the running engine process is asked to end)."""
        self.requested = True


@contextlib.contextmanager
def _signals(stop: _Stop) -> Iterator[None]:
    def handler(signum: int, frame: FrameType | None) -> None:
        stop.requested = True
        stop.count += 1
        if stop.count > 1:
            raise KeyboardInterrupt

    old_int = signal.signal(signal.SIGINT, handler)
    old_term = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old_int)
        signal.signal(signal.SIGTERM, old_term)


def execute(
    store: Store,
    run_id: int,
    points: list[Point],
    observer: Observer,
    *,
    total: int,
    fail_fast: bool = False,
    health_interval: float = HEALTH_INTERVAL,
    clusters: list[dict[str, Any]] | None = None,
    network: list[dict[str, Any]] | None = None,
) -> Outcome:
    """Run ``points`` (all of a run, or the pending ones on resume) and record each.

    For Ceph targets the cluster's health is sampled every ``health_interval`` seconds and
    each change recorded as an event of the run; the objects rados bench and fio's rados
    engine wrote are removed at the end (those of finished writes stay when the run is
    interrupted, for the seq/rand points ``storbench resume`` runs: it removes them).
    ``clusters`` is what preflight found of each cluster (its health is the baseline);
    ``network`` the network baselines it measured (None: the run's inventory's);
    ``health_interval`` 0 samples nothing during the run."""
    if network is None:
        network = store.runs.get(run_id).inventory.get("network") or []
    targets, notes = netpath.capacities(points, network)  # once: the routes do not change
    paths = netpath.Paths(targets, netpath.host_capacities(points, network))
    for note in notes:
        store.events.add(run_id, "network", note)
    stop = _Stop()
    outcome = Outcome(status="completed")
    token = store.runs.get(run_id).token or f"run{run_id}-{os.getpid()}"
    with contextlib.ExitStack() as scope:
        # from here on every engine process carries the run's mark, and the guard kills
        # them all when this process ends, whatever way it ends (procguard.py)
        scope.enter_context(procguard.Guard(token))
        scope.enter_context(procguard.running(token))
        scope.enter_context(_Heartbeat(store, run_id))
        return _execute(
            store,
            run_id,
            points,
            observer,
            stop,
            outcome,
            total=total,
            fail_fast=fail_fast,
            health_interval=health_interval,
            clusters=clusters,
            paths=paths,
        )


def _execute(
    store: Store,
    run_id: int,
    points: list[Point],
    observer: Observer,
    stop: _Stop,
    outcome: Outcome,
    *,
    total: int,
    fail_fast: bool,
    health_interval: float,
    clusters: list[dict[str, Any]] | None,
    paths: netpath.Paths,
) -> Outcome:
    workdir = tempfile.mkdtemp(prefix=f"storbench-run{run_id}-")
    store.events.add(
        run_id,
        "workdir",
        f"work directory {workdir} on {liveness.hostname()}",
        {"path": workdir, "host": liveness.hostname()},
    )
    run = RunContext(
        run_id=run_id,
        workdir=workdir,
        total=total,
        events=StoreEvents(store, run_id),
        should_stop=stop,
        host_names=host_names(store, run_id),
        series=(series := StoreSeries(store, run_id, observer)),
        token=store.runs.get(run_id).token,
    )
    groups = engines.of_points(points)
    sessions: dict[str, Session] = {}
    try:
        for engine, pts in groups:
            sessions[engine.name] = engine.open(run, pts)
    except BaseException:
        for session in sessions.values():
            session.close()
        store.runs.set_status(run_id, "failed")
        shutil.rmtree(workdir, ignore_errors=True)
        raise
    store.runs.set_status(run_id, "running", ended=False)
    if health_interval > 0 and any(p.actions for p in points):
        health_interval = min(health_interval, DRILL_HEALTH_INTERVAL)
    monitors = _health_monitors(store, run_id, points, health_interval, clusters or [], observer)
    sizes = scratch_sizes(points)
    try:
        with _signals(stop):
            _run_points(
                store,
                run,
                series,
                points,
                sessions,
                sizes,
                paths,
                observer,
                outcome,
                fail_fast,
                stop,
            )
        _run_findings(store, run_id, observer)
    except StoreError:
        outcome.status = "failed"
        raise
    finally:
        for m in monitors:
            m.stop()
        for session in sessions.values():
            session.close()
        try:
            cleanup_engines(store, run_id, points, keep_recorded=outcome.status != "completed")
        except StoreError:
            pass  # the database failed (disk full): `resume` or `cleanup` removes them later
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
            with contextlib.suppress(StoreError):
                store.runs.set_status(run_id, outcome.status)
    return outcome


def _run_points(
    store: Store,
    run: RunContext,
    series: StoreSeries,
    points: list[Point],
    sessions: dict[str, Session],
    sizes: dict[str, int],
    paths: netpath.Paths,
    observer: Observer,
    outcome: Outcome,
    fail_fast: bool,
    stop: _Stop,
) -> None:
    """Each point in turn through its engine's session, each result recorded at once: the
    moment the next point's engine has started (later.py), before anything looks at the
    next result (``paths``: the network toward each target, hosts/netpath.py)."""
    later = Later(stop=stop.request)
    adapt = Adaptive(store, run, points, later)
    points = adapt.points  # a capacity search adds its steps as it goes (searches.py)
    pre = Preconditioner(  # what it says comes after the progress lines waiting in `later`
        run.events,
        series,
        lambda *a: later.call(observer.round_finished, *a),
        lambda *a: later.call(observer.phase, *a),
    )
    try:
        n = 0
        while n < len(points):
            point = points[n]
            n += 1
            if run.should_stop():
                outcome.status = "interrupted"
                break
            later.call(observer.point_started, point, n, len(points))
            skipped = adapt.skipped(point)
            if skipped is not None:
                outcome.skipped += 1
                later.defer(observer.point_finished, point, skipped, n, len(points), 0.0)
                continue
            at_once = starts_at_once(point, sizes)
            if not at_once:
                later.done()  # not kept waiting through a slow start
            try:
                restore_layout(point, sizes)
                _clear(series, point, later if at_once else None)
                session = sessions[point.engine]
                nxt = points[n] if n < len(points) else None
                hand_off(session, point, nxt, sizes, adapt.decides)
                result, after = _measure(run, session, point, series, observer, pre, at_once)
            except KeyboardInterrupt:
                later.done()
                outcome.status = "interrupted"
                observer.point_interrupted(point)
                break
            later.done()  # the point before is recorded by now
            if after is not None:
                later.defer(after)  # the host samples' last, before the record needs them
            cut = result.interrupted or run.should_stop()
            if cut and not _keeps_cut(point, result):
                outcome.status = "interrupted"
                observer.point_interrupted(point)
                break
            meas = result.measurement or Measurement(status="failed", error="no result")
            later.defer(_record, store, run.run_id, point, result, meas, outcome, paths)
            adapt.measured(point, meas, n)
            seconds = result.ended_at - result.started_at
            later.defer(observer.point_finished, point, meas, n, len(points), seconds)
            if cut:  # a soak point, kept with what it ran until Ctrl-C: the run ends here
                outcome.status = "completed" if n == len(points) else "interrupted"
                break
            if _failed(outcome, point, meas) and fail_fast:
                outcome.status = "failed"
                break
    except BaseException:
        later.done(raise_error=False)  # what waits is done; this exception goes on
        raise
    finally:
        for session in sessions.values():
            withdraw(session)  # the next point's engine, started ahead, when it did not run
    later.done()  # the last point recorded, or the run's stop


def _failed(outcome: Outcome, point: Point, meas: Measurement) -> bool:
    """Whether ``point`` failed (counted in ``outcome``, with why)."""
    if meas.status == "ok":
        return False
    outcome.failed += 1
    outcome.failures.append((point, meas.error or meas.status))
    return True


def _clear(series: StoreSeries, point: Point, later: Later | None) -> None:
    """What an earlier, interrupted try of the point left in the series goes: in the
    database once its engine's process has started (``later``, a point that starts at
    once: nothing of it is written before), or now."""
    series.forget(point.index)
    if later is not None:
        later.defer(series.clear_stored, point.index)
    else:
        series.clear_stored(point.index)


def _record(
    store: Store,
    run_id: int,
    point: Point,
    result: PointResult,
    meas: Measurement,
    outcome: Outcome,
    paths: netpath.Paths,
) -> None:
    intervals = store.series.of_point(run_id, point.index, None)
    meas.findings = _findings(point, meas, intervals, paths)
    store.measurements.record(
        run_id,
        point,
        meas,
        engine=engines.get(point.engine).label,
        command=result.command,
        job_file=result.job_text,
        raw_output=result.raw_output,
        stderr=result.stderr,
        started_at=result.started_at,
        ended_at=result.ended_at,
    )
    outcome.ran += 1


def _run_findings(store: Store, run_id: int, observer: Observer) -> None:
    """What only the whole run shows of its measurements (each engine's run_findings: fio's
    buffered reads beyond the device's own direct=1 figure), once its points ran, the
    points recorded before a resume included: added to the measurements they concern and
    said as the points' findings are."""
    points = store.runs.points(run_id)
    by_index = {p.index: p for p in points}

    found: dict[int, list[Finding]] = {}
    for engine, pts in engines.of_points(points):
        found.update(engine.run_findings(pts, measured_of(store, run_id)))
    for index, added in store.measurements.add_findings(run_id, found).items():
        for f in added:
            observer.finding(by_index[index], f)


def _findings(
    point: Point, meas: Measurement, intervals: list[Interval], paths: netpath.Paths
) -> list[Finding]:
    """The traps found in a point's measurement (model/findings.py): its engine's checks and
    those every measurement gets (``intervals``: its time series as stored; ``paths``: the
    network toward each target and from each remote host, hosts/netpath.py); run while
    the next point's engine runs (later.py)."""
    memory = memory_available()
    facts = Facts(
        memory_available={"": memory} if memory is not None else {}, network=paths.targets
    )
    engine = engines.get(point.engine)
    found = engine.findings(point, meas, facts)
    path = None if point.hosts else paths.targets.get(point.target.label)
    hosts = {h.label: paths.hosts[h.label] for h in point.hosts if h.label in paths.hosts}
    return findings.findings(
        meas, found, intervals, point.params, network=path, host_networks=hosts
    )


def _measure(
    run: RunContext,
    session: Session,
    point: Point,
    series: StoreSeries,
    observer: Observer,
    pre: Preconditioner,
    at_once: bool = False,
) -> tuple[PointResult, Callable[[], None] | None]:
    """A point's preconditioning (precondition.py), then the point: a phase that failed
    fails the point (what it would measure is not what the plan asked for); one that was
    interrupted is the point's interruption. With the result, what is left to do of its
    host samples (_run_point)."""
    engine = engines.get(point.engine)
    phase = pre.run(engine, session, point)
    if phase is not None:
        meas = phase.measurement
        if phase.interrupted or run.should_stop():
            return phase, None
        if meas is None or meas.status != "ok":
            why = meas.error if meas is not None and meas.error else "no result"
            failed = Measurement(status="failed", error=f"preconditioning failed: {why}")
            return dataclasses.replace(phase, measurement=failed), None
    return _run_point(run, session, point, series, observer, at_once)


def _run_point(
    run: RunContext,
    session: Session,
    point: Point,
    series: StoreSeries,
    observer: Observer,
    at_once: bool = False,
) -> tuple[PointResult, Callable[[], None]]:
    """One point through its engine: in steady-state rounds when it asks for them, with its
    drill's actions (drills.py) in a thread beside the load when it has some. The host
    sampler starts as the engine's process starts (``at_once``: nothing comes before it,
    engines.process.when_started) or now, and takes its last readings the moment the load
    ends; the samples they make, and the measurement's power and host CPU from them, are
    the function returned (bookkeeping: the runner has it done while the next point's
    engine starts, before the point is recorded)."""
    drill = Drill(point, run.events, should_stop=run.should_stop) if point.actions else None
    if drill is not None:
        drill.start()
    sink = CpuTally(series.host_sink(point))
    sampler = Sampler(point.interval_ms, sink, sample_sources(point), power.meter())
    if at_once:
        process.when_started(sampler.start, first=True)
    else:
        sampler.start()
    try:
        if point.steady is None:
            result = session.run(point)
        else:
            engine = engines.get(point.engine)
            result = run_steady(engine, session, point, series, observer.round_finished)
    except BaseException:
        sampler.stop()
        sampler.finish()  # what it sampled stays, as the point's series does
        raise
    finally:
        sampler.stop()
        if drill is not None:
            drill.stop()
        note_unsampled(run.events, point, sampler.errors)

    def after() -> None:  # on the engine's result: a failed drill's keeps its extra
        sampler.finish()
        note_power(result, sampler.power_samples)
        note_host_cpu(result, sink)

    if drill is not None and drill.error is not None:
        return _drill_failed(result, drill.error), after
    return result, after


def _drill_failed(result: PointResult, why: str) -> PointResult:
    """The point of a drill that storbench could not carry out as planned: failed, with
    why (its load is not the load under the drill the plan asked for)."""
    meas = result.measurement or Measurement()
    error = f"the failure drill failed: {why}"
    meas = dataclasses.replace(meas, status="failed", error=error)
    return dataclasses.replace(result, measurement=meas)


def _keeps_cut(point: Point, result: PointResult) -> bool:
    """Whether a point cut short (Ctrl-C) is recorded: a soak point (``keep_cut``) whose
    engine gave a result of the time it ran; it is marked ``cut_short``."""
    meas = result.measurement
    if not point.keep_cut or meas is None or meas.status != "ok" or not meas.directions:
        return False
    meas.extra["cut_short"] = round(result.ended_at - result.started_at, 3)
    return True


def _health_monitors(
    store: Store,
    run_id: int,
    points: list[Point],
    interval: float,
    found: list[dict[str, Any]],
    observer: Observer,
) -> list[HealthMonitor]:
    """One health monitor per Ceph cluster of the points, each change an event of the run
    and each sample told to ``observer`` (the live metrics); the health preflight ``found``
    is the first event and the monitors' baseline."""
    clusters: dict[CephClient, list[str]] = {}
    for t in ceph.point_targets(points):
        pools = clusters.setdefault(ceph.client_of(t), [])
        if t.pool not in pools:
            pools.append(t.pool)
    monitors = []
    for client, pools in clusters.items():
        inv = next(
            (c for c in found if (c.get("conf"), c.get("client")) == (client.conf, client.client)),
            None,
        )
        initial = None
        if inv and inv.get("health"):
            initial = HealthSample.of(
                str(inv["health"].get("status")),
                dict(inv["health"].get("checks") or {}),
                inv.get("pg_states") or {},
            )
            store.events.add(
                run_id,
                "health",
                f"at the start: {initial.message()}",
                {**initial.to_dict(), "conf": client.conf, "client": client.client},
                at=initial.at,
            )
            observer.ceph_health(client.conf or "default", initial)
        if interval <= 0:
            continue

        def on_change(
            sample: HealthSample, previous: HealthSample | None, client: CephClient = client
        ) -> None:
            store.events.add(
                run_id,
                "health",
                sample.message() if previous else f"at the start: {sample.message()}",
                {**sample.to_dict(), "conf": client.conf, "client": client.client},
                at=sample.at,
            )

        def on_sample(sample: HealthSample, client: CephClient = client) -> None:
            observer.ceph_health(client.conf or "default", sample)
            if sample.io or sample.clean is not None:
                store.events.add(
                    run_id,
                    "cluster-io",
                    f"{sample.status}, clean {sample.clean}",
                    {"clean": sample.clean, **sample.io, "conf": client.conf},
                    at=sample.at,
                )

        m = HealthMonitor(
            client, pools, on_change, interval=interval, initial=initial, on_sample=on_sample
        )
        m.start()
        monitors.append(m)
    return monitors
