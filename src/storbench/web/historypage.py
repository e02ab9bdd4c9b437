"""The web view's history page (/history): the form that picks the runs (a plan, labels,
how many, the figure) and the history of those runs (report/history.py's tables and
report/charts/history.py's chart), read through :class:`~storbench.web.views.Views`."""

from __future__ import annotations

from typing import Any

from markupsafe import Markup
from starlette.requests import Request
from starlette.responses import HTMLResponse

from storbench.analysis.history import FIGURES
from storbench.model.errors import UserError, clipped
from storbench.report.historymodel import LAST, MOST
from storbench.web.pages import CHOICES, site

#: the longest text a query parameter of this page may hold (a plan's name, a label)
MAX_PARAM = 400


def _param(request: Request, name: str) -> str:
    value = request.query_params.get(name, "").strip()
    if len(value) > MAX_PARAM:
        raise UserError(
            f"the parameter {name} is longer than {MAX_PARAM} characters",
            fix="shorten it",
        )
    return value


def _labels(text: str) -> dict[str, str]:
    from storbench.plan.labelkeys import parse_label

    return dict(parse_label(part) for part in text.split(",") if part.strip())


def _last(text: str) -> int:
    if not text:
        return LAST
    if not text.isdecimal() or not 1 <= int(text[:6]) <= MOST or len(text) > 6:
        raise UserError(
            f"last={clipped(text)!r}: not a number of runs from 1 to {MOST}", fix="last=10"
        )
    return int(text)


def _refs(text: str) -> list[str]:
    refs = [r.strip() for r in text.split(",") if r.strip()]
    if len(refs) > MOST:
        raise UserError(f"runs= names {len(refs)} runs; at most {MOST}", fix="name fewer")
    return refs


def history_page(request: Request) -> HTMLResponse:
    s = site(request)
    plan, figure = _param(request, "plan"), _param(request, "figure") or "iops"
    label_text, runs_text = _param(request, "label"), _param(request, "runs")
    by = _param(request, "by") or None
    if figure not in FIGURES:
        raise UserError(f"figure={clipped(figure)!r}: no such figure", fix="figure=iops")
    ctx: dict[str, Any] = {
        "title": "History",
        "plans": s.views.plan_names(CHOICES),
        "plan": plan,
        "label": label_text,
        "runs": runs_text,
        "last": _param(request, "last"),
        "figure": figure,
        "figures": FIGURES,
        "by": by or "",
    }
    if not (plan or label_text or runs_text):
        return s.page("history.html", view=None, **ctx)
    view = s.views.history_page(
        _refs(runs_text),
        plan or None,
        _labels(label_text),
        _last(ctx["last"]),
        figure,
        by,
    )
    report = view["report"]
    chart = dict(view["chart"], svg=Markup(view["chart"]["svg"]))  # escaped by charts/draw.py
    ctx["title"] = f"History: {report.selection}"
    return s.page("history.html", view={"answers": [("", view["tables"], [chart])]}, **ctx)
