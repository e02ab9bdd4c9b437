"""The measurement model: fio's percentile rule, histogram merging, pooled latency moments."""

from __future__ import annotations

import dataclasses
import json
import math
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from storbench.engines import fio
from storbench.model.findings import Finding
from storbench.model.metrics import (
    PERCENTILES,
    LatencyStats,
    Measurement,
    fio_rank,
    merge_bins,
    pct_key,
    percentiles_from_bins,
)

DATA = Path(__file__).resolve().parent.parent / "data" / "fio"


def _doc(name: str) -> dict:
    docs, _ = fio.split_documents((DATA / f"{name}.json").read_text())
    return docs[-1]


def _stats(lat: dict) -> LatencyStats:
    """A LatencyStats holding exactly what fio printed for one job."""
    return LatencyStats(
        samples=lat["N"],
        mean=lat["mean"],
        stddev=lat["stddev"],
        min=lat["min"],
        max=lat["max"],
        percentiles={},
        bins={int(k): v for k, v in lat["bins"].items()} if "bins" in lat else None,
    )


# ---------------------------------------------------------------------------- fio's rank rule


@pytest.mark.parametrize(
    ("p", "n", "rank"),
    [
        # (long double) p / 100.0 * n lands just above an integer where double lands on it
        (99.9, 33000, 32968),
        (99.9, 66000, 65935),
        (99.95, 66000, 65968),
        (60.0, 25, 16),
        (30.0, 50, 16),
        (60.0, 100, 61),
        # exact or far from an integer: plain ceil
        (50.0, 8192, 4096),
        (99.99, 2048, 2048),
        (99.0, 33000, 32670),
        (100.0, 12345, 12345),
        (1.0, 1, 1),
    ],
)
def test_fio_rank_known_values(p: float, n: int, rank: int) -> None:
    assert fio_rank(p, n) == rank


def test_fio_rank_differs_from_double_where_fio_does() -> None:
    assert math.ceil(99.9 / 100.0 * 33000) == 32967  # what a double computation gives
    assert fio_rank(99.9, 33000) == 32968


C_RANK = r"""
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
    /* the comparison of fio's stat.c calc_clat_percentiles, for each p and nr */
    for (int i = 1; i < argc; i++) {
        double p = strtod(argv[i], NULL);
        for (unsigned long long nr = 1; nr <= 1200; nr++) {
            unsigned long long sum = 0;
            while (!(sum >= ((long double) p / 100.0 * nr)))
                sum++;
            printf("%llu\n", sum);
        }
    }
    return 0;
}
"""


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler")
def test_fio_rank_matches_c_long_double(tmp_path: Path) -> None:
    """Oracle: the very expression of fio's stat.c, compiled by this machine's C compiler."""
    src = tmp_path / "rank.c"
    src.write_text(C_RANK)
    exe = tmp_path / "rank"
    subprocess.run(["cc", "-O2", "-o", str(exe), str(src)], check=True)
    ps = ["1", "5", "10", "20", "30", "40", "50", "60", "70", "80", "90", "95", "99"]
    ps += ["99.5", "99.9", "99.95", "99.99", "97.2", "33.3"]
    out = subprocess.run([str(exe), *ps], capture_output=True, text=True, check=True).stdout
    want = [int(x) for x in out.split()]
    got = [fio_rank(float(p), n) for p in ps for n in range(1, 1201)]
    assert got == want


# ---------------------------------------------------------------------------- percentiles


def test_percentiles_from_bins_reproduces_the_rank_recording() -> None:
    clat = _doc("percentile-rank-jsonplus")["jobs"][0]["read"]["clat_ns"]
    bins = {int(k): v for k, v in clat["bins"].items()}
    listed = [float(k) for k in clat["percentile"]]
    want = {pct_key(float(k)): float(v) for k, v in clat["percentile"].items()}
    assert percentiles_from_bins(bins, listed) == want
    # dict order and string keys don't matter; zero counts are no samples
    shuffled = {str(k): bins[k] for k in sorted(bins, reverse=True)}
    shuffled["1"] = 0
    assert percentiles_from_bins(shuffled, listed) == want


def test_percentiles_from_bins_default_keys_and_empty() -> None:
    assert percentiles_from_bins({}) == {}
    assert percentiles_from_bins({100: 0}) == {}
    clat = _doc("null-engine-jsonplus")["jobs"][0]["read"]["clat_ns"]
    got = percentiles_from_bins({int(k): v for k, v in clat["bins"].items()})
    assert list(got) == ["50", "90", "95", "99", "99.9", "99.99"]
    assert list(got) == [pct_key(p) for p in PERCENTILES]
    # below 128 ns buckets are exact values
    assert got["50"] == clat["percentile"]["50.000000"] == 30


# ---------------------------------------------------------------------------- merging


def test_merge_bins() -> None:
    jobs = _doc("numjobs4-nogroup-jsonplus")["jobs"]
    hists = [{int(k): v for k, v in j["write"]["clat_ns"]["bins"].items()} for j in jobs]
    want: Counter[int] = Counter()
    for h in hists:
        want.update(h)
    assert merge_bins(hists) == dict(want)
    assert sum(merge_bins(hists).values()) == 8192  # type: ignore[union-attr]
    assert merge_bins([*hists, None]) is None
    assert merge_bins([]) == {}


def test_latency_merge_pools_like_fio() -> None:
    jobs = _doc("numjobs4-nogroup-jsonplus")["jobs"]
    parts = [_stats(j["write"]["clat_ns"]) for j in jobs]
    merged = LatencyStats.merge(parts)
    assert merged is not None
    n = sum(p.samples for p in parts)
    mean = sum(p.samples * p.mean for p in parts) / n  # type: ignore[operator]
    # sum of squared deviations of the union, from each part's sample variance
    s = sum(
        (p.samples - 1) * p.stddev**2 + p.samples * (p.mean - mean) ** 2  # type: ignore[operator]
        for p in parts
    )
    assert merged.samples == n
    assert merged.mean == pytest.approx(mean, rel=1e-12)
    assert merged.stddev == pytest.approx(math.sqrt(s / (n - 1)), rel=1e-12)
    assert merged.min == min(p.min for p in parts)  # type: ignore[type-var]
    assert merged.max == max(p.max for p in parts)  # type: ignore[type-var]
    assert merged.bins == merge_bins(p.bins for p in parts)
    assert merged.percentiles == percentiles_from_bins(merged.bins)  # type: ignore[arg-type]


def test_latency_merge_of_identical_parts_keeps_fio_stddev() -> None:
    """Two copies of one job: same mean; S doubles, N - 1 becomes 2N - 1."""
    lat = _doc("psync-randread-json")["jobs"][0]["read"]["clat_ns"]
    one = _stats(lat)
    merged = LatencyStats.merge([one, _stats(lat)])
    assert merged is not None
    n = lat["N"]
    assert merged.mean == pytest.approx(lat["mean"], rel=1e-12)
    assert merged.stddev == pytest.approx(
        lat["stddev"] * math.sqrt(2 * (n - 1) / (2 * n - 1)), rel=1e-12
    )
    assert merged.bins is None and merged.percentiles == {}  # plain json: nothing to merge


def test_latency_merge_edge_cases() -> None:
    lat = _doc("libaio-randrw-jsonplus")["jobs"][0]["read"]["clat_ns"]
    one = _stats(lat)
    assert LatencyStats.merge([]) is None
    assert LatencyStats.merge([LatencyStats()]) is None  # zero samples
    assert LatencyStats.merge([one, LatencyStats()]) is one
    # one sample each: sample stddev of {a, b} is |a - b| / sqrt(2)
    a = LatencyStats(samples=1, mean=1000.0, stddev=0.0, min=1000.0, max=1000.0, bins={1000: 1})
    b = LatencyStats(samples=1, mean=3000.0, stddev=0.0, min=3000.0, max=3000.0, bins={3008: 1})
    ab = LatencyStats.merge([a, b])
    assert ab is not None
    assert ab.stddev == pytest.approx(2000 / math.sqrt(2))
    assert ab.percentiles["50"] == 1000 and ab.percentiles["99"] == 3008
    # a part without bins: no merged percentiles at all (never averaged)
    nob = _stats(lat)
    nob.bins = None
    mixed = LatencyStats.merge([one, nob])
    assert mixed is not None and mixed.bins is None and mixed.percentiles == {}


# ---------------------------------------------------------------------------- model round trip


@pytest.mark.parametrize("path", sorted(DATA.glob("*.json")), ids=lambda p: p.stem)
def test_measurement_dict_round_trip(path: Path) -> None:
    meas, _ = fio.parse_output(path.read_text())
    data = json.loads(json.dumps(meas.to_dict()))  # as stored: JSON, int keys become strings
    assert Measurement.from_dict(data) == meas


@pytest.mark.parametrize("path", sorted(DATA.glob("*.json")), ids=lambda p: p.stem)
def test_measurement_to_dict_is_asdict_copied(path: Path) -> None:
    """to_dict is exactly dataclasses.asdict (as stored), types and order included, and a
    copy: changing it leaves the measurement as it was; ``findings`` only where there are
    some (a measurement without reads as one recorded before findings)."""
    meas, _ = fio.parse_output(path.read_text())
    meas.extra.update(nested={"t": (1, [2, {"x": 3}])}, hosts=["a", "b"])
    got, want = meas.to_dict(), dataclasses.asdict(meas)
    for d in (want, *want["hosts"].values()):
        assert d.pop("findings") == []
    assert got == want
    assert json.dumps(got) == json.dumps(want)  # the same order throughout
    assert repr(got) == repr(want)  # and the same types (tuples stay tuples)
    for d in got["directions"].values():
        for lat in ("slat", "clat", "lat"):
            if d[lat] and d[lat]["bins"]:
                d[lat]["bins"].clear()
    got["extra"]["nested"]["t"][1][1]["x"] = 4
    assert meas.to_dict() == want


def test_measurement_findings_round_trip() -> None:
    """A measurement's findings are stored in its data and read back as they were; the host
    is kept only for a finding of one host."""
    meas, _ = fio.parse_output(sorted(DATA.glob("*.json"))[0].read_text())
    meas.findings = [
        Finding("page-cache", "buffered I/O over 64 MiB", "set direct: 1", {"data_bytes": 1}),
        Finding("client-cpu-bound", "97 %", "add jobs", {"usr_cpu_pct": 60.0}, host="h1"),
    ]
    data = json.loads(json.dumps(meas.to_dict()))
    assert [f.get("host") for f in data["findings"]] == [None, "h1"]
    assert Measurement.from_dict(data).findings == meas.findings


def test_merge_leaves_out_what_a_part_does_not_report() -> None:
    """rados bench reports no latency stddev for reads: the union of two such runs has none
    either (taking the missing stddev as 0 would pool a wrong one), yet its mean, min and max
    are exact. Real recorded output (tests/data/rados)."""
    from pathlib import Path

    from storbench.engines import rados

    data = Path(__file__).resolve().parent.parent / "data" / "rados"
    seq = [
        rados.to_measurement(
            rados.parse_rados_bench((data / f"seq-4m-2clients-c{i}.out").read_text(), None, "seq")
        )
        .directions["read"]
        .lat
        for i in (1, 2)
    ]
    assert all(p is not None and p.stddev is None and p.mean for p in seq)
    parts = [p for p in seq if p is not None]
    merged = LatencyStats.merge(parts)
    assert merged is not None
    assert merged.stddev is None
    n = sum(p.samples for p in parts)
    assert merged.samples == n
    assert merged.mean == pytest.approx(sum(p.samples * (p.mean or 0) for p in parts) / n)
    assert merged.min == min(p.min or 0 for p in parts)
    assert merged.max == max(p.max or 0 for p in parts)
    # writes report a stddev: the union pools it
    write = [
        rados.to_measurement(
            rados.parse_rados_bench(
                (data / f"write-4m-2clients-c{i}.out").read_text(), None, "write"
            )
        )
        .directions["write"]
        .lat
        for i in (1, 2)
    ]
    pooled = LatencyStats.merge([p for p in write if p is not None])
    assert pooled is not None and pooled.stddev is not None and pooled.stddev > 0
