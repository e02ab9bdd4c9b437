"""When a sweep stops climbing: ``stop_at: knee`` on an axis of load (iodepth, numjobs,
clients, rate_iops, rate).

A device saturates: past some queue depth (or number of jobs, clients, offered rate) more
load buys no more throughput and only lengthens the queue, so every further step of the
sweep costs its time to say what the last ones said. The climb *stops* after step ``k``
when the two steps up to it each gained less than :data:`MIN_GAIN` (5 %) of throughput
while latency grew over them::

    thr[k] < thr[k-1] * 1.05  and  thr[k-1] < thr[k-2] * 1.05  and  lat[k] > lat[k-2]

The *knee* is then step ``k-2``: the last value before throughput flattened (more load
than that only queues); the values above step ``k`` are skipped. Throughput is the
point's I/Os per second (all directions), or its bytes/s when the axis is a rate in
bytes/s (``rate``); latency is the mean total latency (fio's ``lat``: submission and
completion; ``clat`` for an engine without it) over all the point's I/Os. A step without
figures (a failed point) decides nothing: the climb goes on.

This is a stopping rule, not the analysis of a finished sweep: analysis/sweep.py names a
complete sweep's saturation and latency knee (p99 against throughput) from every point.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from storbench.model.metrics import DIRECTIONS, Measurement
from storbench.model.units import fmt_ns
from storbench.plan.rules import LOAD_AXES

#: The gain of throughput per step below which a step buys nothing (a fraction).
MIN_GAIN = 0.05

#: The axes a sweep may stop climbing on: each adds load as it grows.
AXES = LOAD_AXES


@dataclass(frozen=True)
class Step:
    """One measured step of a climb: the axis's value, throughput, mean latency (ns)."""

    value: Any
    throughput: float
    latency_ns: float


@dataclass(frozen=True)
class Stop:
    """Where a climb stopped: the knee (the last value before throughput flattened), the
    step that showed it, and the figures that did, said in words."""

    knee: Any
    last: Any
    reason: str


def step_of(axis: str, value: Any, meas: Measurement) -> Step | None:
    """Point ``meas`` at ``value`` of ``axis`` as a step (None: it has no figures)."""
    if meas.status not in ("ok", "partial"):
        return None
    dirs = [d for d in (meas.direction(n) for n in DIRECTIONS) if d is not None]
    if not dirs:
        return None
    thr = sum(d.bw_bytes if axis == "rate" else d.iops for d in dirs)
    weighted = 0.0
    samples = 0
    for d in dirs:
        lat = d.lat if d.lat is not None else d.clat
        if lat is None or lat.mean is None or lat.samples <= 0:
            return None
        weighted += lat.mean * lat.samples
        samples += lat.samples
    if thr <= 0 or samples == 0:
        return None
    return Step(value, thr, weighted / samples)


def stop(axis: str, steps: Sequence[Step]) -> Stop | None:
    """Whether the climb ``steps`` (measured steps, in the axis's order) stops after its last
    step (module docstring), and where its knee is."""
    if len(steps) < 3:
        return None
    a, b, c = steps[-3:]
    if not (b.throughput < a.throughput * (1 + MIN_GAIN)):
        return None
    if not (c.throughput < b.throughput * (1 + MIN_GAIN)):
        return None
    if not c.latency_ns > a.latency_ns:
        return None
    unit = "bytes/s" if axis == "rate" else "IOPS"
    gains = ", ".join(
        f"{(y.throughput / x.throughput - 1) * 100:+.1f} %" for x, y in ((a, b), (b, c))
    )
    reason = (
        f"{axis} {a.value} → {b.value} → {c.value}: {unit} {gains} (each under "
        f"{MIN_GAIN * 100:.0f} %) while mean latency grew {fmt_ns(a.latency_ns)} → "
        f"{fmt_ns(c.latency_ns)}"
    )
    return Stop(knee=a.value, last=c.value, reason=reason)
