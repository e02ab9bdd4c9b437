"""An engine added from the test directory alone (a plugin named in STORBENCH_PLUGINS,
tests/plugins/toyengine.py), with no change under src/: `plan check` and `plan keys` know its
keys (from its own declaration), refuse what it refuses at the plan's line, `run` runs it
beside real fio, and `show`, the reports and the JSON export show the figures it reports by
construction (ops reads per second of bs bytes)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "plugins"))
import plugintools  # noqa: E402  (tests/plugins: running storbench with them)
from plugintools import ok  # noqa: E402

PLAN = """\
name: toyrun
targets:
  - file: {dir}/a.dat
workloads:
  - name: sleepy
    engine: toy
    ops: [1000, 3000]
    bs: 8k
    runtime: 1
  - name: fio-null
    ioengine: "null"
    rw: randread
    bs: 4k
    size: 1m
    runtime: 1
"""


def sb(*args: str, db: Path, cwd: Path, plugins: bool = True) -> subprocess.CompletedProcess[str]:
    return plugintools.storbench(*args, db=db, cwd=cwd, plugins="toyengine" if plugins else None)


@pytest.fixture
def plan(tmp_path: Path) -> Path:
    (tmp_path / "a.dat").write_bytes(b"\0" * 1024 * 1024)
    p = tmp_path / "toy.yaml"
    p.write_text(PLAN.format(dir=tmp_path))
    return p


def test_engine_plugin_plan_check_knows_its_keys_only_with_it(plan: Path, tmp_path: Path) -> None:
    db = tmp_path / "sb.db"
    r = sb("plan", "check", str(plan), db=db, cwd=tmp_path, plugins=False)
    assert r.returncode != 0 and "Traceback" not in r.stderr
    assert "toy.yaml:6:" in r.stderr and "`engine` cannot be 'toy'" in r.stderr, r.stderr
    assert "3 points" in ok(sb("plan", "check", str(plan), db=db, cwd=tmp_path))
    keys = ok(sb("plan", "keys", db=db, cwd=tmp_path))
    assert "## An `engine: toy` workload" in keys and "| `ops` |" in keys
    assert "choice: `fio`, `rados-bench`, `toy`" in keys


@pytest.mark.parametrize(
    ("ops", "message"),
    [
        ("ops_: 1000", "unknown toy key 'ops_'"),  # a misspelt key of its own
        ("# (no ops)", "`ops` must be a whole number ≥ 1, not None"),  # its own key's check
        ("ops: 2000000", "`ops` must be 1 to 1000000, not 2,000,000 (the toy engine reports"),
        ("ops: 1\n    iodepth: 4", "`iodepth` is a fio option, not one of the toy engine's"),
    ],
    ids=["unknown-key", "own-check", "declared-range", "other-engine-key"],
)
def test_engine_plugin_refusals_name_the_line(
    plan: Path, tmp_path: Path, ops: str, message: str
) -> None:
    plan.write_text(plan.read_text().replace("ops: [1000, 3000]", ops))
    r = sb("plan", "check", str(plan), db=tmp_path / "sb.db", cwd=tmp_path)
    assert r.returncode != 0 and "Traceback" not in r.stderr
    assert message in r.stderr and "toy.yaml:" in r.stderr, r.stderr


def test_engine_plugin_refuses_what_its_declaration_refuses(plan: Path, tmp_path: Path) -> None:
    db = tmp_path / "sb.db"
    hosts = plan.read_text() + "hosts:\n  - address: local\n"
    plan.write_text(hosts)
    r = sb("plan", "check", str(plan), db=db, cwd=tmp_path)
    assert "the toy engine runs on this machine, not on `hosts:`" in r.stderr, r.stderr
    rados = PLAN.format(dir=tmp_path).replace(f"file: {tmp_path}/a.dat", "rados: pool")
    plan.write_text(rados.split("  - name: fio-null")[0])
    r = sb("plan", "check", str(plan), db=db, cwd=tmp_path)
    assert "the toy engine reads files, not the rados pool" in r.stderr, r.stderr


def test_engine_plugin_runs_and_every_presenter_shows_it(plan: Path, tmp_path: Path) -> None:
    db = tmp_path / "sb.db"
    out = ok(sb("run", str(plan), db=db, cwd=tmp_path))
    assert "read 3,000 IOPS 23.4 MiB/s" in out, out  # 3000 x 8 KiB by construction
    shown = ok(sb("show", "1", db=db, cwd=tmp_path))
    assert "3,000" in shown and "1,000" in shown
    point = ok(sb("show", "1", "--point", "2", db=db, cwd=tmp_path))
    assert "# command: toy ops=3000 bs=8192 runtime=1" in point
    assert '"total": 3000' in point  # the engine's raw output, kept
    md = ok(sb("report", "1", "--format", "markdown", db=db, cwd=tmp_path))
    assert "| 3000 | read | 3,000 | 23.4 |" in md, md
    ok(sb("report", "1", "--format", "html", "-o", str(tmp_path / "r.html"), db=db, cwd=tmp_path))
    assert "23.4" in (tmp_path / "r.html").read_text()
    doc = json.loads(ok(sb("export", "1", "--format", "json", db=db, cwd=tmp_path)))
    toy = [m for m in doc["measurements"] if m["engine"] == "toy"]
    assert [m["params"]["ops"] for m in toy] == [1000, 3000]
    assert [m["read"]["iops"] for m in toy] == [1000.0, 3000.0]
    assert [m["read"]["bw_bytes"] for m in toy] == [1000.0 * 8192, 3000.0 * 8192]
    assert [m["engine_version"] for m in toy] == ["toy-1.0", "toy-1.0"]
    fio = [m for m in doc["measurements"] if m["engine"] != "toy"]
    assert len(fio) == 1 and fio[0]["status"] == "ok"  # real fio ran beside it
    # without the plugin the run still shows (its figures are in the database); what would
    # run the engine again says which plugin is missing
    assert "3,000" in ok(sb("show", "1", db=db, cwd=tmp_path, plugins=False))
    text = ok(sb("report", "1", "--format", "terminal", db=db, cwd=tmp_path, plugins=False))
    assert "3,000" in text and "\x1b[" not in text  # the terminal's text, no colour codes
