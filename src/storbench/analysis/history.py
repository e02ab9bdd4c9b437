"""History: the same points over several runs in time order (``storbench history``), each
figure per run, the test bed's changes between consecutive runs, and each significant
change flagged as a regression or an improvement.

Definitions (also in the README):

- **Tracks.** A track is one point followed across runs. The runs are taken oldest first;
  each run's points are matched, as ``compare`` matches two runs (analysis/compare.py:
  workload and parameters, the target left out unless a run has several points alike),
  against the latest measurement of every track so far. A matched point extends its
  track; one without a partner starts a track of its own (a point a later plan added).
  A run that lacks a point leaves a gap in that track, and the next run that has it is
  compared with the last run that had it.
- **Each step** of a track is the comparison of the point with its previous measurement
  (compare's figures and verdict): ``regression`` when the verdict is ``worse``,
  ``improvement`` when ``better`` -- the comparison's test at 95 % on its judged figure
  (total IOPS, or mean latency for a rate-capped workload). With one repetition per run
  the step is untested and flags nothing (``repeat: 2`` or more makes it testable).
- **Test-bed changes** between consecutive runs are analysis/testbed.py's differences of
  their inventories (kernel, fio, Ceph versions, tunables, disks' settings) and of their
  labels (``--label``, ``labels:``).
- **Groups** (``--by KEY``): the runs that share a value of label KEY are pooled as one
  column, their repetitions together (so the test has all of them), in the order of each
  group's first run; the test bed's changes are then those between the last run of one
  group and the first of the next.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

from storbench.analysis import testbed
from storbench.analysis.compare import BETTER, WORSE, PointComparison, compare
from storbench.analysis.summary import PointSummary

__all__ = ["FIGURES", "Cell", "History", "RunEntry", "Track", "figure_of", "follow"]

#: the figures a history shows, by name (the ``--fail-if`` names): (what, unit)
FIGURES = {
    "iops": ("IOPS", "IOPS"),
    "bw": ("bandwidth", "bytes/s"),
    "lat": ("mean latency", "ns"),
    "p99": ("p99 latency", "ns"),
}
REGRESSION = "regression"
IMPROVEMENT = "improvement"


def figure_of(s: PointSummary, figure: str) -> float | None:
    """``figure`` of a point over all its repetitions (None: not measured): total IOPS and
    bytes/s (the means over repetitions), the mean latency a comparison judges (fio's total
    latency, lat; clat where there is none) and the p99 it shows (lat's where fio printed
    lat percentiles, else clat's from the merged histograms), in ns."""
    if s.runs == 0:
        return None
    if figure == "iops":
        return s.total_iops
    if figure == "bw":
        return s.total_bw
    if figure == "lat":
        lat = s.judged_latency
        return lat.mean if lat is not None else None
    if figure == "p99":  # lat's where fio printed lat percentiles, else clat's (as compare)
        for lat in (s.total_lat, s.latency):
            if lat is not None and lat.percentiles.get("99") is not None:
                return lat.percentiles["99"]
        return None
    raise ValueError(f"no figure {figure!r}")


@dataclass
class RunEntry:
    """One run of a history, as its tables and chart name it."""

    id: int
    name: str
    started_at: float
    status: str
    labels: dict[str, str] = field(default_factory=dict)
    inventory: dict[str, Any] = field(default_factory=dict, repr=False)
    #: a group of runs pooled as one (``history --by KEY``): their ids, oldest first, and
    #: the label they share ("ceph=19.2.1"); () and "" for a run on its own
    runs: tuple[int, ...] = ()
    group: str = ""
    #: a group's last run's inventory (what the next group's test bed is compared with)
    last_inventory: dict[str, Any] | None = field(default=None, repr=False)

    @property
    def heading(self) -> str:
        """What tables and charts call it: ``run 12``, or ``ceph=19.2.1 (3 runs)``."""
        if not self.group:
            return f"run {self.id}"
        return f"{self.group} ({len(self.runs)} run{'s' * (len(self.runs) != 1)})"

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "started_at": self.started_at,
            "status": self.status,
            "labels": self.labels,
            **({"group": self.group, "runs": list(self.runs)} if self.group else {}),
        }


@dataclass
class Cell:
    """A track's point in one run, and how it compares with the track's previous one."""

    summary: PointSummary
    versus: PointComparison | None = None  # None: the track's first measurement

    @property
    def flag(self) -> str | None:
        """``regression`` or ``improvement`` (a significant change), else None."""
        verdict = self.versus.verdict if self.versus is not None else None
        return REGRESSION if verdict == WORSE else IMPROVEMENT if verdict == BETTER else None

    def to_dict(self) -> dict[str, Any]:
        v = self.versus
        return {
            "point": self.summary.index + 1,
            **{name: figure_of(self.summary, name) for name in FIGURES},
            "repetitions": self.summary.runs,
            "versus_previous": None
            if v is None
            else {
                "iops_change_pct": v.iops_change_pct,
                "bw_change_pct": v.bw_change_pct,
                "lat_change_pct": v.mean_lat_change_pct,
                "p99_change_pct": v.p99_lat_change_pct,
                "verdict": v.verdict,
                "p_value": v.p_value,
                "reason": v.reason,
            },
            "flag": self.flag,
        }


@dataclass
class Track:
    """One point followed over the runs: a cell per run (None where the run lacks it)."""

    label: str
    cells: list[Cell | None]

    def values(self, figure: str) -> list[float | None]:
        return [None if c is None else figure_of(c.summary, figure) for c in self.cells]

    def to_dict(self) -> dict[str, Any]:
        return {"label": self.label, "runs": [c.to_dict() if c else None for c in self.cells]}


@dataclass
class History:
    """The runs (oldest first), the tracks of their points, and per run (from the second)
    what of the test bed differs from the run before it."""

    runs: list[RunEntry]
    tracks: list[Track]
    #: per run, (setting, before, after) against the run before it ([] for the first)
    changes: list[list[tuple[str, Any, Any]]]

    @property
    def flagged(self) -> list[tuple[Track, int, Cell]]:
        """(track, run index, cell) of every significant change, in run order."""
        found = [
            (t, i, c)
            for t in self.tracks
            for i, c in enumerate(t.cells)
            if c is not None and c.flag is not None
        ]
        return sorted(found, key=lambda f: f[1])

    def to_dict(self) -> dict[str, Any]:
        return {
            "runs": [r.to_dict() for r in self.runs],
            "testbed_changes": [
                {
                    "run": self.runs[i].id,
                    "previous": self.runs[i - 1].id,
                    "changes": [{"setting": k, "before": a, "after": b} for k, a, b in diffs],
                }
                for i, diffs in enumerate(self.changes)
                if diffs
            ],
            "tracks": [t.to_dict() for t in self.tracks],
        }


def _label(s: PointSummary, axes: list[str], with_target: bool) -> str:
    shown = " ".join(f"{k}={s.params[k]}" for k in axes if k in s.params)
    text = f"{s.workload} {shown}".strip()
    return f"{s.target.label} {text}" if with_target else text


def follow(runs: list[tuple[RunEntry, list[PointSummary]]]) -> History:
    """The history of ``runs`` (each with its points' summaries), in the order given."""
    tracks: list[Track] = []
    latest: list[PointSummary] = []  # each track's latest measurement, in track order
    n = len(runs)
    axes = list(dict.fromkeys(k for _, items in runs for s in items for k in s.axes))
    for i, (entry, items) in enumerate(runs):
        if not latest:
            for s in items:
                tracks.append(Track("", [None] * n))
                tracks[-1].cells[i] = Cell(s)
                latest.append(s)
            continue
        cmp = compare(latest, items, base_name="previous", other_name=entry.heading)
        at = {id(s): k for k, s in enumerate(latest)}
        for m in cmp.matched:
            k = at[id(m.base)]
            tracks[k].cells[i] = Cell(m.other, m)
            latest[k] = m.other
        for s in cmp.only_other:
            tracks.append(Track("", [None] * n))
            tracks[-1].cells[i] = Cell(s)
            latest.append(s)
    keys = [f"{s.workload} {sorted(s.params.items())}" for s in latest]
    with_target = len(set(keys)) != len(keys)
    for t, s in zip(tracks, latest, strict=True):
        t.label = _label(s, axes, with_target)
    changes: list[list[tuple[str, Any, Any]]] = [[]]
    for (a, _), (b, _) in itertools.pairwise(runs):
        before = a.inventory if a.last_inventory is None else a.last_inventory
        changes.append(testbed.differences(before, b.inventory))
    return History(runs=[e for e, _ in runs], tracks=tracks, changes=changes[:n])
