"""`export --format archive`, `import` of an archive and `merge` (cli/transfer.py) on a real
database (tests/data/store/v6-runs.sql: a real quick run and an imported client/server
output, written by a previous release): what arrives is what left, with its provenance,
and nothing arrives twice."""

from __future__ import annotations

import gzip
import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[1] / "data"


def sb(*args: str, db: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "storbench", *args, "--db", str(db)],
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def old(tmp_path: Path) -> Path:
    db = tmp_path / "old.db"
    with sqlite3.connect(db) as c:
        c.executescript((DATA / "store" / "v6-runs.sql").read_text())
    assert sb("runs", db=db).returncode == 0  # brought up to date once
    return db


def exported(db: Path, run: int) -> dict:
    r = sb("export", str(run), "--format", "json", db=db)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    doc["run"].pop("id")
    doc["run"]["inventory"].pop("provenance", None)
    for m in doc["measurements"]:  # this database's ids
        m.pop("run"), m.pop("measurement")
    return doc


def test_transfer_archive_export_import_round_trips(old: Path, tmp_path: Path) -> None:
    archive = tmp_path / "run1.sbz"
    r = sb("export", "1", "--format", "archive", "-o", str(archive), db=old)
    assert r.returncode == 0, r.stderr
    assert json.loads(gzip.decompress(archive.read_bytes()))["format"] == "storbench-archive"
    new = tmp_path / "new.db"
    sb("import", str(DATA / "fio" / "null-engine-jsonplus.json"), db=new)  # run 1 there
    r = sb("import", str(archive), db=new)
    assert r.returncode == 0, r.stderr
    assert f"imported {archive} as run 2" in r.stdout
    assert exported(new, 2) == exported(old, 1)
    raw_old = sb("show", "1", "--point", "2", db=old).stdout
    raw_new = sb("show", "2", "--point", "2", db=new).stdout
    assert raw_new.split("\n", 1)[1] == raw_old.split("\n", 1)[1]  # all but the run's id
    doc = json.loads(sb("export", "2", "--format", "json", db=new).stdout)
    (prov,) = doc["run"]["inventory"]["provenance"]
    assert prov["db"] == str(old) and prov["run"] == 1 and prov["via"] == str(archive)
    # again: the archive of the copy is the archive of the original
    again = tmp_path / "again.sbz"
    assert sb("export", "2", "--format", "archive", "-o", str(again), db=new).returncode == 0
    a = json.loads(gzip.decompress(archive.read_bytes()))
    b = json.loads(gzip.decompress(again.read_bytes()))
    for d in (a, b):
        d.pop("from")
        d["run"]["inventory"].pop("provenance", None)
    assert a == b


def test_transfer_merge_copies_every_run_once_with_its_provenance(
    old: Path, tmp_path: Path
) -> None:
    new = tmp_path / "new.db"
    r = sb("merge", str(old), db=new)
    assert r.returncode == 0, r.stderr
    assert "run 1 (quick) copied as run 1" in r.stdout
    assert "run 2 (imported) copied as run 2" in r.stdout
    for run in (1, 2):
        assert exported(new, run) == exported(old, run)
    r = sb("merge", str(old), db=new)
    assert "run 1 (quick) is here already as run 1: skipped" in r.stdout
    assert "merged 0 run(s)" in r.stdout
    third = tmp_path / "third.db"
    r = sb("merge", str(new), "--run", "2", db=third)  # a copy of a copy: same origin
    assert "run 2 (imported) copied as run 1" in r.stdout
    r = sb("merge", str(old), db=third)
    assert "run 2 (imported) is here already as run 1: skipped" in r.stdout
    assert "run 1 (quick) copied as run 2" in r.stdout
    assert sb("merge", str(new), db=new).returncode == 2  # itself


def test_transfer_refuses_what_it_cannot_take_and_stores_nothing(old: Path, tmp_path: Path) -> None:
    new = tmp_path / "new.db"
    archive = tmp_path / "run1.sbz"
    sb("export", "1", "--format", "archive", "-o", str(archive), db=old)
    broken = tmp_path / "broken.sbz"
    broken.write_bytes(archive.read_bytes()[: len(archive.read_bytes()) // 2])
    fio_out = str(DATA / "fio" / "null-engine-jsonplus.json")
    for files, said in [
        ([str(broken)], "is gzip'd but not a whole storbench archive"),
        ([str(archive), fio_out], "archives and fio outputs cannot be imported together"),
        ([fio_out, str(DATA / "fio" / "error-enospc-json.stderr")], "error-enospc-json.stderr"),
    ]:
        r = sb("import", *files, db=new)
        assert r.returncode == 2, r.stdout + r.stderr
        assert said in r.stderr and "Traceback" not in r.stderr
    with sqlite3.connect(new) as c:  # nothing of any of them stayed
        assert c.execute("SELECT count(*) FROM runs").fetchone() == (0,)
        assert c.execute("SELECT count(*) FROM measurements").fetchone() == (0,)


def test_import_of_the_same_archive_twice_makes_one_run(old: Path, tmp_path: Path) -> None:
    """An archive already imported (or its run already here by any path: merged, or this
    database's own) is recognised by its token and skipped, as merge skips it."""
    archive = tmp_path / "run1.sbz"
    assert sb("export", "1", "--format", "archive", "-o", str(archive), db=old).returncode == 0
    new = tmp_path / "new.db"
    assert f"imported {archive} as run 1" in sb("import", str(archive), db=new).stdout
    r = sb("import", str(archive), db=new)
    assert r.returncode == 0, r.stderr
    assert f"{archive} (run 1 of {old}) is here already as run 1: skipped" in r.stdout
    assert "imported 0 of 1 archive(s)" in r.stdout
    # a copy of the copy, and the original database itself: the same run, skipped
    again = tmp_path / "again.sbz"
    assert sb("export", "1", "--format", "archive", "-o", str(again), db=new).returncode == 0
    third = tmp_path / "third.db"
    assert sb("merge", str(old), db=third).returncode == 0
    for db, here in ((third, 1), (old, 1), (new, 1)):
        r = sb("import", str(again), db=db)
        assert r.returncode == 0, r.stderr
        assert f"is here already as run {here}: skipped" in r.stdout, r.stdout
    with sqlite3.connect(new) as c:
        assert c.execute("SELECT count(*) FROM runs").fetchone() == (1,)
