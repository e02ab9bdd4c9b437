"""`storbench history` (analysis/history.py, report/historymodel.py, report/history.py,
report/charts/history.py) and run labels (plan/labelkeys.py) over stored runs measured by
recorded fio output (each job of a recorded run is a repetition): point "slower" goes from
the 2-job run's jobs (~12,500 write IOPS each) to the 4-job run's (~8,000 each) and back;
point "same" keeps its measurements; a point "added" appears in a later run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from storbench.analysis import testbed
from storbench.cli import cli
from storbench.model.errors import UserError
from storbench.model.metrics import Measurement
from storbench.plan import Point, Target, point_key
from storbench.plan.labelkeys import merged, parse_label, problem
from storbench.report.charts.history import history_chart
from storbench.report.historymodel import load_history, select_runs
from storbench.store import Store

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the harness modules
sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_compare_gate import FAST, SLOW

from stored_runs import stored_run

T = Target("file", "/mnt/a/sb.dat")


def _run(
    store: Store,
    points: dict[str, list[Measurement]],
    *,
    name: str = "nightly",
    labels: dict[str, str] | None = None,
    kernel: str = "6.1",
) -> int:
    measured = []
    i = 0
    for workload, ms in points.items():
        params = {"rw": "write", "iodepth": 1}
        key = point_key(T, workload, params)
        for rep, m in enumerate(ms):
            measured.append((Point(i, key, rep, T, workload, params, {}), m))
            i += 1
    inventory = {"host": {"kernel": kernel}} | ({"labels": labels} if labels else {})
    return stored_run(store, measured, name=name, inventory=inventory)


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """Five runs of "nightly" (the kernel changes before run 3, the label before run 4),
    and one of another plan between them."""
    path = tmp_path / "history.db"
    store = Store(str(path))
    _run(store, {"slower": FAST, "same": FAST}, labels={"ceph": "19.2.0"})
    _run(store, {"slower": FAST, "same": FAST}, labels={"ceph": "19.2.0"})
    _run(store, {"other": FAST}, name="weekly")
    _run(store, {"slower": SLOW, "same": FAST}, labels={"ceph": "19.2.0"}, kernel="6.8")
    _run(store, {"slower": FAST, "added": FAST}, labels={"ceph": "19.2.1"}, kernel="6.8")
    _run(store, {"slower": FAST, "same": FAST}, labels={"ceph": "19.2.1"}, kernel="6.8")
    store.close()
    return path


def _sb(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """storbench as a user runs it (an error printed, exit 2)."""
    r = subprocess.run(
        [sys.executable, "-m", "storbench", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
    )
    assert "Traceback" not in r.stderr, r.stderr
    return r


def _cli(db: Path, *args: str) -> tuple[int, str]:
    r = CliRunner().invoke(cli, ["history", "--db", str(db), *args])
    assert "Traceback" not in r.output, r.output
    return r.exit_code, r.output


def test_history_follows_each_point_and_flags_significant_changes(db: Path) -> None:
    report = load_history(Store(str(db), write=False), [])
    h = report.history
    assert [r.id for r in h.runs] == [1, 2, 4, 5, 6]  # the newest run's plan, oldest first
    assert report.selection == "runs of plan 'nightly'"
    by = {t.label: t for t in h.tracks}
    assert set(by) == {"slower", "same", "added"}
    slower = [c.flag if c else "-" for c in by["slower"].cells]
    assert slower == [None, None, "regression", "improvement", None]
    same = by["same"]
    assert same.cells[3] is None  # run 5 lacks it: a gap ...
    assert same.cells[4] is not None and same.cells[4].versus is not None
    assert same.cells[4].versus.base is same.cells[2].summary  # ... run 6 against run 4
    assert [c is not None for c in by["added"].cells] == [False] * 3 + [True, False]
    assert by["added"].cells[3].versus is None  # type: ignore[union-attr]
    # what changed between consecutive runs: the kernel before run 4, the label before 5
    assert [[k for k, _, _ in d] for d in h.changes] == [
        [],
        [],
        ["host.kernel"],
        ["labels.ceph"],
        [],
    ]
    assert [(t.label, i) for t, i, _ in h.flagged] == [("slower", 2), ("slower", 3)]


def test_history_selects_by_plan_label_names_and_last(db: Path) -> None:
    store = Store(str(db), write=False)
    rows, said, _ = select_runs(store, [], plan="weekly")
    assert [r.id for r in rows] == [3] and said == "runs of plan 'weekly'"
    rows, said, _ = select_runs(store, [], labels={"ceph": "19.2.1"})
    assert [r.id for r in rows] == [5, 6] and said == "runs labelled ceph=19.2.1"
    rows, _, _ = select_runs(store, [], plan="nightly", labels={"ceph": "19.2.0"}, last=2)
    assert [r.id for r in rows] == [2, 4]
    rows, said, _ = select_runs(store, ["6", "1", "latest~3"])  # named: in time order
    assert [r.id for r in rows] == [1, 3, 6] and said == "runs 6, 1, latest~3"
    rows, _, _ = select_runs(store, ["6", "latest", "1", "6"])  # one run named twice: once
    assert [r.id for r in rows] == [1, 6]
    with pytest.raises(UserError, match="matched none"):
        select_runs(store, [], labels={"ceph": "18.0"})
    with pytest.raises(UserError, match="1 to 100 runs"):
        select_runs(store, [], last=0)


def test_history_leaves_out_runs_with_nothing_measured(db: Path) -> None:
    store = Store(str(db))
    empty = store.runs.create(
        kind="run",
        name="nightly",
        source="test",
        plan_text="",
        overrides=[],
        inventory={},
        fio_version=None,
        storbench_version=None,
        argv=[],
        points=[],
    )
    store.runs.set_status(empty, "failed")
    rows, _, left = select_runs(store, [])
    assert empty not in [r.id for r in rows]
    assert left == [f"run {empty}: nothing measured"]


def test_history_cli_table_markdown_and_json(db: Path) -> None:
    code, out = _cli(db, "--plan", "nightly")
    assert code == 0, out
    assert "IOPS per run" in out and "▼" in out and "▲" in out, out
    assert "run 2 → run 4" in out and "host.kernel" in out and "6.1" in out, out
    assert "labels.ceph" in out and "19.2.0" in out and "19.2.1" in out, out
    code, md = _cli(db, "--format", "markdown", "--figure", "p99")
    assert code == 0 and "### P99 latency per run" in md and "| slower |" in md, md
    code, text = _cli(db, "--format", "json", "--figure", "lat")
    doc = json.loads(text)
    assert [r["id"] for r in doc["runs"]] == [1, 2, 4, 5, 6]
    assert doc["testbed_changes"][0] == {
        "run": 4,
        "previous": 2,
        "changes": [{"setting": "host.kernel", "before": "6.1", "after": "6.8"}],
    }
    slower = next(t for t in doc["tracks"] if t["label"] == "slower")
    third = slower["runs"][2]
    assert third["flag"] == "regression" and third["versus_previous"]["verdict"] == "worse"
    assert third["iops"] < slower["runs"][1]["iops"] and third["p99"] > 0


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--label", "ceph"], "no '='"),
        (["--label", "9x=1"], "is not a word"),
        (["1", "--plan", "nightly"], "not both"),
        (["--last", "0"], "1 to 100 runs"),
        (["--chart", "h.pdf"], "cannot tell the chart format"),
        (["--plan", "nope"], "matched none"),
        (["99"], "no run 99"),
    ],
)
def test_history_cli_refuses_bad_input_clearly(db: Path, args: list[str], said: str) -> None:
    r = _sb("history", "--db", str(db), *args)
    assert r.returncode == 2 and said in r.stderr, r.stderr


def test_history_chart_marks_changes_and_significant_steps(db: Path) -> None:
    report = load_history(Store(str(db), write=False), [], figure="iops")
    chart = history_chart(report)
    (panel,) = chart.panels
    assert [(r.axis, r.value) for r in panel.rules] == [("x", 1.5), ("x", 2.5)]
    assert panel.rules[0].label == "changed: host.kernel"
    styles = {ln.style: [m.x for m in ln.marks] for ln in panel.lines if ln.style}
    assert styles == {"regression": [2.0], "improvement": [3.0]}
    refs = [m.ref for ln in panel.lines if ln.label == "slower" for m in ln.marks]
    assert refs == ["r1-p1", "r2-p1", "r4-p1", "r5-p1", "r6-p1"]


def test_history_labels_parse_merge_and_refuse() -> None:
    assert parse_label("ceph=19.2.1") == ("ceph", "19.2.1")
    assert parse_label(" pool = ssd 3x ") == ("pool", "ssd 3x")
    assert merged({"ceph": "19.2.0", "pool": "a"}, ["ceph=19.2.1"]) == {
        "ceph": "19.2.1",
        "pool": "a",
    }
    for bad in ("=x", "a=", "a b=1", "a=x\ny", "k=" + "v" * 201):
        with pytest.raises(UserError):
            parse_label(bad)
    assert problem({"ceph": "19.2.1", "n": 3}, {}) is None
    assert "quote it" in problem({"ceph": 19.10}, {})[0]  # type: ignore[index]
    assert "mapping" in problem(["a"], {})[0]  # type: ignore[index]
    assert "not a word" in problem({"-x": "1"}, {})[0]  # type: ignore[index]
    assert "must be text" in problem({"a": [1]}, {})[0]  # type: ignore[index]
    assert "at most 32" in problem({f"k{i}": "v" for i in range(33)}, {})[0]  # type: ignore[index]


def test_history_label_changes_are_test_bed_differences() -> None:
    a = {"labels": {"ceph": "19.2.0"}, "host": {"kernel": "6.1"}}
    b = {"labels": {"ceph": "19.2.1", "pool": "ssd"}, "host": {"kernel": "6.1"}}
    assert testbed.differences(a, b) == [
        ("labels.ceph", "19.2.0", "19.2.1"),
        ("labels.pool", None, "ssd"),
    ]


def test_history_plan_labels_reach_the_run_and_bad_ones_name_the_line(tmp_path: Path) -> None:
    plan = tmp_path / "p.yaml"
    plan.write_text(
        "name: lab\nlabels:\n  ceph: 19.10\ntargets: [{file: x.dat}]\n"
        "workloads: [{name: w, rw: read, size: 1m, ioengine: null}]\n"
    )
    r = _sb("plan", "check", str(plan))
    assert r.returncode == 2 and "p.yaml:2:" in r.stderr and "quote it" in r.stderr, r.stderr
    plan.write_text(plan.read_text().replace("19.10", '"19.10"'))
    db = tmp_path / "r.db"
    r = _sb("run", str(plan), "--db", str(db), "--label", "pool=ssd", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    row = Store(str(db), write=False).runs.get("latest")
    assert row.inventory["labels"] == {"ceph": "19.10", "pool": "ssd"}
    shown = _sb("show", "latest", "--db", str(db))
    assert "  labels: ceph=19.10, pool=ssd\n" in shown.stdout, shown.stdout
    r = _sb("run", str(plan), "--db", str(db), "--label", "bad", cwd=tmp_path)
    assert r.returncode == 2 and "--label 'bad': no '='" in r.stderr, r.stderr


def test_history_by_label_pools_the_runs_of_each_value(db: Path) -> None:
    store = Store(str(db), write=False)
    report = load_history(store, [], by="ceph")
    h = report.history
    assert [r.heading for r in h.runs] == ["ceph=19.2.0 (3 runs)", "ceph=19.2.1 (2 runs)"]
    assert [r.runs for r in h.runs] == [(1, 2, 4), (5, 6)]
    assert report.selection == "runs of plan 'nightly', by ceph"
    slower = next(t for t in h.tracks if t.label == "slower")
    first, second = slower.cells
    assert first is not None and second is not None
    assert (first.summary.runs, second.summary.runs) == (6, 4)  # every repetition pooled
    assert second.versus is not None and second.versus.base is first.summary
    assert first.summary.clat is not None and "99" in first.summary.clat.percentiles
    # between the groups: the last run of one (run 4, kernel 6.8) against the next's first
    assert [[k for k, _, _ in d] for d in h.changes] == [[], ["labels.ceph"]]
    named = load_history(store, ["1", "3", "5"], by="ceph")
    assert [r.heading for r in named.history.runs] == [
        "ceph=19.2.0 (1 run)",
        "ceph=19.2.1 (1 run)",
    ]
    assert named.left_out == ["run 3: no label 'ceph'"]
    with pytest.raises(UserError, match="has the label 'pool'"):
        load_history(store, [], by="pool")
    r = _sb("history", "--db", str(db), "--by", "ceph")
    assert r.returncode == 0, r.stderr
    assert "ceph=19.2.0 (3 runs) → ceph=19.2.1 (2 runs)" in r.stdout, r.stdout
