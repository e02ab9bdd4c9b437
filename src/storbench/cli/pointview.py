"""``show RUN --point N``: one point: its command, preconditioning, steady-state rounds,
time series, host samples, job file and raw output."""

from __future__ import annotations

import shlex

from storbench.cli.app import out
from storbench.errors import NotFoundError
from storbench.hostload import summary
from storbench.report.series import timeline
from storbench.report.soak import host_rows
from storbench.report.steady import rounds_text
from storbench.store import RunRow, Store


def show_point(store: Store, r: RunRow, point_no: int) -> None:
    """``show RUN --point N``: the point's command, steady-state rounds, time series, job
    file and raw output."""
    rows = [m for m in store.measurements(r.id) if m.point_idx == point_no - 1]
    if not rows:
        raise NotFoundError(
            f"run {r.id} has no measurement for point {point_no}",
            fix=f"points are numbered 1..{r.points}",
        )
    raw = store.raw(rows[0].id)
    out.print(
        f"# run {r.id} point {point_no}: status {rows[0].status}"
        + (f" ({rows[0].error})" if rows[0].error else ""),
        markup=False,
    )
    for cmd in commands(raw["command"]):
        out.print("# command: " + shlex.join(cmd), markup=False)
    for e in store.events(r.id, "precondition"):
        if e.data.get("point") == point_no - 1:
            out.print(f"# preconditioning ({e.data.get('mode')}): {e.message}", markup=False)
            if e.data.get("mode") == "purge":  # blkdiscard: no series (storbench.purge)
                out.print("# purge command: " + shlex.join(e.data["command"]), markup=False)
                continue
            phase = store.intervals(r.id, -point_no)  # precondition.phase_index
            if phase:
                out.print(timeline(phase, most=20), markup=False, highlight=False)
    rounds = rounds_text(rows[0].measurement)
    if rounds:
        out.print("# steady state (SNIA PTS rounds):", markup=False)
        out.print(rounds, markup=False, highlight=False)
    series = store.intervals(r.id, point_no - 1)
    if series:
        out.print("# time series (t: end of each interval, s after the engine started):")
        out.print(timeline(series), markup=False, highlight=False)
    for host in store.sampled_hosts(r.id, point_no - 1):
        samples = store.host_samples(r.id, point_no - 1, host)
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
