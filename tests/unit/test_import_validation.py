"""Issue 17 point 10: `storbench import` stores only what is a real fio result. Every case
here is a CRAFTED, invalid document, derived from a recorded real fio output
(tests/data/fio) by changing one thing: it is refused with one message naming the file once
and what is wrong, exit 2, and nothing of the whole import is stored. The recorded real
outputs themselves all import (and parse exactly as before: tests/unit/test_fio_parse.py)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from storbench.engines import fio

DATA = Path(__file__).resolve().parents[1] / "data" / "fio"
REAL = sorted(DATA.glob("*.json"))


def storbench(db: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "storbench", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "STORBENCH_DB": str(db), "COLUMNS": "300"},
        cwd=cwd,
        timeout=60,
    )


def recorded(name: str) -> dict[str, Any]:
    text = (DATA / name).read_text()
    return json.loads(text[text.index("{") :])


def crafted(
    name: str, change: Callable[[dict[str, Any]], Any]
) -> Callable[[], dict[str, Any] | str]:
    def make() -> dict[str, Any] | str:
        doc = recorded(name)
        out = change(doc)
        return doc if out is None else out

    return make


def job(doc: dict[str, Any]) -> dict[str, Any]:
    return doc["jobs"][0]


PLUS = "libaio-randrw-jsonplus.json"
PLAIN = "psync-randread-json.json"
CLIENT = "clientserver-2hosts-jsonplus.json"

CASES: dict[str, tuple[Callable[[], Any], str]] = {
    "no-jobs": (crafted(PLAIN, lambda d: d.update(jobs=[])), "no job results"),
    "jobs-object": (crafted(PLAIN, lambda d: d.update(jobs={})), "`jobs` is not a list"),
    "jobs-string": (crafted(PLAIN, lambda d: d.update(jobs="x")), "`jobs` is not a list"),
    "empty-job": (crafted(PLAIN, lambda d: d.update(jobs=[{}])), "no read, write or trim"),
    "job-not-object": (crafted(PLAIN, lambda d: d.update(jobs=[7])), "not an object"),
    "read-string": (crafted(PLAIN, lambda d: job(d).update(read="x")), "`read`"),
    "iops-negative": (crafted(PLAIN, lambda d: job(d)["read"].update(iops=-5)), "iops"),
    "iops-nan": (crafted(PLAIN, lambda d: job(d)["read"].update(iops=float("nan"))), "iops"),
    "iops-inf": (crafted(PLAIN, lambda d: job(d)["read"].update(iops=float("inf"))), "iops"),
    "iops-text": (crafted(PLAIN, lambda d: job(d)["read"].update(iops="fast")), "iops"),
    "io-bytes-negative": (
        crafted(PLAIN, lambda d: job(d)["read"].update(io_bytes=-1)),
        "io_bytes",
    ),
    "runtime-null": (crafted(PLAIN, lambda d: job(d)["read"].update(runtime=None)), "runtime"),
    "clat-string": (crafted(PLAIN, lambda d: job(d)["read"].update(clat_ns="x")), "clat_ns"),
    "clat-mean-negative": (
        crafted(PLAIN, lambda d: job(d)["read"]["clat_ns"].update(mean=-3.0)),
        "mean",
    ),
    "percentile-key": (
        crafted(PLAIN, lambda d: job(d)["read"]["clat_ns"]["percentile"].update(x=5)),
        "percentile",
    ),
    "percentile-value": (
        crafted(
            PLAIN, lambda d: job(d)["read"]["clat_ns"]["percentile"].update({"99.000000": "x"})
        ),
        "percentile",
    ),
    "bins-key": (
        crafted(PLUS, lambda d: job(d)["read"]["clat_ns"]["bins"].update(x=1)),
        "bins",
    ),
    "bins-count": (
        crafted(PLUS, lambda d: job(d)["read"]["clat_ns"]["bins"].update({"1000": -4})),
        "bins",
    ),
    # found by tests/unit/test_fuzz_inputs.py: counts and versions no database can hold
    "bins-count-huge": (
        crafted(PLUS, lambda d: job(d)["read"]["clat_ns"]["bins"].update({"1000": 10**30})),
        "not a count",
    ),
    "bins-key-huge": (
        crafted(PLUS, lambda d: job(d)["read"]["clat_ns"]["bins"].update({"9" * 5000: 1})),
        "no latency in ns",
    ),
    "bins-key-superscript": (  # '²'.isdigit() is true, int('²') is an error
        crafted(PLUS, lambda d: job(d)["read"]["clat_ns"]["bins"].update({"\u00b2": 1})),
        "no latency in ns",
    ),
    "version-number": (crafted(PLAIN, lambda d: d.update({"fio version": 10**30})), "version"),
    "error-text": (crafted(PLAIN, lambda d: job(d).update(error="bad")), "error"),
    # found by the fuzz test: os.strerror() of a huge error number overflowed
    "error-huge": (crafted(PLAIN, lambda d: job(d).update(error=10**12)), "error"),
    "cpu-text": (crafted(PLAIN, lambda d: job(d).update(usr_cpu="x")), "usr_cpu"),
    "options-list": (crafted(PLAIN, lambda d: job(d).update({"job options": []})), "options"),
    "jobname-surrogate": (crafted(PLAIN, lambda d: job(d).update(jobname="\ud800")), "Unicode"),
    "client-stats-not-list": (
        crafted(CLIENT, lambda d: d.update(client_stats={"a": 1})),
        "`client_stats` is not a list",
    ),
    "client-stats-only-all": (
        crafted(
            CLIENT,
            lambda d: d.update(
                client_stats=[e for e in d["client_stats"] if e.get("jobname") == "All clients"]
            ),
        ),
        "no job results",
    ),
    "port-text": (crafted(CLIENT, lambda d: d["client_stats"][0].update(port="x")), "port"),
    "top-array": (crafted(PLAIN, lambda d: [d]), "no fio JSON result"),
    "deep": (lambda: '{"jobs": ' + "[" * 100000, "no fio JSON result"),
}


def write_case(tmp_path: Path, make: Callable[[], Any]) -> Path:
    doc = make()
    path = tmp_path / "crafted.json"
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc, allow_nan=True))
    return path


@pytest.mark.parametrize("case", sorted(CASES))
def test_import_refuses_crafted_garbage(tmp_path: Path, case: str) -> None:
    make, says = CASES[case]
    bad = write_case(tmp_path, make)
    db = tmp_path / "r.db"
    # a good file first: the import is all or nothing
    r = storbench(db, "import", str(DATA / PLAIN), str(bad), cwd=tmp_path)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert "Traceback" not in r.stderr + r.stdout
    assert r.stderr.count("storbench: error:") == 1, r.stderr
    first = r.stderr.splitlines()[0]
    assert first.count(str(bad)) == 1, first
    assert says in " ".join(r.stderr.split()), (says, r.stderr)
    if db.exists():
        with sqlite3.connect(db) as con:
            assert con.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 0


@pytest.mark.parametrize("path", REAL, ids=[p.stem for p in REAL])
def test_import_every_recorded_real_output_is_valid(path: Path) -> None:
    doc, _ = fio.final_document(path.read_text())
    fio.check_document(doc)  # raises on what import refuses


@pytest.mark.parametrize("case", sorted(CASES))
def test_import_the_runner_never_records_garbage_as_ok(case: str) -> None:
    """The same check guards fio's live output: a run's point fails instead."""
    make, _ = CASES[case]
    doc = make()
    text = doc if isinstance(doc, str) else json.dumps(doc, allow_nan=True)
    with pytest.raises(fio.FioOutputError):
        fio.parse_output(text)
