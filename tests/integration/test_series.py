"""Every point's time series, end to end with real fio on real files: recorded while the
point runs, summing to fio's own result, shown by `show --point` and exported as CSV."""

from __future__ import annotations

import csv
import io
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from storbench.store.measurements import unpack_data

pytestmark = pytest.mark.integration

PLAN = """\
name: series
interval: 500ms
targets:
  - file: {dir}/a.dat
workloads:
  - name: mixed
    ioengine: psync
    rw: randrw
    bs: 4k
    size: 16m
    time_based: 1
    ramp_time: 1
    runtime: {runtime}
    rate_iops: 400
"""


def sb(*args: str, db: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "storbench", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
        env={**os.environ, "STORBENCH_DB": str(db), "COLUMNS": "200"},
    )


def ok(r: subprocess.CompletedProcess[str]) -> str:
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Traceback" not in r.stderr
    return r.stdout


def rows(db: Path, sql: str, *args: Any) -> list[tuple[Any, ...]]:
    con = sqlite3.connect(db)
    try:
        return con.execute(sql, args).fetchall()
    finally:
        con.close()


@pytest.fixture(scope="module")
def bed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("series")
    (d / "p.yaml").write_text(PLAN.format(dir=d, runtime=3))
    db = d / "results.db"
    ok(sb("run", str(d / "p.yaml"), db=db, cwd=d))
    return {"dir": d, "db": db}


def test_series_of_a_real_fio_point_sums_to_its_measurement(bed: dict[str, Path]) -> None:
    db = bed["db"]
    (data,) = rows(db, "SELECT data FROM measurements WHERE run_id=1")
    meas = unpack_data(data[0])
    for ddir in ("read", "write"):
        got = rows(
            db,
            "SELECT seq, t_ms, dur_ms, ramp, ios, bytes, p99 FROM intervals"
            " WHERE run_id=1 AND point_idx=0 AND host='' AND direction=? ORDER BY seq",
            ddir,
        )
        measured = [r for r in got if not r[3]]
        assert [r[0] for r in got] == list(range(len(got)))
        assert [r[1] for r in got] == sorted(r[1] for r in got)
        assert any(r[3] for r in got), "ramp_time 1 s: its intervals are marked"
        # 3 s measured at a report every 500 ms (the last one may be merged into the tail)
        assert 5 <= len(measured) <= 7, got
        d = meas["directions"][ddir]
        assert sum(r[4] for r in measured) == d["total_ios"] > 0
        assert sum(r[5] for r in measured) == d["io_bytes"]
        assert sum(r[2] for r in measured) == round(d["runtime_s"] * 1000)
        assert all(r[6] is not None and r[6] > 0 for r in measured)


def test_series_shown_by_show_point_and_exported_as_csv(bed: dict[str, Path]) -> None:
    db, d = bed["db"], bed["dir"]
    shown = ok(sb("show", "1", "--point", "1", db=db, cwd=d))
    assert "# time series" in shown and "read:" in shown and "write:" in shown
    assert "ramp" in shown and "p99.9" in shown
    text = ok(sb("export", "1", "--series", db=db, cwd=d))
    table = list(csv.DictReader(io.StringIO(text)))
    (count,) = rows(db, "SELECT COUNT(*) FROM intervals WHERE run_id=1")
    assert len(table) == count[0] > 0
    for r in table:
        assert r["point"] == "1"
        ios, dur = int(r["ios"]), float(r["dur_s"])
        assert float(r["iops"]) == pytest.approx(ios / dur, rel=1e-6)


def test_series_written_while_the_point_runs(tmp_path: Path) -> None:
    """A long point's intervals are in the database before it ends (a crash keeps them)."""
    (tmp_path / "p.yaml").write_text(PLAN.format(dir=tmp_path, runtime=8))
    db = tmp_path / "results.db"
    env = {**os.environ, "STORBENCH_DB": str(db)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "storbench", "run", str(tmp_path / "p.yaml")],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        seen_while_running = 0
        deadline = time.monotonic() + 60
        while proc.poll() is None and time.monotonic() < deadline:
            try:
                n = rows(db, "SELECT COUNT(*) FROM intervals")[0][0]
                measured = rows(db, "SELECT COUNT(*) FROM measurements")[0][0]
            except sqlite3.OperationalError:  # not created yet
                n = measured = 0
            if n >= 4 and measured == 0:
                seen_while_running = n
                break
            time.sleep(0.2)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert seen_while_running >= 4
