"""The HTML report's time charts: each repetition's series drawn in its point's details
(charts/timechart.py, charts/timedraw.py), up to a limit per report."""

from __future__ import annotations

from typing import Any

from markupsafe import Markup

from storbench.analysis.steady import verdict_of
from storbench.plan.steadykeys import SteadyState
from storbench.report.charts.rounds import rounds_svg
from storbench.report.charts.timechart import MARKER_KINDS, TimeChart, time_chart
from storbench.report.charts.timedraw import render_time_svgs
from storbench.report.model import RunReport

#: Most time charts one report draws (an SVG of about 40 KB for a minute at 1 s, 140 KB for
#: 6 hours; drawn in 0.1 to 1 s each); the points after them say where their series is.
MAX_TIME_CHARTS = 200


def time_charts(runs: list[RunReport], run_ctx: list[dict[str, Any]]) -> int:
    """Give each repetition with a time series its time chart (charts/timechart.py), the
    first MAX_TIME_CHARTS of the report; the number of those left out."""
    todo: list[tuple[dict[str, Any], TimeChart, str]] = []
    left_out = 0
    for res, r in zip(runs, run_ctx, strict=True):
        if res.records is None or res.series is None:
            continue
        counts = res.records.interval_counts()
        events = [e for e in res.events if e.kind in MARKER_KINDS]
        for p in r["details"]:
            for m in p["reps"]:
                row = m["row"]
                if not counts.get(row.point_idx):
                    continue
                if len(todo) >= MAX_TIME_CHARTS:
                    m["timechart_left_out"] = True
                    left_out += 1
                    continue
                title = p["title"] + (
                    f", repetition {m['repetition']}" if len(p["reps"]) > 1 else ""
                )
                tc = time_chart(
                    res.series.every_host(row.point_idx),
                    title=title,
                    started_at=row.started_at,
                    ended_at=row.ended_at,
                    events=events,
                    extra=row.measurement.extra,
                )
                if tc is not None:  # ids unique in the page: sides of one run differ in ref
                    todo.append((m, tc, f"{p['ref']}-m{row.point_idx}-"))
    _rounds_charts(run_ctx)
    svgs = render_time_svgs([(tc, prefix) for _, tc, prefix in todo])
    for (m, tc, _), svg in zip(todo, svgs, strict=True):
        # built by charts/timedraw.py, which escapes all it inserts
        m["timechart"] = {"svg": Markup(svg), "note": tc.note}
    return left_out


def _rounds_charts(run_ctx: list[dict[str, Any]]) -> None:
    """Each repetition that ran in steady-state rounds gets SNIA's rounds chart."""
    for r in run_ctx:
        for p in r["details"]:
            for m in p["reps"]:
                meas = m["row"].measurement
                verdict = verdict_of(meas)
                if verdict is None:
                    continue
                cfg = SteadyState.from_dict(meas.extra["steady_state"].get("config") or {})
                prefix = f"{p['ref']}-m{m['row'].point_idx}-r"
                # drawn by charts/rounds.py, which escapes all it inserts
                m["roundschart"] = Markup(rounds_svg(verdict, cfg, prefix))
