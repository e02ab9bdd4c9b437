"""Charts of runs with matplotlib (Agg, never a display): the seeds' figures as files or SVG.

A chart is built in two steps. :func:`build_chart` turns runs into a :class:`Chart` — panels,
lines or bars, and for every data point its value and a hover text — without matplotlib.
:func:`render` draws it (PNG or SVG). In SVG every data point becomes its own group with an
SVG ``<title>`` holding its values (a browser shows it on hover, in a standalone file too) and,
for the HTML report, a ``data-ref`` naming the point's detail section.

Kinds (``KINDS``):

- ``iops-vs-iodepth``, ``bw-vs-iodepth``, ``lat-vs-iodepth``: the figure against queue depth,
  a line per block size (one run) or per run (several runs: seed 004's Proxmox vs VMware
  charts, a panel per block size);
- ``iops-vs-numjobs``, ``bw-vs-numjobs``, ``lat-vs-numjobs``: the same against the number of
  jobs (seed 000);
- ``lat-percentiles``: completion latency percentiles (p50 … p99.99), a line per point;
- ``compare``: the % change of IOPS of each later run against the first (seed 004's bars).

Text from plans and hosts ends up in three places here: matplotlib's own ``<text>`` (or glyph
paths), which matplotlib escapes (``$`` is escaped here so that a name is never read as
mathtext), the ``<title>`` of each point and the ``data-ref`` attribute, both escaped with
:func:`html.escape` when they are put into the SVG. Control characters are written out
(:mod:`storbench.report.safe`): XML cannot hold them.
"""

from __future__ import annotations

import html
import io
import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from storbench.analysis.summary import PointSummary, summarize
from storbench.errors import UserError
from storbench.metrics import PERCENTILES, LatencyStats, pct_key
from storbench.report.safe import one_line, visible
from storbench.store import MeasurementRow, RunRow, Store
from storbench.units import fmt_iops, fmt_ns

KINDS = (
    "iops-vs-iodepth",
    "bw-vs-iodepth",
    "lat-vs-iodepth",
    "iops-vs-numjobs",
    "bw-vs-numjobs",
    "lat-vs-numjobs",
    "lat-percentiles",
    "compare",
)

#: Most panels one figure shows; the rest are named in the chart's note (values stay in tables).
MAX_PANELS = 12
#: Most lines in one latency-percentile panel before it is split further.
MAX_PERCENTILE_LINES = 16

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
    """A run's summaries, latency histograms included (percentiles over repetitions).

    ``ref`` is a run (``12``, ``latest``, ``latest~N``), optionally with a filter that keeps
    some of its points: ``12:target=/dev/sdb``, ``latest:bs=4k,iodepth=32``
    (:mod:`storbench.analysis.select`)."""
    from storbench.analysis.select import parse_run_spec, select

    spec = parse_run_spec(str(ref))
    run = store.run(spec.run)
    rows = store.measurements(run.id, bins=True)
    summaries = summarize([(m.point, m.measurement) for m in rows if m.point is not None])
    if spec.filters:
        summaries = select(summaries, spec.filters, what=f"run {run.id} ({spec.text})")
        keys = {s.key for s in summaries}
        rows = [m for m in rows if m.point is not None and m.point.key in keys]
    return RunResults(run=run, summaries=summaries, rows=rows, filters=spec.filter_text)


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


@dataclass
class Line:
    label: str
    key: str  # same key, same colour in every panel
    marks: list[Mark]


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

    @property
    def marks(self) -> int:
        return sum(len(ln.marks) for p in self.panels for ln in p.lines) + sum(
            len(p.bars) for p in self.panels
        )


# --------------------------------------------------------------------------- building


@dataclass
class _Rec:
    res: RunResults
    s: PointSummary
    dims: dict[str, str]


def _dims(res: RunResults, s: PointSummary, multi_run: bool, skip: str | None) -> dict[str, str]:
    d: dict[str, str] = {}
    if multi_run:
        d["run"] = res.label
    d["target"] = s.target.label
    d["workload"] = s.workload
    for k, v in s.axes.items():
        if k != skip:
            d[k] = str(v)
    return d


def _order(recs: list[_Rec]) -> list[str]:
    return list(dict.fromkeys(k for r in recs for k in r.dims))


def _varying(recs: list[_Rec], dims: list[str]) -> list[str]:
    return [d for d in dims if len({r.dims.get(d) for r in recs}) > 1]


def _determined_by(recs: list[_Rec], by: list[str], d: str) -> bool:
    seen: dict[tuple[str | None, ...], str | None] = {}
    for r in recs:
        k = tuple(r.dims.get(b) for b in by)
        if seen.setdefault(k, r.dims.get(d)) != r.dims.get(d):
            return False
    return True


def _describe(dims: dict[str, str], keys: list[str]) -> str:
    parts = []
    for k in keys:
        v = dims.get(k)
        if v is None:
            continue
        parts.append(v if k in ("run", "target") else f"{k}={v}" if k != "workload" else v)
    return ", ".join(parts)


def _point_text(res: RunResults, s: PointSummary, multi_run: bool) -> str:
    axes = " ".join(f"{k}={v}" for k, v in s.axes.items())
    head = f"{res.label}\n" if multi_run else ""
    return f"{head}{s.target.label} · {s.workload} {axes}".rstrip()


def _spread(s: PointSummary, metric: str) -> str:
    if metric != "iops" or s.runs < 2:
        return ""
    sd = [d.iops_stdev for d in s.dirs.values() if d.iops_stdev is not None]
    return f" (n={s.runs}, sd {fmt_iops(math.sqrt(sum(x * x for x in sd)))})" if sd else ""


def _runs_title(runs: list[RunResults]) -> str:
    if len(runs) == 1:
        return runs[0].label
    return " vs ".join(r.short for r in runs)


def _pow2(values: Iterable[float]) -> bool:
    vals = [v for v in values if v > 0]
    return bool(vals) and max(vals) / min(vals) >= 4


def _lat_unit(values: Iterable[float]) -> tuple[float, str]:
    top = max(values, default=0.0)
    if top >= 2e6:
        return 1e6, "ms"
    if top >= 2e3:
        return 1e3, "µs"
    return 1.0, "ns"


def sweep_chart(runs: list[RunResults], metric: str, axis: str) -> Chart:
    """A figure (IOPS, bandwidth or mean latency) against a swept option (iodepth, numjobs)."""
    multi = len(runs) > 1
    name, fig = _METRICS[metric]
    recs = [
        _Rec(res, s, _dims(res, s, multi, axis))
        for res in runs
        for s in res.summaries
        if axis in s.axes and s.runs > 0
    ]
    title = f"{name} vs {axis} — {_runs_title(runs)}"
    if not recs:
        return Chart(kind=f"{metric}-vs-{axis}", title=title, panels=[])
    order = _order(recs)
    varying = _varying(recs, order)
    if multi:
        series = ["run"] + (
            ["target"]
            if any(len({r.s.target.label for r in recs if r.res is res}) > 1 for res in runs)
            else []
        )
    elif "bs" in varying:
        series = ["bs"]
    elif "target" in varying:
        series = ["target"]
    else:
        series = []
    facets = [d for d in varying if d not in series and not _determined_by(recs, series, d)] or []
    panels: dict[tuple[str | None, ...], Panel] = {}
    lines: dict[tuple[tuple[str | None, ...], tuple[str | None, ...]], Line] = {}
    legend: dict[str, str] = {}
    raw: list[float] = []
    for r in recs:
        y = fig(r.s)
        if y is None or not math.isfinite(y):
            continue
        fkey = tuple(r.dims.get(d) for d in facets)
        skey = tuple(r.dims.get(d) for d in series)
        panel = panels.get(fkey)
        if panel is None:
            panel = panels[fkey] = Panel(title=_describe(r.dims, facets), xlabel=axis)
        label = _describe(r.dims, series) or (r.s.workload if not multi else r.res.label)
        key = "\x00".join(str(k) for k in skey)
        legend.setdefault(key, label)
        line = lines.get((fkey, skey))
        if line is None:
            line = lines[(fkey, skey)] = Line(label=label, key=key, marks=[])
            panel.lines.append(line)
        x = float(r.s.axes[axis])
        tip = (
            f"{_point_text(r.res, r.s, multi)}\n"
            f"{axis}={r.s.axes[axis]}: {fmt_value(metric, y)}{_spread(r.s, metric)}"
        )
        line.marks.append(Mark(x=x, y=y, tip=tip, ref=r.res.anchor(r.s)))
        raw.append(y)
    for line in lines.values():
        line.marks.sort(key=lambda m: m.x)
    xs = sorted({m.x for ln in lines.values() for m in ln.marks})
    xscale = "log2" if axis == "iodepth" and _pow2(xs) else "linear"
    xticks = [(x, f"{x:g}") for x in xs] if len(xs) <= 16 else None
    if metric == "iops":
        unit, ylabel, yfmt = 1.0, "IOPS", "eng"
    elif metric == "bw":
        unit, ylabel, yfmt = _MIB, "MiB/s", "plain"
    else:
        unit, u = _lat_unit(raw)
        lat_only = all(point_latency(r.s) is None for r in recs)  # rados bench: no clat
        ylabel, yfmt = f"mean {'lat' if lat_only else 'clat'} ({u})", "plain"
    yscale = (
        "log"
        if metric == "lat" and raw and min(raw) > 0 and max(raw) / min(raw) > 30
        else ("linear")
    )
    for p in panels.values():
        p.xscale, p.xticks, p.ylabel, p.yunit, p.yfmt, p.yscale = (
            xscale,
            xticks,
            ylabel,
            unit,
            yfmt,
            yscale,
        )
    return _capped(
        Chart(
            kind=f"{metric}-vs-{axis}",
            title=title,
            panels=list(panels.values()),
            legend=list(legend.items()),
        )
    )


def percentile_chart(runs: list[RunResults]) -> Chart:
    """Completion latency at p50 … p99.99, a line per point; panels group points so that
    none holds more than ``MAX_PERCENTILE_LINES`` lines."""
    multi = len(runs) > 1
    pcts = [pct_key(p) for p in PERCENTILES]
    recs = []
    for res in runs:
        for s in res.summaries:
            lat = point_latency(s) if s.runs else None
            if lat is not None and any(lat.percentiles.get(k) for k in pcts):
                recs.append(_Rec(res, s, _dims(res, s, multi, None)))
    title = f"Completion latency percentiles — {_runs_title(runs)}"
    if not recs:
        return Chart(kind="lat-percentiles", title=title, panels=[])
    order = _order(recs)
    varying = _varying(recs, order)
    # points are grouped by the outer dimensions; a panel's lines differ in the inner ones.
    # Inner dimensions move out (the plan's first axis first, the run last) until no panel
    # has too many lines.
    axes_dims = [d for d in varying if d not in ("run", "target", "workload")]
    inner = [*axes_dims[:-1], "target", "run", *axes_dims[-1:]]
    inner = [d for d in inner if d in varying]
    outer = [d for d in varying if d not in inner]

    def groups() -> dict[tuple[str | None, ...], list[_Rec]]:
        g: dict[tuple[str | None, ...], list[_Rec]] = {}
        for r in recs:
            g.setdefault(tuple(r.dims.get(d) for d in outer), []).append(r)
        return g

    grouped = groups()
    while inner and max(len(v) for v in grouped.values()) > MAX_PERCENTILE_LINES:
        outer.append(inner.pop(0))
        outer.sort(key=varying.index)
        grouped = groups()
    panels = []
    legend: dict[str, str] = {}
    for items in grouped.values():
        panel = Panel(
            title=_describe(items[0].dims, outer),
            xlabel="percentile",
            xscale="category",
            xticks=[(i, f"p{k}") for i, k in enumerate(pcts)],
            yscale="log",
            ylabel="clat",
        )
        for r in items:
            lat = point_latency(r.s)
            assert lat is not None
            label = _describe(r.dims, inner) or r.s.workload
            key = label
            legend.setdefault(key, label)
            marks = []
            for i, k in enumerate(pcts):
                v = lat.percentiles.get(k)
                if v is None or v <= 0:
                    continue
                tip = f"{_point_text(r.res, r.s, multi)}\nclat p{k}: {fmt_ns(v)}"
                marks.append(Mark(x=float(i), y=v, tip=tip, ref=r.res.anchor(r.s)))
            panel.lines.append(Line(label=label, key=key, marks=marks))
        panels.append(panel)
    for p in panels:  # a unit per panel: tails of different points differ by decades
        p.yunit, u = _lat_unit(m.y for ln in p.lines for m in ln.marks)
        p.ylabel = f"clat ({u})"
    return _capped(
        Chart(kind="lat-percentiles", title=title, panels=panels, legend=list(legend.items()))
    )


def _capped(chart: Chart) -> Chart:
    if len(chart.panels) > MAX_PANELS:
        rest = chart.panels[MAX_PANELS:]
        chart.panels = chart.panels[:MAX_PANELS]
        chart.note = (
            f"{len(rest)} more panel{'s' if len(rest) > 1 else ''} not drawn "
            f"({', '.join(p.title for p in rest[:6])}{', …' if len(rest) > 6 else ''}); "
            "their values are in the summary table"
        )
    return chart


#: Most bars of a point-by-point comparison panel; beyond, only the averages are drawn.
MAX_COMPARE_BARS = 80


def comparisons(runs: list[RunResults]) -> list[Any]:
    """Each later run against the first (storbench.analysis.compare), in run order."""
    from storbench.analysis.compare import compare

    base = runs[0]
    return [
        compare(base.summaries, o.summaries, base_name=base.label, other_name=o.label)
        for o in runs[1:]
    ]


def _pct_bar(label: str, pct: float, tip: str, ref: str | None = None) -> Mark:
    return Mark(x=0.0, y=pct, tip=tip, ref=ref, text=f"{pct:+.1f}%", label=label)


def compare_chart(runs: list[RunResults], cmps: list[Any] | None = None) -> Chart:
    """Seed 004's relative comparisons: for every later run against the first, the % change
    of IOPS point by point (bars labelled with the change), and the average IOPS gain and
    mean-latency reduction per iodepth and per block size."""
    base = runs[0]
    panels: list[Panel] = []
    notes: list[str] = []
    for other, cmp in zip(runs[1:], cmps or comparisons(runs), strict=True):
        vs = f"{other.short} vs {base.short}"
        bars = []
        for m in cmp.matched:
            pct = m.iops_change_pct
            if pct is None or not math.isfinite(pct):
                continue
            lat = m.mean_lat_change_pct
            tip = (
                f"{m.label}\n{vs}\nIOPS {fmt_iops(m.base.total_iops)} -> "
                f"{fmt_iops(m.other.total_iops)} ({pct:+.1f}%)"
                + (f"\nmean clat {lat:+.1f}%" if lat is not None else "")
                + f"\n{m.verdict}"
            )
            bars.append(_pct_bar(m.label, pct, tip, other.anchor(m.other)))
        if len(bars) > MAX_COMPARE_BARS:
            notes.append(
                f"{vs}: {len(bars)} matched points, too many for one bar each; "
                "averages shown (every point is in the comparison table)"
            )
        elif bars:
            panels.append(Panel(title=f"IOPS change, point by point: {vs}", bars=bars))
        for what, groups in (("iodepth", cmp.by_iodepth), ("bs", cmp.by_bs)):
            if len(groups) < 2:
                continue
            for idx, name in ((0, "Average IOPS gain"), (1, "Average mean-latency reduction")):
                gbars = [
                    _pct_bar(
                        f"{what}={value}",
                        figs[idx],
                        f"{vs}\n{what}={value}: {name.lower()} {figs[idx]:+.1f}%"
                        + ("\n(averaged over block sizes)" if what == "iodepth" else ""),
                    )
                    for value, figs in groups.items()
                    if figs[idx] is not None and math.isfinite(figs[idx])
                ]
                if gbars:
                    panels.append(Panel(title=f"{name} by {what}: {vs}", bars=gbars))
    for p in panels:
        p.xlabel = "change (%)" if "point by point" in p.title else "%"
        p.yfmt = "pct"
    return Chart(
        kind="compare",
        title=f"Relative comparison — {_runs_title(runs)}",
        panels=panels,
        note="; ".join(notes) or None,
    )


def build_chart(kind: str, runs: list[RunResults]) -> Chart:
    """The chart of ``kind`` for ``runs``; a UserError when the runs cannot give it."""
    if kind not in KINDS:
        raise UserError(f"unknown chart kind {kind!r}", fix=f"use one of: {', '.join(KINDS)}")
    if kind == "compare":
        if len(runs) < 2:
            raise UserError(
                "--kind compare needs two runs or more (the first is the base)",
                fix="storbench chart BASE_RUN OTHER_RUN --kind compare -o cmp.png",
            )
        chart = compare_chart(runs)
        if not any(p.bars for p in chart.panels):
            raise UserError(
                f"{_runs_title(runs)}: no point of the later run(s) matches a point of the "
                "first (same workload parameters)",
                fix="compare runs of the same plan (or plans with the same axes)",
            )
        return chart
    if kind == "lat-percentiles":
        chart = percentile_chart(runs)
        if not chart.panels:
            raise UserError(
                f"{_runs_title(runs)} has no latency percentiles to draw (no measured point)"
            )
        return chart
    metric, axis = kind.split("-vs-")
    chart = sweep_chart(runs, metric, axis)
    if not chart.panels:
        fits = [k for k in available_kinds(runs) if k != "compare"]
        raise UserError(
            f"{_runs_title(runs)} has no {axis} axis: no measured points differ in {axis}, "
            f"so there is nothing to draw against it",
            fix=(f"kinds that fit: {', '.join(fits)}" if fits else None),
        )
    return chart


def available_kinds(runs: list[RunResults]) -> list[str]:
    """The kinds that have something to draw for these runs."""
    axes = {k for r in runs for s in r.summaries if s.runs for k in s.axes}
    kinds = []
    for axis in ("iodepth", "numjobs"):
        if axis in axes:
            kinds += [f"{m}-vs-{axis}" for m in ("iops", "bw", "lat")]
    if any(point_latency(s) for r in runs for s in r.summaries if s.runs):
        kinds.append("lat-percentiles")
    if len(runs) > 1:
        kinds.append("compare")
    return kinds


# --------------------------------------------------------------------------- rendering

_STYLE = {
    # matplotlib measures text with its own DejaVu Sans; an SVG with text (not glyph paths)
    # names these families for the browser, ending in the generic sans-serif
    "font.family": "sans-serif",
    "font.sans-serif": ["DejaVu Sans", "Arial", "Helvetica"],
    "font.size": 9,
    "axes.titlesize": 9.5,
    "axes.titleweight": "bold",
    "figure.titlesize": 12,
    "figure.titleweight": "bold",
    "axes.grid": True,
    "axes.grid.axis": "y",  # values are read off y (and on hover); x has its ticks
    "grid.alpha": 0.35,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "legend.frameon": False,
    "lines.linewidth": 1.6,
    "lines.markersize": 5,
    # a fixed title position: matplotlib otherwise measures every tick label to place it
    "axes.titley": 1.02,
    "xtick.minor.visible": False,
    "ytick.minor.visible": False,
}

#: Inches per character of 9 pt DejaVu Sans (a generous average, for margins).
_CHAR_IN = 0.075


def _mpl_text(s: str) -> str:
    """Text shown literally by matplotlib: ``$`` would start mathtext; control characters
    (which XML cannot hold, and which matplotlib warns about with the raw character) are
    written out."""
    return one_line(s).replace("$", r"\$")


def _fit(s: str, inches: float) -> str:
    """``s`` cut (with an ellipsis) to what fits in ``inches`` at 9.5 pt bold."""
    n = max(8, int(inches / (_CHAR_IN * 1.12)))
    return s if len(s) <= n else s[: n - 1] + "…"


def _colors(n: int) -> list[Any]:
    from matplotlib import colormaps

    cmap = colormaps["tab10" if n <= 10 else "tab20"]
    return [cmap(i % cmap.N) for i in range(max(n, 1))]


def _draw(chart: Chart, *, page: bool = False) -> tuple[Any, dict[int, Line]]:
    """The matplotlib Figure of a chart, and the line drawn as each ``sbl<N>`` group.

    The layout is computed here in inches (constrained layout would double the drawing
    time of a report with many panels). For a ``page`` the title and the note are left to
    the HTML around the chart.
    """
    from matplotlib.figure import Figure

    n = len(chart.panels)
    bars = any(p.bars for p in chart.panels)
    labels = [_mpl_text(label) for _, label in chart.legend]
    suptitle, note = not page, chart.note if not page else None
    top = 0.5 if suptitle else 0.12
    note_h = 0.3 if note else 0.0
    if bars:
        cats = max((len(b.label) for p in chart.panels for b in p.bars), default=4)
        left = min(0.25 + _CHAR_IN * cats, 4.5)
        width = left + 6.0
        heights = [0.24 * len(p.bars) + 0.35 for p in chart.panels]
        gap = 0.85  # x tick labels, x label, next title
        total = top + sum(heights) + gap * n + note_h + 0.1
        fig = Figure(figsize=(width, total))
        y = total - top
        rects = []
        for h in heights:
            y -= 0.3 + h  # title
            rects.append((left / width, y / total, 5.4 / width, h / total))
            y -= gap - 0.3
        legend_rows = 0
    else:
        ncols = 1 if n == 1 else 2 if n <= 4 else 3
        nrows = math.ceil(n / ncols)
        pw, ph = (7.2, 3.9) if n == 1 else (5.4, 3.3) if ncols == 2 else (4.7, 3.1)
        width = pw * ncols
        show_legend = bool(labels) and (len(labels) > 1 or n > 1)
        per = max((len(t) for t in labels), default=1) * _CHAR_IN + 0.55
        lcols = max(1, min(len(labels), int(width // per), 6)) if show_legend else 1
        legend_rows = math.ceil(len(labels) / lcols) if show_legend else 0
        legend_h = 0.22 * legend_rows + (0.15 if legend_rows else 0)
        total = top + ph * nrows + legend_h + note_h + 0.05
        fig = Figure(figsize=(width, total))
        titled = any(p.title for p in chart.panels)
        # inside each cell: tick labels and axis label left and below, the title above
        ml, mr, mt, mb = 0.8, 0.2, (0.35 if titled else 0.15), 0.6
        rects = []
        for i in range(n):
            r, c = divmod(i, ncols)
            x0 = c * pw + ml
            y0 = total - top - (r + 1) * ph + mb
            rects.append((x0 / width, y0 / total, (pw - ml - mr) / width, (ph - mt - mb) / total))
    axs = [fig.add_axes(rect) for rect in rects]
    colors = _colors(len(chart.legend))
    color_of = {k: colors[i] for i, (k, _) in enumerate(chart.legend)}
    handles: dict[str, Any] = {}
    drawn: dict[int, Line] = {}
    gid = 0
    for ax, panel, rect in zip(axs, chart.panels, rects, strict=True):
        ax.set_title(_mpl_text(_fit(panel.title, rect[2] * fig.get_figwidth())), loc="left")
        if panel.bars:
            gid = _draw_bars(ax, panel, gid)
            continue
        for line in panel.lines:
            xs = [m.x for m in line.marks]
            ys = [m.y / panel.yunit for m in line.marks]
            (h,) = ax.plot(
                xs,
                ys,
                marker="o",
                color=color_of.get(line.key),
                label=_mpl_text(line.label),
                gid=f"sbl{gid}",
            )
            drawn[gid] = line
            gid += 1
            handles.setdefault(line.key, h)
        _axes_style(ax, panel)
    if suptitle:
        fig.suptitle(_mpl_text(chart.title), y=1 - 0.12 / fig.get_figheight(), va="top")
    if legend_rows:
        lab = dict(chart.legend)
        fig.legend(
            list(handles.values()),
            [_mpl_text(lab[k]) for k in handles],
            loc="lower center",
            bbox_to_anchor=(0.5, (note_h + 0.02) / fig.get_figheight()),
            ncols=lcols,
            handlelength=1.8,
            columnspacing=1.2,
        )
    if note:
        fig.text(
            0.01,
            0.06 / fig.get_figheight(),
            _mpl_text(_fit(note, fig.get_figwidth() * 1.3)),
            fontsize=7,
            color="#555",
        )
    return fig, drawn


def _draw_bars(ax: Any, panel: Panel, gid: int) -> int:
    from matplotlib.ticker import FuncFormatter

    ys = list(range(len(panel.bars)))
    vals = [b.y for b in panel.bars]
    cols = ["#2a9d5b" if v >= 0 else "#d1495b" for v in vals]
    cont = ax.barh(ys, vals, color=cols, height=0.7)
    for patch in cont.patches:
        patch.set_gid(f"sbb{gid}")
        gid += 1
    ax.bar_label(cont, labels=[_mpl_text(b.text or "") for b in panel.bars], padding=3)
    ax.set_yticks(ys, [_mpl_text(b.label) for b in panel.bars])
    ax.set_ylim(len(ys) - 0.5, -0.5)
    ax.axvline(0, color="#444", linewidth=0.8)
    ax.set_xlabel(panel.xlabel)
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:+.0f}%"))
    ax.grid(axis="y", visible=False)
    lo, hi = min([0.0, *vals]), max([0.0, *vals])
    pad = (hi - lo) * 0.2 or 1.0
    ax.set_xlim(lo - (pad if lo < 0 else 0), hi + (pad if hi > 0 else pad * 0.2))
    return gid


def _tick(v: float, _: Any = None) -> str:
    """A tick label without exponents: 1,250,000; 4,096; 12.5; 0.25."""
    return f"{v:,.0f}" if abs(v) >= 1000 else f"{v:,.4g}"


def _axes_style(ax: Any, panel: Panel) -> None:
    from matplotlib.ticker import EngFormatter, FuncFormatter, MaxNLocator, NullLocator

    if panel.xscale == "log2":
        ax.set_xscale("log", base=2)
        ax.xaxis.set_minor_locator(NullLocator())
    if panel.xticks is not None:
        ticks = panel.xticks
        if len(ticks) > 10 and panel.xscale != "category":  # keep tick labels apart
            step = math.ceil(len(ticks) / 10)
            ticks = ticks[::step]
        ax.set_xticks([t[0] for t in ticks], [t[1] for t in ticks])
    if panel.yscale == "log":
        ax.set_yscale("log")
        ax.yaxis.set_minor_locator(NullLocator())
        ax.yaxis.set_major_formatter(FuncFormatter(_tick))
    elif panel.yfmt == "eng":
        ax.yaxis.set_major_locator(MaxNLocator(6))
        ax.yaxis.set_major_formatter(EngFormatter(sep=""))
        ax.set_ylim(bottom=0)
    else:
        ax.yaxis.set_major_locator(MaxNLocator(6))
        ax.yaxis.set_major_formatter(FuncFormatter(_tick))
        ax.set_ylim(bottom=0)
    ax.set_xlabel(panel.xlabel)
    ax.set_ylabel(panel.ylabel)


def render(chart: Chart, fmt: str, *, salt: str = "storbench") -> bytes:
    """The chart as a PNG or a standalone SVG file (points hoverable with their values).

    An SVG file draws its text as glyph paths: it looks the same in any program it is pasted
    into, whatever fonts that machine has."""
    import matplotlib

    if fmt not in ("png", "svg"):
        raise UserError(f"cannot write a chart as {fmt!r}", fix="name the file .png or .svg")
    with matplotlib.rc_context({**_STYLE, "svg.fonttype": "path", "svg.hashsalt": salt}):
        fig, drawn = _draw(chart)
        buf = io.BytesIO()
        meta: dict[str, Any] = {"Title": one_line(chart.title)}
        if fmt == "svg":
            meta["Date"] = None
        fig.savefig(buf, format=fmt, dpi=150, metadata=meta)
    if fmt == "png":
        return buf.getvalue()
    svg = buf.getvalue().decode()
    return _annotate(svg, chart, drawn, prefix="", inline=False).encode()


def render_inline_svg(chart: Chart, prefix: str) -> str:
    """The chart as an ``<svg>`` element for an HTML page: no XML prolog, ids prefixed with
    ``prefix`` (unique in the page), every point with its hover ``<title>`` and ``data-ref``.

    Text stays text (``svg.fonttype: none``, drawn by the browser in the page's fonts):
    half the drawing time of glyph paths, smaller, and searchable in the page."""
    import matplotlib

    with matplotlib.rc_context({**_STYLE, "svg.fonttype": "none", "svg.hashsalt": prefix}):
        fig, drawn = _draw(chart, page=True)
        buf = io.StringIO()
        fig.savefig(buf, format="svg", metadata={"Date": None})
    return _annotate(buf.getvalue(), chart, drawn, prefix=prefix, inline=True)


#: Panels from which a report's charts are drawn in parallel processes (fork) when the
#: machine has more than one CPU: matplotlib spends ~50 ms on each panel.
PARALLEL_PANELS = 16


def _render_one(item: tuple[Chart, str]) -> str:
    return render_inline_svg(*item)


def render_inline_svgs(items: list[tuple[Chart, str]]) -> list[str]:
    """:func:`render_inline_svg` of each (chart, prefix), in worker processes when there is
    enough to draw and more than one CPU to draw it on; the results in the same order."""
    import os

    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    panels = sum(len(c.panels) for c, _ in items)
    if (cpus or 1) < 2 or len(items) < 2 or panels < PARALLEL_PANELS:
        return [_render_one(item) for item in items]
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    import matplotlib.figure  # noqa: F401  (imported once, before the workers fork)

    workers = min(len(items), cpus or 1, 8)
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as pool:
        # the biggest first, so that no worker is left with a big chart at the end
        order = sorted(range(len(items)), key=lambda i: -len(items[i][0].panels))
        done = dict(zip(order, pool.map(_render_one, [items[i] for i in order]), strict=True))
    return [done[i] for i in range(len(items))]


_MARKER_USE = re.compile(r'<use xlink:href="#m[0-9a-f]+"[^>]*/>')
_GID = re.compile(r'<g id="(sb[lb])(\d+)">')
_TAG = re.compile(r"<[^<>]+>")
_ID_ATTR = re.compile(r'(\sid=")([^"]+)(")|(url\(#)([^)]+)(\))|(href="#)([^"]+)(")')


def _esc(s: str) -> str:
    """Text for the SVG: XML-escaped, control characters (not allowed in XML) written out."""
    return html.escape(visible(s), quote=True)


def _point_group(mark: Mark, inline: bool, inner: str) -> str:
    ref = f' data-ref="{_esc(mark.ref)}"' if inline and mark.ref else ""
    return f'<g class="pt"{ref}><title>{_esc(mark.tip)}</title>{inner}</g>'


def _annotate(svg: str, chart: Chart, lines: dict[int, Line], *, prefix: str, inline: bool) -> str:
    """Give every data point of matplotlib's SVG its hover title (and link in the page)."""
    title = chart.title
    bars = [b for p in chart.panels for b in p.bars]
    pieces = _GID.split(svg)
    out = [pieces[0]]
    # split gives [before, kind, num, after, kind, num, after, ...]
    for i in range(1, len(pieces), 3):
        kind, num, rest = pieces[i], int(pieces[i + 1]), pieces[i + 2]
        if kind == "sbb" and num < len(bars):
            mark = bars[num]
            ref = f' data-ref="{_esc(mark.ref)}"' if inline and mark.ref else ""
            out.append(f'<g id="sbb{num}" class="pt"{ref}><title>{_esc(mark.tip)}</title>')
            out.append(rest)
            continue
        out.append(f'<g id="sbl{num}">')
        line = lines.get(num)
        if line is None:
            out.append(rest)
            continue
        marks = iter(line.marks)
        uses = len(_MARKER_USE.findall(rest))
        if uses < len(line.marks):  # matplotlib dropped a marker: title the whole line
            tip = "\n\n".join(m.tip for m in line.marks)
            out[-1] = f'<g id="sbl{num}"><title>{_esc(tip)}</title>'
            out.append(rest)
            continue
        out.append(
            _MARKER_USE.sub(
                lambda m, it=marks: _point_group(next(it), inline, m.group(0)),
                rest,
                count=len(line.marks),
            )
        )
    svg = "".join(out)
    start = svg.find("<svg")
    head, svg = svg[:start], svg[start:]
    svg = re.sub(r"<metadata>.*?</metadata>", "", svg, count=1, flags=re.S)
    open_end = svg.find(">") + 1
    svg = svg[:open_end] + f"\n <title>{_esc(title)}</title>" + svg[open_end:]
    if inline:
        svg = _TAG.sub(lambda m: _prefix_ids(m.group(0), prefix), svg)
        svg = svg.replace("<svg ", f'<svg role="img" aria-label="{_esc(title)}" ', 1)
        return svg
    return head + svg


def _prefix_ids(tag: str, prefix: str) -> str:
    def sub(m: re.Match[str]) -> str:
        for i in (1, 4, 7):
            if m.group(i):
                return f"{m.group(i)}{prefix}{m.group(i + 1)}{m.group(i + 2)}"
        return m.group(0)

    return _ID_ATTR.sub(sub, tag)
