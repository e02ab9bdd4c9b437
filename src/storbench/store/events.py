"""The events of a results database: what happened on a run's timeline besides its
points."""

from __future__ import annotations

import json
import time
from typing import Any

from storbench.store.base import Part, _locked
from storbench.store.dialect import returned_id
from storbench.store.rows import EventRow


class Events(Part):
    """Each run's events (``events``): cluster health changes, preflight findings, objects
    and images made and removed, one human-readable line each with its data, at its time;
    ``store.events`` of a :class:`~storbench.store.db.Store`."""

    @_locked
    def add(
        self,
        run_id: int,
        kind: str,
        message: str,
        data: dict[str, Any] | None = None,
        *,
        at: float | None = None,
    ) -> int:
        """Record an event of a run and commit at once; ``at`` (unix time, s) defaults to
        now. Safe to call from any thread. Returns the event's id."""
        with self.tx():
            cur = self.db.execute(
                "INSERT INTO events (run_id, at, kind, message, data) VALUES (?, ?, ?, ?, ?)"
                " RETURNING id",
                (
                    run_id,
                    time.time() if at is None else at,
                    kind,
                    message,
                    json.dumps(data or {}, default=str),
                ),
            )
            return returned_id(cur) or 0

    @_locked
    def of_run(self, run_id: int, kind: str | None = None) -> list[EventRow]:
        """The events of a run (of one ``kind`` only, when given), by time then id."""
        sql = "SELECT id, run_id, at, kind, message, data FROM events WHERE run_id=?"
        args: tuple[Any, ...] = (run_id,)
        if kind is not None:
            sql += " AND kind=?"
            args += (kind,)
        return [
            EventRow(
                id=r["id"],
                run_id=r["run_id"],
                at=r["at"],
                kind=r["kind"],
                message=r["message"],
                data=json.loads(r["data"]),
            )
            for r in self.db.execute(sql + " ORDER BY at, id", args)
        ]
