"""The database's tables, by schema version, and splitting a script into statements."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator
from typing import Any

from storbench.model import histpack

SCHEMA_VERSION = 7

_EVENTS = """
CREATE TABLE IF NOT EXISTS events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    at REAL NOT NULL,                  -- unix time, s
    kind TEXT NOT NULL,                -- health | preflight | rados-objects | rados-cleanup | ...
    message TEXT NOT NULL,             -- one line a human reads in a report
    data TEXT NOT NULL DEFAULT '{}'    -- JSON details
);
CREATE INDEX IF NOT EXISTS events_run ON events (run_id, at);
"""

#: The tables' SQL text, comments included, is what every database keeps (sqlite_master):
#: the migration tests compare a migrated old database with a fresh one, so it stays as
#: written. Its "storbench.series" and "storbench.hostload" are today store/series.py and
#: store/hostload.py.
_INTERVALS = """
CREATE TABLE IF NOT EXISTS intervals (  -- each point's time series (storbench.series)
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    point_idx INTEGER NOT NULL,
    host TEXT NOT NULL,                -- '' for the point itself
    direction TEXT NOT NULL,           -- read | write | trim
    seq INTEGER NOT NULL,              -- 0, 1, ... per host and direction
    t_ms INTEGER NOT NULL,             -- end of the interval, ms after the engine started
    dur_ms INTEGER NOT NULL,           -- its length, ms
    ramp INTEGER NOT NULL,             -- 1: before the measurement (ramp_time)
    ios INTEGER NOT NULL,              -- I/Os completed in it
    bytes INTEGER NOT NULL,            -- bytes moved in it
    lat_mean REAL,                     -- ns, of the I/Os completed in it
    p50 REAL,                          -- ns, from the interval's own histogram
    p99 REAL,
    p999 REAL,
    PRIMARY KEY (run_id, point_idx, host, direction, seq)
) WITHOUT ROWID;
"""

_HOST_SAMPLES = """
CREATE TABLE IF NOT EXISTS host_samples (  -- what the load's host did (storbench.hostload)
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    point_idx INTEGER NOT NULL,
    host TEXT NOT NULL,                -- '' for the machine storbench runs on
    seq INTEGER NOT NULL,
    t_ms INTEGER NOT NULL,             -- end of the interval, ms after the point's load began
    dur_ms INTEGER NOT NULL,
    cpu_user REAL NOT NULL,            -- % of the interval's CPU time: user + nice
    cpu_system REAL NOT NULL,          -- system + irq + softirq
    cpu_iowait REAL NOT NULL,
    cpu_idle REAL NOT NULL,
    cpu_steal REAL NOT NULL,
    mem_used INTEGER NOT NULL,         -- bytes: MemTotal - MemAvailable
    mem_total INTEGER NOT NULL,
    net TEXT NOT NULL,                 -- JSON {interface: [rx bytes/s, tx bytes/s]}
    disks TEXT NOT NULL,               -- JSON {device: [util %, queue, read B/s, write B/s, IOPS]}
    PRIMARY KEY (run_id, point_idx, host, seq)
) WITHOUT ROWID;
"""

_HOST_POWER = """
-- this machine's power over the interval (storbench.power), W; NULL: no sensor answered
ALTER TABLE host_samples ADD COLUMN watts REAL;
"""

_RUN_LIVENESS = """
ALTER TABLE runs ADD COLUMN token TEXT;       -- marks the run's processes (procguard.py)
ALTER TABLE runs ADD COLUMN proc_id TEXT;     -- BOOT_ID:START_TICKS of the executing process
ALTER TABLE runs ADD COLUMN heartbeat REAL;   -- unix time, s, of its last sign of life
"""

#: The tables as schema 1 made them (later ones follow; a migrated database's tables read
#: the same). Since schema 7 ``histograms.bins`` holds each histogram packed as a BLOB
#: (storbench.histpack; SQLite keeps a BLOB as it is in a TEXT column), not as JSON text;
#: measurements written since keep ``data`` as zlib of its JSON and ``raw_output`` packed
#: (storbench.rawpack); older rows stay as they were written and read as before.
_SCHEMA = (
    """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL,                -- run | import
    name TEXT NOT NULL,
    source TEXT NOT NULL,              -- plan file path, suite:NAME, or imported file list
    plan_text TEXT,                    -- the plan exactly as read
    overrides TEXT NOT NULL DEFAULT '[]',  -- --set / --target arguments (JSON list)
    status TEXT NOT NULL,              -- running | completed | failed | interrupted
    started_at REAL NOT NULL,
    ended_at REAL,
    inventory TEXT NOT NULL DEFAULT '{}',
    fio_version TEXT,
    storbench_version TEXT,
    hostname TEXT,
    pid INTEGER,
    argv TEXT
);
CREATE TABLE IF NOT EXISTS points (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    idx INTEGER NOT NULL,
    key TEXT NOT NULL,
    repetition INTEGER NOT NULL,
    spec TEXT NOT NULL,                -- the Point as JSON (target, workload, params, axes)
    PRIMARY KEY (run_id, idx)
);
CREATE TABLE IF NOT EXISTS measurements (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    point_idx INTEGER NOT NULL,
    status TEXT NOT NULL,              -- ok | failed | partial
    error TEXT,
    started_at REAL,
    ended_at REAL,
    engine TEXT NOT NULL,
    engine_version TEXT,
    command TEXT,                      -- argv as JSON
    job_file TEXT,
    raw_output BLOB,                   -- zlib-compressed engine stdout
    stderr TEXT,
    data TEXT NOT NULL,                -- Measurement as JSON, histograms left out
    UNIQUE (run_id, point_idx)
);
CREATE TABLE IF NOT EXISTS histograms (
    measurement_id INTEGER NOT NULL REFERENCES measurements(id) ON DELETE CASCADE,
    host TEXT NOT NULL,                -- '' for the aggregate
    direction TEXT NOT NULL,
    metric TEXT NOT NULL,              -- clat | lat | slat
    bins TEXT NOT NULL,                -- {"bucket ns": count}
    PRIMARY KEY (measurement_id, host, direction, metric)
);
"""
    + _EVENTS
    + _RUN_LIVENESS
    + _INTERVALS
    + _HOST_SAMPLES
    + _HOST_POWER
)


#: The tables of schema 7 on PostgreSQL, column for column those of SQLite (in the same
#: order: ``INSERT INTO histograms VALUES`` and archives rely on it), in PostgreSQL's types:
#: times DOUBLE PRECISION (its REAL is 4 bytes: a unix time would lose its seconds), the
#: packed columns BYTEA, integers BIGINT (bytes and memory outgrow 32 bits), ids identities.
#: A PostgreSQL database starts at schema 7; later versions migrate it like SQLite's.
PG_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    source TEXT NOT NULL,
    plan_text TEXT,
    overrides TEXT NOT NULL DEFAULT '[]',
    status TEXT NOT NULL,
    started_at DOUBLE PRECISION NOT NULL,
    ended_at DOUBLE PRECISION,
    inventory TEXT NOT NULL DEFAULT '{}',
    fio_version TEXT,
    storbench_version TEXT,
    hostname TEXT,
    pid BIGINT,
    argv TEXT,
    token TEXT,
    proc_id TEXT,
    heartbeat DOUBLE PRECISION
);
CREATE TABLE IF NOT EXISTS points (
    run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    idx BIGINT NOT NULL,
    key TEXT NOT NULL,
    repetition BIGINT NOT NULL,
    spec TEXT NOT NULL,
    PRIMARY KEY (run_id, idx)
);
CREATE TABLE IF NOT EXISTS measurements (
    id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    point_idx BIGINT NOT NULL,
    status TEXT NOT NULL,
    error TEXT,
    started_at DOUBLE PRECISION,
    ended_at DOUBLE PRECISION,
    engine TEXT NOT NULL,
    engine_version TEXT,
    command TEXT,
    job_file TEXT,
    raw_output BYTEA,                  -- storbench.rawpack
    stderr TEXT,
    data BYTEA NOT NULL,               -- zlib of the Measurement's JSON (pack_data)
    UNIQUE (run_id, point_idx)
);
CREATE TABLE IF NOT EXISTS histograms (
    measurement_id BIGINT NOT NULL REFERENCES measurements(id) ON DELETE CASCADE,
    host TEXT NOT NULL,
    direction TEXT NOT NULL,
    metric TEXT NOT NULL,
    bins BYTEA NOT NULL,               -- storbench.histpack
    PRIMARY KEY (measurement_id, host, direction, metric)
);
CREATE TABLE IF NOT EXISTS events (
    id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    at DOUBLE PRECISION NOT NULL,
    kind TEXT NOT NULL,
    message TEXT NOT NULL,
    data TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX IF NOT EXISTS events_run ON events (run_id, at);
CREATE TABLE IF NOT EXISTS intervals (
    run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    point_idx BIGINT NOT NULL,
    host TEXT NOT NULL,
    direction TEXT NOT NULL,
    seq BIGINT NOT NULL,
    t_ms BIGINT NOT NULL,
    dur_ms BIGINT NOT NULL,
    ramp BIGINT NOT NULL,
    ios BIGINT NOT NULL,
    bytes BIGINT NOT NULL,
    lat_mean DOUBLE PRECISION,
    p50 DOUBLE PRECISION,
    p99 DOUBLE PRECISION,
    p999 DOUBLE PRECISION,
    PRIMARY KEY (run_id, point_idx, host, direction, seq)
);
CREATE TABLE IF NOT EXISTS host_samples (
    run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    point_idx BIGINT NOT NULL,
    host TEXT NOT NULL,
    seq BIGINT NOT NULL,
    t_ms BIGINT NOT NULL,
    dur_ms BIGINT NOT NULL,
    cpu_user DOUBLE PRECISION NOT NULL,
    cpu_system DOUBLE PRECISION NOT NULL,
    cpu_iowait DOUBLE PRECISION NOT NULL,
    cpu_idle DOUBLE PRECISION NOT NULL,
    cpu_steal DOUBLE PRECISION NOT NULL,
    mem_used BIGINT NOT NULL,
    mem_total BIGINT NOT NULL,
    net TEXT NOT NULL,
    disks TEXT NOT NULL,
    watts DOUBLE PRECISION,
    PRIMARY KEY (run_id, point_idx, host, seq)
);
"""

#: The schema version a database holds, written when it is created or migrated.
SET_VERSION = (
    "INSERT INTO meta (key, value) VALUES ('schema_version', ?)"
    " ON CONFLICT (key) DO UPDATE SET value=excluded.value"
)


def _pack_histograms(db: Any) -> None:
    """Schema 7: every histogram's bins from JSON text to histpack's packed form (about an
    eighth of the size), rewritten in place, row by row in batches."""
    last = -1
    while True:
        rows = db.execute(
            "SELECT rowid, bins FROM histograms WHERE rowid > ? AND typeof(bins) = 'text'"
            " ORDER BY rowid LIMIT 2000",
            (last,),
        ).fetchall()
        if not rows:
            return
        db.executemany(
            "UPDATE histograms SET bins = ? WHERE rowid = ?",
            [(histpack.encode(json.loads(bins)), rowid) for rowid, bins in rows],
        )
        last = rows[-1][0]


#: What brings a database of schema N-1 to N (statements, or a function of the connection;
#: each runs in the migration's one transaction).
_MIGRATIONS: dict[int, str | Callable[[Any], None]] = {
    2: _EVENTS,
    3: _RUN_LIVENESS,
    4: _INTERVALS,
    5: _HOST_SAMPLES,
    6: _HOST_POWER,
    7: _pack_histograms,
}


def _histpack_of_text(bins: Any) -> Any:
    """A histogram as schema 7 keeps it, from an older row's JSON text (a packed one as it is)."""
    return histpack.encode(json.loads(bins)) if isinstance(bins, str) else bins


def _current_tables() -> dict[str, tuple[str, list[str]]]:
    """Each table of the current schema: how it is created, and its columns in order."""
    mem = sqlite3.connect(":memory:")
    try:
        for statement in _statements(_SCHEMA):
            mem.execute(statement)
        rows = mem.execute("SELECT name, sql FROM sqlite_master WHERE type='table'").fetchall()
        return {
            name: (sql, [r[1] for r in mem.execute(f"PRAGMA table_info({name})")])
            for name, sql in rows
            if name != "sqlite_sequence"
        }
    finally:
        mem.close()


def read_through(db: sqlite3.Connection, version: int | None) -> None:
    """Let a command that only reads see an SQLite database of an older schema (or one that
    holds no tables yet) as the current one, without writing it: in the connection's TEMP
    schema (which lives beside the file, never in it, and which SQLite looks in first), an
    empty table for each table the database does not have yet, and a view for each table
    that lacks columns (NULL in them, as a migration leaves them) -- and, before schema 7,
    for ``histograms`` (the JSON text of their bins packed as it is read). A migration
    that is not only additive needs its view here too."""
    db.create_function("storbench_histpack", 1, _histpack_of_text, deterministic=True)
    for name, (sql, columns) in _current_tables().items():
        have = [r[1] for r in db.execute(f"PRAGMA main.table_info({name})")]
        if not have:
            db.execute(sql.replace("CREATE TABLE", "CREATE TEMP TABLE", 1))
            continue
        exprs = {c: c for c in have}
        if name == "histograms" and version is not None and version < 7:
            exprs["bins"] = "storbench_histpack(bins)"
        elif have == columns:
            continue
        db.execute(
            f"CREATE TEMP VIEW {name} AS SELECT "
            + ", ".join(f"{exprs.get(c, 'NULL')} AS {c}" for c in columns)
            + f" FROM main.{name}"
        )


def _statements(script: str) -> Iterator[str]:
    """The SQL statements of a script, one by one (``sqlite3.complete_statement`` decides
    where one ends: a ``;`` in a comment or a string does not)."""
    buf = ""
    for line in script.splitlines(keepends=True):
        buf += line
        if sqlite3.complete_statement(buf):
            yield buf.strip()
            buf = ""
    if buf.strip():
        raise ValueError(f"incomplete SQL statement: {buf.strip()!r}")
