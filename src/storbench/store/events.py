"""The Store's events: what happened on a run's timeline besides its points."""

from __future__ import annotations

import json
import time
from typing import Any

from storbench.store.base import _Connection, _locked
from storbench.store.dialect import returned_id
from storbench.store.rows import EventRow


class _Events(_Connection):
    """The Store's events (a part of :class:`~storbench.store.db.Store`)."""

    @_locked
    def add_event(
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
    def events(self, run_id: int, kind: str | None = None) -> list[EventRow]:
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
