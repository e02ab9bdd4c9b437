"""Refactors change no output: what storbench makes of the recorded real engine outputs and
of the built-in suites is compared with a snapshot taken before (tests/data/golden).

- every recorded fio JSON output, imported through the command line and exported as JSON
  and CSV (times and paths of the machine left out);
- every recorded rados bench output, parsed into a measurement, and the two-client pairs
  aggregated;
- every built-in suite's points and exact job files or commands (`storbench plan show`);
- each suite's answer (qualify, profiles, matrix, rados) as every presenter shows it: the
  terminal (`storbench show`), the Markdown report, the HTML report's answer section and
  the JSON export's "answer", on runs stored from the recordings (tests/answer_runs.py).

After an intended change of output, rewrite the snapshot and review its diff:
``.venv/bin/python tests/unit/test_golden_outputs.py --write``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from storbench.engines import rados

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the harness modules
from answer_runs import KINDS, store_run

ROOT = Path(__file__).resolve().parents[2]
FIO = ROOT / "tests" / "data" / "fio"
RADOS = ROOT / "tests" / "data" / "rados"
SNAPSHOT = ROOT / "tests" / "data" / "golden" / "outputs.json"
SUITE_TARGETS = {"rados": "rados:bench", "rbd": "rbd:bench/img"}


def _cli(*args: str, db: Path, cwd: Path) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("STORBENCH_FIO", "CEPH_CONF")}
    env.update({"STORBENCH_DB": str(db), "COLUMNS": "200", "TZ": "UTC"})
    r = subprocess.run(
        [sys.executable, "-m", "storbench", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=120,
    )
    assert r.returncode == 0, (args, r.stdout, r.stderr)
    return r.stdout


def _neutral(text: str, tmp: Path) -> str:
    """Without what differs between machines and moments."""
    text = text.replace(str(tmp), "TMP").replace(str(ROOT), "REPO")
    text = re.sub(r"started \d{4}-\d\d-\d\d \d\d:\d\d:\d\d", "started TIME", text)
    return re.sub(r'("(started_at|ended_at|at)": )[0-9.e+]+', r"\g<1>0", text)


def _fio_exports() -> dict[str, Any]:
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        for i, path in enumerate(sorted(FIO.glob("*.json")), 1):
            db = tmp / f"{path.stem}.db"
            _cli("import", str(path), db=db, cwd=tmp)
            doc = json.loads(_neutral(_cli("export", "1", "--format", "json", db=db, cwd=tmp), tmp))
            doc["run"].pop("inventory", None)
            doc["run"].pop("storbench_version", None)
            csv = _neutral(_cli("export", "1", "--format", "csv", db=db, cwd=tmp), tmp)
            out[path.name] = {"json": doc["measurements"], "csv": csv}
            assert i
    return out


def _rados_measurements() -> dict[str, Any]:
    out: dict[str, Any] = {}
    for path in sorted(RADOS.glob("*.out")):
        name = path.stem
        if not name.startswith(("write-", "seq-", "rand-")) or name == "seq-no-write-plain":
            continue
        fmt = "json" if "-json" in name else "plain"
        res = rados.parse_rados_bench(path.read_text(), fmt, name.split("-")[0])
        out[name] = rados.to_measurement(res).to_dict()
    pairs: dict[str, list[str]] = {}
    for name in out:
        if "-2clients-c" in name:
            pairs.setdefault(name.rsplit("-c", 1)[0], []).append(name)
    for base, names in sorted(pairs.items()):
        results = [
            rados.parse_rados_bench((RADOS / f"{n}.out").read_text(), "plain", n.split("-")[0])
            for n in sorted(names)
        ]
        out[f"{base}+aggregate"] = rados.aggregate_clients(results).to_dict()
    return out


def _suites() -> dict[str, str]:
    out: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        for suite in ("quick", "qualify", "profiles", "matrix", "rados", "rbd"):
            target = SUITE_TARGETS.get(suite, "/srv/storbench-golden/x.dat")
            text = _cli(
                "plan", "show", suite, "--target", target, "--ceph-conf", "/etc/ceph/c.conf",
                db=tmp / "r.db", cwd=tmp,
            )  # fmt: skip
            out[suite] = _neutral(text, tmp)
    return out


def _answers() -> dict[str, Any]:
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        for kind in KINDS:
            db = tmp / f"{kind}.db"
            run = str(store_run(db, kind))
            html = _cli("report", run, "--format", "html", db=db, cwd=tmp)
            section = re.search(r'<section id="answer">.*?</section>', html, re.S)
            doc = json.loads(_cli("export", run, "--format", "json", db=db, cwd=tmp))
            out[kind] = {
                "terminal": _neutral(_cli("show", run, db=db, cwd=tmp), tmp),
                "markdown": _neutral(
                    _cli("report", run, "--format", "markdown", db=db, cwd=tmp), tmp
                ),
                "html": section.group(0) if section else None,
                "json": doc.get("answer"),
            }
    return out


def current() -> dict[str, Any]:
    return {
        "fio": _fio_exports(),
        "rados": _rados_measurements(),
        "suites": _suites(),
        "answers": _answers(),
    }


@pytest.fixture(scope="module")
def now() -> dict[str, Any]:
    return current()


@pytest.fixture(scope="module")
def before() -> dict[str, Any]:
    return json.loads(SNAPSHOT.read_text())


@pytest.mark.parametrize("part", ["fio", "rados", "suites", "answers"])
def test_golden_outputs_are_unchanged(
    part: str, now: dict[str, Any], before: dict[str, Any]
) -> None:
    assert sorted(now[part]) == sorted(before[part])
    for key in before[part]:
        assert now[part][key] == before[part][key], f"{part}: {key} changed"


if __name__ == "__main__" and "--write" in sys.argv:
    SNAPSHOT.parent.mkdir(parents=True, exist_ok=True)
    SNAPSHOT.write_text(json.dumps(current(), indent=1, sort_keys=True) + "\n")
    print(f"wrote {SNAPSHOT}")
