"""``show RUN --point N``: one point, read alone from the store (its cost does not grow with
the run: not even the run's counts are read): its command, preconditioning, steady-state
rounds, time series, host samples, job file and raw output."""

from __future__ import annotations

import shlex

from storbench.cli.app import out
from storbench.hosts.load import summary
from storbench.model.errors import NotFoundError
from storbench.report.series import timeline
from storbench.report.soak import host_rows
from storbench.report.steady import rounds_text
from storbench.store import Store


def show_point(store: Store, run_id: int, point_no: int) -> None:
    """``show RUN --point N``: the point's command, steady-state rounds, time series, job
    file and raw output."""
    m = store.measurements.of_point(run_id, point_no - 1) if point_no >= 1 else None
    if m is None:
        raise NotFoundError(
            f"run {run_id} has no measurement for point {point_no}",
            fix=f"points are numbered 1..{store.runs.get(run_id).points}",
        )
    raw = store.measurements.raw(m.id)
    error = f" ({m.error})" if m.error else ""
    out.print(f"# run {run_id} point {point_no}: status {m.status}{error}", markup=False)
    for cmd in commands(raw["command"]):
        out.print("# command: " + shlex.join(cmd), markup=False)
    for e in store.events.of_run(run_id, "precondition"):
        if e.data.get("point") == point_no - 1:
            out.print(f"# preconditioning ({e.data.get('mode')}): {e.message}", markup=False)
            if e.data.get("mode") == "purge":  # blkdiscard: no series (storbench.execute.purge)
                out.print("# purge command: " + shlex.join(e.data["command"]), markup=False)
                continue
            phase = store.series.of_point(run_id, -point_no)  # precondition.phase_index
            if phase:
                out.print(timeline(phase, most=20), markup=False, highlight=False)
    rounds = rounds_text(m.measurement)
    if rounds:
        out.print("# steady state (SNIA PTS rounds):", markup=False)
        out.print(rounds, markup=False, highlight=False)
    series = store.series.of_point(run_id, point_no - 1)
    if series:
        out.print("# time series (t: end of each interval, s after the engine started):")
        out.print(timeline(series), markup=False, highlight=False)
    for host in store.host_samples.hosts(run_id, point_no - 1):
        samples = store.host_samples.of_point(run_id, point_no - 1, host)
        for figure, value, _ in host_rows(summary(samples), host or "this host"):
            out.print(f"# {figure}: {value}", markup=False)
    if raw["job_file"]:
        out.print("# job file:", markup=False)
        out.print(raw["job_file"], end="", markup=False)
    out.print("# raw output:", markup=False)
    out.print(raw["raw_output"] or "", markup=False)
    if raw["stderr"]:
        out.print("# stderr:", markup=False)
        out.print(raw["stderr"], markup=False)


def commands(command: list[str] | list[list[str]] | None) -> list[list[str]]:
    """A stored command: one argv (fio) or one per process (rados bench clients)."""
    if not command:
        return []
    return [c for c in command if isinstance(c, list)] or [[str(c) for c in command]]
