"""Real outputs of twelve fio versions, 2.0.15 to 3.28 (tests/data/fio-versions, recorded by
its record.sh from fio's own source), read by storbench and, independently, by the facts
that directory's README lists per version: every figure comes out in bytes, ns and s,
equal to the file's own numbers in their version's units."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from storbench.engines import fio
from storbench.engines.fio.engine import FioEngine
from storbench.model.metrics import percentiles_from_bins

VERSIONS = Path(__file__).resolve().parent.parent / "data" / "fio-versions"
FILES = sorted(VERSIONS.glob("fio-*/*.json"))
BS = {"randread": 4096, "randrw-unified": 4096, "numjobs2-group": 4096, "two-groups": 65536}


def _version(doc: dict[str, Any]) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", doc["fio version"])[:2])


def _doc(path: Path) -> dict[str, Any]:
    text = path.read_text()
    return json.loads(text[text.index("{") :])


def _expected(d: dict[str, Any], version: tuple[int, ...], bs: int) -> dict[str, Any]:
    """A direction of a job entry as its version wrote it, in bytes, ns and counts (the
    facts of tests/data/fio-versions/README.md, applied here on their own)."""
    nbytes = d["io_bytes"] * (1024 if version < (2, 21) else 1)
    ios = d["total_ios"] if version >= (2, 2) else nbytes // bs
    clat = d["clat_ns"] if version >= (3, 0) else d["clat"]
    unit = 1 if version >= (3, 0) else 1000
    has_n = version >= (3, 18)
    return {
        "io_bytes": nbytes,
        "total_ios": ios,
        "bw_bytes": d.get("bw_bytes", d["bw"] * 1024),
        "iops": d["iops"],
        "runtime_s": d["runtime"] / 1000,
        "clat_mean": clat["mean"] * unit,
        "clat_max": clat["max"] * unit,
        "clat_samples": clat["N"] if has_n else ios,
        "clat_p99": clat["percentile"]["99.000000"] * unit,
    }


@pytest.mark.parametrize("path", FILES, ids=[f"{p.parent.name}/{p.stem}" for p in FILES])
def test_import_versions_every_figure_in_base_units(path: Path) -> None:
    doc = _doc(path)
    version = _version(doc)
    job = path.stem.rsplit("-", 1)[0]
    results = FioEngine().import_output(path.read_text())
    groups = fio.reporting_groups(doc)
    assert len(results) == len(groups) == (2 if job == "two-groups" else 1)
    # fio 2.0 and 2.1 print no I/O count and no job options: the count is estimated, and said
    estimated = any("prints no I/O count" in w for w in results[0].warnings)
    assert estimated == (version < (2, 2))
    for got, group in zip(results, groups, strict=True):
        m = got.measurement
        assert m.engine_version == doc["fio version"] and m.status == "ok"
        (entry,) = group["jobs"]  # numjobs2-group has group_reporting: one entry
        active = [d for d in ("read", "write", "trim", "mixed") if entry.get(d, {}).get("io_bytes")]
        assert sorted(m.directions) == sorted(active), path
        if job == "randrw-unified":
            assert active == ["mixed"]
        for name in active:
            want = _expected(entry[name], version, BS[job])
            d = m.directions[name]
            assert d.io_bytes == want["io_bytes"] > 0
            assert d.total_ios == want["total_ios"] > 0
            assert d.bw_bytes == pytest.approx(want["bw_bytes"])
            assert d.iops == pytest.approx(want["iops"])
            assert d.runtime_s == pytest.approx(want["runtime_s"])
            assert d.clat is not None, "the mean latency is kept whatever the version"
            assert d.clat.mean == pytest.approx(want["clat_mean"])
            assert d.clat.max == pytest.approx(want["clat_max"])
            assert d.clat.samples == want["clat_samples"]
            assert d.clat.percentiles["99"] == pytest.approx(want["clat_p99"])


JSONPLUS = [p for p in FILES if p.stem.endswith("-jsonplus")]


@pytest.mark.parametrize("path", JSONPLUS, ids=[f"{p.parent.name}/{p.stem}" for p in JSONPLUS])
def test_import_versions_histograms_give_fios_own_percentiles(path: Path) -> None:
    """json+ bins, whatever their layout (by bucket index with fio's constants in 2.12, by
    value in µs until 3.0, in ns since), hold every completion, and the percentiles
    storbench computes from them are the ones fio printed."""
    doc = _doc(path)
    for got in FioEngine().import_output(path.read_text()):
        for d in got.measurement.directions.values():
            assert d.clat is not None and d.clat.bins
            assert sum(d.clat.bins.values()) == d.total_ios
            ours = percentiles_from_bins(d.clat.bins)
            for p in ("50", "90", "99"):
                assert ours[p] == pytest.approx(d.clat.percentiles[p], rel=1e-9), (p, doc)


@pytest.mark.parametrize("path", FILES, ids=[f"{p.parent.name}/{p.stem}" for p in FILES])
def test_import_versions_keep_when_fio_ran(path: Path) -> None:
    """When fio ran, as its output says: it ended at ``timestamp_ms`` (else ``timestamp``,
    s) and started the longest job's ``elapsed`` (whole s) before; fio 2.1 and older wrote
    neither, and then nothing is made up."""
    doc = _doc(path)
    ended = doc["timestamp_ms"] / 1000 if "timestamp_ms" in doc else doc.get("timestamp")
    for got, group in zip(
        FioEngine().import_output(path.read_text()), fio.reporting_groups(doc), strict=True
    ):
        assert got.ended_at == ended
        elapsed = [j["elapsed"] for j in group["jobs"] if "elapsed" in j]
        assert got.started_at == (ended - max(elapsed) if ended and elapsed else None)
    if _version(doc) < (2, 2):
        assert ended is None
