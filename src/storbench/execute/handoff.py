"""The next point's engine started while the point before runs, and let go the moment that
one's load ends ("handoff"): storbench's work between two points — reading and parsing the
output of the one that ended, its series' last intervals, its host samples, the next
job file and the process' start — then overlaps the next point's run instead of
delaying it, and the gap between two fio runs is the process's own start (issue 26's
"at most 1 ms": measured in bench/overhead).

Only where nothing the runner decides lies between the two: the run has no climb that
stops at its knee, no capacity search and no pair repeated until known (each decides
the next point from the one before); the next point runs on the same engine, at once
(no preconditioning, purge, drill or scratch file to lay out again: :func:`starts_at_once`)
and without steady-state rounds; the point before has no drill (its actions end after
its load). The engine says whether it can (engines.base.Session.prepare: fio on a local
file or device). A point's fio that ended with an error, or a run asked to stop,
releases nothing: the runner decides as before, and what was started ahead is
withdrawn when it does not run it (fail-fast, Ctrl-C).
"""

from __future__ import annotations

import os
from functools import partial

from storbench.engines import process
from storbench.engines.base import Session
from storbench.plan import Point, local_points


def starts_at_once(point: Point, sizes: dict[str, int]) -> bool:
    """Whether nothing slow comes before the point's engine starts its process, so that the
    bookkeeping of the point before may wait for that start (later.py): a fio point
    without preconditioning, purge or drill, no objects to write first (rados, s3) and
    no scratch file to lay out again (restore_layout)."""
    if point.engine != "fio" or point.precondition != "none" or point.purge or point.actions:
        return False
    if any(t.kind in ("rados", "s3") for t in point.targets):
        return False
    for p in local_points([point]):
        path = p.target.path
        if path in sizes and os.path.isfile(path) and os.path.getsize(path) < sizes[path]:
            return False
    return True


def hand_off(
    session: Session, point: Point, nxt: Point | None, sizes: dict[str, int], decides: bool
) -> None:
    """Have ``session`` start ``nxt`` ahead once ``point``'s engine has started (module
    doc), where it may; ``decides``: the run chooses its next points as it goes."""
    if nxt is None or decides or point.actions or nxt.engine != point.engine:
        return
    if getattr(session, "prepare", None) is None:  # optional (an engine plugin's session)
        return
    if nxt.steady is not None or not starts_at_once(nxt, sizes):
        return
    ready = partial(starts_at_once, nxt, sizes)  # at the release: the file not shrunk
    process.when_started(partial(_prepare, session, nxt, point, ready))


def _prepare(session: Session, nxt: Point, point: Point, ready: partial[bool]) -> None:
    session.prepare(nxt, after=point, ready=ready)


def withdraw(session: Session) -> None:
    """Have ``session`` stop what it started ahead that no point ran (a session without
    :meth:`prepare <engines.base.Session.prepare>` started nothing)."""
    stop = getattr(session, "withdraw", None)
    if stop is not None:
        stop()
