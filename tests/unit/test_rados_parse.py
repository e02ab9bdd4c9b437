"""rados bench parsing, validation, measurement and client aggregation, on real outputs of
Ceph 16.2.15 (tests/data/rados, see its README and record.sh).

Expected values come from the recordings themselves, read by this file's own small reader
(summary lines ``Label: value``, table rows by regex, ``json`` for -f json), never from
storbench's parser. The validator's rejections are tested on real garbage (the JSON write
``stddev_iops``) and, for the other rules, on real recordings with a single number changed.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from storbench.engines import rados

DATA = Path(__file__).resolve().parent.parent / "data" / "rados"
MiB = 1 << 20
BENCH = sorted(p.stem for p in DATA.glob("*.out") if p.stem.startswith(("write-", "seq-", "rand-")))
OK_BENCH = [n for n in BENCH if n != "seq-no-write-plain"]
PLAIN = [n for n in OK_BENCH if "-json" not in n]
JSON = [n for n in OK_BENCH if "-json" in n]


def text_of(name: str) -> str:
    return (DATA / f"{name}.out").read_text()


def mode_of(name: str) -> str:
    return name.split("-")[0]


def fmt_of(name: str) -> str:
    return "json" if "-json" in name else "plain"


def parse(name: str) -> rados.RadosBenchResult:
    return rados.parse_rados_bench(text_of(name), fmt_of(name), mode_of(name))


# ---------------------------------------------------------------- the test's own reader

STAMP = re.compile(r"^(\d{4}-\d\d-\d\dT[\d:.]+[+-]\d{4}) ")
ROW = re.compile(r"^\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)$")


def own_plain(text: str) -> tuple[dict[str, str], list[dict[str, Any]]]:
    """(summary label -> value as printed, table rows) of plain rados bench output."""
    summary: dict[str, str] = {}
    rows = []
    for line in text.splitlines():
        t = None
        if m := STAMP.match(line):
            t = datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S.%f%z").timestamp()
            line = line[m.end() :]
        if m := ROW.match(line):
            rows.append(
                {
                    "t": t,
                    "sec": int(m.group(1)),
                    "finished": int(m.group(4)),
                    "cur": m.group(6),
                    "last": m.group(7),
                    "avg_lat": float(m.group(8)),
                }
            )
        elif ":" in line and not line.startswith(("min lat", "Object prefix", "Clean up")):
            k, v = line.split(":", 1)
            summary[k.strip()] = v.strip()
    return summary, rows


def own_json(text: str) -> dict[str, Any]:
    return json.JSONDecoder().raw_decode(text, text.index("{"))[0]


def own_samples(finished: list[int], op_size: int) -> tuple[list[int], list[float]]:
    """Per-second IOPS / MB/s samples as obj_bencher.cc's status printer makes them."""
    iops, bw, prev, cycles = [], [], 0, 0
    for i, f in enumerate(finished):
        if i > 0:
            iops.append(int((f - prev) / cycles))
            bw.append((f - prev) * op_size / MiB / cycles)
        if f != prev:
            prev, cycles = f, 0
        cycles += 1
    return iops, bw


def sample_stddev(v: list[float]) -> float:
    if len(v) < 2:
        return 0.0
    m = sum(v) / len(v)
    return math.sqrt(sum((x - m) ** 2 for x in v) / (len(v) - 1))


# ---------------------------------------------------------------- parsing


def test_recordings_present() -> None:
    assert len(PLAIN) >= 18 and len(JSON) == 6
    assert {mode_of(n) for n in OK_BENCH} == {"write", "seq", "rand"}


@pytest.mark.parametrize("name", PLAIN)
def test_plain_summary_and_table(name: str) -> None:
    summary, rows = own_plain(text_of(name))
    res = parse(name)
    made = summary.get("Total writes made") or summary["Total reads made"]
    size = summary.get("Write size") or summary["Read size"]
    assert res.mode == mode_of(name)
    assert res.ops == int(made)
    assert res.op_size == int(size)
    assert res.object_size == int(summary["Object size"])
    assert res.total_time_s == float(summary["Total time run"])
    assert res.bandwidth_mib_s == float(summary["Bandwidth (MB/sec)"])
    assert res.average_iops == int(summary["Average IOPS"])
    assert res.average_latency_s == float(summary["Average Latency(s)"])
    assert res.max_latency_s == float(summary["Max latency(s)"])
    assert res.min_latency_s == float(summary["Min latency(s)"])
    assert [r.sec for r in res.series] == [r["sec"] for r in rows]
    assert [r.finished for r in res.series] == [r["finished"] for r in rows]
    assert not res.rejected
    assert not [w for w in res.warnings if "unexpected" in w or "ignored" in w]


@pytest.mark.parametrize("name", PLAIN)
def test_plain_per_second_stats_are_those_of_the_table(name: str) -> None:
    """rados bench's IOPS (and write bandwidth) stddev/min/max are statistics of the table:
    recomputed here from the finished column, they equal what it printed."""
    summary, rows = own_plain(text_of(name))
    op_size = int(summary.get("Write size") or summary["Read size"])
    iops, bw = own_samples([r["finished"] for r in rows], op_size)
    assert iops, "every recording has at least one sample"
    assert int(summary["Max IOPS"]) == max(iops)
    assert int(summary["Min IOPS"]) == min(iops)
    assert float(summary["Stddev IOPS"]) == pytest.approx(sample_stddev(iops), rel=1e-5)
    if mode_of(name) == "write":
        assert float(summary["Max bandwidth (MB/sec)"]) == pytest.approx(max(bw), rel=1e-5)
        assert float(summary["Min bandwidth (MB/sec)"]) == pytest.approx(min(bw), rel=1e-5)
        assert float(summary["Stddev Bandwidth"]) == pytest.approx(sample_stddev(bw), rel=1e-5)
    res = parse(name)
    assert not [w for w in res.warnings if "per-second table gives" in w]
    assert rados.per_second_samples(res.series, op_size) == (iops, pytest.approx(bw))


@pytest.mark.parametrize("name", JSON)
def test_json_summary_and_series(name: str) -> None:
    doc = own_json(text_of(name))
    res = parse(name)
    assert res.fmt == "json" and res.hints is True
    assert res.ops == int(doc.get("total_writes_made") or doc["total_reads_made"])
    assert res.total_time_s == float(doc["total_time_run"])
    assert res.bandwidth_mib_s == float(doc["bandwidth"])
    assert res.average_latency_s == float(doc["average_latency"])
    assert [r.finished for r in res.series] == [int(d["finished"]) for d in doc["datas"]]
    assert all(isinstance(v, str) for k, v in doc.items() if k != "datas"), "all strings"
    if mode_of(name) == "write":
        assert res.object_prefix == doc["object_prefix"]
        assert res.concurrent_ios == int(doc["concurrent_ios"]) == 16


def test_mode_is_guessed_for_writes_only() -> None:
    assert rados.parse_rados_bench(text_of("write-4m-plain")).mode == "write"
    assert rados.parse_rados_bench(text_of("write-4m-json")).mode == "write"
    assert rados.parse_rados_bench(text_of("rand-4m-plain")).mode == "seq"  # indistinguishable


def test_write_header() -> None:
    res = parse("write-4m-plain")
    assert (res.concurrent_ios, res.op_size, res.object_size) == (16, 4 * MiB, 4 * MiB)
    assert (res.seconds_to_run, res.max_objects) == (4, 0)
    assert re.fullmatch(r"benchmark_data_\w+_\d+", res.object_prefix or "")


def test_seq_reads_what_the_write_left() -> None:
    """seq reads each object of the write once, then stops: before its 4 s were over."""
    for size in ("4m", "4k"):
        for fmt in ("plain", "json"):
            w, s = parse(f"write-{size}-{fmt}"), parse(f"seq-{size}-{fmt}")
            assert s.ops == w.ops
            assert s.op_size == w.op_size and s.object_size == w.object_size
            assert s.total_time_s is not None and s.total_time_s < 4


def test_average_iops_above_max_when_the_last_second_is_partial() -> None:
    """Real, not an error: "Average IOPS" is ops / total time, Max/Min are per-second
    samples; a read that ends 0.23 s into its second second has one sample (190) and an
    average of 239 / 1.229 = 194. Not rejected."""
    res = parse("seq-4m-plain")
    assert (res.average_iops, res.max_iops, res.min_iops) == (194, 190, 190)
    assert not res.rejected


def test_long_run_repeats_the_header_and_cleans_up() -> None:
    for name in ("write-4k-22s-plain", "write-4k-22s-showtime"):
        text = text_of(name)
        assert text.count("sec Cur ops") == 2
        assert re.search(r"^\S+ min lat: \S+ max lat: \S+ avg lat: \S+$", text, re.MULTILINE)
        res = parse(name)
        assert [r.sec for r in res.series] == list(range(len(res.series)))
        assert len(res.series) >= 22
        assert res.cleanup_removed == res.ops
        assert res.cleanup_time_s is not None and res.cleanup_time_s > 0
        assert not [w for w in res.warnings if "unexpected" in w]


def test_show_time_stamps() -> None:
    """Rows are stamped about a second apart; the summary's stamp comes after the last row
    (the printer thread is joined first), so the end is first row + total time run."""
    res = parse("write-4m-showtime")
    times = [r.time for r in res.series]
    assert all(t is not None for t in times)
    gaps = [b - a for a, b in itertools.pairwise(times)]  # type: ignore[operator]
    assert all(0.9 < g < 1.1 for g in gaps)
    assert res.start_time == times[0]
    assert res.end_time == pytest.approx(times[0] + res.total_time_s)  # type: ignore[operator]
    assert res.summary_time is not None and res.summary_time > times[-1]  # type: ignore[operator]
    assert parse("write-4m-plain").start_time is None


def test_no_summary_is_an_error() -> None:
    text = text_of("seq-no-write-plain")
    assert text == "hints = 1\n"
    assert (
        "Must write data before running a read benchmark!"
        in (DATA / "seq-no-write-plain.stderr").read_text()
    )
    assert (DATA / "seq-no-write-plain.exitcode").read_text().strip() == "1"
    with pytest.raises(rados.RadosOutputError):
        rados.parse_rados_bench(text, "plain", "seq")
    cut = text_of("write-4m-json")[:-40]  # a JSON document cut short (process killed)
    with pytest.raises(rados.RadosOutputError):
        rados.parse_rados_bench(cut, "json", "write")


# ---------------------------------------------------------------- validation


@pytest.mark.parametrize("name", ["write-4m-json", "write-4k-json"])
def test_json_write_stddev_iops_is_garbage_and_rejected(name: str) -> None:
    """Real garbage: rados bench -f json prints the write's stddev_iops with %d from a
    double. Both recordings hold a value far above max_iops; storbench drops it and
    recomputes it from the per-second entries the way rados bench does."""
    doc = own_json(text_of(name))
    printed = doc["stddev_iops"]
    assert re.fullmatch(r"-?\d+", printed) and int(printed) > int(doc["max_iops"])
    res = parse(name)
    assert res.rejected == {"stddev_iops": printed}
    assert any("stddev_iops" in w and "%d" in w for w in res.warnings)
    iops, _ = own_samples([int(d["finished"]) for d in doc["datas"]], int(doc["op_size"]))
    assert res.stddev_iops == pytest.approx(sample_stddev(iops))
    assert "per-second" in res.derived["stddev_iops"]
    meas = rados.to_measurement(res)
    assert meas.extra["iops"]["stddev"] == pytest.approx(sample_stddev(iops))
    assert meas.extra["rejected"] == {"stddev_iops": printed}


def test_json_stddev_iops_of_reads_is_a_real_number() -> None:
    for name in ("seq-4m-json", "rand-4m-json", "rand-4k-json"):
        res = parse(name)
        assert "stddev_iops" not in res.rejected
        assert res.printed["stddev_iops"].count(".") == 1  # printed with %f


def test_json_rows_where_nothing_finished() -> None:
    """Row 0 of every JSON recording: nothing finished; cur_bw/last_lat come from an
    undefined printf("%f", 0) and are taken as text prints them (0 and none). The same
    recording with one number changed (row 0's last_lat) gets a warning."""
    res = parse("write-4m-json")
    assert res.series[0].finished == 0
    assert res.series[0].cur_mib_s == 0.0 and res.series[0].last_lat_s is None
    assert all(r.last_lat_s is not None for r in res.series[1:])
    text = text_of("write-4m-json").replace('"last_lat":"0.000000"', '"last_lat":"3.141593"', 1)
    res = rados.parse_rados_bench(text, "json", "write")
    assert res.series[0].last_lat_s is None
    assert any("second 0: nothing finished" in w for w in res.warnings)


def edited(name: str, label: str, value: str) -> str:
    """Recording ``name`` with the value on the summary line ``label`` replaced (one number)."""
    text = text_of(name)
    new, n = re.subn(
        rf"^({re.escape(label)}:\s+)\S+$", rf"\g<1>{value}", text, count=1, flags=re.MULTILINE
    )
    assert n == 1, label
    return new


def test_validator_stddev_above_max_text() -> None:
    """write-4m-plain with one number changed: "Stddev IOPS" set to the garbage of
    FIELD-NOTES (608609200). Rejected, and recomputed from the table."""
    res = rados.parse_rados_bench(
        edited("write-4m-plain", "Stddev IOPS", "608609200"), "plain", "write"
    )
    assert res.rejected == {"stddev_iops": "608609200"}
    summary, _rows = own_plain(text_of("write-4m-plain"))
    assert res.stddev_iops == pytest.approx(float(summary["Stddev IOPS"]), rel=1e-5)


def test_validator_latency_stddev_above_max() -> None:
    """write-4m-plain with one number changed: Stddev Latency(s) above Max latency(s)."""
    res = rados.parse_rados_bench(
        edited("write-4m-plain", "Stddev Latency(s)", "9.5"), "plain", "write"
    )
    assert res.rejected == {"stddev_latency_s": "9.5"}
    assert res.stddev_latency_s is None
    lat = rados.to_measurement(res).directions["write"].lat
    assert lat is not None and lat.stddev is None and lat.mean is not None


@pytest.mark.parametrize(
    ("label", "value", "field", "why"),
    [
        ("Min latency(s)", "-0.001", "min_latency_s", "negative"),
        ("Stddev Bandwidth", "nan", "stddev_bandwidth_mib_s", "finite"),
        ("Average IOPS", "55x", "average_iops", "whole number"),
        ("Total writes made", "23.5", "ops", "whole number"),
        ("Average Latency(s)", "5.0", "average_latency_s", "outside"),
        ("Bandwidth (MB/sec)", "2213", "bandwidth_mib_s", "ops x size"),
        ("Average IOPS", "99", "average_iops", "ops / time"),
    ],
)
def test_validator_single_number_changed(label: str, value: str, field: str, why: str) -> None:
    """write-4m-plain (a real recording) with exactly one number changed."""
    res = rados.parse_rados_bench(edited("write-4m-plain", label, value), "plain", "write")
    assert field in res.rejected and res.rejected[field] == value
    assert any(why in w for w in res.warnings), res.warnings
    assert set(res.rejected) == {field}


def test_validator_min_above_max() -> None:
    """write-4m-plain with one number changed: Min IOPS above Max IOPS. Both are rejected
    (which one is wrong cannot be told) and both recomputed from the table."""
    summary, _ = own_plain(text_of("write-4m-plain"))
    res = rados.parse_rados_bench(edited("write-4m-plain", "Min IOPS", "1000"), "plain", "write")
    assert set(res.rejected) == {"min_iops", "max_iops"}
    assert res.max_iops == int(summary["Max IOPS"]) and res.min_iops == int(summary["Min IOPS"])


def test_rejected_bandwidth_is_derived_from_counts() -> None:
    res = rados.parse_rados_bench(
        edited("write-4m-plain", "Bandwidth (MB/sec)", "garbage"), "plain", "write"
    )
    assert res.rejected == {"bandwidth_mib_s": "garbage"}
    assert res.bandwidth_mib_s == pytest.approx(res.ops * res.op_size / res.total_time_s / MiB)  # type: ignore[operator]
    assert "bandwidth_mib_s" in res.derived


# ---------------------------------------------------------------- measurement


@pytest.mark.parametrize("name", ["write-4m-plain", "seq-4k-showtime", "rand-4m-json"])
def test_measurement_units(name: str) -> None:
    res = parse(name)
    meas = rados.to_measurement(res)
    direction = "write" if mode_of(name) == "write" else "read"
    assert list(meas.directions) == [direction]
    d = meas.directions[direction]
    assert d.bw_bytes == res.bandwidth_mib_s * MiB  # type: ignore[operator]
    assert d.io_bytes == res.ops * res.op_size  # type: ignore[operator]
    assert d.total_ios == res.ops and d.runtime_s == res.total_time_s
    assert d.iops == pytest.approx(res.ops / res.total_time_s)  # type: ignore[operator]
    assert d.lat is not None and d.clat is None
    assert d.lat.mean == pytest.approx(res.average_latency_s * 1e9)  # type: ignore[operator]
    assert d.lat.max == pytest.approx(res.max_latency_s * 1e9)  # type: ignore[operator]
    assert d.lat.percentiles == {} and d.lat.bins is None
    assert "percentiles cannot be derived" in meas.extra["percentiles"]
    assert meas.extra["iops"]["average_printed"] == res.average_iops
    json.dumps(meas.to_dict())  # storable as is


def test_series_in_base_units() -> None:
    name = "write-4k-showtime"
    _, rows = own_plain(text_of(name))
    series = rados.to_measurement(parse(name)).extra["series"]
    cols = series["columns"]
    assert set(series["units"]) == set(cols)
    assert "bytes/s" in series["units"]["cur_bw"] and "ns" in series["units"]["avg_lat"]
    assert len(series["rows"]) == len(rows)
    for got, own in zip(series["rows"], rows, strict=True):
        r = dict(zip(cols, got, strict=True))
        assert r["time"] == own["t"] and r["finished"] == own["finished"]
        assert r["cur_bw"] == float(own["cur"]) * MiB
        assert r["avg_lat"] == pytest.approx(own["avg_lat"] * 1e9)
        assert r["last_lat"] == (
            None if own["last"] == "-" else pytest.approx(float(own["last"]) * 1e9)
        )


# ---------------------------------------------------------------- several clients


def own_window(names: list[str]) -> tuple[float, float, list[tuple[float, float]]]:
    """Independent reading: each client's (t, finished) at every row and at its end
    (first row + Total time run); the common window; each client's finished count at the
    window's edges, linear between the rows around them -> (ops, latency sum)."""
    lines = []
    for n in names:
        summary, rows = own_plain(text_of(n))
        ops = int(summary.get("Total writes made") or summary["Total reads made"])
        end = rows[0]["t"] + float(summary["Total time run"])
        pts = [(r["t"], r["finished"], r["avg_lat"] * r["finished"]) for r in rows]
        pts.append((end, ops, float(summary["Average Latency(s)"]) * ops))
        lines.append(pts)
    w0 = max(p[0][0] for p in lines)
    w1 = min(p[-1][0] for p in lines)

    def at(pts: list[tuple[float, int, float]], t: float) -> tuple[float, float]:
        for (ta, fa, sa), (tb, fb, sb) in itertools.pairwise(pts):
            if ta <= t <= tb:
                k = (t - ta) / (tb - ta)
                return fa + (fb - fa) * k, sa + (sb - sa) * k
        raise AssertionError("outside")

    per = []
    for pts in lines:
        (f0, s0), (f1, s1) = at(pts, w0), at(pts, w1)
        per.append((f1 - f0, s1 - s0))
    return w0, w1, per


@pytest.mark.parametrize("mode", ["write", "seq", "rand"])
def test_two_clients_aggregate_is_the_sum_over_the_common_window(mode: str) -> None:
    names = [f"{mode}-4m-2clients-c1", f"{mode}-4m-2clients-c2"]
    results = [parse(n) for n in names]
    meas = rados.aggregate_clients(results, ["c1", "c2"])
    w0, w1, per = own_window(names)
    direction = "write" if mode == "write" else "read"
    d = meas.directions[direction]
    assert d.runtime_s == pytest.approx(w1 - w0)
    assert d.bw_bytes == pytest.approx(sum(ops * 4 * MiB / (w1 - w0) for ops, _ in per))
    assert d.iops == pytest.approx(sum(ops / (w1 - w0) for ops, _ in per))
    assert d.lat is not None
    assert d.lat.mean == pytest.approx(sum(s for _, s in per) / sum(o for o, _ in per) * 1e9)
    assert d.lat.percentiles == {} and d.lat.stddev is None
    win = meas.extra["window"]
    assert d.bw_bytes == pytest.approx(sum(c["bw_bytes"] for c in win["clients"]))
    assert set(meas.hosts) == {"c1", "c2"}
    for name, res in zip(("c1", "c2"), results, strict=True):
        assert meas.hosts[name].directions[direction].total_ios == res.ops
    # the window lies within every client's run
    for r in results:
        assert r.start_time <= w0 + 1e-6 and w1 <= r.end_time + 1e-6  # type: ignore[operator]


def test_two_clients_wrote_distinct_objects() -> None:
    a, b = parse("write-4m-2clients-c1"), parse("write-4m-2clients-c2")
    assert a.object_prefix != b.object_prefix
    assert (DATA / "write-4m-2clients-c1.cmd").read_text() != (
        DATA / "write-4m-2clients-c2.cmd"
    ).read_text()


def test_aggregation_needs_a_clock() -> None:
    res = parse("write-4m-json")
    with pytest.raises(ValueError, match="wall clock"):
        rados.aggregate_clients([res, res])
    meas = rados.aggregate_clients([res, res], start_times=[100.0, 100.0])
    d = meas.directions["write"]
    assert d.bw_bytes == pytest.approx(2 * res.ops * res.op_size / res.total_time_s)  # type: ignore[operator]
    with pytest.raises(ValueError, match="ran together"):
        rados.aggregate_clients([res, res], start_times=[100.0, 200.0])


# ---------------------------------------------------------------- commands


def test_bench_command() -> None:
    cmd = rados.bench_command("bench", "write", 3, 4 * MiB, 16, "storbench-1-w", "/c.conf")
    assert cmd == [
        rados.RADOS,
        "-c",
        "/c.conf",
        "-p",
        "bench",
        "bench",
        "3",
        "write",
        "-t",
        "16",
        "-b",
        "4194304",
        "--no-cleanup",
        "--run-name",
        "storbench-1-w",
        "--show-time",
    ]
    seq = rados.bench_command("bench", "seq", 3, None, 8, "r", None, fmt="json")
    assert seq[-5:] == ["8", "--run-name", "r", "-f", "json"] and "-b" not in seq
    assert "--no-cleanup" not in rados.bench_command("p", "write", 1, 4096, 1, "r", None, False)
    for bad in (
        dict(mode="read"),
        dict(run_name="has space"),
        dict(run_name="a;rm -rf"),
        dict(seconds=0),
        dict(object_size=None),
    ):
        args: dict[str, Any] = dict(
            pool="p", mode="write", seconds=1, object_size=4096, threads=1, run_name="r"
        )
        args.update(bad)
        with pytest.raises(ValueError):
            rados.bench_command(**args)


def test_run_names_and_prefixes() -> None:
    assert rados.client_run_name("storbench-7", 1, 1) == "storbench-7"
    assert rados.client_run_name("storbench-7", 2, 3) == "storbench-7-c2"
    assert rados.object_prefix_for(845, "vm") == "benchmark_data_vm_845"
    assert rados.object_prefix_for(1, "h" * 40) == "benchmark_data_" + "h" * 29 + "_1"
    prefix = parse("write-4m-plain").object_prefix
    assert prefix and re.fullmatch(r"benchmark_data_.+_\d+", prefix)


def test_cleanup_command() -> None:
    cmd = rados.cleanup_command("bench", "storbench-1", None, "benchmark_data_vm_845")
    assert cmd[-4:] == ["--run-name", "storbench-1", "--prefix", "benchmark_data_vm_845_object"]
    recorded = (DATA / "cleanup-run-name-prefix.cmd").read_text().split()
    assert recorded[-1].endswith("_object") and text_of("cleanup-run-name-prefix").startswith(
        "Removed "
    )
    with pytest.raises(ValueError):
        rados.cleanup_command("bench", "r", None, "other_prefix")


def test_is_benchmark_object() -> None:
    assert rados.is_benchmark_object("benchmark_data_vm_845_object3")
    assert rados.is_benchmark_object("benchmark_last_metadata")
    assert rados.is_benchmark_object("storbench-12-c1")
    assert rados.is_benchmark_object("rec-4m-plain", ["rec-4m-plain"])
    assert not rados.is_benchmark_object("rbd_info")
    assert json.loads(text_of("ls-after-cleanup")) == []
