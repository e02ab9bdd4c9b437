"""Schema 7 packs the latency histograms (storbench.model.histpack): exact, about an eighth of
their JSON text, and a database written by the previous release (schema 6, kept in
tests/data/store: see its README) opens, is brought up to date in place and reads as before."""

from __future__ import annotations

import glob
import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from storbench.analysis.summary import _bin_pairs
from storbench.engines import fio
from storbench.model import histpack
from storbench.store import Store

DATA = Path(__file__).resolve().parents[1] / "data"


def recorded_histograms() -> list[dict[int, int]]:
    """Every latency histogram of the recorded json+ outputs of tests/data/fio."""
    out = []
    for path in sorted(glob.glob(str(DATA / "fio" / "*jsonplus*.json"))):
        m = fio.parse_output(Path(path).read_text())[0]
        for d in m.directions.values():
            out += [lat.bins for lat in (d.clat, d.lat, d.slat) if lat and lat.bins]
    return out


def test_store_schema7_histograms_pack_exactly_and_small() -> None:
    hists = recorded_histograms()
    assert len(hists) >= 5
    packed = [histpack.encode(h) for h in hists]
    for h, blob in zip(hists, packed, strict=True):
        assert histpack.decode(blob) == h
        assert list(histpack.decode(blob)) == sorted(h)  # bucket order
    text = sum(len(json.dumps({str(k): v for k, v in h.items()})) for h in hists)
    assert sum(map(len, packed)) * 4 < text, "packed is not much smaller than JSON"
    # numpy's reading of many at once is the same pairs
    pairs = _bin_pairs(packed)
    assert sorted(map(tuple, pairs.tolist())) == sorted((k, c) for h in hists for k, c in h.items())


def test_store_schema7_refuses_what_it_did_not_pack() -> None:
    with pytest.raises(ValueError, match="not a stored histogram"):
        histpack.decode(b'{"1": 2}')
    blob = histpack.encode({1000: 3, 2000: 1})
    assert histpack.decode(blob) == {1000: 3, 2000: 1}
    big = {1: 1 << 40, (1 << 40) + 7: 5}  # counts and buckets beyond 32 bits
    assert histpack.decode(histpack.encode(big)) == big


def sb(*args: str, db: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "storbench", *args, "--db", str(db)],
        capture_output=True,
        text=True,
        timeout=120,
    )


def renumbered(doc: dict) -> dict:
    """A previous release's JSON export as this one writes it: that release numbered the
    measurements' points and repetitions from 0, this one from 1 as `show --point` does
    (the one intended difference; the recording stays as that release wrote it)."""
    for m in doc["measurements"]:
        m["point"] += 1
        m["repetition"] += 1
    return doc


def test_store_schema7_migrates_a_previous_release_database_in_place(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    with sqlite3.connect(db) as c:
        c.executescript((DATA / "store" / "v6-runs.sql").read_text())
    with sqlite3.connect(db) as c:
        assert c.execute("SELECT value FROM meta").fetchone() == ("6",)
        old = {
            (mid, host, d, metric): {int(k): v for k, v in json.loads(bins).items()}
            for mid, host, d, metric, bins in c.execute("SELECT * FROM histograms")
        }
    assert old, "the old database has histograms"
    store = Store(str(db))  # opens, migrates
    new = {}
    for run in (1, 2):
        for m in store.measurements.of_run(run, bins=True):
            for ddir, d in m.measurement.directions.items():
                for metric in ("clat", "lat", "slat"):
                    lat = getattr(d, metric)
                    if lat is not None and lat.bins:
                        new[(m.id, "", ddir, metric)] = lat.bins
            for host, hm in m.measurement.hosts.items():
                for ddir, d in hm.directions.items():
                    if d.clat is not None and d.clat.bins:
                        new[(m.id, host, ddir, "clat")] = d.clat.bins
    store.close()
    assert new == {k: v for k, v in old.items() if k in new} and set(new) == set(old)
    with sqlite3.connect(db) as c:
        assert c.execute("SELECT value FROM meta").fetchone() == ("7",)
        kinds = {r[0] for r in c.execute("SELECT typeof(bins) FROM histograms")}
        assert kinds == {"blob"}
    # every command reads it as the previous release wrote it: the export is the same
    for run in (1, 2):
        r = sb("export", str(run), "--format", "json", db=db)
        assert r.returncode == 0, r.stderr
        doc = json.loads(r.stdout)
        assert doc.pop("findings") == []  # (new since: none recorded then)
        assert doc == renumbered(
            json.loads((DATA / "store" / f"v6-runs.run{run}.json").read_text())
        )
    shown = sb("show", "1", db=db)
    assert shown.returncode == 0 and "p99" in shown.stdout, shown.stderr
