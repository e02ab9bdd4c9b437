"""One numbering of points and repetitions everywhere, from 1: `show --point N`, the job
files' headers, and every export (JSON and CSV measurements, `--series`, `--host-samples`,
the findings) name the same point by the same number."""

from __future__ import annotations

import csv
import io
import json
import sys
from pathlib import Path

from click.testing import CliRunner

from storbench.cli import cli
from storbench.engines.fio.jobfile import job_file
from storbench.model.series import Interval
from storbench.plan import Point, Target
from storbench.store import Store

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the harness modules
from stored_runs import recorded, stored_run


def _point(i: int, rep: int, bs: str) -> Point:
    return Point(
        index=i,
        key=f"k-{bs}",
        repetition=rep,
        target=Target("file", "/srv/x.dat"),
        workload="randread",
        params={"rw": "randread", "bs": bs},
        axes={"bs": bs},
    )


def _cli(db: Path, *args: str) -> str:
    r = CliRunner().invoke(cli, [*args, "--db", str(db)], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    return r.stdout


def test_export_numbers_points_and_repetitions_from_1_as_show_does(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    store = Store(str(db))
    meas = recorded("psync-randread-json")
    # two points of two repetitions each: indexes 0..3, repetitions 0, 1, 0, 1
    points = [_point(i, i % 2, "4k" if i < 2 else "64k") for i in range(4)]
    run = stored_run(store, [(p, meas) for p in points])
    for p in points:
        store.series.add(run, p.index, [Interval(0, 1000, 1000, "read", 10, 40960)])
    store.close()

    doc = json.loads(_cli(db, "export", str(run), "--format", "json"))
    got = [(m["point"], m["repetition"], m["params"]["bs"]) for m in doc["measurements"]]
    assert got == [(1, 1, "4k"), (2, 2, "4k"), (3, 1, "64k"), (4, 2, "64k")]
    rows = list(csv.DictReader(io.StringIO(_cli(db, "export", str(run), "--format", "csv"))))
    assert [(r["point"], r["repetition"], r["bs"]) for r in rows] == [
        ("1", "1", "4k"),
        ("2", "2", "4k"),
        ("3", "1", "64k"),
        ("4", "2", "64k"),
    ]
    series = json.loads(_cli(db, "export", str(run), "--series", "--format", "json"))
    assert [p["point"] for p in series["points"]] == [1, 2, 3, 4]
    series_rows = list(csv.DictReader(io.StringIO(_cli(db, "export", str(run), "--series"))))
    assert sorted({r["point"] for r in series_rows}) == ["1", "2", "3", "4"]
    # the point `show --point N` shows and whose job file says "point N/4, repetition R"
    # is the measurement the exports call point N, repetition R
    for m in doc["measurements"]:
        n, rep = m["point"], m["repetition"]
        assert _cli(db, "show", str(run), "--point", str(n)).startswith(f"# run {run} point {n}:")
        head = job_file(points[n - 1], run_id=run, total=4).splitlines()[0]
        assert f"point {n}/4, key {m['key']}, repetition {rep}" in head
