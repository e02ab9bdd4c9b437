"""What a chart is made of (runs, panels, lines, marks) and the figures it shows, without
matplotlib."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from storbench.analysis.select import parse_run_spec, select
from storbench.analysis.soak import SeriesSource
from storbench.analysis.summary import PointSummary, fill_percentiles, needs_bins, summarize
from storbench.constants import CHART_KINDS as KINDS  # noqa: F401
from storbench.metrics import LatencyStats
from storbench.store import MeasurementRow, RunRow, Store
from storbench.units import fmt_iops, fmt_ns

#: Most panels one figure shows; the rest are named in the chart's note (values stay in tables).
MAX_PANELS = 12
#: Most lines (series) in one panel: more are split over several panels (charts/facets.py),
#: each titled with the lines it holds and with a legend of its own.
MAX_SERIES = 6

_MIB = float(1 << 20)


# --------------------------------------------------------------------------- runs


@dataclass
class RunResults:
    """One run (or the points of it a ``RUN:key=value`` filter keeps) as charts and reports
    see it: its row, its per-point summaries and the measurements they fold (repetitions)."""

    run: RunRow
    summaries: list[PointSummary]
    rows: list[MeasurementRow] = field(default_factory=list)
    filters: str = ""  # "target=/dev/sdb,bs=4k" when filtered
    tag: str = ""  # tells apart two sides from the same run in one page
    #: a point's intervals by its index (the soak answer is made of them)
    series: SeriesSource | None = None

    @property
    def short(self) -> str:
        return f"run {self.run.id}" + (f" [{self.filters}]" if self.filters else "")

    @property
    def label(self) -> str:
        return f"run {self.run.id}: {self.run.name}" + (
            f" [{self.filters}]" if self.filters else ""
        )

    def anchor(self, s: PointSummary) -> str:
        """The id of a point's detail section in the HTML report."""
        return f"r{self.run.id}{self.tag}-p{s.index + 1}"


def load_run(store: Store, ref: str | int) -> RunResults:
    """A run's summaries, their percentiles over repetitions merged from the histograms.

    ``ref`` is a run (``12``, ``latest``, ``latest~N``), optionally with a filter that keeps
    some of its points: ``12:target=/dev/sdb``, ``latest:bs=4k,iodepth=32``
    (:mod:`storbench.analysis.select`)."""
    spec = parse_run_spec(str(ref))
    run = store.run(spec.run)
    rows = store.measurements(run.id, bins=False)
    summaries = summarize([(m.point, m.measurement) for m in rows if m.point is not None])
    _fill_percentiles(store, run.id, summaries)
    if spec.filters:
        summaries = select(summaries, spec.filters, what=f"run {run.id} ({spec.text})")
        keys = {s.key for s in summaries}
        rows = [m for m in rows if m.point is not None and m.point.key in keys]
    return RunResults(
        run=run,
        summaries=summaries,
        rows=rows,
        filters=spec.filter_text,
        series=store.run_series(run.id),
    )


def _fill_percentiles(store: Store, run_id: int, summaries: list[PointSummary]) -> None:
    """Percentiles merged over repetitions or directions, from the histograms of only the
    points that need them, streamed one point at a time (a big run's histograms as objects
    are hundreds of MiB)."""
    need = {s.key: s for s in summaries if needs_bins(s)}
    if need:
        for key, hists in store.point_histograms(run_id, "clat"):  # bins: JSON text
            s = need.get(key)
            if s is not None:
                fill_percentiles(s, hists)


def load_runs(store: Store, refs: list[str]) -> list[RunResults]:
    """:func:`load_run` of each ref; sides taken from the same run are told apart."""
    runs = [load_run(store, ref) for ref in refs]
    ids = [r.run.id for r in runs]
    for i, r in enumerate(runs):
        if ids.count(r.run.id) > 1:
            r.tag = f"s{i + 1}"
    return runs


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


@dataclass
class Line:
    label: str
    key: str  # same key, same colour in every panel
    marks: list[Mark]
    color: int | None = None  # the colour's index when panels have legends of their own


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
        return sum(len(ln.marks) for p in self.panels for ln in p.lines) + sum(
            len(p.bars) for p in self.panels
        )
