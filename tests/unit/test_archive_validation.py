"""Issue 25: an archive is checked member by member before anything of it is stored
(store/archivecheck.py), and its gzip is undone only so far (store/archive.py's
unpack_limit). Every case here is a CRAFTED archive, a real one (the runs of
tests/data/store/v6-runs.sql: a quick run with its series, host samples and events, and
an imported client/server output) changed in one member. Before, `started_at:
"yesterday"` or `1e300` was imported with exit 0 and then `runs`, `show`, `report` and
the web view failed for every run of the database; NaN IOPS was taken; other members made
`import` fail with a traceback, some after the run was stored; a gzip bomb was unpacked
whole. Now each is refused with one message naming the file and the member, exit 2, the
database as it was and every command still reading it."""

from __future__ import annotations

import copy
import gzip
import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from storbench.store import Store
from storbench.store.archivecheck import SERIES_COLUMNS
from storbench.web import app as web

DATA = Path(__file__).resolve().parents[1] / "data"


def sb(*args: str, db: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "storbench", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "STORBENCH_DB": str(db), "COLUMNS": "300"},
        cwd=cwd,
        timeout=120,
    )


@pytest.fixture(scope="module")
def real(tmp_path_factory: pytest.TempPathFactory) -> dict[int, dict[str, Any]]:
    """The archives of the real runs 1 (a quick run) and 2 (an import), as documents."""
    db = tmp_path_factory.mktemp("real") / "old.db"
    with sqlite3.connect(db) as c:
        c.executescript((DATA / "store" / "v6-runs.sql").read_text())
    store = Store(str(db))
    try:
        return {r: json.loads(json.dumps(store.archive.dump(r))) for r in (1, 2)}
    finally:
        store.close()


Change = Callable[[dict[str, Any]], Any]


def at(path: str, value: Any) -> Change:
    """Set ``value`` at ``path`` (dots; a number indexes a list; value ``DEL`` deletes)."""

    def change(doc: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        node: Any = doc
        for k in parents:
            node = node[int(k)] if isinstance(node, list) else node[k]
        key: Any = int(last) if isinstance(node, list) else last
        if value is DEL:
            del node[key]
        else:
            node[key] = value

    return change


DEL = object()


def cell(table: str, column: str, value: Any) -> Change:
    """Set ``value`` in the first row of a series table, at ``column``."""

    def change(doc: dict[str, Any]) -> None:
        doc[table]["rows"][0][doc[table]["columns"].index(column)] = value

    return change


NAN = float("nan")
M0 = "measurements.0"
READ = f"{M0}.data.directions.read"

CASES: dict[str, tuple[int, Change, str]] = {
    "started-yesterday": (1, at("run.started_at", "yesterday"), "run.started_at is not a time"),
    "started-1e300": (1, at("run.started_at", 1e300), "run.started_at is not a time"),
    "started-negative": (1, at("run.started_at", -1), "run.started_at is not a time"),
    "ended-inf": (1, at("run.ended_at", float("inf")), "run.ended_at is not a time"),
    "status": (1, at("run.status", "pwned"), "run.status is not one of"),
    "kind": (1, at("run.kind", "exec"), "run.kind is not one of"),
    "name-list": (1, at("run.name", ["x"]), "run.name is not text"),
    "name-surrogate": (1, at("run.name", "\ud800"), "run.name holds a lone surrogate"),
    "name-nul": (1, at("run.name", "a\0b"), "run.name holds a NUL"),
    "pid-text": (1, at("run.pid", "1"), "run.pid is not a whole number"),
    "overrides": (1, at("run.overrides", 5), "run.overrides is not a list"),
    "argv-item": (1, at("run.argv", [1]), "run.argv[0] is not text"),
    "inventory": (1, at("run.inventory", [1]), "run.inventory is not a mapping"),
    "provenance": (1, at("run.inventory.provenance", "x"), "provenance is not a list"),
    "provenance-at": (
        1,
        at("run.inventory.provenance", [{"at": 1e300}]),
        "provenance[0].at is not a time",
    ),
    "from": (1, at("from", "x"), "from is not a mapping"),
    "points-item": (1, at("points.0", "x"), "points[0] is not a mapping"),
    "point-idx": (1, at("points.1.idx", 0), "points[1].spec is not a point"),
    "point-twice": (1, lambda d: d["points"].append(d["points"][0]), "repeats an idx"),
    "spec-target": (1, at("points.0.spec.target", DEL), "points[0].spec is not a point"),
    "spec-params": (1, at("points.0.spec.params", "x"), "`params` is 'x', not a mapping"),
    # found by test_fuzz_archives.py: a list as a path broke `show`
    "spec-path-list": (1, at("points.0.spec.target.path", ["x"]), "`target.path` is ['x']"),
    "spec-key": (1, at("points.0.key", "other"), "is not the point its spec says"),
    "measurement-item": (1, at(M0, "x"), "measurements[0] is not a mapping"),
    "measurement-point": (1, at(f"{M0}.point_idx", 99), "point_idx is not the idx of a point"),
    "measurement-twice": (
        1,
        lambda d: d["measurements"].append(d["measurements"][0]),
        "repeats a point_idx",
    ),
    "measurement-engine": (1, at(f"{M0}.engine", DEL), "measurements[0] has no `engine`"),
    "measurement-status": (1, at(f"{M0}.status", "great"), "status is not one of"),
    "measurement-time": (1, at(f"{M0}.started_at", "now"), "started_at is not a time"),
    "raw-output": (1, at(f"{M0}.raw_output", 5), "raw_output is not text"),
    "command": (1, at(f"{M0}.command", "rm -rf /"), "command is not a list"),
    "data": (1, at(f"{M0}.data", "x"), "data is not a mapping"),
    "iops-nan": (1, at(f"{READ}.iops", NAN), "read.iops is not a finite number ≥ 0: nan"),
    "iops-negative": (1, at(f"{READ}.iops", -1), "read.iops is not a finite number"),
    "iops-text": (1, at(f"{READ}.iops", "fast"), "read.iops is not a finite number"),
    "bw-missing": (1, at(f"{READ}.bw_bytes", DEL), "read.bw_bytes is not a finite number"),
    "direction": (
        1,
        at(f"{M0}.data.directions.sideways", {}),
        "directions is not one of read, write, trim, mixed",
    ),
    "clat-mean": (1, at(f"{READ}.clat.mean", float("inf")), "clat.mean is not a finite"),
    "percentile-key": (1, at(f"{READ}.clat.percentiles.x", 1.0), "no percentage"),
    "cpu": (1, at(f"{M0}.data.usr_cpu", NAN), "usr_cpu is not a finite number"),
    "jobs": (1, at(f"{M0}.data.jobs", -1), "jobs is not a whole number"),
    "finding": (1, at(f"{M0}.data.findings", [{"code": 1}]), "findings[0].code is not text"),
    "figures-key": (1, at(f"{M0}.data.bogus", 1), "data.bogus is not what storbench writes"),
    "hosts-nested": (
        2,
        lambda d: d["measurements"][0]["data"]["hosts"].update(
            x={"hosts": {"y": {}}, "directions": {}}
        ),
        "nests hosts in a host",
    ),
    "histogram-bins": (1, at(f"{M0}.histograms.0.bins", {"x": 1}), "no whole number of ns"),
    "histogram-count": (1, at(f"{M0}.histograms.0.bins", {"10": -1}), "is not a whole number"),
    "histogram-huge": (1, at(f"{M0}.histograms.0.bins", {str(2**64): 1}), "no whole number"),
    "histogram-twice": (
        2,
        lambda d: d["measurements"][0]["histograms"].append(d["measurements"][0]["histograms"][0]),
        "repeats a histogram",
    ),
    # found by test_fuzz_archives.py: what load would drop, or fail on with a traceback
    "measurement-no-error": (1, at(f"{M0}.error", DEL), "measurements[0] has no `error`"),
    "run-key": (1, at("run.exec", "x"), "run holds a key storbench does not write there"),
    "measurement-key": (1, at(f"{M0}.shell", "x"), "holds a key storbench does not write"),
    "archive-key": (1, at("extra", {}), "the archive holds a key storbench does not write"),
    "intervals-column-list": (1, at("intervals.columns.0", ["x"]), "names a column the table"),
    "event-item": (1, at("events.0", 1), "events[0] is not a mapping"),
    "event-at": (1, at("events.0.at", "later"), "events[0].at is not a time"),
    "event-data": (1, at("events.0.data", []), "events[0].data is not a mapping"),
    "intervals-column": (1, at("intervals.columns.0", "run_id"), "names a column the table"),
    "intervals-width": (1, at("intervals.rows.0", [1]), "does not have the 13 values"),
    "intervals-point": (1, cell("intervals", "point_idx", 99), "is not the idx of a point"),
    "intervals-nan": (1, cell("intervals", "lat_mean", NAN), "lat_mean is not a finite number"),
    "intervals-ios": (1, cell("intervals", "ios", -5), "ios is not a whole number"),
    "intervals-twice": (
        1,
        lambda d: d["intervals"]["rows"].append(d["intervals"]["rows"][0]),
        "repeats a row's key",
    ),
    "samples-net": (1, cell("host_samples", "net", "{"), "net is not a JSON mapping"),
    "samples-missing-column": (
        1,
        lambda d: [
            d["host_samples"]["columns"].pop(5),
            [r.pop(5) for r in d["host_samples"]["rows"]],
        ],
        "lacks a column every row needs",
    ),
}


def write(path: Path, doc: dict[str, Any]) -> Path:
    path.write_bytes(gzip.compress(json.dumps(doc, allow_nan=True).encode()))
    return path


def assert_database_reads(db: Path, tmp_path: Path) -> None:
    """Every command that reads the database's runs reads them: it was not broken."""
    for args in (["runs"], ["show", "1"], ["report", "1", "-o", str(tmp_path / "r.html")]):
        r = sb(*args, db=db, cwd=tmp_path)
        assert r.returncode == 0 and "Traceback" not in r.stderr, (args, r.stderr)
    with TestClient(web.create_app(str(db)), base_url="http://127.0.0.1:8700") as client:
        assert client.get("/").status_code == 200


@pytest.fixture
def mine(tmp_path: Path, real: dict[int, dict[str, Any]]) -> Path:
    """A database with a run of its own (the real run 2, imported)."""
    db = tmp_path / "mine.db"
    r = sb("import", str(write(tmp_path / "good.sbz", real[2])), db=db, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    return db


@pytest.mark.parametrize("case", sorted(CASES))
def test_archive_refuses_a_crafted_member(
    tmp_path: Path, real: dict[int, dict[str, Any]], case: str
) -> None:
    run, change, says = CASES[case]
    doc = copy.deepcopy(real[run])
    change(doc)
    bad = write(tmp_path / "crafted.sbz", doc)
    db = tmp_path / "r.db"
    r = sb("import", str(bad), db=db, cwd=tmp_path)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert "Traceback" not in r.stderr + r.stdout
    assert r.stderr.count("storbench: error:") == 1, r.stderr
    first = r.stderr.splitlines()[0]
    assert first.count(str(bad)) == 1 and "damaged storbench archive" in first, first
    assert says in " ".join(r.stderr.split()), (says, r.stderr)
    if db.exists():
        with sqlite3.connect(db) as con:
            assert con.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 0


@pytest.mark.parametrize("started", ["yesterday", 1e300])
def test_archive_with_a_bad_start_time_leaves_the_database_readable(
    tmp_path: Path, real: dict[int, dict[str, Any]], mine: Path, started: Any
) -> None:
    doc = copy.deepcopy(real[1])
    doc["run"]["started_at"] = started
    r = sb("import", str(write(tmp_path / "crafted.sbz", doc)), db=mine, cwd=tmp_path)
    assert r.returncode == 2, r.stdout
    assert "run.started_at is not a time" in r.stderr
    with sqlite3.connect(mine) as con:
        assert con.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 1
    assert_database_reads(mine, tmp_path)


def test_archive_refusal_in_a_merged_database_names_its_run(
    tmp_path: Path, real: dict[int, dict[str, Any]], mine: Path
) -> None:
    """A database edited by hand is checked as an archive is when merge copies from it."""
    other = tmp_path / "other.db"
    assert (
        sb("import", str(write(tmp_path / "a.sbz", real[1])), db=other, cwd=tmp_path).returncode
        == 0
    )
    with sqlite3.connect(other) as con:
        con.execute("UPDATE runs SET started_at='yesterday'")
    r = sb("merge", str(other), db=mine, cwd=tmp_path)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert f"run 1 of {other} is a damaged storbench archive: run.started_at" in r.stderr
    with sqlite3.connect(other) as con:
        con.execute("UPDATE runs SET started_at=1")
        con.execute("UPDATE points SET spec='{' WHERE idx=0")
    r = sb("merge", str(other), db=mine, cwd=tmp_path)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert f"run 1 of {other} cannot be read to copy it" in r.stderr
    assert_database_reads(mine, tmp_path)


def bomb(path: Path, unpacked: int) -> Path:
    """A gzip file of ``unpacked`` bytes of zeros (members of 64 MiB: about 64 KiB each)."""
    member = gzip.compress(bytes(64 * 2**20), 9)
    path.write_bytes(b"".join(member for _ in range(unpacked // (64 * 2**20))))
    return path


def test_archive_gzip_bomb_is_unpacked_only_up_to_its_bound(tmp_path: Path, mine: Path) -> None:
    """2 MB that unpack to 2 GiB: refused once 256 MiB are unpacked (the bound for a file
    that small), never read whole. The command's peak memory says so."""
    path = bomb(tmp_path / "bomb.sbz", 2 * 2**30)
    assert path.stat().st_size < 4 * 2**20
    measure = (
        "import resource, subprocess, sys; "
        "r = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
        "print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); "
        "print(r.stderr, file=sys.stderr)"
    )
    r = subprocess.run(
        [sys.executable, "-c", measure, sys.executable, "-m", "storbench", "import", str(path)],
        capture_output=True,
        text=True,
        env={**os.environ, "STORBENCH_DB": str(mine)},
        timeout=300,
    )
    code, peak_kib = (int(x) for x in r.stdout.split())
    assert peak_kib < 1024 * 1024, f"it unpacked {peak_kib} KiB"  # far from the 2 GiB
    assert code == 2, r.stderr
    assert "Traceback" not in r.stderr and "MemoryError" not in r.stderr
    assert "unpacks to more than 256 MiB" in r.stderr, r.stderr
    with sqlite3.connect(mine) as con:
        assert con.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 1


@pytest.mark.parametrize(
    "content",
    [b"\x1f\x8b\x08\x00garbage", b"\x1f\x8b", b'{"format": "storbench-archive", [[[['],
    ids=["gzip-garbage", "gzip-head-only", "json-broken"],
)
def test_archive_that_is_no_whole_file_is_one_message(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "x.sbz"
    path.write_bytes(content)
    r = sb("import", str(path), db=tmp_path / "r.db", cwd=tmp_path)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.count("storbench: error:") == 1
    assert f"{path} is " in r.stderr and "not a whole storbench archive" in r.stderr


def test_archive_deep_json_is_one_message(tmp_path: Path) -> None:
    path = tmp_path / "x.sbz"
    path.write_bytes(gzip.compress(b'{"format": "storbench-archive", "x": ' + b"[" * 200000))
    r = sb("import", str(path), db=tmp_path / "r.db", cwd=tmp_path)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert "not a whole storbench archive" in r.stderr


def test_archive_series_columns_are_the_database_tables(tmp_path: Path) -> None:
    """The columns the check knows are the tables' (whatever a migration adds)."""
    store = Store(str(tmp_path / "r.db"))
    try:
        for table, kinds in SERIES_COLUMNS.items():
            columns = store.conn.dialect.columns(store.db, table)
            assert [c for c in columns if c != "run_id"] == list(kinds)
    finally:
        store.close()


def test_archive_every_real_run_passes(tmp_path: Path, real: dict[int, dict[str, Any]]) -> None:
    """Real archives of every stored schema (v4, v5, v6) are taken whole."""
    store = Store(str(tmp_path / "new.db"))
    try:
        for sql in sorted((DATA / "store").glob("v*.sql")):
            old = tmp_path / f"{sql.stem}.db"
            with sqlite3.connect(old) as c:
                c.executescript(sql.read_text())
            source = Store(str(old))
            for r in source.runs.all():
                store.archive.load(json.loads(json.dumps(source.archive.dump(r.id))), sql.name)
            source.close()
        assert len(store.runs.all()) == 4
    finally:
        store.close()
