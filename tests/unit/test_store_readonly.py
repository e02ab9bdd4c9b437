"""Reading never changes a database: `show`, `runs`, `export`, `report`, `serve` and the
source of `merge` read an older schema through it (the file's bytes and mtime stay as they
were, no -wal/-shm is left, the schema version stays) and a rollback-journal database stays
one; a command that writes (`run`, `import`, `merge` into it...) brings it up to date."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from starlette.testclient import TestClient
from test_store_schema7 import renumbered  # (tests/unit: the previous release's export)

from storbench.store import Store
from storbench.store.schema import SCHEMA_VERSION
from storbench.web import app as web

DATA = Path(__file__).resolve().parents[1] / "data"
OLD = {4: "v4-run.sql", 5: "v5-run.sql", 6: "v6-runs.sql"}


def sb(*args: str, db: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "storbench", *args, "--db", str(db)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "200"},
    )


def old_db(path: Path, version: int) -> Path:
    with sqlite3.connect(path) as c:
        c.executescript((DATA / "store" / OLD[version]).read_text())
    c.close()
    return path


def state(path: Path) -> tuple[bytes, int, list[str]]:
    """What must not change: the bytes, the mtime, and the files beside it."""
    beside = sorted(p.name for p in path.parent.iterdir() if p.name.startswith(path.name))
    return path.read_bytes(), path.stat().st_mtime_ns, beside


def version(path: Path) -> str:
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as c:
        v = c.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0]
    c.close()
    return str(v)


def journal_mode(path: Path) -> str:
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as c:
        mode = c.execute("PRAGMA journal_mode").fetchone()[0]
    c.close()
    return str(mode)


@pytest.mark.parametrize("v", sorted(OLD))
def test_store_reading_commands_leave_an_older_schema_as_it_is(tmp_path: Path, v: int) -> None:
    db = old_db(tmp_path / "old.db", v)
    before = state(db)
    shown = sb("show", "1", db=db)
    assert shown.returncode == 0 and "Traceback" not in shown.stderr, shown.stderr
    assert "iops" in shown.stdout.lower()
    for args in (("runs",), ("export", "1", "--format", "json"), ("show", "1", "--point", "1")):
        r = sb(*args, db=db)
        assert r.returncode == 0 and "Traceback" not in r.stderr, (args, r.stderr)
    with TestClient(web.create_app(str(db)), base_url="http://127.0.0.1:8700") as client:
        assert client.get("/").status_code == 200
        assert client.get("/runs/1").status_code == 200
    assert state(db) == before
    assert version(db) == str(v) and journal_mode(db) == "delete"


def test_store_an_older_schema_reads_as_its_release_wrote_it(tmp_path: Path) -> None:
    db = old_db(tmp_path / "old.db", 6)
    before = state(db)
    for run in (1, 2):
        r = sb("export", str(run), "--format", "json", db=db)
        assert r.returncode == 0, r.stderr
        doc = json.loads(r.stdout)
        assert doc.pop("findings") == []
        assert doc == renumbered(
            json.loads((DATA / "store" / f"v6-runs.run{run}.json").read_text())
        )
    assert state(db) == before


def test_store_merge_reads_its_source_without_migrating_it(tmp_path: Path) -> None:
    other = old_db(tmp_path / "other.db", 6)
    before = state(other)
    mine = tmp_path / "mine.db"
    r = sb("merge", str(other), db=mine)
    assert r.returncode == 0, r.stderr
    assert state(other) == before and version(other) == "6"
    # what arrived reads as the source's release wrote it
    for run in (1, 2):
        r = sb("export", str(run), "--format", "json", db=mine)
        doc = json.loads(r.stdout)
        doc.pop("findings")
        want = renumbered(json.loads((DATA / "store" / f"v6-runs.run{run}.json").read_text()))
        assert doc["measurements"] == want["measurements"]


def test_store_a_rollback_journal_database_stays_one_while_read(tmp_path: Path) -> None:
    db = tmp_path / "current.db"
    Store(str(db)).close()  # a current one, WAL as storbench makes it ...
    with sqlite3.connect(db) as c:  # ... set back to a rollback journal by its owner
        c.execute("PRAGMA journal_mode=DELETE")
    c.close()
    before = state(db)
    assert sb("runs", db=db).returncode == 0
    with TestClient(web.create_app(str(db)), base_url="http://127.0.0.1:8700") as client:
        assert client.get("/").status_code == 200
    assert state(db) == before and journal_mode(db) == "delete"


def test_store_a_write_brings_an_older_schema_up_to_date(tmp_path: Path) -> None:
    db = old_db(tmp_path / "old.db", 6)
    r = sb("import", str(DATA / "fio" / "clientserver-2hosts-jsonplus.json"), db=db)
    assert r.returncode == 0, r.stderr
    assert version(db) == str(SCHEMA_VERSION)
    assert sb("show", "3", db=db).returncode == 0


def test_store_reading_a_database_that_holds_nothing_yet_makes_no_tables(tmp_path: Path) -> None:
    db = tmp_path / "empty.db"
    db.touch()
    before = state(db)
    r = sb("runs", db=db)
    assert r.returncode == 0 and "no runs" in r.stdout, r.stderr
    assert state(db) == before
