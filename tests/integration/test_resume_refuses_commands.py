"""Issue 25: a point spec that arrives by `import` of an archive, by `merge` or by a hand
edit of the database is checked by the rules of a plan before `resume` runs it
(plan/stored.py). Each case is a real run of real fio, exported as an archive and changed
in one thing: a second, pending point that runs a command. Before the fix `resume` ran
it (the file PWNED appeared); now `resume` refuses with one message naming the run, the
point and the key, and `import`/`merge` say which run cannot be resumed."""

from __future__ import annotations

import copy
import gzip
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.integration

PLAN = """\
targets: [{{file: {dir}/t.dat}}]
workloads:
  - {{name: w, rw: read, bs: 4k, size: 1m, runtime: 1}}
"""


def sb(*args: str, db: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "storbench", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
        env={**os.environ, "STORBENCH_DB": str(db), "COLUMNS": "300"},
    )


@pytest.fixture(scope="module")
def real(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """A real one-point run of fio (its database) and its archive's document."""
    d = tmp_path_factory.mktemp("real")
    (d / "p.yaml").write_text(PLAN.format(dir=d))
    r = sb("run", "p.yaml", db=d / "real.db", cwd=d)
    assert r.returncode == 0, r.stderr
    r = sb("export", "1", "--format", "archive", "-o", "real.sbz", db=d / "real.db", cwd=d)
    assert r.returncode == 0, r.stderr
    return d / "real.db", json.loads(gzip.decompress((d / "real.sbz").read_bytes()))


def with_pending(doc: dict[str, Any], change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    """The archive with a second point, not measured yet, its spec changed by ``change``."""
    doc = copy.deepcopy(doc)
    point = copy.deepcopy(doc["points"][0])
    point["idx"] = point["spec"]["index"] = 1
    change(point["spec"])
    doc["points"].append(point)
    doc["run"]["status"] = "interrupted"
    return doc


def write(path: Path, doc: dict[str, Any]) -> Path:
    path.write_bytes(gzip.compress(json.dumps(doc).encode()))
    return path


def pwned(d: Path) -> str:
    return f"touch {d}/PWNED"


CASES: dict[str, tuple[Callable[[Path], Callable[[dict[str, Any]], None]], str]] = {
    "exec_prerun": (
        lambda d: lambda s: s["params"].update(exec_prerun=pwned(d)),
        "`exec_prerun` runs a command",
    ),
    "exec_postrun": (
        lambda d: lambda s: s["params"].update(exec_postrun=pwned(d)),
        "`exec_postrun` runs a command",
    ),
    "ioengine-exec": (
        lambda d: (
            lambda s: s["params"].update(
                ioengine="exec", program="/usr/bin/touch", arguments=f"{d}/PWNED"
            )
        ),
        "`exec` runs a command",
    ),
    "extra": (
        lambda d: lambda s: s["extra"].update(exec_prerun=pwned(d)),
        "`exec_prerun` runs a command",
    ),
    # a drill's `run` step is a plan's own command: not one that came in an archive
    "drill-run-step": (
        lambda d: (
            lambda s: s.update(
                actions=[{"at_s": 0.1, "step": "run", "arg": pwned(d), "timeout_s": 60.0}]
            )
        ),
        "the run came from another database (someone else's plan)",
    ),
}


def assert_refused(r: subprocess.CompletedProcess[str], says: str) -> None:
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert "Traceback" not in r.stdout + r.stderr
    assert r.stderr.count("storbench: error:") == 1, r.stderr
    text = " ".join(r.stderr.split())
    assert "run 1 cannot be resumed: its point 2 (w)" in text, text
    assert says in text and "fix:" in text, text


@pytest.mark.parametrize("case", sorted(CASES))
def test_resume_refuses_an_imported_archive_whose_point_runs_a_command(
    tmp_path: Path, real: tuple[Path, dict[str, Any]], case: str
) -> None:
    change, says = CASES[case]
    archive = write(tmp_path / "evil.sbz", with_pending(real[1], change(tmp_path)))
    db = tmp_path / "mine.db"
    imported = sb("import", str(archive), db=db, cwd=tmp_path)
    assert imported.returncode == 0, imported.stderr
    r = sb("resume", "latest", db=db, cwd=tmp_path)
    assert not (tmp_path / "PWNED").exists(), "resume ran the archive's command"
    assert_refused(r, says)
    warned = " ".join(imported.stderr.split())
    assert "warning: run 1 cannot be resumed: its point 2 (w)" in warned, warned
    assert says in warned, warned
    with sqlite3.connect(db) as con:  # refused before anything: the run is as it was
        assert con.execute("SELECT status FROM runs").fetchall() == [("interrupted",)]
        assert con.execute("SELECT COUNT(*) FROM measurements").fetchone()[0] == 1


def test_resume_refuses_a_merged_run_whose_point_runs_a_command(
    tmp_path: Path, real: tuple[Path, dict[str, Any]]
) -> None:
    change, says = CASES["exec_prerun"]
    archive = write(tmp_path / "evil.sbz", with_pending(real[1], change(tmp_path)))
    assert sb("import", str(archive), db=tmp_path / "other.db", cwd=tmp_path).returncode == 0
    db = tmp_path / "mine.db"
    merged = sb("merge", str(tmp_path / "other.db"), db=db, cwd=tmp_path)
    assert merged.returncode == 0, merged.stderr
    r = sb("resume", "1", db=db, cwd=tmp_path)
    assert not (tmp_path / "PWNED").exists(), "resume ran the merged run's command"
    assert_refused(r, says)
    assert "warning: run 1 cannot be resumed: its point 2 (w)" in merged.stderr, merged.stderr


def test_resume_refuses_a_point_edited_by_hand_in_its_own_database(
    tmp_path: Path, real: tuple[Path, dict[str, Any]]
) -> None:
    """The user's own run, its spec changed in SQLite: the same check (one at resume)."""
    db = tmp_path / "mine.db"
    shutil.copy(real[0], db)
    with sqlite3.connect(db) as con:
        (spec,) = con.execute("SELECT spec FROM points WHERE idx=0").fetchone()
        edited = {**json.loads(spec), "index": 1}
        edited["params"] = {**edited["params"], "exec_prerun": pwned(tmp_path)}
        con.execute(
            "INSERT INTO points SELECT run_id, 1, key, repetition, ? FROM points WHERE idx=0",
            (json.dumps(edited),),
        )
        con.execute("UPDATE runs SET status='interrupted'")
    r = sb("resume", "1", db=db, cwd=tmp_path)
    assert not (tmp_path / "PWNED").exists(), "resume ran the edited spec's command"
    assert_refused(r, "`exec_prerun` runs a command")


def test_resume_runs_an_imported_archive_whose_points_a_plan_may_run(
    tmp_path: Path, real: tuple[Path, dict[str, Any]]
) -> None:
    """The check refuses what a plan may not say, not the archive: its own point again is
    resumed, and measured by fio."""
    archive = write(tmp_path / "good.sbz", with_pending(real[1], lambda s: None))
    db = tmp_path / "mine.db"
    r = sb("import", str(archive), db=db, cwd=tmp_path)
    assert r.returncode == 0 and "warning" not in r.stderr, r.stderr
    r = sb("resume", "latest", db=db, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    with sqlite3.connect(db) as con:
        rows = con.execute("SELECT point_idx, status FROM measurements ORDER BY point_idx")
        assert rows.fetchall() == [(0, "ok"), (1, "ok")]


def test_resume_cleanup_of_an_imported_run_acts_on_nothing_outside_the_database(
    tmp_path: Path, real: tuple[Path, dict[str, Any]]
) -> None:
    """An archive's events may name files and directories on this host and its targets an
    S3 endpoint or a Ceph cluster: `cleanup` of a run that came from elsewhere refuses,
    and a file its crafted events name as a scratch file of this host stays."""
    _, doc = real
    victim = tmp_path / "victim.dat"
    victim.write_bytes(b"keep me")
    crafted = copy.deepcopy(doc)
    crafted["run"]["status"] = "interrupted"
    event = copy.deepcopy(next(e for e in crafted["events"] if e.get("kind") == "workdir"))
    event.update(kind="scratch-file", message=f"created scratch file {victim}")
    event["data"]["path"] = str(victim)
    crafted["events"].append(event)
    db = tmp_path / "mine.db"
    r = sb("import", str(write(tmp_path / "a.sbz", crafted)), db=db, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    r = sb("cleanup", "latest", db=db, cwd=tmp_path)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "came from another database" in r.stderr and "Traceback" not in r.stderr
    assert victim.read_bytes() == b"keep me"
