"""Running a point in steady-state rounds (``steady_state:``; what is judged:
storbench.analysis.steady).

Each round is the point's own workload for ``round`` seconds (after its ramp_time), run by
its engine like any point (:meth:`Engine.round_point` makes the round's point: fio gets
``runtime``, ``time_based`` and a random seed of the round's own, so that rounds do not
replay the same offsets). After each round the tracking variable is read from its
measurement; the point stops at the first round that completes a window in steady state, or
after the most rounds allowed. Its measurement is the window's rounds together
(:func:`storbench.model.metrics.merge_in_time`), with the verdict and every round's value in
``extra["steady_state"]``. Every round's command, job file and raw output are kept, in
order, in the point's raw output: a reviewer can recompute each round's value.

The rounds' intervals make one time series on one clock: each round's are shifted by the
time since the first round began (:class:`SeriesClock`).
"""

from __future__ import annotations

import shlex
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from storbench.analysis.steady import Verdict, assess, round_value
from storbench.engines.base import Engine, PointResult, Session
from storbench.model.metrics import Measurement, merge_in_time
from storbench.plan import Point
from storbench.plan.steadykeys import METRIC_WORDS, SteadyState

#: What the runner's observer hears after each round: the point, the round (1-based), the
#: round's value of the tracking variable, and the verdict so far (None before a window).
RoundHook = Callable[[Point, int, float, Verdict | None], None]


class SeriesClock(Protocol):
    """Where a point's intervals go (the runner's StoreSeries), told that what comes next
    continues the point's series ``t_ms`` after it began."""

    def continue_at(self, point_idx: int, t_ms: int) -> None: ...

    def clear(self, point_idx: int) -> None:
        """Forget what a point's series holds (it runs again)."""
        ...


@dataclass
class _Round:
    n: int
    result: PointResult
    value: float
    offset_ms: int  # when the round began, on the point's series clock


def run_steady(
    engine: Engine,
    session: Session,
    point: Point,
    clock: SeriesClock,
    on_round: RoundHook,
) -> PointResult:
    """Run ``point`` in rounds until steady state (or its most rounds); the result is
    interrupted when a round was, failed when a round failed or did no I/O."""
    cfg = point.steady
    assert cfg is not None
    rounds: list[_Round] = []
    began = time.time()
    verdict: Verdict | None = None
    for n in range(1, cfg.max_rounds + 1):
        offset = round((time.time() - began) * 1000)
        clock.continue_at(point.index, offset)
        res = session.run(engine.round_point(point, cfg.round_s, n))
        if res.interrupted:
            return res
        meas = res.measurement
        value = round_value(meas, cfg.metric) if meas and meas.status == "ok" else None
        if meas is None or value is None:
            return _failed(point, rounds, res, n)
        rounds.append(_Round(n, res, value, offset))
        verdict = assess([r.value for r in rounds], cfg)
        on_round(point, n, value, verdict)
        if verdict is not None and verdict.reached:
            break
    assert verdict is not None  # max_rounds >= window (plan/steadykeys.py)
    return _window_result(point, cfg, rounds, verdict)


def _window_result(
    point: Point, cfg: SteadyState, rounds: list[_Round], verdict: Verdict
) -> PointResult:
    """The point's result: the window's rounds as one measurement, every round traceable."""
    window = rounds[verdict.first - 1 : verdict.last]
    parts = [r.result.measurement for r in window if r.result.measurement is not None]
    meas = merge_in_time(parts)
    last = window[-1]
    meas.extra = {
        **meas.extra,
        "steady_state": {
            "config": cfg.to_dict(),
            "verdict": verdict.to_dict(),
            "window_ms": [
                window[0].offset_ms,
                last.offset_ms + round((last.result.ended_at - last.result.started_at) * 1000),
            ],
            "rounds": [_round_row(r) for r in rounds],
        },
    }
    return PointResult(
        measurement=meas,
        command=window[0].result.command,
        job_text=window[0].result.job_text,
        raw_output=_raw(point, rounds, verdict),
        stderr="".join(r.result.stderr for r in rounds),
        started_at=rounds[0].result.started_at,
        ended_at=last.result.ended_at,
    )


def _round_row(r: _Round) -> dict[str, Any]:
    return {
        "round": r.n,
        "value": r.value,
        "offset_ms": r.offset_ms,
        "started_at": r.result.started_at,
        "ended_at": r.result.ended_at,
    }


def _failed(point: Point, rounds: list[_Round], res: PointResult, n: int) -> PointResult:
    """A round that failed (or did no I/O) fails the point, with every round's output."""
    meas = res.measurement or Measurement(status="failed", error="no result")
    if meas.status == "ok":
        meas = Measurement(status="failed", error="it completed no I/O", extra=meas.extra)
    meas.error = f"steady-state round {n}: {meas.error or meas.status}"
    done = [*rounds, _Round(n, res, float("nan"), 0)]
    return PointResult(
        measurement=meas,
        command=res.command,
        job_text=res.job_text,
        raw_output=_raw(point, done, None),
        stderr="".join(r.result.stderr for r in done),
        started_at=(rounds[0].result if rounds else res).started_at,
        ended_at=res.ended_at,
    )


def _raw(point: Point, rounds: list[_Round], verdict: Verdict | None) -> str:
    """Every round's command, job file and raw output, in order, under a header line each."""
    cfg = point.steady
    metric = METRIC_WORDS[cfg.metric] if cfg else "value"
    out = []
    for r in rounds:
        where = ""
        if verdict is not None:
            where = " (in the window)" if verdict.first <= r.n <= verdict.last else ""
        cmd = r.result.command
        lines = [shlex.join(c) for c in cmd] if cmd and isinstance(cmd[0], list) else []
        if not lines:
            lines = [shlex.join(str(c) for c in cmd)]
        value = "failed" if r.value != r.value else repr(r.value)  # NaN: the failed round
        out.append(f"### storbench steady state: round {r.n}{where}: {metric} {value}\n")
        out += [f"### command: {line}\n" for line in lines]
        if r.result.job_text:
            out.append("### job file:\n" + r.result.job_text.rstrip("\n") + "\n")
        out.append("### output:\n" + r.result.raw_output.rstrip("\n") + "\n")
    return "".join(out)
