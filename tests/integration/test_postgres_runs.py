"""The main commands with a PostgreSQL results database (``STORBENCH_DB=postgresql://...``),
end to end with real fio on a scratch file: run, runs, show, export json, compare, resume,
and runs moving between PostgreSQL and SQLite (export --format archive / import, merge) --
the password of the URL printed and stored nowhere."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the harness modules
import pgserver
from pgserver import PASSWORD, ok
from pgserver import storbench as sb
from stored_runs import stored_text

pytestmark = pytest.mark.integration

#: the session's PostgreSQL server and a database of each test's own on it
pg_server = pgserver.pg_server
pg_url = pgserver.pg_url

SHORT = ["--set", "runtime=1", "--set", "ramp_time=0", "--set", "size=16m"]
PLAN = """\
name: tiny
targets:
  - file: {dir}/a.dat
workloads:
  - name: rand
    rw: randread
    bs: 4k
    iodepth: [1, 2]
"""


def test_postgres_runs_record_show_compare_and_move(pg_url: str, tmp_path: Path) -> None:
    plan = tmp_path / "tiny.yaml"
    plan.write_text(PLAN.format(dir=tmp_path))
    first = ok(sb("run", str(plan), *SHORT, db=pg_url, cwd=tmp_path))
    assert "run 1: recording to postgresql://bench:***@127.0.0.1" in first
    ok(sb("run", str(plan), *SHORT, "--db", pg_url, db="/nonexistent/x.db", cwd=tmp_path))
    listed = ok(sb("runs", db=pg_url, cwd=tmp_path))
    assert "runs in postgresql://bench:***@" in listed and "tiny" in listed
    shown = ok(sb("show", "1", db=pg_url, cwd=tmp_path))
    assert "IOPS" in shown and "completed" in shown
    doc = json.loads(ok(sb("export", "latest", "--format", "json", db=pg_url, cwd=tmp_path)))
    assert len(doc["measurements"]) == 2
    assert all(m["status"] == "ok" for m in doc["measurements"])
    cmp = json.loads(ok(sb("compare", "1", "2", "--format", "json", db=pg_url, cwd=tmp_path)))
    assert cmp, "compare of the two runs on PostgreSQL"

    archive = tmp_path / "run1.sbz"
    ok(sb("export", "1", "--format", "archive", "-o", str(archive), db=pg_url, cwd=tmp_path))
    lite = str(tmp_path / "results.db")
    assert "as run 1 in" in ok(sb("import", str(archive), db=lite, cwd=tmp_path))
    moved = json.loads(ok(sb("export", "1", "--format", "json", db=lite, cwd=tmp_path)))
    original = json.loads(ok(sb("export", "1", "--format", "json", db=pg_url, cwd=tmp_path)))
    assert moved["measurements"] == original["measurements"]

    # SQLite -> PostgreSQL: run 1 is there already (its token), run 2 of the file is new
    ok(sb("run", str(plan), *SHORT, db=lite, cwd=tmp_path))
    merged = ok(sb("merge", lite, db=pg_url, cwd=tmp_path))
    assert "is here already as run 1: skipped" in merged and "copied as run 3" in merged
    # PostgreSQL -> SQLite the other way, and a database merged into itself is refused
    ok(sb("merge", pg_url, db=str(tmp_path / "copy.db"), cwd=tmp_path))
    same = sb("merge", pg_url.replace("127.0.0.1", "localhost"), db=pg_url, cwd=tmp_path)
    assert same.returncode != 0 and "OTHER_DB is this database" in same.stderr
    for db in (pg_url, lite, str(tmp_path / "copy.db")):
        assert PASSWORD not in stored_text(db), "the password is stored nowhere"


def test_postgres_runs_resume_an_interrupted_run(pg_url: str, tmp_path: Path) -> None:
    """A run left half-done (its process gone) resumes on PostgreSQL as on SQLite."""
    from storbench.store import Store

    plan = tmp_path / "tiny.yaml"
    plan.write_text(PLAN.format(dir=tmp_path))
    ok(sb("run", str(plan), *SHORT, db=pg_url, cwd=tmp_path))
    store = Store(pg_url)
    store.db.execute("DELETE FROM measurements WHERE point_idx=1")
    store.db.execute("UPDATE runs SET status='interrupted', pid=NULL")
    store.close()
    ok(sb("resume", "1", db=pg_url, cwd=tmp_path))  # the run's overrides are kept
    store = Store(pg_url, write=False)
    run = store.runs.get(1)
    assert (run.status, run.measured, run.failed) == ("completed", 2, 0)
    store.close()


def test_postgres_runs_fault_is_a_message(pg_server: pgserver.PgServer, tmp_path: Path) -> None:
    r = sb("runs", db=pg_server.url("postgres", password="wrong-" + PASSWORD[3:]), cwd=tmp_path)
    assert r.returncode == 2
    assert "refused the login" in r.stderr and "fix:" in r.stderr
    assert PASSWORD[3:] not in r.stderr


def test_postgres_password_reaches_no_process_storbench_starts(pg_url: str, tmp_path: Path) -> None:
    """The URL in STORBENCH_DB holds the password, PGPASSWORD another copy: neither is in the
    environment of fio (a wrapper that writes down its environment, then is fio) nor of a
    drill's step; what they need (PATH, the run's mark) still is."""
    import shutil

    from storbench.engines.fio.tool import FIO

    real = shutil.which(FIO)
    assert real is not None
    wrapper = tmp_path / "fio"
    wrapper.write_text(f'#!/bin/sh\nenv > "{tmp_path}/fio-env.$$"\nexec {real} "$@"\n')
    wrapper.chmod(0o755)
    plan = tmp_path / "tiny.yaml"
    plan.write_text(
        PLAN.format(dir=tmp_path).replace("iodepth: [1, 2]", "iodepth: 1")
        + "    runtime: 2\n    time_based: 1\n"
        + f'    actions: [{{at: 0.5s, run: "env > {tmp_path}/step-env", timeout: 10}}]\n'
    )
    with pgserver.environ(STORBENCH_FIO=str(wrapper), PGPASSWORD=PASSWORD, PGAPPNAME="x"):
        ok(
            sb(
                "run",
                str(plan),
                "--set",
                "ramp_time=0",
                "--set",
                "size=4m",
                db=pg_url,
                cwd=tmp_path,
            )
        )
    seen = [*sorted(tmp_path.glob("fio-env.*")), tmp_path / "step-env"]
    assert len(seen) >= 3, seen  # fio's --version, --enghelp, the parse and the load
    for path in seen:
        env = path.read_text()
        assert PASSWORD not in env, path.name
        names = {line.split("=", 1)[0] for line in env.splitlines() if "=" in line}
        assert "STORBENCH_DB" not in names and not any(n.startswith("PG") for n in names)
        assert "PATH" in names
    assert "STORBENCH_RUN=" in (tmp_path / "step-env").read_text()
