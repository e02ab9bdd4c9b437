"""fio output parsing and aggregation, on real fio-3.33 outputs (tests/data/fio, see its README).

The expected values are read from the recorded JSON itself with a decoder written here
(skip to each ``{``, ``raw_decode``), never from storbench's parser.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from storbench.engines import fio
from storbench.model.metrics import DIRECTIONS, PERCENTILES, pct_key, percentiles_from_bins

DATA = Path(__file__).resolve().parent.parent / "data" / "fio"
ALL = sorted(DATA.glob("*.json"))
JSONPLUS = [p for p in ALL if p.stem.endswith("-jsonplus")]
NAMES = [p.stem for p in ALL]

#: Active directions of each recording (from its job file: rw=...).
DIRS = {
    "clientserver-2hosts-json": {"read"},
    "clientserver-2hosts-jsonplus": {"read"},
    "error-enospc-json": {"write"},
    "libaio-randrw-jsonplus": {"read", "write"},
    "null-engine-jsonplus": {"read"},
    "numjobs2-lat-percentiles-jsonplus": {"write"},
    "numjobs4-group-jsonplus": {"write"},
    "numjobs4-nogroup-jsonplus": {"write"},
    "percentile-rank-jsonplus": {"read"},
    "psync-randread-json": {"read"},
    "psync-cached-randread-json": {"read"},
    "status-interval-json": {"read"},
    "twojobs-sections-json": {"read", "write"},
    "warning-before-json": {"read"},
}


def text_of(name: str) -> str:
    return (DATA / f"{name}.json").read_text()


def raw_docs(text: str) -> list[dict[str, Any]]:
    """The test's own reading of a recording: every document, by raw_decode from each '{'."""
    dec, out, i = json.JSONDecoder(), [], 0
    while (j := text.find("{", i)) != -1:
        doc, i = dec.raw_decode(text, j)
        out.append(doc)
    return out


def last_doc(name: str) -> dict[str, Any]:
    return raw_docs(text_of(name))[-1]


def entries(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """Job entries (local) or per-client entries without the "All clients" one."""
    if "jobs" in doc:
        return doc["jobs"]
    return [c for c in doc["client_stats"] if c["jobname"] != "All clients"]


def fio_pcts(lat: dict[str, Any]) -> dict[str, float]:
    return {pct_key(float(k)): float(v) for k, v in lat["percentile"].items()}


def int_bins(lat: dict[str, Any]) -> dict[int, int]:
    return {int(k): int(v) for k, v in lat["bins"].items()}


def host_key(entry: dict[str, Any]) -> str:
    return f"{entry['hostname']}:{entry['port']}"


def test_all_recordings_are_covered() -> None:
    assert set(NAMES) == set(DIRS), "a recording was added or removed: update DIRS"
    assert len(ALL) >= 13


# ---------------------------------------------------------------------------- every file


@pytest.mark.parametrize("name", NAMES)
def test_every_recording_parses_with_its_directions(name: str) -> None:
    meas, warnings = fio.parse_output(text_of(name))
    assert meas.engine_version == "fio-3.33"
    assert {d for d in DIRECTIONS if meas.direction(d)} == DIRS[name]
    doc = last_doc(name)
    for d in DIRS[name]:
        got = meas.direction(d)
        assert got is not None
        assert got.total_ios == sum(e[d]["total_ios"] for e in entries(doc))
        assert got.io_bytes == sum(e[d]["io_bytes"] for e in entries(doc))
        assert got.runtime_s > 0 and got.iops > 0 and got.bw_bytes > 0
        assert got.clat is not None and got.clat.samples == sum(
            e[d]["clat_ns"]["N"] for e in entries(doc)
        )
    assert meas.jobs == len(entries(doc))
    assert isinstance(warnings, list)


SINGLE = [n for n in NAMES if n in DIRS and len(entries(last_doc(n))) == 1]


def test_single_job_list_is_what_the_readme_says() -> None:
    assert set(SINGLE) == {
        "error-enospc-json",
        "libaio-randrw-jsonplus",
        "null-engine-jsonplus",
        "numjobs4-group-jsonplus",
        "percentile-rank-jsonplus",
        "psync-cached-randread-json",
        "psync-randread-json",
        "status-interval-json",
        "warning-before-json",
    }


@pytest.mark.parametrize("name", SINGLE)
def test_single_job_figures_are_fios_own_in_base_units(name: str) -> None:
    meas, _ = fio.parse_output(text_of(name))
    job = last_doc(name)["jobs"][0]
    for d in DIRS[name]:
        want, got = job[d], meas.direction(d)
        assert got is not None
        assert got.iops == want["iops"]
        assert got.bw_bytes == want["bw_bytes"]  # bytes/s
        assert int(got.bw_bytes) // 1024 == want["bw"]  # fio's bw is KiB/s
        assert got.io_bytes == want["io_bytes"]
        assert got.total_ios == want["total_ios"]
        assert got.runtime_s == want["runtime"] / 1000  # ms -> s
        clat = want["clat_ns"]
        assert got.clat is not None
        assert got.clat.samples == clat["N"]
        assert got.clat.mean == clat["mean"]  # ns
        assert got.clat.stddev == clat["stddev"]
        assert got.clat.min == clat["min"]
        assert got.clat.max == clat["max"]
        assert got.clat.percentiles == {
            k: v for k, v in fio_pcts(clat).items() if k in map(pct_key, PERCENTILES)
        }
        assert set(got.clat.percentiles) == {pct_key(p) for p in PERCENTILES}
        has_bins = "bins" in clat
        assert (got.clat.bins == int_bins(clat)) if has_bins else got.clat.bins is None
        # sync engines: slat all zero, N 0 -> no slat summary
        if job["job options"].get("ioengine") in ("psync", "null"):
            assert got.slat is None
    assert meas.usr_cpu == job["usr_cpu"] and meas.sys_cpu == job["sys_cpu"]
    assert meas.jobs == 1


def test_enospc_is_a_failed_measurement_with_errno_and_message() -> None:
    text = text_of("error-enospc-json")
    meas, warnings = fio.parse_output(text)
    assert meas.status == "failed"
    assert meas.error_code == 28
    assert meas.error and "No space left on device" in meas.error and "28" in meas.error
    assert "enospc-write" in meas.error
    # the fio line printed on stdout before the JSON is a warning, verbatim
    assert warnings == [text.splitlines()[0].strip()]
    assert warnings[0].startswith("fio: pid=") and "err=28" in warnings[0]
    w = meas.direction("write")
    assert w is not None
    # the failed I/O counts in total_ios but not in io_bytes nor in clat N (README)
    assert (w.total_ios, w.io_bytes) == (257, 1048576)
    assert w.clat is not None and w.clat.samples == 256


def test_warning_before_json_is_collected() -> None:
    text = text_of("warning-before-json")
    meas, warnings = fio.parse_output(text)
    assert warnings == [
        "note: both iodepth >= 1 and synchronous I/O engine are selected, "
        "queue depth will be capped at 1"
    ]
    assert warnings[0] == text.splitlines()[0]
    assert meas.status == "ok"


@pytest.mark.parametrize(
    "name", [n for n in NAMES if n not in ("error-enospc-json", "warning-before-json")]
)
def test_no_warnings_where_fio_printed_none(name: str) -> None:
    _, warnings = fio.parse_output(text_of(name))
    assert warnings == []


def test_status_interval_uses_the_last_document() -> None:
    docs = raw_docs(text_of("status-interval-json"))
    assert len(docs) == 4
    totals = [d["jobs"][0]["read"]["total_ios"] for d in docs]
    assert totals == sorted(totals) and len(set(totals)) == 4  # cumulative, all different
    meas, warnings = fio.parse_output(text_of("status-interval-json"))
    read = meas.direction("read")
    assert read is not None
    assert read.total_ios == totals[-1] == 44088
    assert read.runtime_s == docs[-1]["jobs"][0]["read"]["runtime"] / 1000
    assert read.iops == docs[-1]["jobs"][0]["read"]["iops"]
    assert warnings == []
    found, _ = fio.split_documents(text_of("status-interval-json"))
    assert found == docs


# ---------------------------------------------------------------------------- client/server


@pytest.mark.parametrize("name", ["clientserver-2hosts-json", "clientserver-2hosts-jsonplus"])
def test_client_server_is_aggregated_per_host(name: str) -> None:
    doc = last_doc(name)
    clients = doc["client_stats"]
    all_clients = [c for c in clients if c["jobname"] == "All clients"]
    assert len(all_clients) == 1  # present in the recording, and it must be ignored
    per_host = entries(doc)
    assert len(per_host) == 2
    # its hostname/port are those of another entry: keying by host alone would merge it
    assert host_key(all_clients[0]) in {host_key(c) for c in per_host}

    meas, warnings = fio.parse_output(text_of(name))
    assert warnings == []
    assert set(meas.hosts) == {host_key(c) for c in per_host}
    assert all(":" in h and h.split(":")[1].isdigit() for h in meas.hosts)
    for c in per_host:
        host = meas.hosts[host_key(c)]
        r = host.direction("read")
        assert r is not None and host.jobs == 1
        assert r.total_ios == c["read"]["total_ios"]
        assert r.io_bytes == c["read"]["io_bytes"]
        assert r.iops == c["read"]["iops"]
        assert r.bw_bytes == c["read"]["bw_bytes"]
        assert r.runtime_s == c["read"]["runtime"] / 1000
        assert r.clat is not None and r.clat.percentiles == {
            k: v for k, v in fio_pcts(c["read"]["clat_ns"]).items() if k in r.clat.percentiles
        }
        assert len(r.clat.percentiles) == len(PERCENTILES)

    agg = meas.direction("read")
    assert agg is not None
    assert meas.jobs == 2
    hosts_read = [m.direction("read") for m in meas.hosts.values()]
    assert agg.total_ios == sum(h.total_ios for h in hosts_read if h)
    assert agg.io_bytes == sum(h.io_bytes for h in hosts_read if h)
    assert agg.total_ios == sum(c["read"]["total_ios"] for c in per_host)
    # counting "All clients" as well would double everything
    assert agg.total_ios != sum(c["read"]["total_ios"] for c in clients)
    # each host ran its own window: rates add up
    assert agg.iops == pytest.approx(sum(c["read"]["iops"] for c in per_host), rel=1e-12)
    assert agg.bw_bytes == sum(c["read"]["bw_bytes"] for c in per_host)
    assert agg.clat is not None
    assert agg.clat.samples == sum(c["read"]["clat_ns"]["N"] for c in per_host)
    assert agg.clat.min == min(c["read"]["clat_ns"]["min"] for c in per_host)
    assert agg.clat.max == max(c["read"]["clat_ns"]["max"] for c in per_host)
    if name.endswith("jsonplus"):
        merged = Counter()
        for c in per_host:
            merged.update(int_bins(c["read"]["clat_ns"]))
        assert agg.clat.bins == dict(merged)
        assert agg.clat.percentiles == percentiles_from_bins(merged)
        assert len(agg.clat.percentiles) == len(PERCENTILES)
    else:
        # plain json: no bins, so no percentile for the union (never averaged)
        assert agg.clat.bins is None
        assert agg.clat.percentiles == {}


# ---------------------------------------------------------------------------- percentiles


def _histograms(names: list[Path]) -> list[tuple[str, str, dict[str, Any]]]:
    """Every (file, where, latency object) with bins: one job's (or fio group's) histogram."""
    out = []
    for path in names:
        doc = raw_docs(path.read_text())[-1]
        for i, e in enumerate(entries(doc)):
            for d in ("read", "write", "trim"):
                for lat in ("clat_ns", "lat_ns", "slat_ns"):
                    obj = (e.get(d) or {}).get(lat) or {}
                    if "bins" in obj:
                        out.append((path.stem, f"{e['jobname']}[{i}].{d}.{lat}", obj))
    return out


HISTOGRAMS = _histograms(JSONPLUS)


def test_every_jsonplus_recording_has_histograms() -> None:
    assert {name for name, _, _ in HISTOGRAMS} == {p.stem for p in JSONPLUS}
    for _, _, obj in HISTOGRAMS:
        assert sum(obj["bins"].values()) == obj["N"]


@pytest.mark.parametrize(("name", "where", "obj"), HISTOGRAMS, ids=[w for _, w, _ in HISTOGRAMS])
def test_percentiles_from_bins_are_fios_exactly(name: str, where: str, obj: dict) -> None:
    bins = int_bins(obj)
    theirs = fio_pcts(obj)
    # the reported set, as the docstring of percentiles_from_bins claims...
    mine = percentiles_from_bins(bins)
    assert mine == {pct_key(p): theirs[pct_key(p)] for p in PERCENTILES}
    # ...and every percentile fio printed (defaults, or percentile_list)
    listed = [float(k) for k in obj["percentile"]]
    assert percentiles_from_bins(bins, listed) == theirs


def test_percentile_rank_recording_needs_fios_long_double_threshold() -> None:
    """The recording where a double threshold picks the wrong bucket for p99.9 (README)."""
    clat = last_doc("percentile-rank-jsonplus")["jobs"][0]["read"]["clat_ns"]
    assert clat["N"] == 33000
    bins = int_bins(clat)
    ordered = [v for v, c in sorted(bins.items()) for _ in range(c)]
    naive = ordered[math.ceil(99.9 / 100 * 33000) - 1]  # 32967th sample
    assert clat["percentile"]["99.900000"] == ordered[32968 - 1] != naive
    assert percentiles_from_bins(bins)["99.9"] == clat["percentile"]["99.900000"]
    meas, _ = fio.parse_output(text_of("percentile-rank-jsonplus"))
    read = meas.direction("read")
    assert read is not None and read.clat is not None
    assert read.clat.percentiles["99.9"] == clat["percentile"]["99.900000"] == 2146304


def _nearest_rank(samples: list[int], p: float) -> int:
    rank = math.ceil(Fraction(str(p)) / 100 * len(samples))
    return samples[max(rank, 1) - 1]


def test_merged_percentiles_of_several_jobs_are_nearest_rank_of_the_union() -> None:
    jobs = last_doc("numjobs4-nogroup-jsonplus")["jobs"]
    assert len(jobs) == 4
    expected_bins: Counter[int] = Counter()
    for j in jobs:
        expected_bins.update(int_bins(j["write"]["clat_ns"]))
    samples = sorted(expected_bins.elements())
    assert len(samples) == sum(j["write"]["clat_ns"]["N"] for j in jobs) == 8192

    meas, _ = fio.parse_output(text_of("numjobs4-nogroup-jsonplus"))
    w = meas.direction("write")
    assert w is not None and w.clat is not None
    assert w.clat.bins == dict(expected_bins)
    want = {pct_key(p): float(_nearest_rank(samples, p)) for p in PERCENTILES}
    assert w.clat.percentiles == want
    # and not the mean of the jobs' percentiles (they differ here)
    averaged = {k: sum(fio_pcts(j["write"]["clat_ns"])[k] for j in jobs) / 4 for k in want}
    assert averaged != want


def test_merged_percentiles_are_empty_without_bins() -> None:
    """Plain json with several jobs: percentiles can't be merged, so there are none."""
    doc = last_doc("numjobs4-nogroup-jsonplus")
    for j in doc["jobs"]:  # the same recording, as plain json would have printed it
        del j["write"]["clat_ns"]["bins"]
    meas = fio.measurement_from_document(doc)
    w = meas.direction("write")
    assert w is not None and w.clat is not None
    assert w.clat.bins is None
    assert w.clat.percentiles == {}
    assert w.clat.samples == 8192 and w.clat.mean is not None


def test_lat_percentiles_file_has_clat_and_lat_histograms() -> None:
    doc = last_doc("numjobs2-lat-percentiles-jsonplus")
    jobs = doc["jobs"]
    assert len(jobs) == 2
    for j in jobs:
        for lat in ("clat_ns", "lat_ns"):
            assert "bins" in j["write"][lat] and "percentile" in j["write"][lat]
        # each job alone: both histograms, each with fio's own percentiles
        one = fio.measurement_from_document({**doc, "jobs": [j]})
        w = one.direction("write")
        assert w is not None and w.clat is not None and w.lat is not None
        assert w.clat.bins == int_bins(j["write"]["clat_ns"])
        assert w.lat.bins == int_bins(j["write"]["lat_ns"])
        assert w.clat.percentiles == {
            k: v for k, v in fio_pcts(j["write"]["clat_ns"]).items() if k in w.clat.percentiles
        }
        assert w.lat.percentiles == {
            k: v for k, v in fio_pcts(j["write"]["lat_ns"]).items() if k in w.lat.percentiles
        }
        assert len(w.clat.percentiles) == len(w.lat.percentiles) == len(PERCENTILES)

    meas, _ = fio.parse_output(text_of("numjobs2-lat-percentiles-jsonplus"))
    w = meas.direction("write")
    assert w is not None and w.clat is not None and w.lat is not None
    for stats, key in ((w.clat, "clat_ns"), (w.lat, "lat_ns")):
        merged: Counter[int] = Counter()
        for j in jobs:
            merged.update(int_bins(j["write"][key]))
        assert stats.bins == dict(merged)
        assert stats.percentiles == percentiles_from_bins(merged)
        assert stats.samples == sum(j["write"][key]["N"] for j in jobs)
    assert w.clat.bins != w.lat.bins  # two different histograms, not one copied
    assert w.lat.mean > w.clat.mean  # lat = slat + clat


# ---------------------------------------------------------------------------- job aggregation


def _fio_sum_stat(parts: list[tuple[int, float, float]]) -> tuple[int, float, float]:
    """fio's stat.c __sum_stat, folded over (N, mean, stddev) as group_reporting does;
    returns (N, mean, stddev) with fio's calc_lat stddev = sqrt(S / (N - 1))."""
    n, mean, s = 0, 0.0, 0.0
    for n_i, mean_i, sd_i in parts:
        s_i = sd_i**2 * (n_i - 1)
        if n == 0:
            n, mean, s = n_i, mean_i, s_i
            continue
        delta = mean_i - mean
        mean = (mean_i * n_i + mean * n) / (n + n_i)
        s = s_i + s + delta**2 * (n * n_i) / (n + n_i)
        n += n_i
    return n, mean, math.sqrt(s / (n - 1))


def test_numjobs_without_group_reporting_is_combined_like_fio_group_reporting() -> None:
    jobs = last_doc("numjobs4-nogroup-jsonplus")["jobs"]
    writes = [j["write"] for j in jobs]
    meas, _ = fio.parse_output(text_of("numjobs4-nogroup-jsonplus"))
    w = meas.direction("write")
    assert w is not None and w.clat is not None
    assert meas.jobs == 4
    assert w.total_ios == sum(x["total_ios"] for x in writes) == 8192
    assert w.io_bytes == sum(x["io_bytes"] for x in writes)

    # fio sum_thread_stats: runtime = the longest job's; json prints
    # iops = 1000.0 * total / runtime_ms and bw_bytes = (1000 * io_bytes) / runtime_ms (integers)
    runtime_ms = max(x["runtime"] for x in writes)
    assert w.runtime_s == runtime_ms / 1000
    assert w.iops == 1000.0 * w.total_ios / runtime_ms
    assert w.bw_bytes == (1000 * w.io_bytes) // runtime_ms
    assert w.iops != sum(x["iops"] for x in writes)  # not the sum of per-job rates

    clats = [x["clat_ns"] for x in writes]
    n = sum(c["N"] for c in clats)
    mean = sum(c["N"] * c["mean"] for c in clats) / n
    assert w.clat.samples == n
    assert w.clat.mean == pytest.approx(mean, rel=1e-12)
    # pooled sample stddev, from sum of squares (another route than the code's)
    sum_sq = sum((c["N"] - 1) * c["stddev"] ** 2 + c["N"] * c["mean"] ** 2 for c in clats)
    pooled = math.sqrt((sum_sq - n * mean**2) / (n - 1))
    assert w.clat.stddev == pytest.approx(pooled, rel=1e-9)
    # and exactly what fio's own pairwise __sum_stat gives for group_reporting
    fn, fmean, fsd = _fio_sum_stat([(c["N"], c["mean"], c["stddev"]) for c in clats])
    assert (w.clat.samples, w.clat.mean, w.clat.stddev) == (
        fn,
        pytest.approx(fmean, rel=1e-12),
        pytest.approx(fsd, rel=1e-9),
    )
    # a population stddev would be off by sqrt(n / (n - 1)) on each part: detectable here
    population = math.sqrt(
        sum(c["N"] * (c["stddev"] ** 2 + c["mean"] ** 2) for c in clats) / n - mean**2
    )
    assert w.clat.stddev != pytest.approx(population, rel=1e-6)
    assert w.clat.min == min(c["min"] for c in clats)
    assert w.clat.max == max(c["max"] for c in clats)

    # CPU: fio sums usr_time and total_run_time -> job_runtime-weighted mean
    rt = [j["job_runtime"] for j in jobs]
    assert meas.usr_cpu == pytest.approx(
        sum(j["usr_cpu"] * r for j, r in zip(jobs, rt, strict=True)) / sum(rt), rel=1e-12
    )
    assert meas.sys_cpu == pytest.approx(
        sum(j["sys_cpu"] * r for j, r in zip(jobs, rt, strict=True)) / sum(rt), rel=1e-12
    )


def test_fio_group_reporting_uses_the_rule_storbench_applies() -> None:
    """numjobs4-group: fio's own group entry obeys total / longest runtime (ms, integers)."""
    job = last_doc("numjobs4-group-jsonplus")["jobs"][0]
    w = job["write"]
    assert job["job_runtime"] > 3 * w["runtime"]  # job_runtime is summed, runtime is the max
    assert w["iops"] == round(1000.0 * w["total_ios"] / w["runtime"], 6)
    assert w["bw_bytes"] == (1000 * w["io_bytes"]) // w["runtime"]
    assert w["bw"] == w["bw_bytes"] // 1024


def test_two_sections_in_two_groups_keep_each_direction() -> None:
    doc = last_doc("twojobs-sections-json")
    assert [j["groupid"] for j in doc["jobs"]] == [0, 1]
    meas, _ = fio.parse_output(text_of("twojobs-sections-json"))
    for d, j in (("read", doc["jobs"][0]), ("write", doc["jobs"][1])):
        got = meas.direction(d)
        assert got is not None
        assert (got.iops, got.bw_bytes, got.total_ios) == (
            j[d]["iops"],
            j[d]["bw_bytes"],
            j[d]["total_ios"],
        )


def test_job_params_of_imported_documents() -> None:
    two = fio.job_params(last_doc("twojobs-sections-json"))
    assert two["bs"] == "128k" and two["rw"] == "read"  # global options, then the first job's
    cs = fio.job_params(last_doc("clientserver-2hosts-jsonplus"))
    assert cs["ioengine"] == "libaio" and cs["iodepth"] == "8"
    assert fio.job_params(last_doc("numjobs4-group-jsonplus"))["group_reporting"] == "1"


# ---------------------------------------------------------------------------- split_documents

NOTE = text_of("warning-before-json").splitlines(keepends=True)[0]
FIO_ERR = text_of("error-enospc-json").splitlines(keepends=True)[0]


def test_two_documents_with_a_warning_between() -> None:
    a, b = text_of("psync-randread-json"), text_of("libaio-randrw-jsonplus")
    docs, warnings = fio.split_documents(a + NOTE + b)
    assert docs == [json.loads(a), json.loads(b)]
    assert warnings == [NOTE.strip()]
    doc, _ = fio.final_document(a + NOTE + b)
    assert doc == json.loads(b)


@pytest.mark.parametrize("line", [NOTE, FIO_ERR], ids=["note", "fio-error"])
@pytest.mark.parametrize("at", [1, 2, 5, 40, -1])
def test_warning_line_inside_a_document(line: str, at: int) -> None:
    src = text_of("psync-randread-json")
    lines = src.splitlines(keepends=True)
    at = at if at >= 0 else len(lines) - 1
    text = "".join(lines[:at]) + line + "".join(lines[at:])
    docs, warnings = fio.split_documents(text)
    assert docs == [json.loads(src)]
    assert warnings == [line.strip()]
    meas, _ = fio.parse_output(text)
    assert meas.direction("read") is not None


@pytest.mark.parametrize("frac", [0.001, 0.3, 0.5, 0.9, 0.999])
def test_truncated_last_document_falls_back_to_the_previous_one(frac: float) -> None:
    text = text_of("status-interval-json")
    docs = raw_docs(text)
    starts = [i for i in range(len(text)) if text.startswith('{\n  "fio version"', i)]
    assert len(starts) == len(docs) == 4
    fourth = starts[3]
    cut = fourth + max(1, int((len(text) - fourth) * frac))
    assert cut < len(text) - 1
    found, warnings = fio.split_documents(text[:cut])
    assert found == docs[:3]
    # one warning about the broken document, no fragments of it
    assert len(warnings) == 1 and "incomplete" in warnings[0]
    meas, _ = fio.parse_output(text[:cut])
    r = meas.direction("read")
    assert r is not None and r.total_ios == docs[2]["jobs"][0]["read"]["total_ios"]


def test_truncated_single_document_is_no_result() -> None:
    text = text_of("psync-randread-json")
    with pytest.raises(fio.FioOutputError):
        fio.parse_output(text[: len(text) // 2])


def test_truncated_document_between_two_complete_ones() -> None:
    a, b = text_of("psync-randread-json"), text_of("warning-before-json")
    broken = text_of("libaio-randrw-jsonplus")[:5000]
    docs, warnings = fio.split_documents(a + broken + "\n" + b)
    assert docs == [json.loads(a), raw_docs(b)[0]]
    # in order: the broken document (one line, no fragments of it), then fio's note
    assert len(warnings) == 2
    assert warnings[0].startswith("ignored an incomplete fio JSON document")
    assert warnings[1] == NOTE.strip()


@pytest.mark.parametrize(
    "text",
    ["", "\n", NOTE, FIO_ERR + NOTE, (DATA / "psync-randread-json.fio").read_text()],
    ids=["empty", "newline", "note", "two-lines", "job-file"],
)
def test_no_document_is_an_error(text: str) -> None:
    docs, _ = fio.split_documents(text)
    assert docs == []
    with pytest.raises(fio.FioOutputError):
        fio.parse_output(text)
    with pytest.raises(fio.FioOutputError):
        fio.final_document(text)


def test_stderr_text_only_is_no_result() -> None:
    with pytest.raises(fio.FioOutputError):
        fio.parse_output((DATA / "error-enospc-json.stderr").read_text())
