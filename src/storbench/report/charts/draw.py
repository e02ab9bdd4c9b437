"""Drawing charts with matplotlib (Agg) into PNG or SVG, and the SVG's hover titles and
point references for the HTML report.

matplotlib is imported inside the functions that draw: importing it costs a noticeable part
of a second, and most commands (run, show, export) never draw. No cycle hides there."""

from __future__ import annotations

import gc
import html
import io
import math
import multiprocessing
import os
import re
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from storbench.model.errors import UserError
from storbench.report.charts.model import MAX_SERIES, Chart, Line, Mark, Panel
from storbench.report.safe import one_line, visible

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

    bars = any(p.bars for p in chart.panels)
    labels = [_mpl_text(label) for _, label in chart.legend]
    suptitle, note = not page, chart.note if not page else None
    top = 0.5 if suptitle else 0.12
    note_h = 0.3 if note else 0.0
    layout = _bar_layout if bars else _grid_layout
    width, total, rects, legend_rows, lcols = layout(chart, labels, top, note_h)
    fig = Figure(figsize=(width, total))
    axs = [fig.add_axes(rect) for rect in rects]
    colors = _colors(MAX_SERIES if chart.panel_legends else len(chart.legend))
    color_of = {k: colors[i] for i, (k, _) in enumerate(chart.legend) if i < len(colors)}
    handles: dict[str, Any] = {}
    drawn: dict[int, Line] = {}
    gid = 0
    for ax, panel, rect in zip(axs, chart.panels, rects, strict=True):
        ax.set_title(_mpl_text(_fit(panel.title, rect[2] * fig.get_figwidth())), loc="left")
        if panel.bars:
            gid = _draw_bars(ax, panel, gid)
            continue
        for line in panel.lines:
            color = color_of.get(line.key) if line.color is None else colors[line.color]
            h = _draw_line(ax, panel, line, color, gid)
            drawn[gid] = line
            gid += 1
            handles.setdefault(line.key, h)
        _axes_style(ax, panel)
        _draw_extras(ax, panel, rect[2] * fig.get_figwidth())
        if chart.panel_legends and panel.lines:
            ax.legend(fontsize=7.5, frameon=True, framealpha=0.85, edgecolor="none")
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


#: Lines with a look of their own (Line.style): markers alone (matplotlib's plot keywords).
#: The capacity chart's steps: green met the target, red missed it (a cross: saturated),
#: a green star the capacity found, a grey square the closed-loop probe, a small hollow
#: diamond the rate a step achieved.
STYLES: dict[str, dict[str, Any]] = {
    "meets": {"marker": "o", "color": "#2a9d5b", "ms": 6},
    "capacity": {"marker": "*", "color": "#2a9d5b", "ms": 15, "mec": "#1b4332", "mew": 0.8},
    "misses": {"marker": "o", "color": "#d1495b", "ms": 6, "mfc": "none", "mew": 1.6},
    "saturated": {"marker": "X", "color": "#d1495b", "ms": 8},
    "probe": {"marker": "s", "color": "#6c757d", "ms": 7},
    "achieved": {"marker": "d", "color": "#8d99ae", "ms": 5, "mfc": "none", "mew": 1.0},
    "regression": {"marker": "v", "color": "#d1495b", "ms": 10, "mfc": "none", "mew": 1.6},
    "improvement": {"marker": "^", "color": "#2a9d5b", "ms": 10, "mfc": "none", "mew": 1.6},
}
#: the target (a horizontal rule) and the capacity (a vertical one)
RULE_COLORS = {"y": "#343a40", "x": "#1b4332"}


def _draw_line(ax: Any, panel: Panel, line: Line, color: Any, gid: int) -> Any:
    """One line (or a line's markers, in its own style) and its 95 % CIs; its handle."""
    xs = [m.x for m in line.marks]
    ys = [m.y / panel.yunit for m in line.marks]
    look: dict[str, Any] = {"marker": "o", "color": color}
    if line.style is not None:
        look = {**STYLES[line.style], "linestyle": "none", "zorder": 4}
    (h,) = ax.plot(xs, ys, label=_mpl_text(line.label), gid=f"sbl{gid}", **look)
    errs = [(m.err or 0.0) / panel.yunit for m in line.marks]
    if any(errs):  # repetitions: the 95 % CI of each point
        ax.errorbar(xs, ys, yerr=errs, fmt="none", ecolor=h.get_color(), capsize=3)
    tied = [(m.base, m.x, y) for m, y in zip(line.marks, ys, strict=True) if m.base is not None]
    if tied:  # each mark tied to the x it stands beside (a step's offer)
        ax.hlines(
            [y for *_, y in tied],
            [a for a, *_ in tied],
            [b for _, b, _ in tied],
            color=h.get_color(),
            lw=0.8,
            zorder=3,
        )
    return h


def _draw_extras(ax: Any, panel: Panel, width_in: float) -> None:
    """What a panel has beside its lines: the curve joining their marks, its reference
    lines (labelled; a vertical one's label at its top, on the side away from the note),
    its x axis from 0 with separated thousands, its note (top left)."""
    import textwrap

    from matplotlib.ticker import FuncFormatter, MaxNLocator
    from matplotlib.transforms import blended_transform_factory as blend

    if panel.join:
        pts = sorted(
            (m.x, m.y / panel.yunit) for ln in panel.lines if not ln.aside for m in ln.marks
        )
        ax.plot([x for x, _ in pts], [y for _, y in pts], color="#adb5bd", lw=1.0, zorder=2)
    if panel.xfmt == "plain":
        ax.xaxis.set_major_locator(MaxNLocator(7))
        ax.xaxis.set_major_formatter(FuncFormatter(_tick))
        ax.set_xlim(left=0, right=ax.get_xlim()[1] * 1.04)
    for rule in panel.rules:
        color, label = RULE_COLORS[rule.axis], _mpl_text(rule.label)
        if rule.axis == "y":
            y = rule.value / panel.yunit
            ax.axhline(y, color=color, ls="--", lw=1.2, zorder=3)
            _headroom(ax, y)
            ax.text(
                0.01,
                y,
                label,
                transform=blend(ax.transAxes, ax.transData),
                va="bottom",
                fontsize=8,
                color=color,
            )
        else:
            ax.axvline(rule.value, color=color, ls=":", lw=1.4, zorder=3)
            x0, x1 = ax.get_xlim()
            right = (rule.value - x0) / (x1 - x0) > 0.55  # clear of the note (top left)
            ax.annotate(
                label,
                (rule.value, 0.97),
                xycoords=blend(ax.transData, ax.transAxes),
                xytext=(-3 if right else 3, 0),
                textcoords="offset points",
                rotation=90,
                ha="right" if right else "left",
                va="top",
                fontsize=8,
                color=color,
            )
    if panel.note:
        width = max(24, int(width_in * 0.5 / 0.058))
        text = "\n".join(textwrap.fill(_mpl_text(n), width) for n in panel.note.split("\n"))
        ax.text(
            0.02,
            0.97,
            text,
            transform=ax.transAxes,
            va="top",
            fontsize=7.5,
            color="#555",
            zorder=5,
            bbox={"facecolor": "white", "alpha": 0.85, "edgecolor": "none"},
        )


def _headroom(ax: Any, y: float) -> None:
    """Room above a horizontal rule at ``y`` (its label, the panel's note): the rule at most
    60 % of the way up."""
    lo, hi = ax.get_ylim()
    if ax.get_yscale() == "log":
        top = lo * (y / lo) ** (1 / 0.6) if y > lo else hi
    else:
        top = lo + (y - lo) / 0.6
    ax.set_ylim(lo, max(hi, top))


Rect = tuple[float, float, float, float]  # left, bottom, width, height: fractions of the figure


def _bar_layout(
    chart: Chart, labels: list[str], top: float, note_h: float
) -> tuple[float, float, list[Rect], int, int]:
    """Bar panels stacked, each as tall as its bars: (width, height in inches, each panel's
    rectangle, legend rows, legend columns)."""
    n = len(chart.panels)
    cats = max((len(b.label) for p in chart.panels for b in p.bars), default=4)
    left = min(0.25 + _CHAR_IN * cats, 4.5)
    width = left + 6.0
    heights = [0.24 * len(p.bars) + 0.35 for p in chart.panels]
    gap = 0.85  # x tick labels, x label, next title
    total = top + sum(heights) + gap * n + note_h + 0.1
    y = total - top
    rects = []
    for h in heights:
        y -= 0.3 + h  # title
        rects.append((left / width, y / total, 5.4 / width, h / total))
        y -= gap - 0.3
    return width, total, rects, 0, 1


def _grid_layout(
    chart: Chart, labels: list[str], top: float, note_h: float
) -> tuple[float, float, list[Rect], int, int]:
    """Line panels in a grid of up to 3 columns, the legend below: (width, height in inches,
    each panel's rectangle, legend rows, legend columns)."""
    n = len(chart.panels)
    ncols = 1 if n == 1 else 2 if n <= 4 else 3
    nrows = math.ceil(n / ncols)
    pw, ph = (7.2, 3.9) if n == 1 else (5.4, 3.3) if ncols == 2 else (4.7, 3.1)
    width = pw * ncols
    show_legend = bool(labels) and (len(labels) > 1 or n > 1) and not chart.panel_legends
    per = max((len(t) for t in labels), default=1) * _CHAR_IN + 0.55
    lcols = max(1, min(len(labels), int(width // per), 6)) if show_legend else 1
    legend_rows = math.ceil(len(labels) / lcols) if show_legend else 0
    legend_h = 0.22 * legend_rows + (0.15 if legend_rows else 0)
    total = top + ph * nrows + legend_h + note_h + 0.05
    titled = any(p.title for p in chart.panels)
    # inside each cell: tick labels and axis label left and below, the title above
    ml, mr, mt, mb = 0.8, 0.2, (0.35 if titled else 0.15), 0.6
    rects = []
    for i in range(n):
        r, c = divmod(i, ncols)
        x0 = c * pw + ml
        y0 = total - top - (r + 1) * ph + mb
        rects.append((x0 / width, y0 / total, (pw - ml - mr) / width, (ph - mt - mb) / total))
    return width, total, rects, legend_rows, lcols


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
    """A tick label without exponents: 1,250,000; 4,096; 12.5; 0.25; 0.00002."""
    if abs(v) >= 1000:
        return f"{v:,.0f}"
    if 0 < abs(v) < 1e-3:  # :g would write 2e-05
        return f"{v:.12f}".rstrip("0")
    return f"{v:,.4g}"


def _axes_style(ax: Any, panel: Panel) -> None:
    from matplotlib.ticker import (
        EngFormatter,
        FuncFormatter,
        LogLocator,
        MaxNLocator,
        NullLocator,
    )

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
        # 1, 2 and 5 of each decade: a range within one decade still gets several ticks;
        # over more than three decades that many would crowd: the decades alone
        ys = [m.y for ln in panel.lines for m in ln.marks if m.y > 0]
        wide = bool(ys) and max(ys) / min(ys) > 1000
        subs = (1.0,) if wide else (1.0, 2.0, 5.0)
        ax.yaxis.set_major_locator(LogLocator(base=10, subs=subs))
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
    panels = sum(len(c.panels) for c, _ in items)
    return in_workers(_render_one, items, panels, size=lambda item: len(item[0].panels))


def in_workers(
    fn: Callable[[Any], str],
    items: list[Any],
    panels: int,
    size: Callable[[Any], int] = lambda _: 1,
) -> list[str]:
    """``fn`` (a module-level function: it is called in the workers) of each item, in the
    items' order: in worker processes (fork) when they draw ``panels`` panels or more
    (``PARALLEL_PANELS``) and the machine has more than one CPU; the biggest (``size``)
    first, so that no worker is left with a big one at the end."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    if (cpus or 1) < 2 or len(items) < 2 or panels < PARALLEL_PANELS:
        return [fn(item) for item in items]
    import matplotlib.figure  # noqa: F401  (imported once, before the workers fork)

    workers = min(len(items), cpus or 1, 8)
    # the parent's objects (a big run's summaries: millions) are frozen out of the workers'
    # garbage collections, which would otherwise walk them all, copying every page they touch
    gc.freeze()
    try:
        with ProcessPoolExecutor(
            workers, mp_context=multiprocessing.get_context("fork"), initializer=gc.enable
        ) as pool:
            order = sorted(range(len(items)), key=lambda i: -size(items[i]))
            done = dict(zip(order, pool.map(fn, [items[i] for i in order]), strict=True))
    finally:
        gc.unfreeze()
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
