"""A failure drill's report (seed 003 §9: a node lost while fio runs, "approximately 75
minutes for Ceph to return to a healthy state"), per point that ran actions.

From the point's time series (every direction together, as the soak verdict reads it:
analysis/soak.py ``ticks``), its actions (events ``action``) and the cluster's health
(events ``health``, a sample's change, and ``cluster-io``, every sample's throughput):

- **baseline**: mean IOPS and p99 of the intervals before the first action began;
- **dip**: the worst interval after it, as % of the baseline IOPS, and when;
- **longest stall**: the longest run of intervals without a completed I/O;
- **below 50 % / 90 %**: how long the load ran below those shares of the baseline;
- **recovered**: from the first action to the end of the last interval below 90 % of the
  baseline (None when the load ended below it);
- **healed**: from the first action to the first health sample that is HEALTH_OK with every
  PG active+clean and stays so for :data:`HOLD_S` (HEALTH_OK alone is not healed: it shows
  for a second after an OSD restarts while no PG of a size-2 pool is active); None when that
  was not seen while the run ran;
- **recovery throughput**: the cluster's recovering bytes/s over the samples between the
  first action and the heal (mean and max), from ``ceph status``.

Times are seconds from the start of the point's load (the clock of its series).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from storbench.analysis.soak import Tick, stalls, ticks
from storbench.hosts.load import HostSample, summary
from storbench.model.series import Interval

#: How long HEALTH_OK with every PG active+clean must hold to count as healed, s (the
#: runner waits as long after a drill's load: storbench.execute.drills).
HOLD_S = 10.0


@dataclass
class DrillRow:
    point: int  # the point's index
    label: str
    actions: list[dict[str, Any]] = field(default_factory=list)  # each action's event data
    baseline_iops: float | None = None
    baseline_p99_ns: float | None = None
    dip_pct: float | None = None  # the worst interval after the first action, % of baseline
    dip_at_s: float | None = None
    longest_stall_s: float = 0.0
    below_50_s: float = 0.0
    below_90_s: float = 0.0
    recovered_s: float | None = None  # from the first action
    healed_s: float | None = None  # from the first action: HEALTH_OK and all PGs clean
    recovery_bytes_per_s_mean: float | None = None
    recovery_bytes_per_s_max: float | None = None
    errors: list[str] = field(default_factory=list)
    #: the load's host from the first action to the heal (or the load's end)
    host: dict[str, Any] = field(default_factory=dict)
    #: the same of each remote host sampled through its agent (storbench.hosts.counters)
    remote: dict[str, dict[str, Any]] = field(default_factory=dict)


def _load(row: DrillRow, ts: list[Tick], start: float) -> None:
    """The load's figures around the first action (``start``, s into the load)."""
    before = [t for t in ts if t.t_s <= start]
    after = [t for t in ts if t.t_s > start]
    if not before or not after:
        return
    dur = sum(t.dur_s for t in before)
    row.baseline_iops = sum(t.ios for t in before) / dur if dur > 0 else None
    p99s = [t.p99_ns for t in before if t.p99_ns is not None]
    row.baseline_p99_ns = statistics.fmean(p99s) if p99s else None
    base = row.baseline_iops
    row.longest_stall_s = stalls(after)[1]
    if not base:
        return
    worst = min(after, key=lambda t: t.iops)
    row.dip_pct, row.dip_at_s = worst.iops / base * 100, worst.t_s
    row.below_50_s = sum(t.dur_s for t in after if t.iops < 0.5 * base)
    row.below_90_s = sum(t.dur_s for t in after if t.iops < 0.9 * base)
    low = [t for t in after if t.iops < 0.9 * base]
    if not low:
        row.recovered_s = 0.0
    elif low[-1] is not after[-1]:
        row.recovered_s = low[-1].t_s - start


def _healed(health: list[dict[str, Any]], first_at: float, ended_at: float | None) -> float | None:
    """Epoch seconds of the first change to HEALTH_OK with every PG clean after
    ``first_at`` that held for HOLD_S (until the next change, or the run's end)."""
    after = sorted((h for h in health if h["at"] > first_at), key=lambda h: h["at"])
    for n, h in enumerate(after):
        if h.get("status") != "HEALTH_OK" or h.get("clean") is not True:
            continue
        until = after[n + 1]["at"] if n + 1 < len(after) else ended_at
        if until is not None and until - h["at"] >= HOLD_S:
            return float(h["at"])
    return None


def drill_row(
    point: int,
    label: str,
    intervals: Sequence[Interval],
    events: list[tuple[str, float, dict[str, Any]]],
    ended_at: float | None,
    errors: list[str],
    samples: Sequence[HostSample] = (),
) -> DrillRow:
    """The drill report of one point. ``events``: (kind, epoch s, data) of the run's
    ``action``, ``health`` and ``cluster-io`` events; ``ended_at``: when the run ended."""
    acts = [d for k, _, d in events if k == "action" and d.get("point") == point]
    row = DrillRow(point, label, acts, errors=list(errors))
    done = [a for a in acts if a.get("started_s") is not None]
    if not done:
        return row
    first = min(done, key=lambda a: a["started_s"])
    start = float(first["started_s"])
    _load(row, ticks(intervals), start)
    first_at = float(first["began_at"]) + start
    health = [{**d, "at": at} for k, at, d in events if k == "health"]
    healed = _healed(health, first_at, ended_at)
    row.healed_s = healed - first_at if healed is not None else None
    end = healed if healed is not None else (ended_at or float("inf"))
    rec = [
        float(d.get("recovering_bytes_per_sec") or 0.0)
        for k, at, d in events
        if k == "cluster-io" and first_at <= at <= end
    ]
    if rec:
        row.recovery_bytes_per_s_mean = statistics.fmean(rec)
        row.recovery_bytes_per_s_max = max(rec)
    until_s = (end - float(first["began_at"])) * 1000
    during = [h for h in samples if start * 1000 < h.t_ms <= until_s]
    row.host = summary([h for h in during if h.host == ""])
    for name in sorted({h.host for h in during} - {""}):
        row.remote[name] = summary([h for h in during if h.host == name])
    return row
