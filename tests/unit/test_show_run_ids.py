"""A run id (or point number) no database can hold -- beyond SQLite's and PostgreSQL's
64-bit integers, or a digit that is not 0-9 -- is a run that is not there: every command
taking a run says so as it says it of any unknown run (exit 2, a fix), never a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the harness modules
from storbench.plan import Point, Target
from storbench.store import Store
from stored_runs import recorded, stored_run

HUGE = "99999999999999999999"
LONG = "9" * 5000  # beyond the digits Python's int() converts (4,300)


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("ids") / "r.db"
    store = Store(str(path))
    p = Point(0, "k", 0, Target("file", "/srv/x.dat"), "w", {"rw": "randread"}, {})
    stored_run(store, [(p, recorded("psync-randread-json"))])
    store.close()
    return path


def sb(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "storbench", *args, "--db", str(db)],
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["show", HUGE], f"there is no run {HUGE}"),
        (["show", "9223372036854775808"], "there is no run 9223372036854775808"),
        (["show", f"latest~{HUGE}"], f"there is no run latest~{HUGE}"),
        (["show", "²"], "'²' is not a run"),
        (["show", LONG], f"there is no run {LONG[:40]}… (5,000 characters)"),
        (["show", f"latest~{LONG}"], "there is no run latest~999999999"),
        (["compare", "1", LONG], f"there is no run {LONG[:40]}… (5,000 characters)"),
        # a filter's value beyond any float: matched as text (float() of it was inf)
        (["compare", "1", f"1:rw={'9' * 400}"], "no point of run 1 (1:rw=999"),
        (["compare", "1", f"1:rw={LONG}k"], "no point of run 1 (1:rw=999"),
        (["show", "1", "--point", HUGE], f"run 1 has no measurement for point {HUGE}"),
        (["show", HUGE, "--point", "1"], f"there is no run {HUGE}"),
        (["export", HUGE], f"there is no run {HUGE}"),
        (["export", HUGE, "--format", "csv"], f"there is no run {HUGE}"),
        (["export", HUGE, "--series"], f"there is no run {HUGE}"),
        (["report", HUGE], f"there is no run {HUGE}"),
        (["report", "1", HUGE], f"there is no run {HUGE}"),
        (["compare", "1", HUGE], f"there is no run {HUGE}"),
        (["compare", f"{HUGE}:bs=4k", "1"], f"there is no run {HUGE}"),
        (["chart", HUGE, "--kind", "iops-vs-bs", "-o", "OUT"], f"there is no run {HUGE}"),
        (["resume", HUGE], f"there is no run {HUGE}"),
        (["cleanup", HUGE], f"there is no run {HUGE}"),
        (["merge", "OTHER", "--run", HUGE], f"there is no run {HUGE}"),
    ],
)
def test_show_and_every_run_command_say_a_huge_run_id_is_no_run(
    db: Path, tmp_path: Path, args: list[str], said: str
) -> None:
    args = [{"OTHER": str(db), "OUT": str(tmp_path / "x.png")}.get(a, a) for a in args]
    here = tmp_path / "here.db" if args[0] == "merge" else db
    r = sb(here, *args)
    assert r.returncode == 2, (args, r.stdout, r.stderr)
    assert said in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_show_runs_with_a_huge_limit_lists_every_run(db: Path) -> None:
    r = sb(db, "runs", "--limit", HUGE)
    assert r.returncode == 0, r.stderr
    assert "│  1 │" in r.stdout and r.stderr == ""  # the one run, not a database error
