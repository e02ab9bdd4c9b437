"""A run as one portable document and back (store/archive.py): a real database's runs
(tests/data/store/v6-runs.sql: a real quick run with its series and host samples, and an
imported client/server output with per-host histograms) dumped, loaded into another
database and dumped again give the same document, apart from where it came from."""

from __future__ import annotations

import copy
import json
import sqlite3
from pathlib import Path

import pytest

from storbench.model.errors import UserError
from storbench.store import Store

DATA = Path(__file__).resolve().parents[1] / "data" / "store"


@pytest.fixture
def old(tmp_path: Path) -> Store:
    db = tmp_path / "old.db"
    with sqlite3.connect(db) as c:
        c.executescript((DATA / "v6-runs.sql").read_text())
    return Store(str(db))


def without_origin(doc: dict) -> dict:
    doc = copy.deepcopy(doc)
    doc.pop("from")
    doc["run"]["inventory"].pop("provenance", None)
    return doc


def test_store_archive_round_trips_every_part_of_a_real_run(old: Store, tmp_path: Path) -> None:
    new = Store(str(tmp_path / "new.db"))
    for run in (1, 2):
        doc = json.loads(json.dumps(old.archive.dump(run)))  # through its file form
        assert doc["measurements"] and doc["points"]
        assert all(m["raw_output"] for m in doc["measurements"])
        if run == 1:
            assert doc["events"] and doc["intervals"]["rows"] and doc["host_samples"]["rows"]
            assert all(m["job_file"] and m["command"] for m in doc["measurements"])
        else:  # the import: client/server, each host's histograms kept
            hosts = {h["host"] for m in doc["measurements"] for h in m["histograms"]}
            assert len(hosts) >= 2
        copied = new.archive.load(doc, "test.sbz")
        again = new.archive.dump(copied)
        assert without_origin(again) == without_origin(doc)
        (prov,) = again["run"]["inventory"]["provenance"]
        assert prov["db"] == old.path and prov["run"] == run and prov["via"] == "test.sbz"
        assert prov["token"] == old.runs.get(run).token != new.runs.get(copied).token
        assert new.archive.run_with_token({old.runs.get(run).token}) == copied
        # what every command reads of it is what it was
        assert [m.measurement for m in new.measurements.of_run(copied, bins=True)] == [
            m.measurement for m in old.measurements.of_run(run, bins=True)
        ]
        assert new.measurements.raw(new.measurements.of_run(copied)[0].id) == old.measurements.raw(
            old.measurements.of_run(run)[0].id
        )


def test_store_archive_refuses_what_it_cannot_take_whole(old: Store, tmp_path: Path) -> None:
    new = Store(str(tmp_path / "new.db"))
    doc = old.archive.dump(1)
    with pytest.raises(UserError, match=r"x\.json is not a storbench archive"):
        new.archive.load({"jobs": []}, "x.json")
    with pytest.raises(UserError, match="of version 99"):
        new.archive.load({**doc, "version": 99}, "x.sbz")
    with pytest.raises(UserError, match=r"damaged storbench archive \(no points, run.status\)"):
        broken = {**doc, "run": {k: v for k, v in doc["run"].items() if k != "status"}}
        new.archive.load({**broken, "points": None}, "x.sbz")
    hostile = copy.deepcopy(doc)
    hostile["intervals"]["columns"][0] = "seq) VALUES (1); DROP TABLE runs; --"
    with pytest.raises(UserError, match=r"intervals\.columns names a column the table does not"):
        new.archive.load(hostile, "x.sbz")
    assert new.runs.all() == []  # nothing of a refused archive stays
