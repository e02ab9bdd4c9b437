"""The web view's request handlers: the runs, a run, a point, a point's series (JSON for its
interactive chart) and the comparison of two runs. Each reads the report model through
:class:`~storbench.web.views.Views` (never the store) and renders a template of
web/templates, which include the HTML report's sections (report/templates) for what the
report shows too.

A run or point that is none raises NotFoundError: app.py turns it into a 404 page. The
numbers of a path come as their digits (app.py's ``digits``), of any length: a number
beyond any run or point a database holds is one that is not there.
"""

from __future__ import annotations

import math
import re
import urllib.parse
from dataclasses import dataclass
from typing import Any

from jinja2 import Environment
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse

from storbench import __version__
from storbench.model.errors import NotFoundError, clipped
from storbench.model.series import Interval
from storbench.report import html as html_report
from storbench.web.listing import RunFilter, page_number, run_list, suite_of
from storbench.web.views import Views

#: Points a page of a run's summary table shows (a 20,000-point run: 200 pages).
POINTS_PER_PAGE = 100
#: Points of a run past which its page draws its charts only when asked (``?charts=1``):
#: a 20,000-point run's take ~40 s to draw (bench/serve).
DRAW_POINTS = 2000
#: Runs the compare page offers to choose from (the newest; any other by its id in the URL).
CHOICES = 500


@dataclass
class Site:
    """What every handler uses: the report model's runs and pages (kept), the templates."""

    views: Views
    env: Environment
    writable: bool

    def page(self, name: str, status: int = 200, **ctx: Any) -> HTMLResponse:
        ctx |= {"db": self.views.where, "writable": self.writable, "version": __version__}
        return HTMLResponse(self.env.get_template(name).render(**ctx), status_code=status)


_REF = re.compile(r"r(\d+)(?:s\d+)?-p(\d+)")


def point_link(ref: str) -> str:
    """The page of the point a report's anchor names (``r12-p3``, ``r12s2-p3``: charts'
    ``data-ref``, summary and comparison rows): /runs/12/points/3."""
    m = _REF.fullmatch(ref)
    return f"/runs/{m.group(1)}/points/{m.group(2)}" if m else "#" + ref


def site(request: Request) -> Site:
    return request.app.state.site  # type: ignore[no-any-return]


def _index(digits: str) -> int | None:
    """A point's number or index of a path (its digits); None beyond any a run can have."""
    significant = digits.lstrip("0") or "0"
    return int(significant) if len(significant) <= 18 else None


# --------------------------------------------------------------------------- runs


def runs_page(request: Request) -> HTMLResponse:
    s = site(request)
    f = RunFilter.of(request.query_params)
    listed = run_list(s.views.rows(), f)
    pages = [(n, f.query(page=n)) for n in _page_numbers(listed.page, listed.pages)]
    return s.page("runs.html", title="Runs", listed=listed, f=f, pages=pages)


def _page_numbers(page: int, pages: int) -> list[int]:
    """The pages a pager links: the first, the last and those near this one."""
    return sorted({1, pages, *range(max(1, page - 2), min(pages, page + 2) + 1)})


# --------------------------------------------------------------------------- a run


def run_page(request: Request) -> HTMLResponse:
    s = site(request)
    row = s.views.row(request.path_params["run_id"])
    draw = row.measured <= DRAW_POINTS or request.query_params.get("charts") == "1"
    view = s.views.run_page(row.id, draw=draw)
    r = view["runs"][0]
    table = r["summary"]
    points = [row for row in table.rows if row["first"]]
    pages = max(1, math.ceil(len(points) / POINTS_PER_PAGE))
    page = min(page_number(request.query_params.get("page", "")), pages)
    shown = {row["no"] for row in points[(page - 1) * POINTS_PER_PAGE : page * POINTS_PER_PAGE]}
    paged = html_report.SummaryTable(
        columns=table.columns,
        rows=[row for row in table.rows if row["no"] in shown],
        show_err=table.show_err,
    )
    others = [o for o in s.views.rows(CHOICES) if o.id != row.id]
    shown_r = {**r, "summary": paged}
    ctx = view | {
        "title": r["label"],
        "run": row,
        "suite": suite_of(row),
        "r": shown_r,
        "runs": [shown_r],
        "page": page,
        "pages": _page_numbers(page, pages),
        "page_q": lambda n: (
            "?"
            + urllib.parse.urlencode(
                {"page": n} | ({"charts": 1} if request.query_params.get("charts") == "1" else {})
            )
        ),
        "last_page": pages,
        "point_count": len(points),
        "points_per_page": POINTS_PER_PAGE,
        "others": others,
        "charts_left_out": not draw,
        "live": row.effective_status == "running",  # the live section (static/live.js)
        "draw_points": DRAW_POINTS,
    }
    return s.page("run.html", **ctx)


# --------------------------------------------------------------------------- a point


def point_page(request: Request) -> HTMLResponse:
    s = site(request)
    res = s.views.run(request.path_params["run_id"])
    text = request.path_params["no"]
    no = _index(text)
    at = no - 1 if no is not None else None
    m = next((m for m in res.rows if m.point_idx == at and m.point is not None), None)
    if at is None or m is None or m.point is None:
        if at is None or res.records is None or not res.records.planned(at):
            raise NotFoundError(
                f"run {res.run.id} has no point {clipped(text)} ({res.run.points} planned)",
                fix=f"pick a point on the run's page, /runs/{res.run.id}",
            )
        return s.page("point.html", title=f"{res.label}: point {no}", res=res, no=no, p=None)
    key = m.point.key
    order = [x.index + 1 for x in res.summaries]
    summary = next(x for x in res.summaries if x.key == key)
    rows = [x for x in res.rows if x.point is not None and x.point.key == key]
    detail = html_report.point_detail(res, summary, rows, gz=False)
    series = res.records.interval_counts() if res.records is not None else {}
    at = order.index(summary.index + 1)
    return s.page(
        "point.html",
        title=f"{res.label}: {detail['title']}",
        res=res,
        no=no,
        p=detail,
        series={x.point_idx: series.get(x.point_idx, 0) for x in rows},
        prev=order[at - 1] if at > 0 else None,
        next=order[at + 1] if at + 1 < len(order) else None,
    )


def intervals_json(request: Request) -> JSONResponse:
    """A point's own series (the aggregate of its hosts) for the interactive chart: times in
    s from the engine's start; per direction IOPS, MiB/s, mean and p99 latency in µs."""
    s = site(request)
    run = s.views.row(request.path_params["run_id"])
    text = request.path_params["idx"]
    idx = _index(text)
    rows = s.views.series(run.id, idx) if idx is not None else []
    if not rows and (idx is None or not s.views.planned(run.id, idx)):
        raise NotFoundError(
            f"run {run.id} has no point of index {clipped(text)} ({run.points} planned)",
            fix=f"the index counts a run's points from 0; pick a point on /runs/{run.id}",
        )
    return JSONResponse(series_data(rows))


def series_data(rows: list[Interval]) -> dict[str, Any]:
    """Intervals as uPlot's columns: one time axis, a column per direction and figure
    (None where a direction has no interval at that time)."""
    times = sorted({i.t_ms for i in rows})
    at = {t: n for n, t in enumerate(times)}
    dirs: dict[str, dict[str, list[float | None]]] = {}
    for i in rows:
        cols = dirs.setdefault(
            i.direction, {k: [None] * len(times) for k in ("iops", "mibs", "mean_us", "p99_us")}
        )
        n = at[i.t_ms]
        cols["iops"][n] = round(i.iops, 3)
        cols["mibs"][n] = round(i.bw_bytes / (1 << 20), 3)
        cols["mean_us"][n] = None if i.lat_mean_ns is None else round(i.lat_mean_ns / 1e3, 3)
        cols["p99_us"][n] = None if i.p99_ns is None else round(i.p99_ns / 1e3, 3)
    ramp = [i.t_ms for i in rows if i.ramp]
    return {
        "t": [t / 1000 for t in times],
        "ramp_end": max(ramp) / 1000 if ramp else None,
        "directions": dirs,
    }


# --------------------------------------------------------------------------- compare


def compare_page(request: Request) -> HTMLResponse:
    s = site(request)
    a = request.query_params.get("a", "").strip()
    b = request.query_params.get("b", "").strip()
    choices = s.views.rows(CHOICES)
    ctx: dict[str, Any] = {"title": "Compare runs", "a": a, "b": b, "choices": choices}
    listed = {str(r.id) for r in choices}
    ctx["extra"] = [ref for ref in (a, b) if ref and ref not in listed]
    if not (a and b):
        return s.page("compare.html", view=None, **ctx)
    view = s.views.compare_page(a, b)
    ctx["title"] = view["comparison"][0]["other"] + " vs " + view["comparison"][0]["base"]
    return s.page("compare.html", view=view, **ctx)
