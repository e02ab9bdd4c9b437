"""Steady state end to end with real fio on real files: a point that settles stops at the
first window that meets SNIA's criteria and its figures are that window's (checked against
each round's own fio output); one that cannot settle runs its most rounds and is flagged in
every table, export and comparison."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from storbench.model import rawpack
from storbench.store.measurements import unpack_data

pytestmark = pytest.mark.integration

PLAN = """\
name: {name}
interval: 500ms
steady_state: {steady}
targets:
  - file: {dir}/s.dat
workloads:
  - name: rr
    ioengine: psync
    rw: randread
    bs: 4k
    size: 8m
{more}"""

#: a rate fio holds: the rounds agree within a few %, so the first window settles
SETTLES = {"steady": "{round: 1s, window: 3, rounds: 8}", "more": "    rate_iops: 400\n"}
#: limits no real machine meets (0.001 % of the mean): the point runs all its rounds (a
#: rate cap it never reaches: the two runs differ in one option, and compare matches them)
NEVER = {
    "steady": "{round: 1s, window: 2, rounds: 3, range: 0.001%, slope: 0.001%}",
    "more": "    rate_iops: 10000000\n",
}


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


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    d = tmp_path_factory.mktemp("steady")
    db = d / "r.db"
    out = {}
    for name, plan in (("settles", SETTLES), ("never", NEVER)):
        (d / f"{name}.yaml").write_text(PLAN.format(name=name, dir=d, **plan))
        out[name] = ok(sb("run", f"{name}.yaml", db=db, cwd=d))
    return {"dir": d, "db": db, "out": out}


def _stored(db: Path, run: int) -> tuple[dict[str, Any], str]:
    con = sqlite3.connect(db)
    try:
        data, raw = con.execute(
            "SELECT data, raw_output FROM measurements WHERE run_id=?", (run,)
        ).fetchone()
    finally:
        con.close()

    return unpack_data(data), rawpack.unpack(raw)


def _round_outputs(raw: str) -> list[dict[str, Any]]:
    """Each round's fio document, read from the point's raw output with json alone."""
    docs = []
    for section in raw.split("### output:\n")[1:]:
        text = section.split("### storbench steady state")[0]
        doc, _ = json.JSONDecoder().raw_decode(text[text.index("{") :])
        docs.append(doc)
    return docs


def test_steady_point_stops_at_its_first_steady_window(runs: dict[str, Any]) -> None:
    data, raw = _stored(runs["db"], 1)
    st = data["extra"]["steady_state"]
    v = st["verdict"]
    assert v["reached"] and v["rounds"] < 8  # stopped early
    assert v["last"] == v["rounds"] and v["last"] - v["first"] + 1 == 3
    assert v["range_pct"] <= 20 and v["slope_pct"] <= 10
    assert f"steady in rounds {v['first']}-{v['last']}" in runs["out"]["settles"]
    docs = _round_outputs(raw)
    assert len(docs) == v["rounds"]  # every round's output kept, in order
    # each round's value is its fio's own IOPS; the point's figures are the window's
    for doc, value in zip(docs, v["values"], strict=True):
        assert value == pytest.approx(doc["jobs"][0]["read"]["iops"], rel=1e-6)
    window = docs[v["first"] - 1 : v["last"]]
    ios = sum(d["jobs"][0]["read"]["total_ios"] for d in window)
    runtime_ms = sum(d["jobs"][0]["read"]["runtime"] for d in window)
    read = data["directions"]["read"]
    assert read["total_ios"] == ios
    assert read["iops"] == pytest.approx(ios / (runtime_ms / 1000), rel=1e-6)


def test_steady_rounds_make_one_time_series(runs: dict[str, Any]) -> None:
    con = sqlite3.connect(runs["db"])
    try:
        rows = con.execute(
            "SELECT seq, t_ms, ios FROM intervals WHERE run_id=1 AND host='' ORDER BY seq"
        ).fetchall()
    finally:
        con.close()
    data, _ = _stored(runs["db"], 1)
    rounds = data["extra"]["steady_state"]["verdict"]["rounds"]
    assert len(rows) >= rounds * 2 - 1  # 500 ms intervals, 1 s rounds
    assert [r[0] for r in rows] == list(range(len(rows)))
    times = [r[1] for r in rows]
    assert times == sorted(times) and times[-1] >= (rounds - 1) * 1000
    lo, hi = data["extra"]["steady_state"]["window_ms"]
    assert 0 <= lo < hi <= times[-1] + 1000


def test_steady_not_reached_is_flagged_in_every_table(runs: dict[str, Any]) -> None:
    data, raw = _stored(runs["db"], 2)
    v = data["extra"]["steady_state"]["verdict"]
    assert not v["reached"] and v["rounds"] == 3 and len(_round_outputs(raw)) == 3
    assert data["status"] == "ok"  # kept, with its figures: flagged, not hidden
    d, db = runs["dir"], runs["db"]
    assert "STEADY STATE NOT REACHED in 3 rounds" in runs["out"]["never"]
    assert "NOT REACHED (3 rounds)" in runs["out"]["never"]  # the run's table
    assert "NOT REACHED (3 rounds)" in ok(sb("show", "2", db=db, cwd=d))
    shown = ok(sb("show", "2", "--point", "1", db=db, cwd=d))
    assert "steady state NOT reached: rounds 2-3 of 3" in shown
    assert "NOT a steady-state result" in shown
    md = ok(sb("report", "2", "--format", "markdown", db=db, cwd=d))
    assert "NOT REACHED (3 rounds)" in md
    csv_text = ok(sb("export", "2", "--format", "csv", db=db, cwd=d))
    assert "steady_state" in csv_text.splitlines()[0] and ",NOT REACHED," in csv_text
    exported = json.loads(ok(sb("export", "2", "--format", "json", db=db, cwd=d)))
    assert exported["measurements"][0]["steady_state"]["verdict"]["reached"] is False
    cmp = ok(sb("compare", "1", "2", db=db, cwd=d))
    assert "steady state NOT REACHED in" in cmp
