"""The report model of one point (``show RUN --point N``), read alone from the store: its
cost does not grow with the run (not even the run's counts are read). Its measurement, the
engine's originals (command, job file, raw output, stderr), its preconditioning (each phase
with its series), its time series and each host's samples; the terminal's presenter
(report/terminalview.py) draws it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from storbench.hosts.load import HostSample
from storbench.model.errors import NotFoundError
from storbench.model.series import Interval
from storbench.store import EventRow, MeasurementRow, Store


@dataclass
class PointReport:
    run_id: int
    no: int  # 1-based, as show numbers points
    row: MeasurementRow
    #: the engine's originals: command, job_file, raw_output, stderr
    originals: dict[str, Any]
    #: its preconditioning phases, each with its series (None: a purge, which has none)
    phases: list[tuple[EventRow, list[Interval] | None]] = field(default_factory=list)
    series: list[Interval] = field(default_factory=list)
    #: each sampled host's samples ('' this machine, first)
    host_samples: dict[str, list[HostSample]] = field(default_factory=dict)


def load_point(store: Store, run_id: int, no: int) -> PointReport:
    """Point ``no`` (1-based) of run ``run_id``; NotFoundError when the run has no
    measurement of it."""
    idx = no - 1
    m = store.measurements.of_point(run_id, idx) if no >= 1 else None
    if m is None:
        raise NotFoundError(
            f"run {run_id} has no measurement for point {no}",
            fix=f"points are numbered 1..{store.runs.get(run_id).points}",
        )
    phases: list[tuple[EventRow, list[Interval] | None]] = []
    for e in store.events.of_run(run_id, "precondition"):
        if e.data.get("point") == idx:
            purge = e.data.get("mode") == "purge"  # blkdiscard: no series (execute/purge.py)
            # a phase's series is kept under the point's negative index (precondition.py)
            phases.append((e, None if purge else store.series.of_point(run_id, -no)))
    return PointReport(
        run_id=run_id,
        no=no,
        row=m,
        originals=store.measurements.raw(m.id),
        phases=phases,
        series=store.series.of_point(run_id, idx),
        host_samples={
            host: store.host_samples.of_point(run_id, idx, host)
            for host in store.host_samples.hosts(run_id, idx)
        },
    )
