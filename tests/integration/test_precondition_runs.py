"""Preconditioning end to end with real fio on a real file: the sequential phase writes the
target twice before its first point (once per target), the workload phase runs a point's
own workload to steady state first; each is an event with its own series, never a
measurement, and a file storbench did not create is never preconditioned."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.integration

PLAN = """\
name: pre
interval: 500ms
{top}targets:
  - file: {dir}/a.dat
    precondition: {mode}
workloads:
  - name: r
    ioengine: psync
    rw: randread
    bs: 4k
    iodepth: [1, 2]
    size: 8m
    runtime: 1
    time_based: 1
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


def _rows(db: Path, sql: str) -> list[tuple[Any, ...]]:
    con = sqlite3.connect(db)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def test_precondition_sequential_writes_the_target_twice_once(tmp_path: Path) -> None:
    (tmp_path / "p.yaml").write_text(PLAN.format(dir=tmp_path, mode="sequential", top=""))
    db = tmp_path / "r.db"
    r = sb("run", "p.yaml", db=db, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "preconditioning " in r.stdout and "(sequential" in r.stdout
    events = _rows(db, "SELECT data FROM events WHERE kind='precondition'")
    assert len(events) == 1  # once for the target, not before each point
    data = json.loads(events[0][0])
    assert data["status"] == "ok" and data["point"] == 0 and data["series_point"] == -1
    assert data["io_bytes"] == 2 * 8 * 2**20  # the whole target, twice
    assert "rw=write" in data["job_file"] and "bs=128k" in data["job_file"]
    assert "loops=2" in data["job_file"]
    # its series apart from the points', and no measurement of it
    assert _rows(db, "SELECT count(*) FROM intervals WHERE point_idx=-1 AND ramp=0")[0][0] >= 1
    assert _rows(db, "SELECT point_idx FROM measurements ORDER BY point_idx") == [(0,), (1,)]
    shown = sb("show", "1", "--point", "1", db=db, cwd=tmp_path)
    assert "# preconditioning (sequential)" in shown.stdout
    csv_text = sb("export", "1", "--series", db=db, cwd=tmp_path).stdout
    assert all(not line.startswith("1,0,") for line in csv_text.splitlines())  # not point 0


def test_precondition_workload_runs_each_point_to_steady_state_first(tmp_path: Path) -> None:
    top = "steady_state: {round: 1s, window: 2, rounds: 3, range: 100%, slope: 100%}\n"
    # the plan's steady state applies to the points too: both phases settle in 2 rounds
    (tmp_path / "p.yaml").write_text(PLAN.format(dir=tmp_path, mode="workload", top=top))
    db = tmp_path / "r.db"
    r = sb("run", "p.yaml", db=db, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    events = [
        json.loads(d) for (d,) in _rows(db, "SELECT data FROM events WHERE kind='precondition'")
    ]
    assert [e["point"] for e in events] == [0, 1]  # before every point
    for e in events:
        assert e["mode"] == "workload" and e["status"] == "ok"
        assert e["steady_state"]["reached"] and e["steady_state"]["rounds"] == 2
    assert _rows(db, "SELECT count(*) FROM measurements")[0][0] == 2


def test_precondition_refuses_a_file_storbench_did_not_create(tmp_path: Path) -> None:
    precious = tmp_path / "a.dat"
    precious.write_bytes(b"PRECIOUS" * 2**20)
    (tmp_path / "p.yaml").write_text(PLAN.format(dir=tmp_path, mode="sequential", top=""))
    r = sb("run", "p.yaml", db=tmp_path / "r.db", cwd=tmp_path)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "Traceback" not in r.stderr
    assert precious.read_bytes() == b"PRECIOUS" * 2**20
