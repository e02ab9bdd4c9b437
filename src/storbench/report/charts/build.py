"""Building charts from runs: sweeps against iodepth or numjobs, latency percentiles, the
comparison of runs, capacity searches (charts/capacity.py; see the package docstring)."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from storbench.analysis.stats import spread
from storbench.analysis.summary import PointSummary
from storbench.model.errors import UserError
from storbench.model.metrics import PERCENTILES, pct_key
from storbench.model.units import fmt_iops, fmt_ns, parse_size
from storbench.report.charts.capacity import capacity_chart, has_searches
from storbench.report.charts.facets import run_labels, split_crowded
from storbench.report.charts.model import (
    _METRICS,
    _MIB,
    KINDS,
    MAX_PANELS,
    MAX_SERIES,
    Chart,
    Line,
    Mark,
    Panel,
    RunReport,
    fmt_value,
    point_latency,
)
from storbench.report.model import compare_runs

# --------------------------------------------------------------------------- building


@dataclass
class _Rec:
    res: RunReport
    s: PointSummary
    dims: dict[str, str]


def _dims(res: RunReport, s: PointSummary, run: str | None, skip: str | None) -> dict[str, str]:
    """A point's dimensions: ``run`` (what its run is called among several, or None for
    one run), target, workload and its axes but ``skip``."""
    d: dict[str, str] = {}
    if run is not None:
        d["run"] = run
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


def _point_text(res: RunReport, s: PointSummary, multi_run: bool) -> str:
    axes = " ".join(f"{k}={v}" for k, v in s.axes.items())
    head = f"{res.label}\n" if multi_run else ""
    return f"{head}{s.target.label} · {s.workload} {axes}".rstrip()


def _ci(s: PointSummary, metric: str) -> float | None:
    """Half the width of the 95 % CI of the figure over the point's repetitions (the ± of
    every table), None with fewer than two."""
    values = {"iops": s.rep_iops, "bw": s.rep_bw, "lat": s.rep_clat_mean or s.rep_lat_mean}
    reps = values.get(metric) or []
    sp = spread(reps) if len(reps) > 1 else None
    return sp.half_width if sp is not None else None


def _spread(s: PointSummary, metric: str) -> str:
    hw = _ci(s, metric)
    return "" if hw is None else f" ± {fmt_value(metric, hw)} (95 % CI, n={s.runs})"


def _runs_title(runs: list[RunReport]) -> str:
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


def sweep_chart(runs: list[RunReport], metric: str, axis: str) -> Chart:
    """A figure (IOPS, bandwidth or mean latency) against a swept option (iodepth, numjobs)."""
    multi = len(runs) > 1
    name, fig = _METRICS[metric]
    called = _run_names(runs)
    recs = [
        _Rec(res, s, _dims(res, s, called.get(id(res)), axis))
        for res in runs
        for s in res.summaries
        if axis in s.axes and s.runs > 0
    ]
    title = f"{name} vs {axis} — {_runs_title(runs)}"
    if not recs:
        return Chart(kind=f"{metric}-vs-{axis}", title=title, panels=[])
    varying = _varying(recs, _order(recs))
    series = _sweep_series(runs, recs, [d for d in varying if d != axis])
    facets = [d for d in varying if d not in series and not _determined_by(recs, series, d)] or []
    panels: dict[tuple[str | None, ...], Panel] = {}
    lines: dict[tuple[tuple[str | None, ...], tuple[str | None, ...]], Line] = {}
    legend: dict[str, str] = {}
    raw: list[float] = []
    pending: list[tuple[Mark, _Rec]] = []
    for r in recs:
        y = fig(r.s)
        if y is None or not math.isfinite(y):
            continue
        fkey = tuple(r.dims.get(d) for d in facets)
        skey = tuple(r.dims.get(d) for d in series)
        panel = panels.get(fkey)
        if panel is None:
            panel = panels[fkey] = Panel(title=_describe(r.dims, facets), xlabel=_XLABELS[axis])
        label = _describe(r.dims, series) or r.dims.get("run") or r.s.workload
        key = "\x00".join(str(k) for k in skey)
        legend.setdefault(key, label)
        line = lines.get((fkey, skey))
        if line is None:
            line = lines[(fkey, skey)] = Line(label=label, key=key, marks=[])
            panel.lines.append(line)
        mark = Mark(x=_x(axis, r.s.axes[axis]), y=y, tip="")  # the rest once it is drawn
        line.marks.append(mark)
        pending.append((mark, r))
        raw.append(y)
    for line in lines.values():
        line.marks.sort(key=lambda m: m.x)
    xs = sorted({m.x for ln in lines.values() for m in ln.marks})
    sizes = {_x(axis, r.s.axes[axis]): str(r.s.axes[axis]) for r in recs} if axis == "bs" else {}
    xscale = "log2" if (axis == "iodepth" and _pow2(xs)) or axis == "bs" else "linear"
    xticks = [(x, sizes.get(x, f"{x:g}")) for x in xs] if len(xs) <= 16 else None
    unit, ylabel, yfmt, yscale = _sweep_y(metric, raw, recs)
    for p in panels.values():
        p.xscale, p.xticks, p.ylabel, p.yunit, p.yfmt, p.yscale = (
            xscale,
            xticks,
            ylabel,
            unit,
            yfmt,
            yscale,
        )
    chart = _capped(
        split_crowded(
            Chart(
                kind=f"{metric}-vs-{axis}",
                title=title,
                panels=list(panels.values()),
                legend=list(legend.items()),
            )
        )
    )
    _complete_marks(chart, pending, metric, axis, multi)
    return chart


def _complete_marks(
    chart: Chart, pending: list[tuple[Mark, _Rec]], metric: str, axis: str, multi: bool
) -> None:
    """The hover text, link and 95 % CI of every mark the chart draws: a run of 20,000
    points makes marks of all of them, and the cap of MAX_PANELS panels drops most."""
    drawn = {id(m) for p in chart.panels for ln in p.lines for m in ln.marks}
    for mark, r in pending:
        if id(mark) not in drawn:
            continue
        mark.tip = (
            f"{_point_text(r.res, r.s, multi)}\n"
            f"{axis}={r.s.axes[axis]}: {fmt_value(metric, mark.y)}{_spread(r.s, metric)}"
        )
        mark.ref, mark.err = r.res.anchor(r.s), _ci(r.s, metric)


def _run_names(runs: list[RunReport]) -> dict[int, str]:
    """What each run is called in a chart of several (facets.run_labels), by ``id()``;
    nothing for a chart of one run."""
    if len(runs) < 2:
        return {}
    return {id(r): name for r, name in zip(runs, run_labels(runs), strict=True)}


#: the x axis of a sweep: the option, and what it counts
_XLABELS = {
    "iodepth": "iodepth (I/Os queued per job)",
    "numjobs": "numjobs (parallel jobs)",
    "bs": "bs (block or object size, k = KiB)",
}


def _x(axis: str, value: Any) -> float:
    """Where a point sits on the x axis: a block size in bytes, else the value itself."""
    return float(parse_size(str(value))) if axis == "bs" else float(value)


def _sweep_series(runs: list[RunReport], recs: list[_Rec], varying: list[str]) -> list[str]:
    """What tells a sweep chart's lines apart: the run (and target, when a run has several),
    else the block size, else the target; nothing when one line says it all."""
    if len(runs) > 1:
        return ["run"] + (
            ["target"]
            if any(len({r.s.target.label for r in recs if r.res is res}) > 1 for res in runs)
            else []
        )
    if "bs" in varying:
        return ["bs"]
    if "rw" in varying:  # along the object size: PUT and GET
        return ["rw"]
    if "target" in varying:
        return ["target"]
    return []


def _sweep_y(metric: str, raw: list[float], recs: list[_Rec]) -> tuple[float, str, str, str]:
    """A sweep chart's y axis: (unit divisor, label, tick format, scale)."""
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
    return unit, ylabel, yfmt, yscale


def _has_percentiles(s: PointSummary) -> bool:
    """Whether a measured point has completion latency percentiles to draw (repetitions of
    json outputs without histograms have none to merge)."""
    lat = point_latency(s) if s.runs else None
    return lat is not None and any(lat.percentiles.get(pct_key(p)) for p in PERCENTILES)


def percentile_chart(runs: list[RunReport]) -> Chart:
    """Completion latency at p50 … p99.99, a line per point; panels group points so that
    none holds more than ``MAX_SERIES`` lines."""
    multi = len(runs) > 1
    pcts = [pct_key(p) for p in PERCENTILES]
    called = _run_names(runs)
    recs = []
    for res in runs:
        for s in res.summaries:
            if _has_percentiles(s):
                recs.append(_Rec(res, s, _dims(res, s, called.get(id(res)), None)))
    title = f"Completion latency percentiles — {_runs_title(runs)}"
    if not recs:
        return Chart(kind="lat-percentiles", title=title, panels=[])
    order = _order(recs)
    varying = _varying(recs, order)
    # points are grouped by the outer dimensions; a panel's lines differ in the inner ones.
    # Inner dimensions move out (the plan's first axis first, the run last) until no panel
    # has too many lines, or one is left (its values are then split over panels).
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
    while len(inner) > 1 and max(len(v) for v in grouped.values()) > MAX_SERIES:
        outer.append(inner.pop(0))
        outer.sort(key=varying.index)
        grouped = groups()
    panels = []
    legend: dict[str, str] = {}
    pending: list[tuple[list[Mark], _Rec]] = []
    for items in grouped.values():
        panel = Panel(
            title=_describe(items[0].dims, outer),
            xlabel="percentile",
            xscale="category",
            xticks=[(i, f"p{k}") for i, k in enumerate(pcts)],
            yscale="log",
            ylabel="clat",
        )
        # a line is named by what differs between the panel's lines (not by a run that
        # every line of the panel is of)
        shown = [d for d in inner if len({r.dims.get(d) for r in items}) > 1]
        for r in items:
            lat = point_latency(r.s)
            assert lat is not None
            label = _describe(r.dims, shown) or _describe(r.dims, inner) or r.s.workload
            key = label
            legend.setdefault(key, label)
            marks = []
            for i, k in enumerate(pcts):
                v = lat.percentiles.get(k)
                if v is None or v <= 0:
                    continue
                marks.append(Mark(x=float(i), y=v, tip=f"clat p{k}"))  # the rest once drawn
            panel.lines.append(Line(label=label, key=key, marks=marks))
            pending.append((marks, r))
        panels.append(panel)
    for p in panels:  # a unit per panel: tails of different points differ by decades
        p.yunit, u = _lat_unit(m.y for ln in p.lines for m in ln.marks)
        p.ylabel = f"clat ({u})"
    chart = Chart(kind="lat-percentiles", title=title, panels=panels, legend=list(legend.items()))
    chart = _capped(split_crowded(chart))
    drawn = {id(m) for p in chart.panels for ln in p.lines for m in ln.marks}
    for marks, r in pending:  # hover texts and links of the marks drawn (most are capped)
        for m in marks:
            if id(m) in drawn:
                m.tip = f"{_point_text(r.res, r.s, multi)}\n{m.tip}: {fmt_ns(m.y)}"
                m.ref = r.res.anchor(r.s)
    return chart


def _capped(chart: Chart) -> Chart:
    if len(chart.panels) > MAX_PANELS:
        rest = chart.panels[MAX_PANELS:]
        chart.panels = chart.panels[:MAX_PANELS]
        chart.note = (
            f"{len(rest)} more panel{'s' if len(rest) > 1 else ''} not drawn "
            f"({', '.join(p.title for p in rest[:6])}{', …' if len(rest) > 6 else ''}); "
            "their values are in `storbench show` and `storbench export` (a big run's report "
            "table holds only its first points)"
        )
    return chart


#: Most bars of a point-by-point comparison panel; beyond, only the averages are drawn.
MAX_COMPARE_BARS = 80


def comparisons(runs: list[RunReport]) -> list[Any]:
    """Each later run against the first (the report model's comparison), in run order."""
    return compare_runs(runs, names=lambda r: r.label).comparisons


def _pct_bar(label: str, pct: float, tip: str, ref: str | None = None) -> Mark:
    return Mark(x=0.0, y=pct, tip=tip, ref=ref, text=f"{pct:+.1f}%", label=label)


def compare_chart(runs: list[RunReport], cmps: list[Any] | None = None) -> Chart:
    """Seed 004's relative comparisons: for every later run against the first, the % change
    of IOPS point by point (bars labelled with the change; a pair not comparable is left
    out: its figures measured different things), and the geometric means of the IOPS and
    latency ratios per iodepth and per block size, as changes (0.87× is −13 %)."""
    base = runs[0]
    panels: list[Panel] = []
    notes: list[str] = []
    called = _run_names(runs)
    for other, cmp in zip(runs[1:], cmps or comparisons(runs), strict=True):
        vs = f"{called[id(other)]} vs {called[id(base)]}"  # titles: what tells them apart
        said = f"{other.label} vs {base.label}"  # hover texts: the runs in full
        bars = []
        for m in cmp.matched:
            pct = m.iops_change_pct
            if pct is None or not math.isfinite(pct) or not m.comparable:
                continue
            lat = m.mean_lat_change_pct
            tip = (
                f"{m.label}\n{said}\nIOPS {fmt_iops(m.base.total_iops)} -> "
                f"{fmt_iops(m.other.total_iops)} ({pct:+.1f}%)"
                + (f"\nlatency ({m.lat_metric} mean) {lat:+.1f}%" if lat is not None else "")
                + f"\n{m.verdict}"
            )
            bars.append(_pct_bar(m.label, pct, tip, other.anchor(m.other)))
        if len(bars) > MAX_COMPARE_BARS:
            notes.append(
                f"{vs}: {len(bars)} matched points, too many for one bar each; "
                "geometric means shown (every point is in the comparison table)"
            )
        elif bars:
            panels.append(Panel(title=f"IOPS change, point by point: {vs}", bars=bars))
        for what, groups in (("iodepth", cmp.by_iodepth), ("bs", cmp.by_bs)):
            if len(groups) < 2:
                continue
            for attr, name in (("iops", "IOPS"), ("lat", "Latency")):
                figs = {v: getattr(g, attr) for v, g in groups.items()}
                gbars = [
                    _pct_bar(
                        f"{what}={value}",
                        r.change_pct,
                        f"{said}\n{what}={value}: {name} {r.change_pct:+.1f}% "
                        f"({r.geomean:.3g}x, geometric mean of {r.points} points)"
                        + ("\n(over block sizes)" if what == "iodepth" else ""),
                    )
                    for value, r in figs.items()
                    if r.geomean is not None and r.change_pct is not None
                ]
                name = f"{name} change (geometric mean of ratios)"
                if gbars:
                    panels.append(Panel(title=f"{name} by {what}: {vs}", bars=gbars))
    for p in panels:
        p.xlabel = "IOPS change (%)" if "point by point" in p.title else "change (%)"
        p.yfmt = "pct"
    return Chart(
        kind="compare",
        title=f"Relative comparison — {_runs_title(runs)}",
        panels=panels,
        note="; ".join(notes) or None,
    )


def build_chart(kind: str, runs: list[RunReport]) -> Chart:
    """The chart of ``kind`` for ``runs``; a UserError when the runs cannot give it."""
    if kind not in KINDS:
        raise UserError(f"unknown chart kind {kind!r}", fix=f"use one of: {', '.join(KINDS)}")
    if kind == "compare":
        if len(runs) < 2:
            raise UserError(
                "--kind compare needs two runs or more (the first is the base)",
                fix="storbench chart BASE_RUN OTHER_RUN --kind compare -o cmp.png",
            )
        cmps = comparisons(runs)
        chart = compare_chart(runs, cmps)
        if not any(p.bars for p in chart.panels):
            matched = [m for c in cmps for m in c.matched]
            if matched:  # every matched pair measured different things: nothing to draw
                why = next((m.reason for m in matched if m.reason), "")
                raise UserError(
                    f"{_runs_title(runs)}: none of the {len(matched)} matched points is "
                    f"comparable ({why})",
                    fix="`storbench compare` lists each pair and why; compare runs that "
                    "measured the same thing (the findings and settings it names)",
                )
            raise UserError(
                f"{_runs_title(runs)}: no point of the later run(s) matches a point of the "
                "first (same workload parameters)",
                fix="compare runs of the same plan (or plans with the same axes)",
            )
        return chart
    if kind == "capacity":
        if not has_searches(runs):
            raise UserError(
                f"{_runs_title(runs)} has no capacity search to draw: none of its points is a "
                "step of a search for the load that meets a latency target (`slo:`)",
                fix="draw a run of the capacity suite (`storbench run capacity -t TARGET`) or "
                "of a plan with `slo: {latency: 2ms, percentile: 99}`",
            )
        return _capped(capacity_chart(runs))
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


def available_kinds(runs: list[RunReport]) -> list[str]:
    """The kinds that have something to draw for these runs."""
    axes = {k for r in runs for s in r.summaries if s.runs for k in s.axes}
    kinds = []
    objects = any(s.target.kind == "s3" for r in runs for s in r.summaries)
    for axis in ("iodepth", "numjobs", "bs"):
        if axis in axes and (axis != "bs" or objects):  # bs: an s3 run's object sizes
            kinds += [f"{m}-vs-{axis}" for m in ("iops", "bw", "lat")]
    if any(_has_percentiles(s) for r in runs for s in r.summaries):
        kinds.append("lat-percentiles")
    if len(runs) > 1:
        kinds.append("compare")
    if has_searches(runs):
        kinds.append("capacity")
    return kinds
