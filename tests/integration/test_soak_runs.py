"""The soak suite end to end with real fio on a real file: a short soak ends in a verdict
whose figures are those of its stored series; Ctrl-C ends one early, cleanly, and still
gives the verdict for the time it ran."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pytest

from storbench.store.measurements import unpack_data

pytestmark = pytest.mark.integration


def _env(db: Path) -> dict[str, str]:
    return {**os.environ, "STORBENCH_DB": str(db), "COLUMNS": "200"}


def sb(*args: str, db: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "storbench", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
        env=_env(db),
    )


def ok(r: subprocess.CompletedProcess[str]) -> str:
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Traceback" not in r.stderr
    return r.stdout


SETS = ["--set", "size=32m", "--set", "interval=500ms", "--set", "iodepth=4"]


def test_soak_short_run_gives_a_verdict_from_its_series(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    out = ok(
        sb(
            "run",
            "soak",
            "-t",
            f"{tmp_path}/s.dat",
            "--set",
            "duration=4",
            *SETS,
            db=db,
            cwd=tmp_path,
        )
    )
    assert "soak: STABLE over" in out or "soak: NOT STABLE:" in out
    for figure in ("IOPS variation (CV)", "p99 variation (CV)", "IOPS trend", "worst interval"):
        assert figure in out
    doc = json.loads(ok(sb("export", "1", "--format", "json", db=db, cwd=tmp_path)))
    assert doc["answer"]["kind"] == "soak"
    (row,) = doc["answer"]["rows"]
    # the figures again, from the exported series alone (every direction of an interval)
    ios: dict[int, int] = {}
    dur: dict[int, int] = {}
    for i in doc["measurements"][0]["series"]:
        if not i["ramp"] and not i["host"]:
            ios[i["seq"]] = ios.get(i["seq"], 0) + i["ios"]
            dur[i["seq"]] = max(dur.get(i["seq"], 0), i["dur_ms"])
    iops = [ios[s] / (dur[s] / 1000) for s in sorted(ios)]
    assert row["intervals"] == len(iops) >= 6
    assert row["iops_mean"] == pytest.approx(statistics.fmean(iops))
    assert row["iops_cv_pct"] == pytest.approx(
        statistics.stdev(iops) / statistics.fmean(iops) * 100
    )
    assert row["worst_iops"] == pytest.approx(min(iops))
    assert row["stalls"] == sum(1 for v in iops if v == 0)
    assert row["stable"] == (not row["reasons"])
    md = ok(sb("report", "1", "--format", "markdown", db=db, cwd=tmp_path))
    verdict = "STABLE over" if row["stable"] else "NOT STABLE:"
    assert re.search(rf"^### .*s\.dat soak: {verdict}", md, re.M), md
    assert "| IOPS variation (CV) |" in md


def test_soak_ctrl_c_ends_it_cleanly_with_a_verdict(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "storbench",
            "run",
            "soak",
            "-t",
            f"{tmp_path}/s.dat",
            "--set",
            "duration=120",
            *SETS,
        ],
        cwd=tmp_path,
        env=_env(db),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # a few intervals of load recorded, then Ctrl-C
            time.sleep(0.5)
            try:
                con = sqlite3.connect(db)
                # measured time on fio's clock: what the cut point ran (ramp excluded)
                n = con.execute(
                    "SELECT coalesce(sum(dur_ms), 0) FROM intervals WHERE ramp=0 AND host=''"
                    " AND direction=(SELECT min(direction) FROM intervals)"
                ).fetchone()[0]
                con.close()
            except sqlite3.Error:
                continue
            if n >= 2500:
                break
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert "Traceback" not in err, err
    assert proc.returncode == 0, out + err
    assert "ended by Ctrl-C after" in out
    assert "soak: STABLE over" in out or "soak: NOT STABLE:" in out
    con = sqlite3.connect(db)
    status, data = con.execute("SELECT m.status, m.data FROM measurements m").fetchone()
    run_status = con.execute("SELECT status FROM runs").fetchone()[0]
    con.close()
    assert status == "ok" and run_status == "completed"
    cut = unpack_data(data)["extra"]["cut_short"]
    assert 2 <= cut < 100  # what ran, not the planned 120 s
