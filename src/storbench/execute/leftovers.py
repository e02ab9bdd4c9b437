"""What a run leaves behind and what else runs: the engines' objects (a pool's) and the
scratch files a run created, removed at its end, on ``resume`` and by ``cleanup``; the work
directories of a run killed before it could remove them; another live run on the same
targets (refused). The runner (runner.py) and the CLI's run, resume and cleanup use them."""

from __future__ import annotations

import os
import shutil

from storbench import engines
from storbench.engines.base import RunContext
from storbench.execute.runstore import StoreEvents
from storbench.hosts import procguard
from storbench.plan import Point, local_points
from storbench.preflight import (
    directory_files,
    safety,
)
from storbench.preflight import locks as target_locks
from storbench.preflight.locks import TargetLocks
from storbench.store import RunRow, Store, liveness

#: Seconds between two samples of a Ceph cluster's health (HEALTH_INTERVAL) while a run with
#: a failure drill executes (the time to heal is measured with it)
DRILL_HEALTH_INTERVAL = 2.0


def cleanup_engines(
    store: Store, run_id: int, points: list[Point], *, keep_recorded: bool = False
) -> list[str]:
    """Each engine of the points removes what the run left outside its files (objects in a
    pool; those of recorded points stay with ``keep_recorded``: a resumed run reads them).
    Each removal is an event of the run; returns what could not be removed."""
    run = RunContext(
        run_id=run_id,
        workdir="",
        total=len(points),
        events=StoreEvents(store, run_id),
        token=store.runs.get(run_id).token,
    )
    left: list[str] = []
    for engine, pts in engines.of_points(points):
        left += engine.cleanup(run, pts, keep_recorded=keep_recorded)
    return left


def host_names(store: Store, run_id: int) -> dict[str, str]:
    """Each remote host's own name (its fio server's probe reply, from the run's inventory)."""
    hosts = store.runs.get(run_id).inventory.get("hosts") or []
    return {h["label"]: h["hostname"] for h in hosts if h.get("label") and h.get("hostname")}


def cleanup_files(
    points: list[Point], created: list[str], locks: TargetLocks | None = None
) -> list[str]:
    """Remove the scratch files storbench created for this run (and fio's files in directory
    targets, which carry storbench's name prefix). A file another process holds (another
    run measures it now: see preflight/locks.py) stays; ``locks`` are this run's own.
    Returns what was removed."""
    removed = []
    points = local_points(points)  # the `local` host's targets; remote files stay remote

    def ours(path: str) -> bool:
        return (locks is not None and locks.holds(path)) or target_locks.free(path)

    for path in dict.fromkeys(created):
        if os.path.isfile(path) and safety.created_by_storbench(path) and ours(path):
            os.unlink(path)
            removed.append(path)
    for t in dict.fromkeys(p.target for p in points if p.target.kind == "directory"):
        if not ours(t.path):
            continue
        for wl in {p.workload for p in points if p.target == t}:
            for path in directory_files(t.path, wl):
                os.unlink(path)
                removed.append(path)
    return removed


def note_scratch_files(store: Store, run_id: int, created: list[str]) -> None:
    """Record the scratch files a run created, so that a later ``resume`` or ``cleanup``
    removes them when this process cannot (it was killed)."""
    for path in created:
        store.events.add(
            run_id,
            "scratch-file",
            f"created scratch file {path} on {liveness.hostname()}",
            {"path": path, "host": liveness.hostname()},
        )


def scratch_files(store: Store, run_id: int) -> list[str]:
    """The scratch files the run created on this host, over all its sessions."""
    here = liveness.hostname()
    return [
        str(e.data["path"])
        for e in store.events.of_run(run_id, "scratch-file")
        if e.data.get("host") == here and e.data.get("path")
    ]


def remove_leftovers(store: Store, run: RunRow) -> list[str]:
    """What a killed session of ``run`` left on this host, removed before the run is
    resumed or cleaned up: its engine processes (the guard dies with a SIGKILL of the whole
    process group too) and its work directories. Returns what was done, for the user."""
    done = []
    if run.token:
        killed = procguard.sweep(run.token)
        if killed:
            done.append(f"stopped {killed} engine process(es) a killed session left running")
    here = liveness.hostname()
    for e in store.events.of_run(run.id, "workdir"):
        path = str(e.data.get("path") or "")
        if (
            e.data.get("host") == here
            and os.path.basename(path).startswith(f"storbench-run{run.id}-")
            and os.path.isdir(path)
        ):
            shutil.rmtree(path, ignore_errors=True)
            done.append(f"removed the work directory {path}")
    return done


def concurrent_refusal(store: Store, points: list[Point], run_id: int | None = None) -> str | None:
    """Why ``points`` must not run now: a live run of the same database (other than
    ``run_id``) measures one of their targets. Local targets are also locked for the run
    (preflight/locks.py), which holds across databases; this check adds the targets no lock
    reaches: those on remote hosts and in Ceph clusters."""
    mine = _target_keys(points)
    for other in store.runs.live():
        if other.id == run_id:
            continue
        shared = mine & _target_keys(store.runs.points(other.id))
        if shared:
            what = sorted(shared)[0][-1]
            return (
                f"another storbench run is measuring {what} right now (run {other.id}, "
                f"pid {other.pid} on {other.hostname}); two runs on one target measure each "
                "other, not the target"
            )
    return None


def _target_keys(points: list[Point]) -> set[tuple[str, ...]]:
    keys: set[tuple[str, ...]] = set()
    for p in points:
        slots = [(h.address, h.port, h.target) for h in p.hosts] or [("local", 0, p.target)]
        for address, port, t in slots:
            if t.ceph:
                keys.add(("ceph", str(t.conf), t.kind, t.label))
            else:
                where = "" if address == "local" else f"{address}:{port}:"
                keys.add((address, str(port), t.kind, where + t.path))
    return keys
