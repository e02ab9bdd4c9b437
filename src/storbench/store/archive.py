"""A run as one portable document, and back: what ``storbench export RUN --format archive``
writes, ``storbench import`` reads and ``storbench merge`` copies between databases.

The document holds everything the database keeps of the run -- the run (plan, overrides,
inventory, status and times), its points, every measurement with its command, job file,
raw output, stderr, figures and histograms, its events, its time series and host samples
-- in plain JSON values (the raw output as text, histograms as ``{"bucket ns": count}``),
never in the database's own packed forms, so that it reads the same whatever schema wrote
it. Loading it creates a new run with everything as it was; its ``provenance`` (kept in
the run's inventory, a list) gains where it came from: the database, the run's id there
and its token (a run that is already here is recognised by it: merge and import skip it).
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

import storbench.store.liveness as liveness
from storbench.model import histpack, rawpack
from storbench.model.errors import UserError
from storbench.store.archivecheck import FIX, MEASUREMENT_COLUMNS, RUN_COLUMNS, check_members
from storbench.store.base import Part, _locked
from storbench.store.dialect import returned_id
from storbench.store.measurements import pack_data, unpack_data

FORMAT = "storbench-archive"
VERSION = 1
JSON_COLUMNS = ("overrides", "inventory", "argv")
#: Tables of rows keyed by (run_id, ...) copied column for column.
SERIES_TABLES = ("intervals", "host_samples")
#: How many times its own size an archive file may unpack to, and at least how much
#: (:func:`unpack_limit`).
MAX_UNPACK_RATIO = 100
MIN_UNPACK_LIMIT = 256 * 2**20


def provenance(inventory: dict[str, Any]) -> list[dict[str, Any]]:
    """Where a run came from, oldest first ([] for a run made here)."""
    value = inventory.get("provenance")
    return value if isinstance(value, list) else []


class Archive(Part):
    """Runs as archive documents (module comment), written from and read into every table
    of a run at once; ``store.archive`` of a :class:`~storbench.store.db.Store`."""

    @_locked
    def dump(self, run_id: int) -> dict[str, Any]:
        """Everything of run ``run_id`` as an archive document (module comment)."""
        r = self.db.execute(
            f"SELECT {', '.join(RUN_COLUMNS)}, token FROM runs WHERE id=?", (run_id,)
        ).fetchone()
        run = {k: (json.loads(r[k]) if k in JSON_COLUMNS and r[k] else r[k]) for k in RUN_COLUMNS}
        points = [
            {
                "idx": p["idx"],
                "key": p["key"],
                "repetition": p["repetition"],
                "spec": json.loads(p["spec"]),
            }
            for p in self.db.execute(
                "SELECT idx, key, repetition, spec FROM points WHERE run_id=? ORDER BY idx",
                (run_id,),
            )
        ]
        return {
            "format": FORMAT,
            "version": VERSION,
            "from": {
                "db": self.conn.path,
                "run": run_id,
                "token": r["token"],
                "host": liveness.hostname(),
            },
            "run": run,
            "points": points,
            "measurements": self._dump_measurements(run_id),
            "events": [
                {
                    "at": e["at"],
                    "kind": e["kind"],
                    "message": e["message"],
                    "data": json.loads(e["data"]),
                }
                for e in self.db.execute(
                    "SELECT at, kind, message, data FROM events WHERE run_id=? ORDER BY id",
                    (run_id,),
                )
            ],
            **{t: self._dump_table(t, run_id) for t in SERIES_TABLES},
        }

    def _dump_measurements(self, run_id: int) -> list[dict[str, Any]]:
        out = []
        rows = self.db.execute(
            f"SELECT id, {', '.join(MEASUREMENT_COLUMNS)}, raw_output, data FROM measurements"
            " WHERE run_id=? ORDER BY point_idx",
            (run_id,),
        ).fetchall()
        for m in rows:
            d = {k: m[k] for k in MEASUREMENT_COLUMNS}
            d["command"] = json.loads(m["command"]) if m["command"] else None
            d["raw_output"] = (
                rawpack.unpack(m["raw_output"]) if m["raw_output"] is not None else None
            )
            d["data"] = unpack_data(m["data"])
            d["histograms"] = [
                {
                    "host": h["host"],
                    "direction": h["direction"],
                    "metric": h["metric"],
                    "bins": {str(k): v for k, v in _bins(h["bins"]).items()},
                }
                for h in self.db.execute(
                    "SELECT host, direction, metric, bins FROM histograms WHERE measurement_id=?"
                    " ORDER BY host, direction, metric",
                    (m["id"],),
                )
            ]
            out.append(d)
        return out

    def _dump_table(self, table: str, run_id: int) -> dict[str, Any]:
        cols = [c for c in self._columns(table) if c != "run_id"]
        rows = self.db.execute(
            f"SELECT {', '.join(cols)} FROM {table} WHERE run_id=? ORDER BY {', '.join(cols[:4])}",
            (run_id,),
        )
        return {"columns": cols, "rows": [list(r) for r in rows]}

    def _columns(self, table: str) -> list[str]:
        return self.conn.dialect.columns(self.db, table)

    @_locked
    def load(self, doc: dict[str, Any], source: str, shown: str | None = None) -> int:
        """A new run made of archive ``doc`` (checked first: :func:`check`, its errors
        naming ``shown``, else ``source``), in one transaction; ``source`` (the file or
        database it came from) joins its provenance."""
        check(doc, shown or source)
        run = dict(doc["run"])
        inventory = dict(run.get("inventory") or {})
        inventory["provenance"] = [
            *provenance(inventory),
            {**doc.get("from", {}), "via": source, "at": time.time()},
        ]
        run["inventory"] = inventory
        values = [
            json.dumps(run[k], default=str) if k in JSON_COLUMNS else run[k] for k in RUN_COLUMNS
        ]
        with self.tx():
            cur = self.db.execute(
                f"INSERT INTO runs ({', '.join(RUN_COLUMNS)}, token) VALUES"
                f" ({', '.join('?' * len(RUN_COLUMNS))}, ?) RETURNING id",
                (*values, uuid.uuid4().hex),
            )
            run_id = returned_id(cur) or 0
            self.db.executemany(
                "INSERT INTO points (run_id, idx, key, repetition, spec) VALUES (?, ?, ?, ?, ?)",
                [
                    (run_id, p["idx"], p["key"], p["repetition"], json.dumps(p["spec"]))
                    for p in doc["points"]
                ],
            )
            for m in doc["measurements"]:
                self._load_measurement(run_id, m)
            self.db.executemany(
                "INSERT INTO events (run_id, at, kind, message, data) VALUES (?, ?, ?, ?, ?)",
                [
                    (run_id, e["at"], e["kind"], e["message"], json.dumps(e["data"]))
                    for e in doc["events"]
                ],
            )
            for table in SERIES_TABLES:
                self._load_table(table, run_id, doc.get(table) or {"columns": [], "rows": []})
        return run_id

    def _load_table(self, table: str, run_id: int, part: dict[str, Any]) -> None:
        """An archive's rows of ``table``: only columns the table has (names from a file
        never reach the SQL unchecked), every row as long as the column list."""
        cols = list(part.get("columns") or [])
        rows = list(part.get("rows") or [])
        known = set(self._columns(table)) - {"run_id"}
        if not set(cols) <= known or any(len(r) != len(cols) for r in rows):
            raise UserError(f"the archive's {table} do not fit this database's table", fix=FIX)
        if rows:
            names = ", ".join(["run_id", *cols])
            marks = ", ".join("?" * (len(cols) + 1))
            self.db.executemany(
                f"INSERT INTO {table} ({names}) VALUES ({marks})",
                [(run_id, *row) for row in rows],
            )

    def _load_measurement(self, run_id: int, m: dict[str, Any]) -> None:
        values = [m[k] for k in MEASUREMENT_COLUMNS]
        values[MEASUREMENT_COLUMNS.index("command")] = (
            json.dumps(m["command"]) if m["command"] else None
        )
        raw = rawpack.pack(m["raw_output"]) if m["raw_output"] is not None else None
        cur = self.db.execute(
            f"INSERT INTO measurements (run_id, {', '.join(MEASUREMENT_COLUMNS)}, raw_output, data)"
            f" VALUES (?, {', '.join('?' * len(MEASUREMENT_COLUMNS))}, ?, ?) RETURNING id",
            (run_id, *values, raw, pack_data(m["data"])),
        )
        mid = returned_id(cur) or 0
        self.db.executemany(
            "INSERT INTO histograms VALUES (?, ?, ?, ?, ?)",
            [
                (mid, h["host"], h["direction"], h["metric"], histpack.encode(h["bins"]))
                for h in m["histograms"]
            ],
        )

    def run_of(self, doc: dict[str, Any], source: str) -> int | None:
        """The run here that archive ``doc`` holds already (imported or merged before, or
        this database's own run), or None; ``doc`` is checked first (:func:`check`)."""
        check(doc, source)
        return self.run_with_token(tokens(doc))

    @_locked
    def run_with_token(self, tokens: set[str]) -> int | None:
        """The run here that is one of ``tokens``, or came from one (its provenance)."""
        for rid, token, inventory in self.db.execute("SELECT id, token, inventory FROM runs"):
            mine = {token, *(p.get("token") for p in provenance(json.loads(inventory)))}
            if mine & tokens:
                return int(rid)
        return None


def tokens(doc: dict[str, Any]) -> set[str]:
    """The tokens that name the run of archive ``doc``: the run it was dumped from and
    every run it came from before that (its provenance)."""
    origin = doc.get("from") if isinstance(doc.get("from"), dict) else {}
    inventory = doc["run"].get("inventory")
    before = provenance(inventory) if isinstance(inventory, dict) else []
    found = {origin.get("token"), *(p.get("token") for p in before if isinstance(p, dict))}
    return {t for t in found if isinstance(t, str) and t}


def _bins(stored: bytes | str) -> dict[int, int]:
    return histpack.decode(stored) if isinstance(stored, bytes) else json.loads(stored)


def unpack_limit(size: int) -> int:
    """The most an archive file of ``size`` bytes may unpack to (its gzip undone): a gzip
    bomb grows a thousandfold (2 MB to 2 GB and more), storbench's archives (JSON, gzip
    level 6) about fivefold; :data:`MAX_UNPACK_RATIO` times, or :data:`MIN_UNPACK_LIMIT`."""
    return max(MIN_UNPACK_LIMIT, MAX_UNPACK_RATIO * size)


def check(doc: Any, source: str) -> None:
    """UserError unless ``doc`` is an archive this storbench reads, whole: the document,
    then each of its members (store/archivecheck.py)."""
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise UserError(f"{source} is not a storbench archive", fix=FIX)
    if doc.get("version") != VERSION:
        raise UserError(
            f"{source} is a storbench archive of version {doc.get('version')!r}; this storbench "
            f"reads version {VERSION}",
            fix="import it with the storbench release that wrote it, or a newer one",
        )
    missing = [
        k
        for k in ("run", "points", "measurements", "events")
        if not isinstance(doc.get(k), (dict, list))
    ]
    run = doc.get("run") if isinstance(doc.get("run"), dict) else {}
    missing += [f"run.{k}" for k in RUN_COLUMNS if k not in run]
    if missing:
        raise UserError(
            f"{source} is a damaged storbench archive (no {', '.join(missing)})", fix=FIX
        )
    check_members(doc, source)
