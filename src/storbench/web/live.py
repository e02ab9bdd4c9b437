"""A run while it runs (/runs/N/live.json, polled by the run page's live section:
static/live.js): its status and progress, the point running now (whose time series the
page draws from /runs/N/intervals/IDX.json as it grows) and the points recorded so far
with their figures. Read through :class:`~storbench.web.views.Views`; a run that ended
answers its final status, and the page stops polling."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse

from storbench.analysis.history import figure_of
from storbench.analysis.summary import PointSummary
from storbench.web.pages import site

#: the recorded points the live table lists at most (the newest); the run page has them all
DONE_ROWS = 200


def _done(s: PointSummary) -> dict[str, Any]:
    """A recorded point's row: figures over its repetitions so far, in the units shown."""
    lat, p99 = figure_of(s, "lat"), figure_of(s, "p99")
    iops, bw = figure_of(s, "iops"), figure_of(s, "bw")
    return {
        "no": s.index + 1,
        "label": f"{s.workload} {' '.join(f'{k}={v}' for k, v in s.axes.items())}".strip(),
        "target": s.target.label,
        "repetitions": s.runs,
        "failed": s.failed,
        "iops": None if iops is None else round(iops, 1),
        "mibs": None if bw is None else round(bw / (1 << 20), 2),
        "lat_mean_us": None if lat is None else round(lat / 1e3, 2),
        "p99_us": None if p99 is None else round(p99 / 1e3, 2),
    }


def live_json(request: Request) -> JSONResponse:
    s = site(request)
    row, summaries, current, labels = s.views.live(request.path_params["run_id"])
    done = [x for x in summaries if x.runs or x.failed]
    doc: dict[str, Any] = {
        "run": row.id,
        "status": row.effective_status,
        "running": row.effective_status == "running",
        "points": row.points,
        "measured": row.measured,
        "failed": row.failed,
        "current": None
        if current is None
        else {
            "idx": current,
            "no": current + 1,
            "label": labels.get(current, ""),
            "src": f"/runs/{row.id}/intervals/{current}.json",
        },
        "done": [_done(x) for x in done[-DONE_ROWS:]],
        "done_total": len(done),
    }
    return JSONResponse(doc, headers={"Cache-Control": "no-store"})
