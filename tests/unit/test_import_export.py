"""`storbench import` / `storbench export` end to end, and the results store's round trip,
on the recorded fio outputs of tests/data/fio."""

from __future__ import annotations

import copy
import csv
import datetime
import io
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from storbench.cli import cli
from storbench.engines import fio
from storbench.model.findings import Finding
from storbench.model.metrics import PERCENTILES, Measurement, pct_key
from storbench.plan import Point, Target
from storbench.store import Store
from storbench.store.measurements import unpack_data

DATA = Path(__file__).resolve().parent.parent / "data" / "fio"
LAT_KEYS = {"samples", "mean", "stddev", "min", "max"} | {f"p{pct_key(p)}" for p in PERCENTILES}


def _last_doc(path: Path) -> dict[str, Any]:
    text = path.read_text()
    dec, docs, i = json.JSONDecoder(), [], 0
    while (j := text.find("{", i)) != -1:
        d, i = dec.raw_decode(text, j)
        docs.append(d)
    return docs[-1]


def _groups(path: Path) -> list[Any]:
    return list(dict.fromkeys(j.get("groupid", 0) for j in _last_doc(path).get("jobs") or []))


#: the recordings of one reporting group (one measurement each); GROUPED: of several
FILES = [p for p in sorted(DATA.glob("*.json")) if len(_groups(p)) < 2]
GROUPED = [p for p in sorted(DATA.glob("*.json")) if len(_groups(p)) > 1]


def test_import_makes_one_measurement_per_reporting_group(tmp_path: Path) -> None:
    """A stonewalled second job is a reporting group of its own: a measurement of its own,
    its figures fio's own for that group (not rates over both groups' time)."""
    assert GROUPED, "a recording with several reporting groups (twojobs-sections-json)"
    for path in GROUPED:
        db = tmp_path / f"{path.stem}.db"
        _invoke(db, "import", str(path))
        recs = json.loads(_invoke(db, "export", "latest", "--format", "json").stdout)[
            "measurements"
        ]
        jobs = _last_doc(path)["jobs"]
        store = Store(str(db))
        try:
            rows = store.measurements.of_run(store.runs.all()[0].id)
            assert [r.point.axes["group"] for r in rows if r.point] == _groups(path)
            assert all(store.measurements.raw(r.id)["raw_output"] == path.read_text() for r in rows)
        finally:
            store.close()
        for rec, group in zip(recs, _groups(path), strict=True):
            (job,) = [j for j in jobs if j.get("groupid", 0) == group]
            assert rec["workload"] == job["jobname"]
            for d in ("read", "write"):
                if job[d]["io_bytes"]:
                    assert rec[d]["io_bytes"] == job[d]["io_bytes"]
                    assert rec[d]["iops"] == pytest.approx(job[d]["iops"])
                    assert rec[d]["bw_bytes"] == pytest.approx(job[d]["bw_bytes"])
                else:
                    assert d not in rec


def _entries(doc: dict[str, Any]) -> list[dict[str, Any]]:
    if "jobs" in doc:
        return doc["jobs"]
    return [c for c in doc["client_stats"] if c["jobname"] != "All clients"]


def _invoke(db: Path, *args: str) -> Any:
    result = CliRunner().invoke(
        cli, list(args), env={"STORBENCH_DB": str(db)}, catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    return result


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Every recording imported at once, then exported as JSON and CSV."""
    db = tmp_path_factory.mktemp("db") / "results.db"
    _invoke(db, "import", "--name", "recorded", *map(str, FILES))
    exported = json.loads(_invoke(db, "export", "latest", "--format", "json").stdout)
    csv_text = _invoke(db, "export", "latest", "--format", "csv").stdout
    return {"db": db, "json": exported, "csv": csv_text}


def test_import_makes_one_run_with_one_measurement_per_file(imported: dict[str, Any]) -> None:
    store = Store(str(imported["db"]))
    try:
        runs = store.runs.all()
        assert len(runs) == 1
        run = runs[0]
        assert (run.kind, run.name, run.status) == ("import", "recorded", "completed")
        assert run.fio_version == "fio-3.33"
        rows = store.measurements.of_run(run.id)
        assert len(rows) == len(FILES)
        assert [r.point.axes["file"] for r in rows if r.point] == [p.name for p in FILES]
        # raw output is kept byte for byte, and when fio ran as it says (its timestamp_ms)
        for r, path in zip(rows, FILES, strict=True):
            assert store.measurements.raw(r.id)["raw_output"] == path.read_text()
            doc = _last_doc(path)  # client/server outputs: timestamp (s) only, no elapsed
            assert r.ended_at == doc.get("timestamp_ms", 1000 * doc["timestamp"]) / 1000
            if "jobs" in doc:
                assert r.started_at is not None and r.started_at < r.ended_at
            else:
                assert r.started_at is None
    finally:
        store.close()
    shown = _invoke(imported["db"], "show", "latest").output
    first = min(t for r in rows for t in (r.started_at, r.ended_at) if t is not None)
    when = datetime.datetime.fromtimestamp(first).strftime("%Y-%m-%d %H:%M:%S")
    assert f"  fio ran {when} to " in shown and "outputs' own timestamps" in shown
    page = imported["db"].parent / "report.html"
    _invoke(imported["db"], "report", "latest", "-o", str(page))
    assert f"<th>fio ran</th><td>{when} to " in page.read_text()


def test_export_json_has_params_and_figures_per_measurement(imported: dict[str, Any]) -> None:
    doc = imported["json"]
    assert doc["run"]["kind"] == "import"
    assert doc["units"]["bw_bytes"] == "bytes/s" and doc["units"]["latency"] == "ns"
    recs = doc["measurements"]
    assert len(recs) == len(FILES)
    for rec, path in zip(recs, FILES, strict=True):
        fio_doc = _last_doc(path)
        entries = _entries(fio_doc)
        assert isinstance(rec["params"], dict) and rec["params"]
        assert rec["params"]["rw"] == entries[0]["job options"].get(
            "rw", (fio_doc.get("global options") or {}).get("rw")
        )
        dirs = [d for d in ("read", "write") if any(e[d]["total_ios"] for e in entries)]
        assert dirs
        for d in dirs:
            got = rec[d]
            for key in ("iops", "bw_bytes", "io_bytes", "runtime_s"):
                assert isinstance(got[key], int | float) and got[key] > 0, (path.name, d, key)
            assert got["io_bytes"] == sum(e[d]["io_bytes"] for e in entries)
            clat = got["clat_ns"]
            assert set(clat) == LAT_KEYS
            assert {"mean", "p50", "p95", "p99", "p99.9"} <= set(clat)
            assert clat["mean"] > 0
            if len(entries) == 1:  # one job: exactly fio's own figures
                want = entries[0][d]
                assert got["iops"] == want["iops"]
                assert got["bw_bytes"] == want["bw_bytes"]
                assert got["runtime_s"] == want["runtime"] / 1000
                assert clat["mean"] == want["clat_ns"]["mean"]
                for p in PERCENTILES:
                    assert clat[f"p{pct_key(p)}"] == want["clat_ns"]["percentile"][f"{p:f}"]
            elif path.stem == "clientserver-2hosts-json":
                # two hosts, plain json: no bins, no percentile of the union
                assert clat["p50"] is None and clat["p99.9"] is None
                for h in rec["hosts"].values():
                    assert h[d]["clat_ns"]["p99.9"] is not None
            else:
                assert all(clat[k] is not None for k in ("p50", "p95", "p99", "p99.9"))


def test_export_json_details(imported: dict[str, Any]) -> None:
    by_file = {
        Path(p).name: rec for p, rec in zip(FILES, imported["json"]["measurements"], strict=True)
    }
    rank = by_file["percentile-rank-jsonplus.json"]
    assert rank["read"]["clat_ns"]["p99.9"] == 2146304  # fio's own, not the double-rank value
    enospc = by_file["error-enospc-json.json"]
    assert enospc["status"] == "failed" and "No space left on device" in enospc["error"]
    cs = by_file["clientserver-2hosts-jsonplus.json"]
    assert set(cs["hosts"]) == {"127.0.0.1:18765", "127.0.0.1:18766"}
    assert cs["read"]["total_ios"] == sum(h["read"]["total_ios"] for h in cs["hosts"].values())
    lat = by_file["numjobs2-lat-percentiles-jsonplus.json"]["write"]
    assert lat["lat_ns"]["p99.9"] is not None and lat["clat_ns"]["p99.9"] is not None


def test_export_csv_one_row_per_measurement(imported: dict[str, Any]) -> None:
    rows = list(csv.DictReader(io.StringIO(imported["csv"])))
    assert len(rows) == len(FILES)
    header = next(csv.reader(io.StringIO(imported["csv"])))
    assert len(header) == len(set(header))
    for col in ("read_iops", "write_bw_bytes", "read_clat_p99.9_ns", "write_clat_p50_ns"):
        assert col in header
    for row, path in zip(rows, FILES, strict=True):
        entries = _entries(_last_doc(path))
        assert row["status"] in ("ok", "failed")
        if len(entries) == 1 and entries[0]["read"]["total_ios"]:
            assert float(row["read_iops"]) == entries[0]["read"]["iops"]
            assert (
                float(row["read_clat_p99_ns"])
                == entries[0]["read"]["clat_ns"]["percentile"]["99.000000"]
            )


def _storbench(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "STORBENCH_DB": str(db)}
    return subprocess.run(
        [sys.executable, "-m", "storbench", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )


@pytest.mark.parametrize(
    "bad", ["psync-randread-json.fio", "error-enospc-json.stderr"], ids=["job-file", "stderr"]
)
def test_import_of_a_file_without_json_is_a_one_line_error(tmp_path: Path, bad: str) -> None:
    db = tmp_path / "results.db"
    path = str(DATA / bad)
    res = _storbench(db, "import", str(FILES[0]), path)
    assert res.returncode == 2
    assert "Traceback" not in res.stderr
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    message = [ln for ln in lines if not ln.strip().startswith("fix:")]
    assert len(message) == 1, res.stderr
    assert path in message[0] and "no fio JSON" in message[0]
    # nothing recorded: the good file before it is not imported alone
    if db.exists():
        with sqlite3.connect(db) as con:
            assert con.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 0


# ---------------------------------------------------------------------------- store round trip


def _point(i: int, name: str) -> Point:
    return Point(
        index=i,
        key=f"k{i}",
        repetition=0,
        target=Target("file", f"{name}.dat"),
        workload=name,
        params={"rw": "randwrite"},
        axes={"file": name},
    )


def _without_bins(m: Measurement) -> Measurement:
    m = copy.deepcopy(m)
    for mm in [m, *m.hosts.values()]:
        for d in mm.directions.values():
            for lat in (d.slat, d.clat, d.lat):
                if lat is not None:
                    lat.bins = None
    return m


STORED = [
    "numjobs2-lat-percentiles-jsonplus",  # clat and lat bins
    "clientserver-2hosts-jsonplus",  # bins per host and merged
    "libaio-randrw-jsonplus",  # read and write
    "psync-randread-json",  # no bins at all
    "error-enospc-json",  # failed
]


def test_store_round_trip_with_and_without_bins(tmp_path: Path) -> None:
    store = Store(str(tmp_path / "results.db"))
    try:
        parsed = [fio.parse_output((DATA / f"{n}.json").read_text())[0] for n in STORED]
        assert parsed[0].directions["write"].lat.bins  # type: ignore[union-attr]
        points = [_point(i, n) for i, n in enumerate(STORED)]
        run = store.runs.create(
            kind="import",
            name="t",
            source="test",
            plan_text=None,
            overrides=[],
            inventory={},
            fio_version="fio-3.33",
            storbench_version="test",
            argv=[],
            points=points,
        )
        for p, m in zip(points, parsed, strict=True):
            store.measurements.record(
                run,
                p,
                m,
                engine="fio",
                command=None,
                job_file=None,
                raw_output=None,
                stderr=None,
                started_at=None,
                ended_at=None,
            )
        with_bins = [r.measurement for r in store.measurements.of_run(run, bins=True)]
        assert with_bins == parsed
        without = [r.measurement for r in store.measurements.of_run(run, bins=False)]
        assert without == [_without_bins(m) for m in parsed]
        assert without != parsed
        # histograms live in their own table: one row per (host, direction, metric)
        rows = store.db.execute(
            "SELECT h.host, h.direction, h.metric FROM histograms h"
            " JOIN measurements m ON m.id = h.measurement_id WHERE m.point_idx = 0"
        ).fetchall()
        assert sorted(tuple(r) for r in rows) == [("", "write", "clat"), ("", "write", "lat")]
        rows = store.db.execute(
            "SELECT h.host FROM histograms h"
            " JOIN measurements m ON m.id = h.measurement_id WHERE m.point_idx = 1"
        ).fetchall()
        assert sorted(r[0] for r in rows) == ["", "127.0.0.1:18765", "127.0.0.1:18766"]
        stored = store.db.execute("SELECT data FROM measurements WHERE point_idx = 0").fetchone()
        data = json.dumps(unpack_data(stored[0]))  # zlib of the JSON (schema 7)
        assert '"bins": null' in data and '"bins": {' not in data
    finally:
        store.close()


def test_export_json_carries_the_runs_timeline(tmp_path: Path) -> None:
    db = tmp_path / "events.db"
    _invoke(db, "import", "--name", "recorded", str(FILES[0]))
    store = Store(str(db))
    run_id = store.runs.all()[0].id
    store.events.add(run_id, "health", "HEALTH_WARN: OSD_DOWN", {"status": "HEALTH_WARN"}, at=5.0)
    store.close()
    doc = json.loads(_invoke(db, "export", "latest", "--format", "json").stdout)
    assert doc["events"] == [
        {
            "at": 5.0,
            "kind": "health",
            "message": "HEALTH_WARN: OSD_DOWN",
            "data": {"status": "HEALTH_WARN"},
        }
    ]


@pytest.mark.parametrize(
    ("name", "starts"),
    [("r.md", "**Warnings**"), ("r.json", "{"), ("r.txt", "run "), ("r.html", "<!DOCTYPE html>")],
)
def test_report_format_follows_the_output_suffix(
    imported: dict[str, Any], name: str, starts: str
) -> None:
    """`report RUN -o cmp.md` writes Markdown, as the name says (it wrote HTML before);
    --format still decides when given."""
    out = imported["db"].parent / name
    _invoke(imported["db"], "report", "latest", "-o", str(out))
    assert out.read_text().lstrip().startswith(starts), out.read_text()[:200]
    _invoke(imported["db"], "report", "latest", "--format", "html", "-o", str(out))
    assert out.read_text().lstrip().startswith("<!DOCTYPE html>")


def test_export_csv_findings_column_last(imported: dict[str, Any], tmp_path: Path) -> None:
    """Each row's finding codes in the last column (empty: none), every other column where
    it was: a finding added to one measurement (as a run's own checks add them) changes
    that row's last cell only."""
    db = tmp_path / "results.db"
    src, dst = sqlite3.connect(imported["db"]), sqlite3.connect(db)  # its WAL's pages too
    src.backup(dst)
    src.close()
    dst.close()
    store = Store(str(db))
    try:
        run_id = store.runs.all()[0].id
        found = {0: [Finding("page-cache", "buffered reads beyond direct=1", "set direct: 1")]}
        assert store.measurements.add_findings(run_id, found)
    finally:
        store.close()
    before = list(csv.reader(io.StringIO(imported["csv"])))
    after = list(csv.reader(io.StringIO(_invoke(db, "export", "latest", "--format", "csv").stdout)))
    assert before[0][-1] == after[0][-1] == "findings" and before[0] == after[0]
    assert [r[-1] for r in before[1:]] == [""] * len(FILES)
    assert after[1][-1] == "page-cache" and after[1][:-1] == before[1][:-1]
    assert after[2:] == before[2:]
