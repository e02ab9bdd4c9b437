"""Job-file injection with real fio (issue 17, point 4): what a plan says never becomes a
line of fio's job file of its own, and a path with `:` reaches fio as one file.

fio reads `filename=/x/a:b` as two files, /x/a and b; storbench writes `filename=/x/a\\:b`.
Each test puts a "victim" file where fio would have written and checks its bytes after.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

VICTIM = b"someone else's data, not storbench's\n" * 64


def sb(*args: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "storbench", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={**os.environ, "STORBENCH_DB": str(tmp_path / "results.db")},
    )


def job_files(tmp_path: Path) -> list[str]:
    con = sqlite3.connect(tmp_path / "results.db")
    try:
        return [r[0] for r in con.execute("SELECT job_file FROM measurements")]
    finally:
        con.close()


def test_injection_from_the_issue_writes_nothing(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_bytes(VICTIM)
    plan = tmp_path / "plan.yaml"
    plan.write_text(
        f"""\
name: inject
targets:
  - file: {tmp_path}/scratch.dat
workloads:
  - name: a
    rw: write
    bs: 4k
    size: 1m
    runtime: 1
    buffer_pattern: "0xdeadbeef\\nfilename={victim}"
"""
    )
    r = sb("run", str(plan), tmp_path=tmp_path)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "newline" in r.stderr and "Traceback" not in r.stderr
    assert victim.read_bytes() == VICTIM
    assert not (tmp_path / "results.db").exists()
    assert not (tmp_path / "scratch.dat").exists()


def test_injection_colon_in_a_file_name_reaches_fio_as_one_file(tmp_path: Path) -> None:
    # unescaped, fio would write /…/a (the victim) and a file b.dat in its working dir
    victim = tmp_path / "a"
    victim.write_bytes(VICTIM)
    target = tmp_path / "a:b.dat"
    plan = tmp_path / "plan.yaml"
    plan.write_text(
        f"""\
targets:
  - file: {target}
workloads:
  - name: w
    rw: write
    bs: 4k
    size: 1m
    runtime: 1
"""
    )
    r = sb("run", str(plan), "--keep-files", tmp_path=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert victim.read_bytes() == VICTIM
    assert target.stat().st_size == 1 << 20
    names = sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith("."))
    assert names == ["a", "a:b.dat", "plan.yaml", "results.db"]
    (job,) = job_files(tmp_path)
    assert f"filename={tmp_path}/a\\:b.dat\n" in job


def test_injection_colon_in_a_directory_name(tmp_path: Path) -> None:
    d = tmp_path / "d:x"
    d.mkdir()
    (tmp_path / "d").mkdir()
    plan = tmp_path / "plan.yaml"
    plan.write_text(
        f"""\
targets:
  - directory: {d}
workloads:
  - name: w
    rw: write
    bs: 4k
    size: 64k
"""
    )
    r = sb("run", str(plan), "--keep-files", tmp_path=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert [p.name for p in d.iterdir()] == ["storbench.w.0.0"]
    assert list((tmp_path / "d").iterdir()) == []


def test_injection_write_bw_log_with_an_absolute_prefix(tmp_path: Path) -> None:
    # the files an option writes obey the target rule; a new prefix is fine and fio writes
    # its logs there
    logs = tmp_path / "logs"
    logs.mkdir()
    plan = tmp_path / "plan.yaml"
    plan.write_text(
        f"""\
targets:
  - file: {tmp_path}/scratch.dat
workloads:
  - name: w
    rw: randread
    bs: 4k
    size: 1m
    runtime: 1
    write_bw_log: {logs}/w
"""
    )
    r = sb("run", str(plan), tmp_path=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert [p.name for p in logs.iterdir()] == ["w_bw.1.log"]
    again = sb("run", str(plan), tmp_path=tmp_path)
    assert again.returncode == 2, again.stdout + again.stderr
    assert f"{logs}/w_bw.1.log" in again.stderr
