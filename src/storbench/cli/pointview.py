"""``show RUN --point N``: one point's report model (report/pointmodel.py, read alone from
the store) drawn by the terminal's presenter."""

from __future__ import annotations

from storbench.cli.app import out
from storbench.report.pointmodel import load_point
from storbench.report.terminalview import point_text
from storbench.store import Store


def show_point(store: Store, run_id: int, point_no: int) -> None:
    """``show RUN --point N``: the point's command, steady-state rounds, time series, job
    file and raw output."""
    text = point_text(load_point(store, run_id, point_no), width=out.console.width)
    out.console.file.write(text)
    out.console.file.flush()
