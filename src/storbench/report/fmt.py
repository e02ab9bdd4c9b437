"""Formatting shared by every presenter (terminal, Markdown, HTML): latency cells that say
whether they show clat or lat, signed percentages, spreads, plain aligned text tables. The
presenters import it; it imports none of them, so report/'s arrows point one way."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from storbench.analysis.stats import Spread
from storbench.analysis.summary import PointSummary
from storbench.model.metrics import ClatOrLat, LatencyStats
from storbench.model.units import fmt_ns, when

#: a percentile the engine does not report (rados bench): shown as this, never as 0
NO_PERCENTILE = "\u2014"
#: the footnote of a table that shows lat (an engine without clat) instead of clat
LAT_NOTE = (
    "lat: latency from submission to completion, of an engine that reports no completion "
    f"latency (rados bench); it reports no percentiles either: {NO_PERCENTILE}"
)


def latency_label(metrics: Iterable[str | None]) -> str:
    """The name of latency columns: "clat", or "lat" when every latency they show is lat
    (see PointSummary.latency_metric)."""
    shown = {m for m in metrics if m}
    return "lat" if shown == {"lat"} else "clat"


def fmt_latency(lat: LatencyStats | None, metric: str | None, which: str, label: str) -> str:
    """A latency cell: the mean or a percentile (``"99"``) of ``lat`` (of kind ``metric``,
    "clat" or "lat") in a column named ``label``. A percentile lat has none of is
    :data:`NO_PERCENTILE`; a lat value in a clat column is marked "(lat)"."""
    if lat is None:
        return "-"
    value = lat.mean if which == "mean" else lat.percentiles.get(which)
    if value is None and metric == "lat":
        return NO_PERCENTILE
    return fmt_ns(value) + (" (lat)" if metric == "lat" and label != "lat" else "")


def fmt_direction_latency(d: ClatOrLat | None, which: str, label: str) -> str:
    """A latency cell of a measurement's direction (or a summary's): its clat, or its lat
    without clat."""
    if d is None:
        return "-"
    return fmt_latency(d.latency, d.latency_metric, which, label)


def fmt_pct(v: float | None, digits: int = 1) -> str:
    """A signed percentage with a true minus sign: +48.9 %, −32.6 %."""
    if v is None:
        return "-"
    text = f"{v:+.{digits}f}"
    if float(text) == 0:
        return f"{0:.{digits}f} %"  # no "−0.0 %"
    return f"{text} %".replace("-", "\u2212")


def fmt_p(p: float | None) -> str:
    if p is None:
        return "-"
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def fmt_spread(sp: Spread | None) -> str:
    """The 95 % confidence interval's half width relative to the mean: ±1.2 %."""
    rel = sp.rel_half_width_pct if sp is not None else None
    return "-" if rel is None else f"±{rel:.1f} %"


def text_table(headers: list[str], rows: list[list[str]], right: set[int] | None = None) -> str:
    """Plain aligned columns (fast for thousands of rows, unlike a rich Table)."""
    right = right if right is not None else set(range(1, len(headers)))
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(headers)]

    def line(cells: list[str]) -> str:
        return "  ".join(
            c.rjust(w) if i in right else c.ljust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ).rstrip()

    out = [line(headers), line(["-" * w for w in widths])]
    out += [line(r) for r in rows]
    return "\n".join(out)


@dataclass(frozen=True)
class SummaryLead:
    """The columns that name a point in a summary table, as every presenter lays them out:
    the target when there are several, the workload when there are several (or no axes),
    each axis, and the number of repetitions when there are more than one."""

    multi_target: bool
    multi_workload: bool
    axes: list[str]
    reps: int
    steady: bool = False  # some point ran in steady-state rounds: a column says how it ended
    power: bool = False  # some point has this machine's power (a sensor answered)
    partial: bool = False  # some repetition missed a host or client: the n column says so

    @classmethod
    def of(cls, summaries: Sequence[PointSummary]) -> SummaryLead:
        return cls(
            multi_target=len({s.target for s in summaries}) > 1,
            multi_workload=len({s.workload for s in summaries}) > 1,
            axes=list(dict.fromkeys(k for s in summaries for k in s.axes)),
            reps=max((s.runs + s.failed for s in summaries), default=1),
            partial=any(s.partial for s in summaries),
            steady=any(s.steady for s in summaries),
            power=any(s.watts is not None for s in summaries),
        )

    def columns(self) -> list[str]:
        return (
            (["target"] if self.multi_target else [])
            + (["workload"] if self.multi_workload or not self.axes else [])
            + self.axes
            + (["n"] if self.reps > 1 or self.partial else [])
            + (["steady state"] if self.steady else [])
            + (["power"] if self.power else [])
        )

    def cells(self, s: PointSummary, failed_note: bool = False) -> list[str]:
        """``failed_note``: the count of repetitions says how many failed."""
        runs = runs_cell(s) + (f" (+{s.failed} failed)" if failed_note and s.failed else "")
        return (
            ([s.target.label] if self.multi_target else [])
            + ([s.workload] if self.multi_workload or not self.axes else [])
            + [_axis_cell(s, a) for a in self.axes]
            + ([runs] if self.reps > 1 or self.partial else [])
            + ([steady_cell(s)] if self.steady else [])
            + ([power_cell(s)] if self.power else [])
        )


def runs_cell(s: PointSummary) -> str:
    """The repetitions a point's figures come from: full ones, then partial ones (a host or
    client missing), never counted as full: ``3``, ``2 + 1 partial``, ``1 partial``."""
    full = s.runs - s.partial
    parts = ([str(full)] if full or not s.partial else []) + (
        [f"{s.partial} partial"] if s.partial else []
    )
    return " + ".join(parts)


def _axis_cell(s: PointSummary, axis: str) -> str:
    """The point's value along an axis; a point the axis does not vary (quick's seq1m along
    rand4k's iodepth) shows the value it ran with, '-' when it set none."""
    if axis in s.axes:
        return str(s.axes[axis])
    value = s.params.get(axis)
    return "-" if value is None or value == "" else str(value)


def power_cell(s: PointSummary) -> str:
    """This machine's mean power over the point and its IOPS per watt; '-' without it."""
    if s.watts is None:
        return "-"
    per = s.iops_per_watt
    return f"{s.watts:,.1f} W" + (f", {per:,.0f} IOPS/W" if per is not None else "")


def steady_cell(s: PointSummary) -> str:
    """How a point's steady-state rounds ended: the window's rounds, or NOT REACHED (with
    how many of its repetitions, when it has several)."""
    if not s.steady:
        return "-"
    missed = [v for v in s.steady if not v.reached]
    if len(s.steady) == 1:
        v = s.steady[0]
        return f"rounds {v.first}-{v.last}" if v.reached else f"NOT REACHED ({v.rounds} rounds)"
    if missed:
        return f"NOT REACHED in {len(missed)} of {len(s.steady)}"
    return f"reached ({len(s.steady)} of {len(s.steady)})"


@dataclass
class AnswerTable:
    """A suite's answer as a table of text cells, for presenters that draw their own tables
    (the HTML report): formatted like the Markdown, escaped by the presenter."""

    title: str
    headers: list[str]
    rows: list[list[str]]
    right: set[int] = field(default_factory=set)  # columns aligned right
    notes: list[str] = field(default_factory=list)


def ran_between(rows: Iterable[Any]) -> str | None:
    """When ``rows`` ran, "FIRST to LAST": from the earliest start (or end) to the latest
    end, or None when none has a time (fio 2.1 and older wrote none in their outputs)."""
    times = [t for m in rows for t in (m.started_at, m.ended_at) if t is not None]
    if not times:
        return None
    return f"{when(min(times))} to {when(max(times))}"


def came_from(inventory: dict[str, Any]) -> list[str]:
    """Where a run came from (``storbench import``/``merge``: its inventory's provenance,
    oldest first), one line each: "DB run N (via FILE, DATE)"; [] for a run made here."""
    value = inventory.get("provenance")
    return [
        f"{p.get('db')} run {p.get('run')} (via {p.get('via')}"
        + (f", {when(p['at'])})" if isinstance(p.get("at"), int | float) else ")")
        for p in (value if isinstance(value, list) else [])
        if isinstance(p, dict)
    ]
