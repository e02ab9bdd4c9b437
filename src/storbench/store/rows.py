"""What the store gives back: runs, measurements and events as rows, and where the database is by
default.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import storbench.store.liveness as liveness
from storbench.model.constants import DEFAULT_DB, default_db_path  # noqa: F401
from storbench.model.errors import UserError
from storbench.model.metrics import Measurement
from storbench.plan import Point

#: Event kinds a run records for its own housekeeping (see EventRow.bookkeeping).
BOOKKEEPING_EVENTS = ("scratch-file", "workdir", "cluster-io")  # cluster-io: per sample


@dataclass
class RunRow:
    id: int
    kind: str
    name: str
    source: str
    plan_text: str | None
    overrides: list[str]
    status: str
    started_at: float
    ended_at: float | None
    inventory: dict[str, Any]
    fio_version: str | None
    storbench_version: str | None
    hostname: str | None
    pid: int | None
    points: int = 0
    measured: int = 0
    failed: int = 0
    token: str | None = None
    proc_id: str | None = None
    heartbeat: float | None = None

    @property
    def live(self) -> bool:
        """Whether a process executes the run right now (see liveness.py)."""
        return self.status == "running" and liveness.alive(
            self.hostname, self.pid, self.proc_id, self.heartbeat
        )

    @property
    def effective_status(self) -> str:
        """``running`` of a process that no longer exists reads as ``aborted``."""
        if self.status == "running" and not self.live:
            return "aborted"
        return self.status

    def busy_error(self, doing: str) -> UserError:
        """The refusal to ``doing`` (resume, clean up) a run that is executing."""
        where = (
            f"pid {self.pid}"
            if self.hostname == liveness.hostname()
            else f"pid {self.pid} on host {self.hostname}"
        )
        return UserError(
            f"run {self.id} is executing right now ({where}); cannot {doing} it at the same time",
            fix=f"wait until it ends, or stop it (Ctrl-C in its terminal, or kill {self.pid}"
            + ("" if self.hostname == liveness.hostname() else f" on {self.hostname}")
            + f"), then run `storbench resume {self.id}`",
        )


@dataclass
class MeasurementRow:
    id: int
    run_id: int
    point_idx: int
    status: str
    error: str | None
    started_at: float | None
    ended_at: float | None
    engine: str
    engine_version: str | None
    measurement: Measurement
    point: Point | None = None


@dataclass
class EventRow:
    """Something that happened during a run: ``at`` in unix time (s), a ``kind`` (health,
    preflight, rados-objects, rados-cleanup, rbd-image, ...), one line for a human and the
    details as a dict."""

    id: int
    run_id: int
    at: float
    kind: str
    message: str
    data: dict[str, Any]

    @property
    def bookkeeping(self) -> bool:
        """Kept for ``resume`` and ``cleanup`` (scratch files, work directories), not for
        a reader of the run's timeline."""
        return self.kind in BOOKKEEPING_EVENTS
