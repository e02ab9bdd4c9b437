"""The runs of a results database and their planned points: creating, claiming (which
process executes a run, its heartbeat: see liveness.py), finding and reading them.
"""

from __future__ import annotations

import json
import os
import re
import time
import uuid
from typing import Any

import storbench.store.liveness as liveness
from storbench.model.errors import NotFoundError, clipped
from storbench.plan import Point
from storbench.store.base import MAX_KEY, Part, _locked, storable
from storbench.store.dialect import returned_id
from storbench.store.faults import StoreError
from storbench.store.location import hide_passwords
from storbench.store.rows import RunRow


def _key(digits: str) -> int | None:
    """The number ``digits`` (0-9 only) as the database keys it; None beyond any key it
    holds (and beyond the 4,300 digits Python's int() converts)."""
    significant = digits.lstrip("0") or "0"
    if len(significant) > len(str(MAX_KEY)):
        return None
    n = int(significant)
    return n if storable(n) else None


class Runs(Part):
    """The runs (``runs``: what was asked, by which process, its status, inventory and
    times) and each run's planned points (``points``: one engine's options on one target,
    in order); ``store.runs`` of a :class:`~storbench.store.db.Store`."""

    @_locked
    def create(
        self,
        *,
        kind: str,
        name: str,
        source: str,
        plan_text: str | None,
        overrides: list[str],
        inventory: dict[str, Any],
        fio_version: str | None,
        storbench_version: str,
        argv: list[str],
        points: list[Point],
    ) -> int:
        with self.tx():
            cur = self.db.execute(
                "INSERT INTO runs (kind, name, source, plan_text, overrides, status, started_at,"
                " inventory, fio_version, storbench_version, hostname, pid, argv, token, proc_id,"
                " heartbeat) VALUES (?, ?, ?, ?, ?, 'running', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                " RETURNING id",
                (
                    kind,
                    name,
                    source,
                    plan_text,
                    json.dumps(overrides),
                    time.time(),
                    json.dumps(inventory, default=str),
                    fio_version,
                    storbench_version,
                    liveness.hostname(),
                    os.getpid(),
                    json.dumps([hide_passwords(a) for a in argv]),  # --db URL: no password
                    uuid.uuid4().hex,
                    liveness.process_identity(),
                    time.time(),
                ),
            )
            run_id = returned_id(cur) or 0
            self.db.executemany(
                "INSERT INTO points (run_id, idx, key, repetition, spec) VALUES (?, ?, ?, ?, ?)",
                [(run_id, p.index, p.key, p.repetition, json.dumps(p.to_dict())) for p in points],
            )
        return run_id

    @_locked
    def add_point(self, run_id: int, point: Point) -> None:
        """Plan one more point of run ``run_id`` while it runs (a capacity search's next
        step: execute/searches.py); its index follows the run's last."""
        with self.tx():
            self.db.execute(
                "INSERT INTO points (run_id, idx, key, repetition, spec) VALUES (?, ?, ?, ?, ?)",
                (run_id, point.index, point.key, point.repetition, json.dumps(point.to_dict())),
            )

    @_locked
    def set_status(self, run_id: int, status: str, *, ended: bool = True) -> None:
        with self.tx():
            self.db.execute(
                "UPDATE runs SET status=?, ended_at=?, pid=? WHERE id=?",
                (status, time.time() if ended else None, None if ended else os.getpid(), run_id),
            )

    @_locked
    def delete(self, run_id: int) -> None:
        """Remove a run and everything recorded of it (an import that failed half-way)."""
        with self.tx():
            self.db.execute("DELETE FROM runs WHERE id=?", (run_id,))

    @_locked
    def claim(self, run_id: int, doing: str = "resume") -> RunRow:
        """Make this process the one executing run ``run_id`` (status ``running``, its pid,
        identity and a fresh heartbeat), in one write transaction; refuse with a
        :class:`UserError` when another process executes it right now. The run's row stays
        locked until the claim commits (PostgreSQL: ``FOR UPDATE``; SQLite's write
        transaction excludes every other writer), so of two processes claiming it at once
        the second reads the first one's claim and refuses."""
        with self.tx():
            lock_row = self.conn.dialect.lock_row
            if lock_row:
                self.db.execute("SELECT id FROM runs WHERE id=?" + lock_row, (run_id,))
            row = self.get(run_id)
            if row.live and not (row.hostname == liveness.hostname() and row.pid == os.getpid()):
                raise row.busy_error(doing)
            self.db.execute(
                "UPDATE runs SET status='running', ended_at=NULL, hostname=?, pid=?, proc_id=?,"
                " heartbeat=?, token=COALESCE(token, ?) WHERE id=?",
                (
                    liveness.hostname(),
                    os.getpid(),
                    liveness.process_identity(),
                    time.time(),
                    uuid.uuid4().hex,
                    run_id,
                ),
            )
        return self.get(run_id)

    @_locked
    def beat(self, run_id: int) -> None:
        """This process's heartbeat for the run it executes (see liveness.py)."""
        with self.tx():
            self.db.execute(
                "UPDATE runs SET heartbeat=? WHERE id=? AND pid=? AND hostname=?",
                (time.time(), run_id, os.getpid(), liveness.hostname()),
            )

    @_locked
    def live(self) -> list[RunRow]:
        """The runs that a live process executes right now."""
        rows = self.db.execute(
            _RUN_SELECT + " WHERE r.status='running' GROUP BY r.id ORDER BY r.id"
        ).fetchall()
        return [r for r in map(self._row, rows) if r.live]

    @_locked
    def all(self, limit: int | None = None) -> list[RunRow]:
        """Every run, the newest first (only the ``limit`` newest, when given)."""
        sql = _RUN_SELECT + " GROUP BY r.id ORDER BY r.id DESC"
        if limit and storable(int(limit)):  # more than any database holds: every run
            sql += f" LIMIT {int(limit)}"
        return [self._row(r) for r in self.db.execute(sql)]

    @_locked
    def get(self, ref: str | int) -> RunRow:
        """Run ``ref`` (:meth:`resolve`), with its counts of points."""
        run_id = self.resolve(ref)
        row = self.db.execute(_RUN_SELECT + " WHERE r.id=? GROUP BY r.id", (run_id,)).fetchone()
        return self._row(row)

    @_locked
    def resolve(self, ref: str | int) -> int:
        """A run id from ``12``, ``latest`` or ``latest~N`` (the Nth run before the latest)."""
        text = str(ref).strip()
        m = re.fullmatch(r"latest(?:~([0-9]+))?", text)
        if m:
            back = _key(m.group(1) or "0")
            row = (  # further back than any database counts: no run
                self.db.execute(
                    "SELECT id FROM runs ORDER BY id DESC LIMIT 1 OFFSET ?", (back,)
                ).fetchone()
                if back is not None
                else None
            )
            if row is None:
                count = self.db.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
                raise NotFoundError(
                    f"there is no run {clipped(text)} in {self.conn.path} "
                    f"({count} run{'s' if count != 1 else ''} recorded)",
                    fix="list runs with `storbench runs`",
                )
            return int(row[0])
        if not re.fullmatch(r"[0-9]+", text):  # not str.isdigit: '²' is one, not a number
            raise NotFoundError(
                f"{clipped(text)!r} is not a run",
                fix="give a run id (see `storbench runs`), `latest`, or `latest~N`",
            )
        run_id = _key(text)  # a number bigger than any id the database holds is no run
        row = (
            self.db.execute("SELECT id FROM runs WHERE id=?", (run_id,)).fetchone()
            if run_id is not None
            else None
        )
        if row is None:
            raise NotFoundError(
                f"there is no run {clipped(text)} in {self.conn.path}",
                fix="list runs with `storbench runs` (or pick the database with --db)",
            )
        return int(row[0])

    def _json(self, r: Any, column: str, kind: type) -> Any:
        """Run row ``r``'s JSON column ``column``, read as a ``kind``; a StoreError naming
        the run, the column and the repair when its text is not that (a hand edit, damage)."""
        try:
            value = json.loads(r[column])
        except (TypeError, ValueError, RecursionError) as e:
            value, why = None, f"{type(e).__name__}: {clipped(str(e))}"
        else:
            why = f"it is {type(value).__name__}, not {kind.__name__}"
        if isinstance(value, kind):
            return value
        empty = "{}" if kind is dict else "[]"
        raise StoreError(
            f"run {r['id']} of {self.conn.path} cannot be read: its {column} is not JSON "
            f"storbench wrote ({why})",
            fix=f"repair it: `UPDATE runs SET {column}='{empty}' WHERE id={r['id']}` in sqlite3 "
            "(or psql) sets it to nothing known",
        )

    def _row(self, r: Any) -> RunRow:
        return RunRow(
            id=r["id"],
            kind=r["kind"],
            name=r["name"],
            source=r["source"],
            plan_text=r["plan_text"],
            overrides=self._json(r, "overrides", list),
            status=r["status"],
            started_at=r["started_at"],
            ended_at=r["ended_at"],
            inventory=self._json(r, "inventory", dict),
            fio_version=r["fio_version"],
            storbench_version=r["storbench_version"],
            hostname=r["hostname"],
            pid=r["pid"],
            points=r["n_points"],
            measured=r["n_measured"],
            failed=r["n_failed"],
            token=r["token"],
            proc_id=r["proc_id"],
            heartbeat=r["heartbeat"],
        )

    # ------------------------------------------------------------------ points

    @_locked
    def points(self, run_id: int) -> list[Point]:
        rows = self.db.execute("SELECT spec FROM points WHERE run_id=? ORDER BY idx", (run_id,))
        return [Point.from_dict(json.loads(r[0])) for r in rows]

    @_locked
    def pending_points(self, run_id: int) -> list[Point]:
        return [Point.from_dict(spec) for _, spec in self.pending_specs(run_id)]

    @_locked
    def pending_specs(self, run_id: int) -> list[tuple[int, Any]]:
        """The points of run ``run_id`` without a measurement, as stored: (index, spec),
        the spec as its JSON says (its text when it is no JSON), for ``resume`` to check
        before it makes points of them (plan/stored.py)."""
        rows = self.db.execute(
            "SELECT p.idx, p.spec FROM points p LEFT JOIN measurements m"
            " ON m.run_id=p.run_id AND m.point_idx=p.idx"
            " WHERE p.run_id=? AND m.id IS NULL ORDER BY p.idx",
            (run_id,),
        )
        return [(int(idx), _json_or_text(spec)) for idx, spec in rows]


def _json_or_text(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return text


_RUN_SELECT = (
    "SELECT r.*, (SELECT COUNT(*) FROM points p WHERE p.run_id=r.id) AS n_points,"
    " COUNT(m.id) AS n_measured,"
    " COUNT(CASE WHEN m.status NOT IN ('ok', 'skipped') THEN 1 END) AS n_failed"
    " FROM runs r LEFT JOIN measurements m ON m.run_id=r.id"
)
