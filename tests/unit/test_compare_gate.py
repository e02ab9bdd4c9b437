"""`compare A B --fail-if RULE [--significant] [--junit FILE]` (analysis/gate.py,
report/junit.py): a comparison as a pass/fail for CI. Two stored runs measured by recorded
fio output (each job of a recorded run is a repetition): point "slower" goes from the
2-job run's jobs (~12,500 write IOPS each) to the 4-job run's (~8,000 each), significantly;
point "same" keeps the same measurements on both sides."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from storbench.analysis.gate import parse_rule
from storbench.cli import cli
from storbench.engines import fio
from storbench.model.errors import UserError
from storbench.model.metrics import Measurement
from storbench.plan import Point, Target, point_key
from storbench.store import Store

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the harness modules
from stored_runs import stored_run

DATA = Path(__file__).resolve().parent.parent / "data" / "fio"
T = Target("file", "/mnt/a/sb.dat")


def each_job(name: str) -> list[Measurement]:
    docs, _ = fio.split_documents((DATA / f"{name}.json").read_text())
    doc = docs[-1]
    return [fio.parse_output(json.dumps({**doc, "jobs": [j]}))[0] for j in doc["jobs"]]


FAST = each_job("numjobs2-lat-percentiles-jsonplus")  # 2 jobs
SLOW = each_job("numjobs4-nogroup-jsonplus")[:2]  # 2 of 4 jobs


def _run(store: Store, slower: list[Measurement], name: str) -> int:
    measured = []
    i = 0
    for workload, ms in (("slower", slower), ("same", FAST)):
        params = {"rw": "write", "iodepth": 1}
        key = point_key(T, workload, params)
        for rep, m in enumerate(ms):
            measured.append((Point(i, key, rep, T, workload, params, {}), m))
            i += 1
    return stored_run(store, sorted(measured, key=lambda pm: pm[0].index), name=name)


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "gate.db"
    store = Store(str(path))
    _run(store, FAST, "base")
    _run(store, SLOW, "other")
    return path


def _compare(db: Path, *args: str) -> tuple[int, str]:
    r = CliRunner().invoke(cli, ["compare", "1", "2", "--db", str(db), *args])
    assert "Traceback" not in r.output, r.output
    return r.exit_code, r.output


def _refused(db: Path, *args: str) -> tuple[int, str]:
    """The command as a user runs it (its error printed, exit 2)."""
    r = subprocess.run(
        [sys.executable, "-m", "storbench", "compare", "1", "2", "--db", str(db), *args],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "Traceback" not in r.stderr, r.stderr
    return r.returncode, r.stderr


def test_compare_gate_fails_on_a_broken_rule_and_writes_junit(db: Path, tmp_path: Path) -> None:
    junit = tmp_path / "gate.xml"
    code, out = _compare(
        db, "--fail-if", "iops < -5%", "--fail-if", "p99 > +50%", "--junit", str(junit)
    )
    assert code == 1, out
    assert "slower: iops -36.5 % breaks iops < -5%" in out and "breaks iops < -5%" in out
    assert "gate: " in out and "broken" in out
    root = ET.fromstring(junit.read_text())
    assert root.tag == "testsuites" and root.get("tests") == "4"
    (suite,) = root.findall("testsuite")
    assert suite.get("name") == "run 2 (other) against run 1 (base)"
    cases = {(c.get("classname"), c.get("name")): c for c in suite.findall("testcase")}
    broken = cases[("iops < -5%", "slower")]
    failure = broken.find("failure")
    assert failure is not None and "breaks iops < -5%" in (failure.get("message") or "")
    held = cases[("iops < -5%", "same")]
    assert held.find("failure") is None and held.find("skipped") is None
    assert int(root.get("failures") or 0) == sum(
        c.find("failure") is not None for c in cases.values()
    )


def test_compare_gate_passes_when_every_rule_holds(db: Path) -> None:
    code, out = _compare(db, "--fail-if", "iops < -60%")
    assert code == 0, out
    assert "gate: 2 point check(s) hold iops < -60%" in out


def test_compare_gate_significant_counts_only_significant_verdicts(
    db: Path, tmp_path: Path
) -> None:
    junit = tmp_path / "g.xml"
    # "same" has no difference at all: with --significant it is skipped, not held
    code, out = _compare(db, "--fail-if", "iops > -1000%", "--significant", "--junit", str(junit))
    assert code == 1, out  # "slower" is significant and breaks it
    root = ET.fromstring(junit.read_text())
    skipped = [c for c in root.iter("testcase") if c.find("skipped") is not None]
    assert [c.get("name") for c in skipped] == ["same"]
    message = skipped[0].find("skipped").get("message")  # type: ignore[union-attr]
    assert message is not None and message.startswith("not significant at 95 %")


@pytest.mark.parametrize(
    ("rule", "why"),
    [("iops", "not a rule"), ("iops < -5", "not a rule"), ("speed < -5%", "no figure 'speed'")],
)
def test_compare_gate_refuses_a_bad_rule_with_the_fix(db: Path, rule: str, why: str) -> None:
    with pytest.raises(UserError) as e:
        parse_rule(rule)
    assert why in e.value.message and "--fail-if 'iops < -5%'" in (e.value.fix or "")
    code, out = _refused(db, "--fail-if", rule)
    assert code == 2 and why in out and "fix:" in out


def test_compare_gate_options_need_a_rule(db: Path) -> None:
    code, out = _refused(db, "--junit", "x.xml")
    assert code == 2 and "go with --fail-if" in out


@pytest.mark.parametrize(
    ("text", "change", "broken"),
    [("p99 > +10%", 10.0, False), ("p99 >= +10%", 10.0, True), ("iops <= -5.5%", -5.6, True)],
)
def test_compare_gate_rule_edges(text: str, change: float, broken: bool) -> None:
    assert parse_rule(text).broken_by(change) is broken
