"""The runs page's list: the runs a filter keeps (name, suite, status, dates), a page at a time.

The list reads the runs' rows only (the report model's ``run_rows``: a run's facts and its counts of
points, never a measurement), so a database of many big runs lists as fast as one of small
ones.
"""

from __future__ import annotations

import datetime as dt
import math
import re
import urllib.parse
from dataclasses import dataclass, field
from typing import Any

from storbench.model.errors import UserError, clipped
from storbench.model.units import fmt_duration, when
from storbench.report.model import RunRow

#: Runs a page of the list shows.
PAGE_SIZE = 50


def suite_of(run: RunRow) -> str:
    """What kind of run it is, for the filter: the answer its report gives (matrix,
    qualify, ...), else the built-in suite it ran (quick), else ``plan`` (a plan file of its
    own) or the run's kind (``import``)."""
    report = run.inventory.get("report") if isinstance(run.inventory, dict) else None
    if report:
        return str(report)
    if run.source.startswith("suite:"):
        return run.source.split(":", 1)[1]
    return "plan" if run.kind == "run" else run.kind


#: A page number past any list's last page (a longer number means the same: the last page).
LAST_PAGE = 10**9


def _day(text: str, what: str) -> dt.date | None:
    if not text:
        return None
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise UserError(
            f"{what} {clipped(text)!r} is not a date", fix="give it as YYYY-MM-DD"
        ) from None


def _midnight(day: dt.date) -> float | None:
    """The unix time of ``day``'s start (local time); None when the platform's clock
    cannot say it (year 1, year 10,000): no bound, as every run is after or before it."""
    try:
        return dt.datetime.combine(day, dt.time()).timestamp()
    except (OverflowError, ValueError, OSError):
        return None


def page_number(text: str) -> int:
    """A page number of a query string: 1 for none, zero or a negative one; past the last
    page for a number of any length (the list shows its last page); a UserError for one
    that is not a whole number."""
    text = text.strip()
    if not text:
        return 1
    if not re.fullmatch(r"[+-]?[0-9]+", text):  # 0-9 only: int() takes '１' and '1_0'
        raise UserError(f"page {clipped(text)!r} is not a number", fix="give page=1, 2, ...")
    if text.startswith("-"):
        return 1
    digits = text.lstrip("+").lstrip("0")
    return LAST_PAGE if len(digits) >= len(str(LAST_PAGE)) else max(1, int(digits or 0))


@dataclass
class RunFilter:
    """What the runs page was asked for (its query string)."""

    name: str = ""
    suite: str = ""
    status: str = ""
    since: str = ""  # YYYY-MM-DD, the first day (local time)
    until: str = ""  # YYYY-MM-DD, the last day
    page: int = 1

    @classmethod
    def of(cls, query: Any) -> RunFilter:
        """From a request's query parameters; a date or page that is none is a UserError."""
        f = cls(
            name=query.get("name", "").strip(),
            suite=query.get("suite", ""),
            status=query.get("status", ""),
            since=query.get("since", ""),
            until=query.get("until", ""),
            page=page_number(query.get("page", "")),
        )
        f.bounds()  # checks the dates
        return f

    def bounds(self) -> tuple[float | None, float | None]:
        """The dates as unix times: from the start of ``since`` to the end of ``until``."""
        lo, hi = _day(self.since, "since"), _day(self.until, "until")
        start = _midnight(lo) if lo else None
        end = _midnight(hi + dt.timedelta(days=1)) if hi and hi < dt.date.max else None
        return start, end

    def keeps(self, run: RunRow) -> bool:
        start, end = self.bounds()
        return (
            (not self.name or self.name.casefold() in run.name.casefold())
            and (not self.suite or suite_of(run) == self.suite)
            and (not self.status or run.effective_status == self.status)
            and (start is None or run.started_at >= start)
            and (end is None or run.started_at < end)
        )

    def query(self, **change: Any) -> str:
        """This filter's query string, with ``change`` (another page), for links."""
        values = {
            "name": self.name,
            "suite": self.suite,
            "status": self.status,
            "since": self.since,
            "until": self.until,
            "page": self.page,
        } | change
        kept = {k: v for k, v in values.items() if v not in ("", None) and (k, v) != ("page", 1)}
        return "?" + urllib.parse.urlencode(kept) if kept else ""


@dataclass
class RunList:
    rows: list[dict[str, Any]]
    total: int  # runs the filter keeps
    recorded: int  # runs in the database
    page: int
    pages: int
    suites: list[str] = field(default_factory=list)  # the filter's choices
    statuses: list[str] = field(default_factory=list)


def run_list(runs: list[RunRow], f: RunFilter, size: int = PAGE_SIZE) -> RunList:
    """The page ``f.page`` of the runs ``f`` keeps, newest first, as the template shows them."""
    kept = [r for r in runs if f.keeps(r)]
    pages = max(1, math.ceil(len(kept) / size))
    page = min(f.page, pages)
    return RunList(
        rows=[_row(r) for r in kept[(page - 1) * size : page * size]],
        total=len(kept),
        recorded=len(runs),
        page=page,
        pages=pages,
        suites=sorted({suite_of(r) for r in runs}),
        statuses=sorted({r.effective_status for r in runs}),
    )


def _row(r: RunRow) -> dict[str, Any]:
    return {
        "id": r.id,
        "name": r.name,
        "suite": suite_of(r),
        "status": r.effective_status,
        "started": when(r.started_at),
        "took": fmt_duration(r.ended_at - r.started_at) if r.ended_at else "-",
        "points": r.points,
        "measured": r.measured,
        "failed": r.failed,
        "host": r.hostname or "-",
        "source": r.source,
    }
