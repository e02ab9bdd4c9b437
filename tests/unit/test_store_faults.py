"""Issue 17 point 9: every database fault reaches the user as one clear message (exit 2,
no traceback) -- a damaged or foreign file, a read-only or unwritable database, a lock held
longer than the busy timeout, a disk that fills up during a run -- and a database on
read-only media still opens for reading. Real storbench in a subprocess, real fio (null
engine) where a run is needed, real SQLite files, real read-only and size-limited mounts."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
RECORDING = REPO / "tests" / "data" / "fio" / "psync-randread-json.json"
HAVE_FIO = shutil.which("fio") is not None
READERS = (
    ["runs"],
    ["show", "latest"],
    ["export", "latest", "--format", "json"],
    ["report", "latest", "--format", "markdown"],
    ["compare", "1", "1"],
)


def sb(
    db: Path, *args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if k != "STORBENCH_FIO"}
    full.update({"STORBENCH_DB": str(db), "COLUMNS": "200", **(env or {})})
    return subprocess.run(
        [sys.executable, "-m", "storbench", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=full,
        timeout=timeout,
    )


def one_error(r: subprocess.CompletedProcess[str], *says: str) -> str:
    text = r.stdout + r.stderr
    assert r.returncode == 2, (r.returncode, text)
    assert "Traceback" not in text, text
    assert r.stderr.count("storbench: error:") == 1, r.stderr
    assert "fix:" in r.stderr, r.stderr
    flat = " ".join(r.stderr.split())
    for s in says:
        assert s in flat, (s, r.stderr)
    return flat


def imported_db(tmp_path: Path, name: str = "results.db") -> Path:
    db = tmp_path / name
    r = sb(db, "import", str(RECORDING), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    return db


PLAN = """\
name: tiny
targets:
  - file: {dir}/scratch.dat
workloads:
  - name: w
    ioengine: null
    rw: randread
    bs: 4k
    size: 1m
    runtime: 1
    time_based: 1
    iodepth: [1, 2, 3, 4, 5, 6, 7, 8]
"""


# ------------------------------------------------------------------ damaged and foreign files


def test_dbfault_a_damaged_database_is_a_message_in_every_command(tmp_path: Path) -> None:
    db = imported_db(tmp_path)
    size = db.stat().st_size
    page = sqlite3.connect(db).execute("PRAGMA page_size").fetchone()[0]
    assert size > 3 * page
    with open(db, "r+b") as f:  # garbage over every page but the first (the header)
        f.seek(page)
        f.write(b"\xa5" * (size - page))
    for args in [*READERS, ["import", str(RECORDING)], ["resume", "latest"], ["cleanup", "1"]]:
        flat = one_error(sb(db, *args, cwd=tmp_path), str(db))
        assert "damaged" in flat or "not a storbench" in flat, flat


@pytest.mark.parametrize(
    ("column", "text", "why"),
    [
        ("inventory", "{not json", "JSONDecodeError"),
        ("inventory", "[1, 2]", "it is list, not dict"),
        ("overrides", '{"a": 1}', "it is dict, not list"),
    ],
)
def test_dbfault_a_hand_edited_run_row_is_a_message(
    tmp_path: Path, column: str, text: str, why: str
) -> None:
    """A run whose inventory or overrides a hand edit broke: every reading command says
    which run and column and how to repair it, no traceback."""
    db = imported_db(tmp_path)
    with sqlite3.connect(db) as c:
        c.execute(f"UPDATE runs SET {column}=? WHERE id=1", (text,))
    for args in READERS:
        one_error(sb(db, *args, cwd=tmp_path), f"run 1 of {db}", f"its {column}", why, "UPDATE")


def test_dbfault_a_file_that_is_not_a_database(tmp_path: Path) -> None:
    db = tmp_path / "notes.txt"
    db.write_text("these are my notes, not a database\n" * 200)
    for args in (["runs"], ["import", str(RECORDING)]):
        one_error(sb(db, *args, cwd=tmp_path), str(db), "not a storbench results database")
    assert db.read_text().startswith("these are my notes")


# ------------------------------------------------------------------ read-only media


@pytest.fixture
def read_only_mount(tmp_path: Path) -> Iterator[Path]:
    """A read-only bind mount of a directory (root only)."""
    src = tmp_path / "src"
    src.mkdir()
    ro = tmp_path / "ro"
    ro.mkdir()
    if os.geteuid() != 0:
        pytest.skip("a read-only mount needs root")
    r = subprocess.run(["mount", "--bind", str(src), str(ro)], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot bind-mount here: {r.stderr.strip()}")
    try:
        r = subprocess.run(
            ["mount", "-o", "remount,bind,ro", str(ro)], capture_output=True, text=True
        )
        if r.returncode != 0:
            pytest.skip(f"cannot remount read-only here: {r.stderr.strip()}")
        yield src
    finally:
        subprocess.run(["umount", "-l", str(ro)], capture_output=True)


def test_dbfault_read_only_media_opens_for_reading(tmp_path: Path, read_only_mount: Path) -> None:
    imported_db(read_only_mount)
    for leftover in read_only_mount.glob("results.db-*"):
        leftover.unlink()  # as a copied or archived database: no -wal, no -shm
    db = tmp_path / "ro" / "results.db"
    for args in READERS:
        r = sb(db, *args, cwd=tmp_path)
        assert r.returncode == 0, (args, r.stdout + r.stderr)
        assert "Traceback" not in r.stderr
    assert "psync" in sb(db, "export", "1", "--format", "csv", cwd=tmp_path).stdout
    one_error(sb(db, "import", str(RECORDING), cwd=tmp_path), str(db), "read-only")
    one_error(sb(db, "resume", "latest", cwd=tmp_path), str(db), "read-only")


@pytest.mark.skipif(not HAVE_FIO, reason="fio is not installed")
def test_dbfault_run_on_a_read_only_database_leaves_no_scratch_file(
    tmp_path: Path, read_only_mount: Path
) -> None:
    imported_db(read_only_mount)
    db = tmp_path / "ro" / "results.db"
    plan = tmp_path / "p.yaml"
    plan.write_text(PLAN.format(dir=tmp_path))
    one_error(sb(db, "run", str(plan), cwd=tmp_path), str(db), "read-only")
    assert not (tmp_path / "scratch.dat").exists()
    # and a database that cannot be created at all
    missing = tmp_path / "ro" / "new.db"
    one_error(sb(missing, "run", str(plan), cwd=tmp_path), str(missing))
    assert not (tmp_path / "scratch.dat").exists()


# ------------------------------------------------------------------ locks


def test_dbfault_a_lock_held_past_the_busy_timeout(tmp_path: Path) -> None:
    db = imported_db(tmp_path)
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        env = {"STORBENCH_DB_TIMEOUT": "0.5"}
        one_error(
            sb(db, "import", str(RECORDING), cwd=tmp_path, env=env),
            str(db),
            "locked",
            "STORBENCH_DB_TIMEOUT",
        )
        r = sb(db, "runs", cwd=tmp_path, env=env)  # WAL: readers are not blocked
        assert r.returncode == 0, r.stderr
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert sb(db, "import", str(RECORDING), cwd=tmp_path).returncode == 0


def test_dbfault_a_bad_busy_timeout_is_a_message(tmp_path: Path) -> None:
    one_error(
        sb(
            tmp_path / "r.db",
            "import",
            str(RECORDING),
            cwd=tmp_path,
            env={"STORBENCH_DB_TIMEOUT": "soon"},
        ),
        "STORBENCH_DB_TIMEOUT",
    )


# ------------------------------------------------------------------ a full disk


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    d = tmp_path / "small"
    d.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    r = subprocess.run(
        # room for a few points of the plan below, not all 8 (each point's commits add pages
        # to the write-ahead log: its measurement, histograms and time series; measured:
        # the first ~270 KB with the schema, ~50 KB each after it, so 2 or 3 points here)
        ["mount", "-t", "tmpfs", "-o", "size=450k", "tmpfs", str(d)],
        capture_output=True,
        text=True,
    )
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {r.stderr.strip()}")
    try:
        yield d
    finally:
        subprocess.run(["umount", "-l", str(d)], capture_output=True)


@pytest.mark.skipif(not HAVE_FIO, reason="fio is not installed")
def test_dbfault_disk_full_mid_run_keeps_the_points_and_says_how_to_resume(
    tmp_path: Path, small_disk: Path
) -> None:
    db = small_disk / "results.db"
    plan = tmp_path / "p.yaml"
    plan.write_text(PLAN.format(dir=tmp_path))
    r = sb(db, "run", str(plan), cwd=tmp_path, timeout=300)
    flat = one_error(r, str(db), "full")
    assert "storbench resume 1" in flat
    assert not (tmp_path / "scratch.dat").exists(), "the scratch file is removed"
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    kept = con.execute("SELECT COUNT(*) FROM measurements").fetchone()[0]
    con.close()
    assert 1 <= kept < 8, kept
    # once there is room again (here: the database moves to a bigger disk), resume finishes
    big = tmp_path / "results.db"
    src = sqlite3.connect(db)
    dst = sqlite3.connect(big)
    src.backup(dst)
    src.close()
    dst.close()
    r = sb(big, "resume", "1", cwd=tmp_path, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    con = sqlite3.connect(big)
    assert con.execute("SELECT COUNT(*) FROM measurements").fetchone()[0] == 8
    con.close()


def test_dbfault_reading_commands_make_no_database(tmp_path: Path) -> None:
    """Found by the fuzz test: `runs --db latest` made a database named `latest`."""
    db = tmp_path / "typo.db"
    r = sb(db, "runs", cwd=tmp_path)
    assert r.returncode == 0 and "no runs" in r.stdout, r.stdout + r.stderr
    for args in READERS[1:]:
        one_error(sb(db, *args, cwd=tmp_path), "there is no results database", str(db))
    assert list(tmp_path.iterdir()) == []
