"""What the web view's pages are made of, read through the report model (the only module of
web/ that holds the store) and built once and kept: a run as loaded (its summaries
and measurements: report/model.py's load_run), the report's context of a run or of two runs compared
(report/html.py's report_context, charts drawn), each kept for the next request until the
run changes (its status or its count of measurements) or newer ones push it out.

Building is one page at a time (a lock): the report's charts are drawn with matplotlib, which
is not made for threads, in worker processes for big charts; a second request for the same
run waits for the first and takes what it built.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, TypeVar

from storbench.analysis.select import parse_run_spec
from storbench.analysis.summary import PointSummary
from storbench.model.series import Interval
from storbench.report import html as html_report
from storbench.report import model
from storbench.report.livemodel import RunningSummaries
from storbench.report.model import RunReport
from storbench.store import RunRow, Store

_T = TypeVar("_T")

#: What the live page polls (:meth:`Views.live`).
LiveRun = tuple[RunRow, list[PointSummary], int | None, dict[int, str]]

#: Running runs whose summaries the live page keeps (a 20,000-point run's: ~100 MB).
LIVE_KEEP = 2

#: Loaded runs and built pages kept (a 20,000-point run's summaries are ~100 MB as objects).
KEEP = 6


class Views:
    """The store's runs and pages, built on first use and kept (see the module's docstring)."""

    def __init__(self, store: Store, keep: int = KEEP) -> None:
        self.store = store
        self.keep = keep
        self._kept: OrderedDict[tuple[Any, ...], Any] = OrderedDict()
        self._lock = threading.Lock()  # the kept values
        self._build = threading.RLock()  # one build at a time (a build may use another)
        #: running runs' summaries the live page polls, each with the version it was read at
        self._running: OrderedDict[int, tuple[Any, RunningSummaries]] = OrderedDict()
        self._live = threading.Lock()  # the running runs' summaries

    @property
    def where(self) -> str:
        """The database's path (or its URL without credentials), as the pages name it."""
        return self.store.path

    def rows(self, limit: int | None = None) -> list[RunRow]:
        """The runs' rows, newest first, read anew each time (a list shows runs as they are)."""
        return model.run_rows(self.store, limit)

    def row(self, ref: str | int) -> RunRow:
        """Run ``ref``'s row as it is now; a run that is none raises NotFoundError."""
        return model.run_row(self.store, ref)

    def series(self, ref: str | int, point_idx: int) -> list[Interval]:
        """A point's own series, read anew (a running point's grows)."""
        return model.point_records(self.store, ref).series(point_idx)

    def planned(self, ref: str | int, point_idx: int) -> bool:
        """Whether run ``ref`` planned a point of index ``point_idx`` (from 0)."""
        return model.point_records(self.store, ref).planned(point_idx)

    def version(self, ref: str | int) -> tuple[int, str, int, int]:
        """What identifies a run as it is now: id, status and counts of measurements (a
        running run changes); a run that is none raises NotFoundError (a 404 page)."""
        row = self.row(ref)
        return (row.id, row.effective_status, row.measured, row.failed)

    def _cached(self, key: tuple[Any, ...], build: Callable[[], _T]) -> _T:
        with self._lock:
            if key in self._kept:
                self._kept.move_to_end(key)
                return self._kept[key]  # type: ignore[no-any-return]
        with self._build:
            with self._lock:
                if key in self._kept:
                    return self._kept[key]  # type: ignore[no-any-return]
            value = build()
            with self._lock:
                self._kept[key] = value
                while len(self._kept) > self.keep:
                    self._kept.popitem(last=False)
        return value

    def run(self, run_id: str | int) -> RunReport:
        """The run as charts and reports load it (summaries, measurements without raw output)."""
        v = self.version(run_id)
        return self._cached(("run", *v), lambda: model.load_run(self.store, str(v[0])))

    def run_page(self, run_id: str | int, *, draw: bool = True) -> dict[str, Any]:
        """The report's context of one run, without point details (each point has a page);
        ``draw``: with its charts."""
        v = self.version(run_id)
        return self._cached(
            ("page", draw, *v),
            lambda: html_report.report_context([self.run(v[0])], details=False, draw=draw),
        )

    def compare_page(self, a: str, b: str) -> dict[str, Any]:
        """The report's context of run ``b`` against run ``a`` (ids, ``latest``, or with a
        filter: ``12:target=/dev/sdb``): the comparison, the charts of both, the test beds."""
        refs = [a, b]
        versions = tuple(self.version(parse_run_spec(ref).run) for ref in refs)
        filters = tuple(parse_run_spec(ref).filter_text for ref in refs)

        def build() -> dict[str, Any]:
            texts = [
                f"{v[0]}:{f}" if f else str(v[0]) for v, f in zip(versions, filters, strict=True)
            ]
            cmp = model.load_comparison(self.store, texts, detail=True)
            return html_report.report_context(cmp.runs, cmp, details=False)

        return self._cached(("compare", versions, filters), build)

    def history_page(
        self,
        refs: list[str],
        plan: str | None,
        labels: dict[str, str],
        last: int,
        figure: str,
        by: str | None = None,
    ) -> dict[str, Any]:
        """The history (report/historymodel.py) of the runs selected, as tables and its
        chart, kept until one of those runs changes."""
        from storbench.report.historymodel import select_runs

        rows, _, _ = select_runs(self.store, refs, plan=plan, labels=labels, last=last)
        key = (
            "history",
            tuple(refs),
            plan,
            tuple(sorted(labels.items())),
            last,
            figure,
            by,
            tuple((r.id, r.effective_status, r.measured, r.failed) for r in rows),
        )

        def build() -> dict[str, Any]:
            from storbench.report import charts
            from storbench.report.charts.history import history_chart
            from storbench.report.history import history_tables
            from storbench.report.historymodel import load_history

            report = load_history(
                self.store, refs, plan=plan, labels=labels, last=last, figure=figure, by=by
            )
            chart = history_chart(report)
            return {
                "report": report,
                "tables": history_tables(report),
                "chart": {
                    "id": "chart-history",
                    "kind": "history",
                    "title": chart.title,
                    "svg": charts.render_inline_svg(chart, "h-"),
                    "note": chart.note,
                },
            }

        return self._cached(key, build)

    def plan_names(self, limit: int) -> list[str]:
        """The plans of the newest ``limit`` runs, the newest run's first."""
        return list(dict.fromkeys(r.name for r in self.rows(limit)))

    def live(self, run_id: str | int) -> LiveRun:
        """What the live page polls: the run's row as it is now, its points' summaries so far
        in point order (kept, and brought up to date with only the points recorded since:
        report/livemodel.py), the index of the point running now (the newest with a time
        series but no measurement, else the first without one; None when the run has ended)
        and each point's label."""
        row = self.row(run_id)
        version = (row.effective_status, row.measured, row.failed)
        with self._live:  # not the build lock: a poll does not wait for a page's charts
            kept = self._running.pop(row.id, None) or ((), RunningSummaries(self.store, row.id))
            if kept[0] != version:
                kept[1].update()
                kept = (version, kept[1])
            self._running[row.id] = kept
            while len(self._running) > LIVE_KEEP:
                self._running.popitem(last=False)
            measured, summaries = kept[1].measured, kept[1].summaries
        labels = self._cached(
            ("labels", row.id, row.points),  # a search adds points as it goes
            lambda: {p.index: p.label() for p in self.store.runs.points(row.id)},
        )
        current = None
        if row.effective_status == "running":  # before its first interval: the next one
            counts = model.point_records(self.store, row.id).interval_counts()
            current = max((i for i in counts if i not in measured), default=None)
            if current is None:
                current = min((i for i in labels if i not in measured), default=None)
        return row, summaries, current, labels
