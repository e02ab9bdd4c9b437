"""`storbench show` of a big run: the table lists the first --limit points (120 by default)
and says how many more there are and how to see them (--all); `show RUN --point N` reads
that one point alone (store.measurements.of_point) and prints what it printed before."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from storbench.cli import cli
from storbench.model.constants import SHOW_LIMIT
from storbench.plan import Point, Target
from storbench.store import Store

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the harness modules
from stored_runs import recorded, stored_run

POINTS = 30


def _tag(i: int) -> str:
    """A value only point ``i`` has, to find its row in the table."""
    return f"pt{i:02d}x"


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    db = tmp_path_factory.mktemp("db") / "results.db"
    meas = recorded("psync-randread-json")
    target = Target("file", "/tmp/storbench-show-limit.dat")
    points = [
        Point(i, f"k{i}", 0, target, "w", {"rw": "randread", "tag": _tag(i)}, {"tag": _tag(i)})
        for i in range(POINTS)
    ]
    store = Store(str(db))
    run_id = stored_run(store, [(p, meas) for p in points], name="many")
    store.close()
    return db, run_id


def _show(db: Path, *args: str) -> tuple[int, str]:
    r = CliRunner().invoke(cli, ["show", *args, "--db", str(db)])
    return r.exit_code, r.output


def test_show_limit_lists_the_first_points_and_says_how_to_see_the_rest(
    run: tuple[Path, int],
) -> None:
    db, run_id = run
    code, text = _show(db, str(run_id), "--limit", "5")
    assert code == 0, text
    assert [i for i in range(POINTS) if _tag(i) in text] == [0, 1, 2, 3, 4]
    assert (
        f"(the first 5 of {POINTS} points; every point: storbench show {run_id} --all, or "
        f"--limit N; one point whole: storbench show {run_id} --point N)"
    ) in text
    assert f"run {run_id}: many (completed, {POINTS}/{POINTS} points)" in text  # the title


def test_show_all_and_the_default_list_every_point_of_a_small_run(
    run: tuple[Path, int],
) -> None:
    db, run_id = run
    assert POINTS < SHOW_LIMIT
    for args in ((), ("--all",), ("--limit", "5", "--all")):
        code, text = _show(db, str(run_id), *args)
        assert code == 0, text
        assert all(_tag(i) in text for i in range(POINTS)), args
        assert "(the first" not in text


def test_show_limit_must_be_a_number_of_points(run: tuple[Path, int]) -> None:
    db, run_id = run
    code, text = _show(db, str(run_id), "--limit", "0")
    assert code == 2
    assert "Invalid value for --limit: 0 is not a number of points" in text


def test_show_store_reads_one_point_as_the_whole_run_has_it(run: tuple[Path, int]) -> None:
    db, run_id = run
    store = Store(str(db), write=False)
    every = store.measurements.of_run(run_id)
    for i in (0, 7, POINTS - 1):
        assert store.measurements.of_point(run_id, i) == every[i]
    assert (
        store.measurements.of_point(run_id, i, bins=True)
        == store.measurements.of_run(run_id, bins=True)[i]
    )
    assert store.measurements.of_point(run_id, POINTS) is None
    assert store.measurements.of_point(run_id, -1) is None


def test_show_point_prints_that_point_and_refuses_one_the_run_lacks(
    run: tuple[Path, int],
) -> None:
    db, run_id = run
    code, text = _show(db, str(run_id), "--point", "8")
    assert code == 0, text
    assert text.startswith(f"# run {run_id} point 8: status ok\n")
    assert "# raw output:" in text
    r = CliRunner().invoke(cli, ["show", str(run_id), "--point", "31", "--db", str(db)])
    assert r.exit_code != 0
    assert f"run {run_id} has no measurement for point 31" in str(r.exception)
