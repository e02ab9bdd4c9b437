"""Events on a run's timeline (schema 2): the in-place migration of a real schema 1 database,
the events API, and a Store written from several threads at once."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
import zlib
from pathlib import Path
from typing import Any

import pytest

from storbench.engines import fio
from storbench.model.errors import UserError
from storbench.plan import Point, Target
from storbench.store import SCHEMA_VERSION, Store, _strip_bins

DATA = Path(__file__).resolve().parent.parent / "data" / "fio"
#: a json+ output: the measurement has latency histograms (the histograms table is used)
RECORDING = DATA / "libaio-randrw-jsonplus.json"

#: The schema of storbench's first results databases (SCHEMA_VERSION 1), verbatim from
#: src/storbench/store.py (now store/) before events were added: users' results.db files look
#: like this.
V1_SCHEMA = """
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

POINT = Point(
    index=0,
    key="k0",
    repetition=0,
    target=Target("file", "/mnt/x/sb.dat"),
    workload="randrw",
    params={"rw": "randrw", "bs": "4k", "iodepth": 16},
    axes={"iodepth": 16},
)
INVENTORY = {"host": {"hostname": "lab1"}, "targets": [POINT.target.to_dict()]}


def make_v1_db(path: Path) -> str:
    """A schema 1 database holding one finished run of one point measured by a recorded fio
    json+ output, written the way storbench 1 wrote it (WAL, the same columns and JSON)."""
    text = RECORDING.read_text()
    meas = fio.measurement_from_document(fio.final_document(text)[0])
    data = meas.to_dict()
    hists: list[tuple[str, str, str, dict[int, int]]] = []
    _strip_bins(data, "", hists)
    assert hists, "the recording has histograms"
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.executescript(
        "BEGIN;\n" + V1_SCHEMA + "INSERT INTO meta VALUES ('schema_version', '1');\nCOMMIT;"
    )
    db.execute(
        "INSERT INTO runs (kind, name, source, plan_text, overrides, status, started_at,"
        " ended_at, inventory, fio_version, storbench_version, hostname, pid, argv)"
        " VALUES ('run', 'old', 'plan.yaml', 'name: old\n', '[]', 'completed', 1000.0, 1010.0,"
        " ?, 'fio-3.33', '0.1.0', 'lab1', NULL, '[\"storbench\"]')",
        (json.dumps(INVENTORY),),
    )
    db.execute(
        "INSERT INTO points VALUES (1, 0, ?, 0, ?)", (POINT.key, json.dumps(POINT.to_dict()))
    )
    cur = db.execute(
        "INSERT INTO measurements (run_id, point_idx, status, error, started_at, ended_at,"
        " engine, engine_version, command, job_file, raw_output, stderr, data)"
        " VALUES (1, 0, 'ok', NULL, 1001.0, 1009.0, 'fio', ?, ?, ?, ?, NULL, ?)",
        (
            meas.engine_version,
            json.dumps(["fio", "--output-format=json+", "job.fio"]),
            "[randrw]\nrw=randrw\n",
            zlib.compress(text.encode(), 6),
            json.dumps(data),
        ),
    )
    db.executemany(
        "INSERT INTO histograms VALUES (?, ?, ?, ?, ?)",
        [(cur.lastrowid, h, d, m, json.dumps(b)) for h, d, m, b in hists],
    )
    db.close()
    return text


def schema_of(path: Path) -> dict[str, str]:
    db = sqlite3.connect(path)
    try:
        return {
            name: sql
            for name, sql in db.execute(
                "SELECT name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'"
            )
        }
    finally:
        db.close()


def test_a_v1_database_migrates_in_place_and_keeps_its_run(tmp_path: Path) -> None:
    path = tmp_path / "results.db"
    raw_text = make_v1_db(path)
    v1_tables = schema_of(path)
    assert "events" not in v1_tables

    store = Store(str(path))
    assert store.db.execute("SELECT value FROM meta").fetchone()[0] == str(SCHEMA_VERSION)
    # the same schema as a database made new by this version, and every v1 table unchanged
    # but for the columns schema 3 adds to `runs`
    fresh = tmp_path / "fresh.db"
    Store(str(fresh)).close()
    migrated = schema_of(path)
    assert migrated == schema_of(fresh)
    assert {k: migrated[k] for k in v1_tables if k != "runs"} == {
        k: v for k, v in v1_tables.items() if k != "runs"
    }
    columns = [r[1] for r in store.db.execute("PRAGMA table_info(runs)")]
    assert columns[-3:] == ["token", "proc_id", "heartbeat"]
    assert migrated["runs"].startswith(v1_tables["runs"].rstrip().rstrip(")"))

    # the run, its point, its measurement (histograms put back) and raw output are intact
    run = store.runs.get(1)
    assert (run.name, run.status, run.points, run.measured, run.failed) == (
        "old",
        "completed",
        1,
        1,
        0,
    )
    assert run.inventory == INVENTORY and run.started_at == 1000.0
    assert store.runs.points(1) == [POINT]
    [row] = store.measurements.of_run(1, bins=True)
    want = fio.measurement_from_document(fio.final_document(raw_text)[0])
    assert row.measurement.to_dict() == want.to_dict()
    assert any(d.clat and d.clat.bins for d in row.measurement.directions.values())
    assert store.measurements.raw(row.id)["raw_output"] == raw_text

    # events work on the migrated database, and go with their run
    eid = store.events.add(1, "health", "HEALTH_WARN: OSD_DOWN (1 osds down)", {"n": 1}, at=1005.0)
    assert [(e.id, e.kind, e.at, e.data) for e in store.events.of_run(1)] == [
        (eid, "health", 1005.0, {"n": 1})
    ]
    store.close()

    again = Store(str(path))  # opening a current database changes nothing
    assert schema_of(path) == schema_of(fresh)
    assert [e.message for e in again.events.of_run(1)] == ["HEALTH_WARN: OSD_DOWN (1 osds down)"]
    with again.conn.tx():
        again.db.execute("DELETE FROM runs WHERE id=1")
    assert again.events.of_run(1) == []
    assert again.db.execute("SELECT COUNT(*) FROM events").fetchone()[0] == 0
    again.close()


def test_a_newer_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "results.db"
    Store(str(path)).close()
    db = sqlite3.connect(path)
    db.execute("UPDATE meta SET value=? WHERE key='schema_version'", (str(SCHEMA_VERSION + 1),))
    db.commit()
    db.close()
    newer = rf"newer storbench \(schema {SCHEMA_VERSION + 1}, this one knows {SCHEMA_VERSION}\)"
    with pytest.raises(UserError, match=newer):
        Store(str(path))


def _run(store: Store, name: str = "r") -> int:
    return store.runs.create(
        kind="run",
        name=name,
        source="test",
        plan_text=None,
        overrides=[],
        inventory={},
        fio_version=None,
        storbench_version="0.1.0",
        argv=[],
        points=[POINT],
    )


def test_events_are_ordered_by_time_then_id_and_filtered_by_kind(tmp_path: Path) -> None:
    store = Store(str(tmp_path / "r.db"))
    run, other = _run(store), _run(store, "other")
    t0 = time.time()
    late = store.events.add(
        run, "rados-cleanup", "removed 239 objects", {"objects": 239}, at=t0 + 9
    )
    first = store.events.add(run, "health", "HEALTH_OK", at=t0 + 1)
    same = store.events.add(
        run, "health", "HEALTH_WARN: OSD_DOWN", {"checks": ["OSD_DOWN"]}, at=t0 + 1
    )
    store.events.add(other, "health", "elsewhere")
    now = store.events.add(run, "preflight", "no --at: now")
    events = store.events.of_run(run)
    assert [e.id for e in events] == [now, first, same, late]
    assert events[1].data == {} and events[2].data == {"checks": ["OSD_DOWN"]}
    assert t0 <= events[0].at <= time.time()
    assert [e.id for e in store.events.of_run(run, "health")] == [first, same]
    assert store.events.of_run(run, "rbd-image") == []
    assert all(e.run_id == run for e in events)


def test_command_of_several_processes_round_trips(tmp_path: Path) -> None:
    """A point of two rados bench clients keeps each client's argv."""
    store = Store(str(tmp_path / "r.db"))
    run = _run(store)
    argvs = [
        ["rados", "-p", "bench", "bench", "4", "write", "--run-name", "r-c1"],
        ["rados", "-p", "bench", "bench", "4", "write", "--run-name", "r-c2"],
    ]
    meas = fio.measurement_from_document(fio.final_document(RECORDING.read_text())[0])
    mid = store.measurements.record(
        run,
        POINT,
        meas,
        engine="rados",
        command=argvs,
        job_file=None,
        raw_output="x",
        stderr=None,
        started_at=None,
        ended_at=None,
    )
    assert store.measurements.raw(mid)["command"] == argvs


def test_a_store_written_from_another_thread_during_a_transaction(tmp_path: Path) -> None:
    """An event recorded from another thread while this one is inside a transaction waits
    for it, and is not part of it: the transaction rolls back, the event stays."""
    store = Store(str(tmp_path / "r.db"))
    run = _run(store)
    errors: list[BaseException] = []
    ids: list[int] = []

    def add() -> None:
        try:
            ids.append(store.events.add(run, "health", "from the monitor thread"))
        except BaseException as e:
            errors.append(e)

    t = threading.Thread(target=add)
    with pytest.raises(RuntimeError, match="roll back"), store.conn.tx():
        store.db.execute("UPDATE runs SET name='changed' WHERE id=?", (run,))
        t.start()
        t.join(0.5)  # the thread is held up by this transaction (else it has failed)
        raise RuntimeError("roll back")
    t.join(10)
    assert not t.is_alive()
    assert errors == []
    assert store.runs.get(run).name == "r"
    assert [(e.id, e.message) for e in store.events.of_run(run)] == [
        (ids[0], "from the monitor thread")
    ]


def test_many_threads_and_the_runner_at_once(tmp_path: Path) -> None:
    store = Store(str(tmp_path / "r.db"))
    points = [
        Point(i, f"k{i}", 0, POINT.target, "randrw", POINT.params, POINT.axes) for i in range(20)
    ]
    run = store.runs.create(
        kind="run",
        name="r",
        source="t",
        plan_text=None,
        overrides=[],
        inventory={},
        fio_version=None,
        storbench_version="0.1.0",
        argv=[],
        points=points,
    )
    meas = fio.measurement_from_document(fio.final_document(RECORDING.read_text())[0])
    errors: list[BaseException] = []

    def events(n: int) -> None:
        try:
            for i in range(50):
                store.events.add(run, f"thread-{n}", f"event {i}", {"i": i})
                store.events.of_run(run, f"thread-{n}")
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=events, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for p in points:  # the runner's own writes, in the main thread, meanwhile
        store.measurements.record(
            run,
            p,
            meas,
            engine="fio",
            command=["fio"],
            job_file=None,
            raw_output="x",
            stderr=None,
            started_at=None,
            ended_at=None,
        )
    for t in threads:
        t.join(60)
    assert not any(t.is_alive() for t in threads)
    assert errors == []
    got: dict[str, Any] = {}
    for e in store.events.of_run(run):
        got.setdefault(e.kind, []).append(e.data["i"])
    assert got == {f"thread-{n}": list(range(50)) for n in range(4)}
    assert store.runs.get(run).measured == 20
