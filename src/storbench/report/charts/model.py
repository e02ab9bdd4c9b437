"""What a chart is made of (runs, panels, lines, marks) and the figures it shows, without
matplotlib."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from storbench.analysis.summary import PointSummary
from storbench.model.constants import CHART_KINDS as KINDS  # noqa: F401
from storbench.model.metrics import LatencyStats
from storbench.model.units import fmt_iops, fmt_ns
from storbench.report.model import RunReport, load_run, load_runs  # noqa: F401  (the runs drawn)

#: Most panels one figure shows; the rest are named in the chart's note (values stay in tables).
MAX_PANELS = 12
#: Most lines (series) in one panel: more are split over several panels (charts/facets.py),
#: each titled with the lines it holds and with a legend of its own.
MAX_SERIES = 6

_MIB = float(1 << 20)


# --------------------------------------------------------------------------- figures


def point_latency(s: PointSummary) -> LatencyStats | None:
    """Completion latency of all the point's I/O: its directions merged (mean weighted by
    samples, percentiles from the summed histograms)."""
    parts = [d.clat for d in s.dirs.values() if d.clat is not None]
    return LatencyStats.merge(parts) if parts else None


def point_iops(s: PointSummary) -> float | None:
    return s.total_iops if s.dirs else None


def point_bw(s: PointSummary) -> float | None:
    return sum(d.bw_mean for d in s.dirs.values()) if s.dirs else None


def point_lat_mean(s: PointSummary) -> float | None:
    """Mean latency of the point's I/O: clat, or lat (submission to completion) for an
    engine that reports no clat (rados bench)."""
    lat = point_latency(s)
    if lat is None:
        parts = [d.lat for d in s.dirs.values() if d.clat is None and d.lat is not None]
        lat = LatencyStats.merge(parts) if parts else None
    return lat.mean if lat is not None else None


def fmt_value(metric: str, v: float) -> str:
    if metric == "iops":
        return f"{fmt_iops(v)} IOPS"
    if metric == "bw":
        return f"{v / _MIB:,.1f} MiB/s"
    return fmt_ns(v)


_METRICS: dict[str, tuple[str, Callable[[PointSummary], float | None]]] = {
    "iops": ("IOPS", point_iops),
    "bw": ("Bandwidth", point_bw),
    "lat": ("Mean completion latency", point_lat_mean),
}


# --------------------------------------------------------------------------- chart model


@dataclass
class Mark:
    """One data point: where it is drawn, what hovering it shows, which detail it links to."""

    x: float
    y: float
    tip: str
    ref: str | None = None
    text: str | None = None  # a label drawn beside it (bars: "+12.3%")
    label: str = ""  # bars: the category it stands for
    err: float | None = None  # half width of the 95 % CI over repetitions (drawn as a bar)
    base: float | None = None  # an x it is tied to, drawn as a thin line to it (a step's offer)


@dataclass
class Line:
    label: str
    key: str  # same key, same colour in every panel
    marks: list[Mark]
    color: int | None = None  # the colour's index when panels have legends of their own
    #: a look of its own (draw.STYLES: markers alone, no line; "meets", "saturated", ...),
    #: None: a line with circles in the palette's colour
    style: str | None = None
    #: its marks restate marks of other lines (a step's achieved rate): not counted as points
    aside: bool = False


@dataclass
class Rule:
    """A reference line across a panel, labelled on it: ``axis`` "y" is horizontal at a
    value of y (a latency target), "x" vertical at a value of x (the capacity found)."""

    axis: str
    value: float
    label: str


@dataclass
class Panel:
    title: str
    lines: list[Line] = field(default_factory=list)
    bars: list[Mark] = field(default_factory=list)  # horizontal bars, top to bottom
    xlabel: str = ""
    ylabel: str = ""
    xscale: str = "linear"  # linear | log2 | category
    yscale: str = "linear"  # linear | log
    xticks: list[tuple[float, str]] | None = None
    yunit: float = 1.0  # values are divided by this when drawn
    yfmt: str = "plain"  # plain | eng | pct
    xfmt: str = "auto"  # auto (matplotlib's) | plain (from 0, thousands separated)
    rules: list[Rule] = field(default_factory=list)
    #: the marks of its lines (all but aside ones) joined in x order by one thin line: a curve
    #: whose points are styled by what they are
    join: bool = False
    note: str = ""  # drawn in the panel, top left


@dataclass
class Chart:
    kind: str
    title: str
    panels: list[Panel]
    legend: list[tuple[str, str]] = field(default_factory=list)  # (key, label)
    note: str | None = None
    #: each panel has its own legend (its lines' colours: Line.color), not one for the chart
    panel_legends: bool = False

    @property
    def marks(self) -> int:
        return sum(len(ln.marks) for p in self.panels for ln in p.lines if not ln.aside) + sum(
            len(p.bars) for p in self.panels
        )
