"""Drawing a point's time chart (charts/timechart.py) with matplotlib into an inline SVG for
the HTML report: IOPS per direction over time (with the min-max band of each drawn point
when downsampled), p99 latency below, ramp and steady-state window shaded, the run's events
as labelled markers.

Hover: the chart is cut into slices of time (``sbt<N>`` groups: transparent rectangles over
both panels) and each marker is an ``sbe<N>`` group; each gets its ``<title>`` (escaped)
and the ``pt`` class the report's script shows titles of. The point's name is drawn as the
chart's heading by matplotlib (which escapes it; ``$`` is escaped against mathtext)."""

from __future__ import annotations

import io
import math
import re
from typing import Any

from storbench.report.charts.draw import (
    _STYLE,
    _TAG,
    _esc,
    _fit,
    _mpl_text,
    _prefix_ids,
    _tick,
    in_workers,
)
from storbench.report.charts.timechart import TimeChart

COLORS = {"read": "#1f77b4", "write": "#ff7f0e", "trim": "#2ca02c"}
RAMP_COLOR = "#8c8c8c"
STEADY_COLOR = "#2a9d5b"
EVENT_COLOR = "#b3261e"

#: Layout in inches: width, panel heights, margins.
WIDTH = 7.6
IOPS_H, P99_H, GAP = 2.3, 1.45, 0.3
LEFT, RIGHT = 0.85, 0.25


def _x_unit(span_ms: float) -> tuple[float, str]:
    if span_ms <= 180_000:
        return 1000.0, "s"
    if span_ms <= 3 * 3_600_000:
        return 60_000.0, "min"
    return 3_600_000.0, "h"


def _lat_unit(tc: TimeChart) -> tuple[float, str]:
    top = max((b.p99_ns or 0.0 for ln in tc.lines for b in ln.buckets), default=0.0)
    if top >= 2e6:
        return 1e6, "ms"
    if top >= 2e3:
        return 1e3, "µs"
    return 1.0, "ns"


#: Legend entries in a row.
LEGEND_COLS = 6


def _layout(tc: TimeChart, entries: int) -> tuple[float, float, float, float, float]:
    """(total height, IOPS panel bottom, p99 panel bottom, legend bottom, top of the
    IOPS panel), in inches from the bottom."""
    head = 0.42 + (0.16 * min(3, len(tc.markers)) if tc.markers else 0.0)
    legend = 0.2 * math.ceil(entries / LEGEND_COLS)
    note, axis = 0.25, 0.62  # x tick labels and the axis label
    bottom = note + legend + axis
    p99 = P99_H + GAP if tc.has_p99 else 0.0
    total = head + IOPS_H + p99 + bottom
    return total, bottom + p99, bottom, note, bottom + p99 + IOPS_H


def _draw_time(tc: TimeChart) -> Any:
    from matplotlib.figure import Figure

    entries = len(tc.lines) + (tc.per > 1) + bool(tc.ramps) + bool(tc.steady) + bool(tc.markers)
    total, iops_y, p99_y, legend_y, top = _layout(tc, entries)
    fig = Figure(figsize=(WIDTH, total))
    w = (WIDTH - LEFT - RIGHT) / WIDTH
    ax1 = fig.add_axes((LEFT / WIDTH, iops_y / total, w, IOPS_H / total))
    ax2 = fig.add_axes((LEFT / WIDTH, p99_y / total, w, P99_H / total), sharex=ax1)
    ax2.set_visible(tc.has_p99)
    xu, xname = _x_unit(tc.span_ms)
    lu, lname = _lat_unit(tc)
    handles = _draw_lines(tc, ax1, ax2, xu, lu)
    handles += _draw_spans(tc, ax1, ax2, xu)
    for ax in (ax1, ax2):
        ax.set_xlim(0, tc.span_ms / xu)
        ax.set_ylim(bottom=0)
        ax.yaxis.set_major_formatter(_tick_formatter())
    ax1.set_ylabel("IOPS" + (" (sum of hosts)" if tc.hosts else ""))
    ax2.set_ylabel(f"p99 ({lname})" + (" worst host" if tc.hosts else ""))
    (ax2 if tc.has_p99 else ax1).set_xlabel(f"time since the point's start ({xname})")
    if tc.has_p99:
        ax1.tick_params(labelbottom=False)
    fig.text(
        0.01, 1 - 0.08 / total, _mpl_text(_fit(tc.title, WIDTH * 1.1)), va="top", weight="bold"
    )
    fig.legend(
        [h for h, _ in handles],
        [label for _, label in handles],
        loc="lower center",
        bbox_to_anchor=(0.5, legend_y / total),
        ncols=min(len(handles), LEGEND_COLS),
        fontsize=8,
        handlelength=1.6,
        columnspacing=1.0,
    )
    fig.text(0.01, 0.06 / total, _mpl_text(_fit(tc.note, WIDTH * 1.45)), fontsize=7, color="#444")
    _draw_markers(tc, fig, ax1, ax2, xu)
    _draw_slices(tc, fig, ax1, xu, p99_y / total, top / total)
    return fig


def _tick_formatter() -> Any:
    from matplotlib.ticker import FuncFormatter

    return FuncFormatter(_tick)


def _draw_lines(tc: TimeChart, ax1: Any, ax2: Any, xu: float, lu: float) -> list[tuple[Any, str]]:
    from matplotlib.patches import Patch

    handles: list[tuple[Any, str]] = []
    for line in tc.lines:
        color = COLORS.get(line.direction, "#555")
        xs = [b.mid_ms / xu for b in line.buckets]
        dot = "o" if len(xs) <= 30 else None  # dots on a short series only: each is a <use>
        if tc.per > 1:
            ax1.fill_between(
                xs,
                [b.iops_min for b in line.buckets],
                [b.iops_max for b in line.buckets],
                color=color,
                alpha=0.25,
                linewidth=0,
            )
        (h,) = ax1.plot(xs, [b.iops for b in line.buckets], color=color, lw=1.2, marker=dot)
        p99 = [b.p99_ns / lu if b.p99_ns is not None else math.nan for b in line.buckets]
        ax2.plot(xs, p99, color=color, lw=1.1, marker=dot, ms=3.5)
        handles.append((h, line.direction + (" (sum of hosts)" if tc.hosts else "")))
    if tc.per > 1:
        handles.append((Patch(color="#777", alpha=0.3, lw=0), "IOPS min-max"))
    return handles


def _draw_spans(tc: TimeChart, ax1: Any, ax2: Any, xu: float) -> list[tuple[Any, str]]:
    from matplotlib.patches import Patch

    handles: list[tuple[Any, str]] = []
    for k, (a, b) in enumerate(tc.ramps):
        for j, ax in enumerate((ax1, ax2)):
            ax.axvspan(a / xu, b / xu, color=RAMP_COLOR, alpha=0.2, lw=0, gid=f"sbramp{k}-{j}")
    if tc.ramps:
        handles.append((Patch(color=RAMP_COLOR, alpha=0.3, lw=0), "ramp (not measured)"))
    if tc.steady is not None:
        a, b = tc.steady
        for j, ax in enumerate((ax1, ax2)):
            ax.axvspan(a / xu, b / xu, color=STEADY_COLOR, alpha=0.12, lw=0, gid=f"sbsteady-{j}")
        handles.append((Patch(color=STEADY_COLOR, alpha=0.25, lw=0), "steady-state window"))
    if tc.markers:
        from matplotlib.lines import Line2D

        handles.append((Line2D([], [], color=EVENT_COLOR, ls=":", lw=1), "event"))
    return handles


def _draw_markers(tc: TimeChart, fig: Any, ax1: Any, ax2: Any, xu: float) -> None:
    """A dotted line through both panels at each event, a triangle above the IOPS panel
    (hovered: the whole message) and a short label, staggered in up to three rows."""
    from matplotlib.lines import Line2D

    last = [-math.inf] * 3
    room = tc.span_ms / xu * 0.22  # a label's width, roughly, in x units
    for i, m in enumerate(tc.markers):
        x = m.x_ms / xu
        for ax in (ax1, ax2):
            ax.axvline(x, color=EVENT_COLOR, ls=":", lw=1)
        fig.add_artist(
            Line2D(
                [x],
                [1.0],
                transform=ax1.get_xaxis_transform(),
                marker="v",
                ms=8,
                color=EVENT_COLOR,
                clip_on=False,
                zorder=12,
                gid=f"sbe{i}",
            )
        )
        row = next((r for r in range(3) if x - last[r] >= room), None)
        if row is None:
            continue
        last[row] = x
        ax1.text(
            x,
            1.04 + 0.07 * row,
            _mpl_text(m.label),
            transform=ax1.get_xaxis_transform(),
            fontsize=7,
            color=EVENT_COLOR,
            clip_on=False,
        )


def _draw_slices(tc: TimeChart, fig: Any, ax1: Any, xu: float, y0: float, y1: float) -> None:
    """Transparent rectangles over both panels, one per hover slice (figure-level, over
    the axes; the markers' triangles over them)."""
    from matplotlib.patches import Rectangle
    from matplotlib.transforms import blended_transform_factory

    tr = blended_transform_factory(ax1.transData, fig.transFigure)
    for i, s in enumerate(tc.slices):
        fig.add_artist(
            Rectangle(
                (s.start_ms / xu, y0),
                (s.end_ms - s.start_ms) / xu,
                y1 - y0,
                transform=tr,
                facecolor=(0, 0, 0, 0),
                edgecolor="none",
                zorder=10,
                gid=f"sbt{i}",
            )
        )


def render_time_svg(tc: TimeChart, prefix: str) -> str:
    """The chart as an ``<svg>`` element for an HTML page (ids prefixed with ``prefix``,
    unique in the page; hover titles on every slice and marker)."""
    import matplotlib

    with matplotlib.rc_context({**_STYLE, "svg.fonttype": "none", "svg.hashsalt": prefix}):
        fig = _draw_time(tc)
        buf = io.StringIO()
        fig.savefig(buf, format="svg", metadata={"Date": None})
    return _annotate_time(buf.getvalue(), tc, prefix)


def _render_one(item: tuple[TimeChart, str]) -> str:
    return render_time_svg(*item)


def render_time_svgs(items: list[tuple[TimeChart, str]]) -> list[str]:
    """:func:`render_time_svg` of each (chart, prefix), in worker processes when there are
    several to draw and more than one CPU (each chart is about two panels' work)."""
    return in_workers(_render_one, items, 2 * len(items))


_GID = re.compile(r'<g id="(sb[te])(\d+)">')


def _annotate_time(svg: str, tc: TimeChart, prefix: str) -> str:
    def group(m: re.Match[str]) -> str:
        kind, num = m.group(1), int(m.group(2))
        items = tc.slices if kind == "sbt" else tc.markers
        if num >= len(items):
            return m.group(0)
        cls = "ts" if kind == "sbt" else "ev"
        return f'<g id="{kind}{num}" class="pt {cls}"><title>{_esc(items[num].tip)}</title>'

    svg = _GID.sub(group, svg)
    svg = svg[svg.find("<svg") :]
    svg = re.sub(r"<metadata>.*?</metadata>", "", svg, count=1, flags=re.S)
    title = f"{tc.title}: IOPS{' and p99 latency' if tc.has_p99 else ''} over time"
    end = svg.find(">") + 1
    svg = svg[:end] + f"\n <title>{_esc(title)}</title>" + svg[end:]
    svg = _TAG.sub(lambda m: _prefix_ids(m.group(0), prefix), svg)
    # the point's name (plan text) is in the <title> above, escaped as text; the attribute
    # says only what the chart is
    what = "time chart: IOPS" + (" and p99 latency" if tc.has_p99 else "") + " over time"
    return svg.replace("<svg ", f'<svg class="timechart" role="img" aria-label="{what}" ', 1)
