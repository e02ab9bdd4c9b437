"""Preconditioning a point's target before it is measured (plan key ``precondition``), a
phase of its own as SNIA PTS asks for:

- ``sequential`` (workload-independent, WIPC): the whole target written twice with 128 KiB
  sequential writes (:meth:`Engine.precondition_point` makes that point), once per target
  in a session of the run;
- ``workload`` (workload-dependent, WDPC): the point's own workload run until steady state
  (storbench/execute/rounds.py, the plan's ``steady_state`` or SNIA's defaults), before every point;
- a purge first (``precondition: {mode: ..., purge: discard|secure}``): blkdiscard of the
  whole device (storbench/execute/purge.py), once per target in a session, before the rest; it
  runs on this machine, not through the engine (no series), and is an event too.

The phase runs through the point's engine like any point, under the point's index made
negative (``-(index + 1)``): its time series is stored apart from the point's, and its
figures are an event of the run (kind ``precondition``), never a measurement: no table,
report or comparison mixes it into the results.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from typing import Any

from storbench.analysis.steady import verdict_of
from storbench.engines.base import Engine, PointResult, RunEvents, Session
from storbench.execute import purge
from storbench.execute.rounds import RoundHook, SeriesClock, run_steady
from storbench.model.metrics import DIRECTIONS
from storbench.plan import Point
from storbench.plan.steadykeys import SteadyState


def phase_index(point: Point) -> int:
    """Where a point's preconditioning keeps its series (apart from the point's own)."""
    return -(point.index + 1)


def _target_key(point: Point) -> tuple[str, ...]:
    """The target(s) a point writes: its own, or each host's."""
    if point.hosts:
        return tuple(f"{h.address}:{h.port}:{h.target.kind}:{h.target.path}" for h in point.hosts)
    return (f"{point.target.kind}:{point.target.path}",)


class Preconditioner:
    """Runs each point's preconditioning before it (``sequential`` once per target)."""

    def __init__(
        self,
        events: RunEvents,
        clock: SeriesClock,
        on_round: RoundHook,
        say: Callable[[Point, str], None] = lambda point, text: None,
    ) -> None:
        self.events, self.clock, self.on_round, self.say = events, clock, on_round, say
        self.done: set[tuple[str, ...]] = set()
        self.purged: set[str] = set()  # the devices purged (their real paths)

    def purge(self, point: Point) -> PointResult | None:
        """The point's purge of each of its devices not purged yet in this session: the
        last one's result, or the first that failed; None when it needs none (now)."""
        how = point.purge
        if not how:
            return None
        result = None
        for target in purge.targets(point):
            real = os.path.realpath(target.path)
            if real in self.purged:
                continue
            shown = " ".join(purge.command(how, target.path))
            self.say(point, f"purging {target.label} ({how}: {shown})")
            result = purge.run(how, target.path)
            message = purge.message(point, target, how, result)
            self.events.add("precondition", message, purge.data(point, target, how, result))
            self.say(point, message.split(": ", 1)[1])
            if not _ok(result):
                return result
            self.purged.add(real)
        return result

    def run(self, engine: Engine, session: Session, point: Point) -> PointResult | None:
        """The phase's result, or None when the point needs none (now)."""
        purged = self.purge(point)
        if purged is not None and not _ok(purged):
            return purged
        mode = point.precondition
        key = _target_key(point)
        if mode == "none" or (mode == "sequential" and key in self.done):
            return purged
        if mode == "sequential":
            phase = engine.precondition_point(point)
        else:
            phase = dataclasses.replace(point, steady=point.steady or SteadyState(), actions=[])
        phase = dataclasses.replace(phase, index=phase_index(point), keep_cut=False)
        self.clock.clear(phase.index)
        how = "2 passes of 128 KiB sequential writes" if mode == "sequential" else "steady state"
        self.say(point, f"preconditioning {point.target.label} ({mode}: {how})")
        if mode == "sequential":
            result = session.run(phase)
        else:
            result = run_steady(engine, session, phase, self.clock, self.on_round)
        if _ok(result) and mode == "sequential":
            self.done.add(key)
        message = _message(point, mode, result)
        self.events.add("precondition", message, _data(point, mode, result))
        self.say(point, message.split(": ", 1)[1])
        return result


def _ok(result: PointResult) -> bool:
    meas = result.measurement
    return not result.interrupted and meas is not None and meas.status == "ok"


def _figures(result: PointResult) -> dict[str, Any]:
    meas = result.measurement
    if meas is None:
        return {}
    dirs = [d for d in (meas.direction(n) for n in DIRECTIONS) if d is not None]
    return {
        "io_bytes": sum(d.io_bytes for d in dirs),
        "iops": sum(d.iops for d in dirs),
        "bw_bytes": sum(d.bw_bytes for d in dirs),
    }


def _data(point: Point, mode: str, result: PointResult) -> dict[str, Any]:
    meas = result.measurement
    verdict = verdict_of(meas) if meas is not None else None
    return {
        "point": point.index,
        "series_point": phase_index(point),
        "mode": mode,
        "target": point.target.label,
        "status": "interrupted" if result.interrupted else (meas.status if meas else "failed"),
        "error": meas.error if meas else None,
        "started_at": result.started_at,
        "ended_at": result.ended_at,
        "seconds": result.ended_at - result.started_at,
        **_figures(result),
        **({"steady_state": verdict.to_dict()} if verdict is not None else {}),
        "command": result.command,
        "job_file": result.job_text,
    }


def _message(point: Point, mode: str, result: PointResult) -> str:
    """The event's words, which say what its data says: a workload phase that ran out its
    rounds without steady state says so, with the window's excursions and their limits."""
    d = _data(point, mode, result)
    head = f"point {point.index + 1}: preconditioned {point.target.label} ({mode}): "
    if d["status"] != "ok":
        return head + f"{d['status']}" + (f": {d['error']}" if d["error"] else "")
    done = f"{d['io_bytes'] / 2**30:.2f} GiB in {d['seconds']:.1f} s"
    if mode == "sequential":
        return head + f"wrote it twice with 128 KiB sequential writes, {done}"
    v = verdict_of(result.measurement) if result.measurement is not None else None
    if v is None:
        return head + f"ran its workload, {done} (no steady-state verdict)"
    if v.reached:
        return (
            head
            + f"ran its workload to steady state (rounds {v.first}-{v.last} of {v.rounds}), {done}"
        )
    extra = result.measurement.extra if result.measurement is not None else {}
    cfg = SteadyState.from_dict((extra.get("steady_state") or {}).get("config") or {})
    return head + (
        f"ran its workload, steady state NOT reached in {v.rounds} rounds (rounds "
        f"{v.first}-{v.last}: range {v.range_pct:.1f} % of the mean, limit {cfg.range_pct:g} %; "
        f"slope {v.slope_pct:.1f} %, limit {cfg.slope_pct:g} %), {done}: the point is measured "
        "on a target that may not have settled (more `rounds` or a longer `round` in "
        "`steady_state` give it time)"
    )
