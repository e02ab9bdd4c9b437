"""The measurements of a results database: recorded the moment a point finishes, their
histograms in their own table, the engine's raw output kept compressed beside them.
"""

from __future__ import annotations

import itertools
import json
import zlib
from collections.abc import Collection, Iterator
from typing import Any, TypeVar

from storbench.model import histpack, rawpack, redact
from storbench.model.errors import NotFoundError, UserError
from storbench.model.findings import CODES, Finding
from storbench.model.metrics import Measurement
from storbench.plan import Point
from storbench.store.base import Part, _locked, storable
from storbench.store.dialect import returned_id
from storbench.store.rows import MeasurementRow

#: Ids one ``IN (...)`` query names at most (SQLite's limit on parameters is 999 in old
#: versions).
_CHUNK = 500
_T = TypeVar("_T")


class Measurements(Part):
    """What each point of a run measured (``measurements``: its figures, status and times,
    the engine's command, job file, raw output and stderr), and their latency histograms
    (``histograms``); ``store.measurements`` of a :class:`~storbench.store.db.Store`."""

    @_locked
    def record(
        self,
        run_id: int,
        point: Point,
        meas: Measurement,
        *,
        engine: str,
        command: list[str] | list[list[str]] | None,
        job_file: str | None,
        raw_output: str | None,
        stderr: str | None,
        started_at: float | None,
        ended_at: float | None,
    ) -> int:
        """Store one measurement and commit at once.

        ``command`` is the engine's argv, or one argv per process when a point ran several
        (the ``rados bench`` clients of one point); it is stored as JSON either way and
        :meth:`raw` gives it back as it was given."""
        with self.tx():
            return self._insert(
                run_id,
                point,
                meas,
                engine,
                command,
                job_file,
                raw_output,
                stderr,
                started_at,
                ended_at,
            )

    @_locked
    def record_file(
        self,
        run_id: int,
        engine: str,
        items: list[tuple[Point, Measurement, str, tuple[float | None, float | None]]],
    ) -> None:
        """The points and measurements one imported file gave (point, measurement, the
        file's text as the raw output, when it ran as the file says: started and ended or
        None), stored in one transaction: all of them or none."""
        with self.tx():
            self.db.executemany(
                "INSERT INTO points (run_id, idx, key, repetition, spec) VALUES (?, ?, ?, ?, ?)",
                [
                    (run_id, p.index, p.key, p.repetition, json.dumps(p.to_dict()))
                    for p, _, _, _ in items
                ],
            )
            for p, meas, text, (started, ended) in items:
                self._insert(run_id, p, meas, engine, None, None, text, None, started, ended)

    def _insert(
        self,
        run_id: int,
        point: Point,
        meas: Measurement,
        engine: str,
        command: list[str] | list[list[str]] | None,
        job_file: str | None,
        raw_output: str | None,
        stderr: str | None,
        started_at: float | None,
        ended_at: float | None,
    ) -> int:
        """One measurement and its histograms, in the caller's transaction."""
        data = meas.to_dict()
        hists: list[tuple[str, str, str, dict[int, int]]] = []
        _strip_bins(data, "", hists)
        cur = self.db.execute(
            "INSERT INTO measurements (run_id, point_idx, status, error, started_at,"
            " ended_at, engine, engine_version, command, job_file, raw_output, stderr, data)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (run_id, point_idx) DO NOTHING RETURNING id",
            (
                run_id,
                point.index,
                meas.status,
                meas.error,
                started_at,
                ended_at,
                engine,
                meas.engine_version,
                json.dumps(command) if command else None,
                job_file,
                rawpack.pack(redact.clean(raw_output)) if raw_output is not None else None,
                stderr,
                pack_data(data),
            ),
        )
        mid = returned_id(cur)
        if mid is None:  # the point's row is there: in one statement, on either database
            raise UserError(
                f"point {point.index + 1} of run {run_id} is recorded already: another "
                "process executed it at the same time; this measurement is not stored",
                fix=f"see `storbench show {run_id}`; run one `storbench resume` at a time",
            )
        self.db.executemany(
            "INSERT INTO histograms VALUES (?, ?, ?, ?, ?)",
            [(mid, host, ddir, metric, histpack.encode(b)) for host, ddir, metric, b in hists],
        )
        return mid

    @_locked
    def of_run(self, run_id: int, *, bins: bool = False) -> list[MeasurementRow]:
        """Measurements of a run in point order, each with its point."""
        rows = self.db.execute(_MEASUREMENT_SELECT + " ORDER BY m.point_idx", (run_id,)).fetchall()
        hist: dict[int, list[Any]] = {}
        if bins and rows:
            for h in self.db.execute(
                "SELECT h.* FROM histograms h JOIN measurements m ON m.id=h.measurement_id"
                " WHERE m.run_id=?",
                (run_id,),
            ):
                hist.setdefault(h["measurement_id"], []).append(h)
        return _measurement_rows(rows, hist)

    @_locked
    def ids(self, run_id: int) -> dict[int, tuple[int, str]]:
        """Each measurement of a run: its id, its point's index and key (what a reader keeping
        a running run's figures checks to find what was recorded since)."""
        rows = self.db.execute(
            "SELECT m.id, m.point_idx, p.key FROM measurements m"
            " JOIN points p ON p.run_id=m.run_id AND p.idx=m.point_idx WHERE m.run_id=?",
            (run_id,),
        )
        return {mid: (idx, key) for mid, idx, key in rows}

    @_locked
    def of_keys(self, run_id: int, keys: Collection[str]) -> list[MeasurementRow]:
        """:meth:`of_run` (without histograms) of only the points of ``keys`` (every
        repetition of each), in point order."""
        rows: list[Any] = []
        for chunk in _chunks(sorted(keys)):
            marks = ",".join("?" * len(chunk))
            rows += self.db.execute(
                _MEASUREMENT_SELECT + f" AND p.key IN ({marks})", (run_id, *chunk)
            ).fetchall()
        rows.sort(key=lambda r: (r["point_idx"], r["id"]))
        return _measurement_rows(rows, {})

    @_locked
    def of_point(self, run_id: int, point_idx: int, *, bins: bool = False) -> MeasurementRow | None:
        """The measurement of one point of a run (None when it has none), read alone: what
        ``show RUN --point N`` costs does not grow with the run."""
        if not storable(run_id, point_idx):  # beyond any key stored: none
            return None
        rows = self.db.execute(
            _MEASUREMENT_SELECT + " AND m.point_idx=?", (run_id, point_idx)
        ).fetchall()
        hist: dict[int, list[Any]] = {}
        if bins and rows:
            hist[rows[0]["id"]] = self.db.execute(
                "SELECT * FROM histograms WHERE measurement_id=?", (rows[0]["id"],)
            ).fetchall()
        found = _measurement_rows(rows, hist)
        return found[0] if found else None

    @_locked
    def add_findings(
        self, run_id: int, found: dict[int, list[Finding]]
    ) -> dict[int, list[Finding]]:
        """Findings that only the whole run showed (by point index), added to those its
        measurements carry, a code (and host) once per point (a resumed run checks its
        points again), in CODES' order; returns those that were new. One transaction."""
        added: dict[int, list[Finding]] = {}
        with self.tx():
            for idx, new in sorted(found.items()):
                row = self.db.execute(
                    "SELECT id, data FROM measurements WHERE run_id=? AND point_idx=?",
                    (run_id, idx),
                ).fetchone()
                if row is None:
                    continue
                data = unpack_data(row["data"])
                have = data.setdefault("findings", [])
                known = {(f.get("code"), f.get("host", "")) for f in have}
                fresh = [f for f in new if (f.code, f.host) not in known]
                if not fresh:
                    continue
                order = {code: n for n, code in enumerate(CODES)}
                have += [f.to_dict() for f in fresh]
                have.sort(key=lambda f: order.get(f.get("code"), len(order)))
                added[idx] = fresh
                self.db.execute(
                    "UPDATE measurements SET data=? WHERE id=?", (pack_data(data), row["id"])
                )
        return added

    @_locked
    def raw(self, measurement_id: int) -> dict[str, Any]:
        """The traceable originals of a measurement: command, job file, raw output, stderr."""
        r = self.db.execute(
            "SELECT command, job_file, raw_output, stderr FROM measurements WHERE id=?",
            (measurement_id,),
        ).fetchone()
        if r is None:
            raise NotFoundError(f"there is no measurement {measurement_id}")
        return {
            "command": json.loads(r["command"]) if r["command"] else None,
            "job_file": r["job_file"],
            "raw_output": rawpack.unpack(r["raw_output"]) if r["raw_output"] is not None else None,
            "stderr": r["stderr"],
        }

    @_locked
    def originals(
        self, measurement_ids: list[int], *, raw_output: bool = True
    ) -> dict[int, dict[str, Any]]:
        """:meth:`raw` of many measurements at once, by id (a report of many points reads
        them in a few queries); without ``raw_output`` the engine's output is neither read
        nor decompressed (``"raw_output"`` is None; ``"has_raw"`` says whether there is
        one)."""
        cols = "id, command, job_file, stderr, raw_output IS NOT NULL AS has_raw"
        cols += ", raw_output" if raw_output else ""
        out: dict[int, dict[str, Any]] = {}
        ids = list(dict.fromkeys(measurement_ids))
        for chunk in _chunks(ids):
            marks = ",".join("?" * len(chunk))
            for r in self.db.execute(
                f"SELECT {cols} FROM measurements WHERE id IN ({marks})", chunk
            ):
                blob = r["raw_output"] if raw_output else None
                out[r["id"]] = {
                    "command": json.loads(r["command"]) if r["command"] else None,
                    "job_file": r["job_file"],
                    "raw_output": rawpack.unpack(blob) if blob is not None else None,
                    "has_raw": bool(r["has_raw"]),
                    "stderr": r["stderr"],
                }
        return out

    def stream(self, run_id: int) -> Iterator[MeasurementRow]:
        """:meth:`of_run` of a run (without histograms) one at a time, as SQLite reads
        them: a caller that folds them (summaries of 20,000 points) never holds them all.
        The store's lock is held until the iteration ends."""
        with self.conn.held():
            cur = self.db.execute(
                "SELECT m.id, m.run_id, m.point_idx, m.status, m.error, m.started_at,"
                " m.ended_at, m.engine, m.engine_version, m.data, p.spec FROM measurements m"
                " LEFT JOIN points p ON p.run_id=m.run_id AND p.idx=m.point_idx"
                " WHERE m.run_id=? ORDER BY m.point_idx",
                (run_id,),
            )
            for mid, rid, idx, status, error, t0, t1, engine, version, data, spec in cur:
                yield MeasurementRow(
                    id=mid,
                    run_id=rid,
                    point_idx=idx,
                    status=status,
                    error=error,
                    started_at=t0,
                    ended_at=t1,
                    engine=engine,
                    engine_version=version,
                    measurement=Measurement.from_dict(unpack_data(data)),
                    point=Point.from_dict(json.loads(spec)) if spec else None,
                )

    def point_histograms(
        self, run_id: int, metric: str = "clat", keys: Collection[str] | None = None
    ) -> Iterator[tuple[str, Iterator[tuple[str, str]]]]:
        """The aggregate histograms of ``metric`` of a run's measurements that did not fail,
        grouped by point key: ``(key, ((direction, stored bins), ...))`` per point, one point
        at a time (a big run's histograms are hundreds of MiB as objects: streamed, read by
        the caller with storbench.model.histpack); ``keys``: of those points only. The
        store's lock is held until the iteration ends."""
        sql = (
            "SELECT p.key, h.direction, h.bins FROM histograms h"
            " JOIN measurements m ON m.id = h.measurement_id"
            " JOIN points p ON p.run_id = m.run_id AND p.idx = m.point_idx"
            " WHERE m.run_id = ? AND h.host = '' AND h.metric = ?"
            " AND m.status != 'failed'"
        )
        chunks = [()] if keys is None else _chunks(sorted(keys))
        with self.conn.held():
            for chunk in chunks:
                where = f" AND p.key IN ({','.join('?' * len(chunk))})" if chunk else ""
                cur = self.db.execute(sql + where + " ORDER BY p.key", (run_id, metric, *chunk))
                for key, group in itertools.groupby(cur, key=lambda row: row[0]):
                    yield key, ((d, b) for _, d, b in group)

    def stream_raw(self, run_id: int) -> Iterator[tuple[int, dict[str, Any]]]:
        """:meth:`raw` of each measurement of a run in point order, one at a time."""
        with self.conn.held():
            ids = self.db.execute(
                "SELECT id FROM measurements WHERE run_id=? ORDER BY point_idx", (run_id,)
            ).fetchall()
        for (mid,) in ids:
            yield mid, self.raw(mid)


def _chunks(items: list[_T]) -> list[tuple[_T, ...]]:
    """``items`` in runs of at most :data:`_CHUNK` (one ``IN (...)`` query each)."""
    return [tuple(items[i : i + _CHUNK]) for i in range(0, len(items), _CHUNK)]


def pack_data(data: dict[str, Any]) -> bytes:
    """A measurement's figures as stored (schema 7): zlib of their JSON, about half of it."""
    return zlib.compress(json.dumps(data, separators=(",", ":")).encode(), 6)


def unpack_data(value: bytes | str) -> dict[str, Any]:
    """A measurement's stored figures: zlib of JSON (schema 7), or JSON text (before)."""
    return json.loads(zlib.decompress(value) if isinstance(value, bytes) else value)


_MEASUREMENT_SELECT = (
    "SELECT m.id, m.run_id, m.point_idx, m.status, m.error, m.started_at, m.ended_at,"
    " m.engine, m.engine_version, m.data, p.spec FROM measurements m"
    " LEFT JOIN points p ON p.run_id=m.run_id AND p.idx=m.point_idx"
    " WHERE m.run_id=?"
)


def _measurement_rows(rows: list[Any], hist: dict[int, list[Any]]) -> list[MeasurementRow]:
    out = []
    for r in rows:
        data = unpack_data(r["data"])
        for h in hist.get(r["id"], []):
            _put_bins(data, h["host"], h["direction"], h["metric"], histpack.decode(h["bins"]))
        out.append(
            MeasurementRow(
                id=r["id"],
                run_id=r["run_id"],
                point_idx=r["point_idx"],
                status=r["status"],
                error=r["error"],
                started_at=r["started_at"],
                ended_at=r["ended_at"],
                engine=r["engine"],
                engine_version=r["engine_version"],
                measurement=Measurement.from_dict(data),
                point=Point.from_dict(json.loads(r["spec"])) if r["spec"] else None,
            )
        )
    return out


def _strip_bins(
    data: dict[str, Any], host: str, out: list[tuple[str, str, str, dict[int, int]]]
) -> None:
    for ddir, d in (data.get("directions") or {}).items():
        for metric in ("slat", "clat", "lat"):
            lat = d.get(metric)
            if lat and lat.get("bins"):
                out.append((host, ddir, metric, lat["bins"]))
                lat["bins"] = None
    for h, sub in (data.get("hosts") or {}).items():
        _strip_bins(sub, h, out)


def _put_bins(
    data: dict[str, Any], host: str, ddir: str, metric: str, bins: dict[int, int]
) -> None:
    target = data if not host else (data.get("hosts") or {}).get(host)
    if target is None:
        return
    lat = (target.get("directions") or {}).get(ddir, {}).get(metric)
    if lat is not None:
        lat["bins"] = bins
