"""A point's steady-state rounds as SNIA PTS's report draws them: the tracking variable of
each round, the measurement window shaded, the window's mean with its ±10 % and ±20 % bands,
and the least-squares line across the window; as an inline SVG for the HTML report (each
round a ``pt`` group with its ``<title>``: round, value, in the window or not)."""

from __future__ import annotations

import io
import re

from storbench.analysis.steady import Verdict
from storbench.plan.steadykeys import METRIC_WORDS, SteadyState
from storbench.report.charts.draw import _STYLE, _TAG, _esc, _prefix_ids

WINDOW_COLOR = "#2a9d5b"
LINE_COLOR = "#1f77b4"
_GID = re.compile(r'<g id="sbr(\d+)">')


def _scale(metric: str, values: list[float]) -> tuple[float, str]:
    """Divisor and unit label of the y axis."""
    if metric == "bw":
        return 1024 * 1024, "MiB/s"
    if metric == "lat":
        top = max(values, default=0.0)
        return (1e6, "ms") if top >= 2e6 else (1e3, "µs") if top >= 2e3 else (1.0, "ns")
    return 1.0, "IOPS"


def rounds_svg(v: Verdict, cfg: SteadyState, prefix: str) -> str:
    """The rounds chart of one point (``prefix`` makes its ids unique in the page)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    div, unit = _scale(cfg.metric, v.values)
    ys = [y / div for y in v.values]
    xs = list(range(1, len(ys) + 1))
    mean = v.mean / div
    with matplotlib.rc_context({**_STYLE, "svg.fonttype": "none", "svg.hashsalt": prefix}):
        fig, ax = plt.subplots(figsize=(7.6, 2.6))
        ax.axvspan(v.first - 0.5, v.last + 0.5, color=WINDOW_COLOR, alpha=0.12, lw=0)
        for band, style in ((0.1, "--"), (0.2, ":")):
            for sign in (-1, 1):
                ax.axhline(mean * (1 + sign * band), color=WINDOW_COLOR, ls=style, lw=0.8)
        ax.axhline(mean, color=WINDOW_COLOR, lw=1.0)
        wx = list(range(v.first, v.last + 1))
        mid = (v.first + v.last) / 2
        ax.plot(wx, [mean + v.slope / div * (x - mid) for x in wx], color="#555", lw=1.0)
        ax.plot(xs, ys, color=LINE_COLOR, lw=1.2)
        for n, (x, y) in enumerate(zip(xs, ys, strict=True)):
            (dot,) = ax.plot([x], [y], "o", color=LINE_COLOR, ms=4)
            dot.set_gid(f"sbr{n}")
        ax.set_xlabel("round")
        ax.set_ylabel(f"{METRIC_WORDS[cfg.metric].split(' (')[0]} ({unit})")
        ax.set_xticks(xs if len(xs) <= 30 else xs[:: max(1, len(xs) // 15)])
        ax.set_ylim(bottom=0)
        state = "steady state" if v.reached else "steady state NOT reached"
        ax.set_title(
            f"{state}: window rounds {v.first}-{v.last}; range {v.range_pct:.1f} % "
            f"(≤ {cfg.range_pct:g}), slope {v.slope_pct:.1f} % (≤ {cfg.slope_pct:g})",
            fontsize=9,
        )
        fig.tight_layout()
        buf = io.StringIO()
        fig.savefig(buf, format="svg", metadata={"Date": None})
        plt.close(fig)
    return _annotate(buf.getvalue(), v, cfg, prefix)


def _annotate(svg: str, v: Verdict, cfg: SteadyState, prefix: str) -> str:
    def group(m: re.Match[str]) -> str:
        n = int(m.group(1))
        inside = " (in the window)" if v.first <= n + 1 <= v.last else ""
        tip = f"round {n + 1}: {cfg.metric} {v.values[n]:,.1f}{inside}"
        return f'<g id="sbr{n}" class="pt"><title>{_esc(tip)}</title>'

    svg = _GID.sub(group, svg)
    svg = svg[svg.find("<svg") :]
    svg = re.sub(r"<metadata>.*?</metadata>", "", svg, count=1, flags=re.S)
    svg = _TAG.sub(lambda m: _prefix_ids(m.group(0), prefix), svg)
    label = "steady-state rounds"
    return svg.replace("<svg ", f'<svg class="rounds" role="img" aria-label="{label}" ', 1)
