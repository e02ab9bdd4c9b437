"""Steady state as SNIA's Solid State Storage Performance Test Specification (PTS) defines it.

A point with ``steady_state:`` runs in *rounds*: its workload, again and again, for a fixed
time each. After every round the *tracking variable* of that round (its IOPS by default,
or its bytes/s or mean latency) is known; the *measurement window* is the last ``window``
rounds (5 in the PTS). The window is in steady state when both hold:

- data excursion: the largest minus the smallest value in the window is at most
  ``range_pct`` (20 %) of the window's mean;
- slope excursion: the least-squares line through the window's values changes by at most
  ``slope_pct`` (10 %) of the mean from the window's first round to its last
  (|slope| × (window - 1)).

The point stops at the first round that completes such a window (or after ``max_rounds``,
25 in the PTS, flagged "steady state not reached"); its measurement is the window's rounds
together. storbench computes this itself: fio's ``ss=`` option checks one criterion at a
time and can say "attained" where the PTS window is not met.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from storbench.model.metrics import DIRECTIONS, Measurement
from storbench.plan.steadykeys import SteadyState


@dataclass
class Verdict:
    """What the rounds so far say: the window (the last ``window`` rounds), its figures,
    and whether they meet both criteria."""

    reached: bool
    rounds: int  # rounds run
    first: int  # the window's first round, 1-based
    last: int  # its last round
    mean: float
    range_pct: float  # (max - min) of the window, % of its mean
    slope: float  # of the least-squares line, per round (the metric's unit)
    slope_pct: float  # its excursion across the window, % of the mean
    values: list[float] = field(default_factory=list)  # every round's value, in order

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Verdict:
        return cls(**{k: d[k] for k in cls.__dataclass_fields__ if k in d})


def round_value(meas: Measurement, metric: str) -> float | None:
    """The tracking variable of one round: IOPS or bytes/s of every direction together, or
    the mean latency of all its I/Os (clat where the engine has it); None when the round
    has none (it did no I/O)."""
    dirs = [d for d in (meas.direction(n) for n in DIRECTIONS) if d is not None]
    if not dirs:
        return None
    if metric == "iops":
        return sum(d.iops for d in dirs)
    if metric == "bw":
        return sum(d.bw_bytes for d in dirs)
    lats = [d.latency for d in dirs if d.latency is not None and d.latency.mean is not None]
    n = sum(lat.samples for lat in lats)
    if not n:
        return None
    return sum(lat.samples * (lat.mean or 0.0) for lat in lats) / n


def assess(values: Sequence[float], cfg: SteadyState) -> Verdict | None:
    """The verdict on the last ``cfg.window`` of ``values`` (None before there are that
    many rounds)."""
    if len(values) < cfg.window:
        return None
    win = list(values[-cfg.window :])
    mean = statistics.fmean(win)
    xs = range(len(win))
    slope = statistics.linear_regression(xs, win).slope if len(set(win)) > 1 else 0.0
    range_pct = (max(win) - min(win)) / mean * 100 if mean > 0 else float("inf")
    slope_pct = abs(slope) * (len(win) - 1) / mean * 100 if mean > 0 else float("inf")
    return Verdict(
        reached=range_pct <= cfg.range_pct and slope_pct <= cfg.slope_pct,
        rounds=len(values),
        first=len(values) - len(win) + 1,
        last=len(values),
        mean=mean,
        range_pct=range_pct,
        slope=slope,
        slope_pct=slope_pct,
        values=list(values),
    )


def verdict_of(meas: Measurement) -> Verdict | None:
    """The steady-state verdict a point's measurement carries (None: it ran without)."""
    d = (meas.extra or {}).get("steady_state")
    return Verdict.from_dict(d["verdict"]) if isinstance(d, dict) and "verdict" in d else None


def describe(v: Verdict, cfg: SteadyState) -> str:
    """One line for people: reached or not, in which rounds, with the two excursions."""
    what = "steady state" if v.reached else "steady state NOT reached"
    return (
        f"{what}: rounds {v.first}-{v.last} of {v.rounds} "
        f"(range {v.range_pct:.1f} % of the mean, limit {cfg.range_pct:g} %; "
        f"slope {v.slope_pct:.1f} %, limit {cfg.slope_pct:g} %)"
    )


def short(v: Verdict) -> str:
    """A few words for a result line or a table cell."""
    if v.reached:
        return f"steady in rounds {v.first}-{v.last}"
    return f"STEADY STATE NOT REACHED in {v.rounds} rounds"
