"""What ``show RUN`` prints, and ``run``, ``resume`` and ``import`` at their end: the run's
report model drawn by the terminal's presenter (report/terminalview.py) at the width and in
the colours of this terminal."""

from __future__ import annotations

from storbench import nogc
from storbench.cli.app import out
from storbench.model.constants import SHOW_LIMIT
from storbench.report import model
from storbench.report.terminalview import TerminalPresenter
from storbench.store import RunRow, Store


def _presenter(*, limit: int | None, full: bool) -> TerminalPresenter:
    console = out.console
    return TerminalPresenter(
        limit=limit,
        header=full,
        testbed=full,
        width=console.width,
        color_system=console.color_system if console.is_terminal else None,
    )


def _write(text: str) -> None:
    out.console.file.write(text)
    out.console.file.flush()


def show_run(store: Store, r: RunRow, limit: int | None) -> None:
    """``show RUN``: a header (what ran, when, with which engines), the results, the test
    bed."""
    with nogc.paused():  # a big run's rows, summaries and table cells: collecting costs 10 %
        _write(_presenter(limit=limit, full=True).run(model.load_run(store, r.id)))


def print_run(store: Store, run_id: int) -> None:
    """What ``run``, ``resume`` and ``import`` print at their end: the results of the run,
    without show's header and test bed."""
    with nogc.paused():
        _write(_presenter(limit=SHOW_LIMIT, full=False).run(model.load_run(store, run_id)))
