"""Several rados bench clients at once: the aggregate's per-second spread (rados bench's own
kind of IOPS/bandwidth stddev, min, max, over the clients' common wall-clock window) and the
whole-run figures (totals, longest run, pooled latency stddev), on the real two-client
recordings of tests/data/rados (``{write,seq,rand}-4m-2clients-c{1,2}``, see its README).

Expected values come from this file's own small reader of the recordings (stamped table
rows, ``Label: value`` summary lines), never from storbench's parser.
"""

from __future__ import annotations

import itertools
import math
import re
import statistics
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from storbench.engines import rados

DATA = Path(__file__).resolve().parent.parent / "data" / "rados"
MiB = 1 << 20
MODES = ("write", "seq", "rand")
STAMP = re.compile(r"^(\d{4}-\d\d-\d\dT[\d:.]+[+-]\d{4}) ")
ROW = re.compile(r"^\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+\S+\s+\S+\s+\S+\s+\S+$")


def own(name: str) -> tuple[dict[str, str], list[tuple[float, int]]]:
    """(summary label -> value as printed, [(row wall clock s, finished)]) of a recording."""
    summary: dict[str, str] = {}
    rows: list[tuple[float, int]] = []
    for line in (DATA / f"{name}.out").read_text().splitlines():
        t = None
        if m := STAMP.match(line):
            t = datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S.%f%z").timestamp()
            line = line[m.end() :]
        if (m := ROW.match(line)) and t is not None:
            rows.append((t, int(m.group(4))))
        elif ":" in line and not line.startswith(("Object prefix", "Maintaining")):
            k, v = line.split(":", 1)
            summary[k.strip()] = v.strip()
    return summary, rows


def names(mode: str) -> list[str]:
    return [f"{mode}-4m-2clients-c1", f"{mode}-4m-2clients-c2"]


def aggregate(mode: str) -> Any:
    results = [
        rados.parse_rados_bench((DATA / f"{n}.out").read_text(), "plain", mode) for n in names(mode)
    ]
    return rados.aggregate_clients(results, ["c1", "c2"])


def series_rows(meas: Any) -> list[dict[str, Any]]:
    s = meas.extra["series"]
    return [dict(zip(s["columns"], r, strict=True)) for r in s["rows"]]


@pytest.mark.parametrize("mode", MODES)
def test_series_has_the_shape_of_one_clients_table(mode: str) -> None:
    meas = aggregate(mode)
    one = rados.to_measurement(
        rados.parse_rados_bench((DATA / f"{names(mode)[0]}.out").read_text(), "plain", mode)
    )
    series = meas.extra["series"]
    assert series["columns"] == one.extra["series"]["columns"]
    assert set(series["units"]) == set(series["columns"])
    assert "bytes/s" in series["units"]["cur_bw"] and "ns" in series["units"]["avg_lat"]
    window = meas.extra["window"]
    rows = series_rows(meas)
    # the window's start, then every whole second in it
    assert len(rows) == math.floor(window["seconds"]) + 1
    for k, r in enumerate(rows):
        assert r["sec"] == k
        assert r["time"] == pytest.approx(window["start"] + k, abs=1e-6)
        assert r["last_lat"] is None
    assert rows[0]["finished"] == 0 and rows[0]["started"] == 0
    for a, b in itertools.pairwise(rows):
        assert b["finished"] >= a["finished"] and b["started"] >= a["started"]
        assert b["cur_bw"] == pytest.approx((b["finished"] - a["finished"]) * 4 * MiB)
        assert b["avg_bw"] == pytest.approx(b["finished"] * 4 * MiB / b["sec"])
    # in flight: at most both clients' 16 threads
    assert all(0 <= r["cur_ops"] <= 2 * 16 + 1e-9 for r in rows)


@pytest.mark.parametrize("mode", MODES)
def test_per_second_values_are_the_sums_of_the_clients_rows(mode: str) -> None:
    """Second k of the window holds what each client's own table row k says it finished
    in its k-th second, summed, up to what the rows' offsets from the window's whole
    seconds move between neighbouring seconds (each offset times the client's fastest
    rate). The recordings' rows are 0.1 ms to 34 ms off those seconds."""
    meas = aggregate(mode)
    w0 = meas.extra["window"]["start"]
    rows = series_rows(meas)
    clients = [own(n) for n in names(mode)]
    for k in range(1, len(rows)):
        got = rows[k]["finished"] - rows[k - 1]["finished"]
        want = tol = 0.0
        for summary, table in clients:
            end = table[0][0] + float(summary["Total time run"])
            ops = int(summary.get("Total writes made") or summary["Total reads made"])
            knots = [*table, (end, ops)]
            rate = max((f1 - f0) / (t1 - t0) for (t0, f0), (t1, f1) in itertools.pairwise(knots))
            want += table[k][1] - table[k - 1][1]
            tol += rate * (abs(table[k][0] - (w0 + k)) + abs(table[k - 1][0] - (w0 + k - 1)))
        assert abs(got - want) <= tol + 1e-9, (k, got, want, tol)
        # the comparison means something: the bound is under 10 % of the value, a third for
        # seq, whose second reader started 138 ms before the first
        assert tol < (0.4 if mode == "seq" else 0.1) * want, (k, tol, want)


@pytest.mark.parametrize("mode", MODES)
def test_spread_of_the_per_second_values(mode: str) -> None:
    meas = aggregate(mode)
    rows = series_rows(meas)
    per_second = [b["finished"] - a["finished"] for a, b in itertools.pairwise(rows)]
    iops, bw = meas.extra["iops"], meas.extra["bandwidth"]
    assert iops["unit"] == "operations/s" and bw["unit"] == "bytes/s"
    assert iops["min"] == pytest.approx(min(per_second))
    assert iops["max"] == pytest.approx(max(per_second))
    want_sd = statistics.stdev(per_second) if len(per_second) > 1 else 0.0  # rados: 0 for one
    assert iops["stddev"] == pytest.approx(want_sd)
    assert 0 <= iops["stddev"] <= iops["max"] - iops["min"] + 1e-9
    if len(per_second) == 1:  # seq: the clients ran together 1.01 s
        assert iops["stddev"] == 0 and iops["min"] == iops["max"]
    else:
        assert iops["stddev"] > 0 and iops["min"] < iops["max"]
    # every read and write is 4 MiB: bandwidth is IOPS x 4 MiB, figure by figure
    for key in ("stddev", "min", "max"):
        assert bw[key] == pytest.approx(iops[key] * 4 * MiB)
    d = next(iter(meas.directions.values()))
    assert iops["average"] == d.iops and bw["average"] == d.bw_bytes
    # the whole seconds hold what the window holds, less its last fraction of a second
    in_window = sum(c["ops"] for c in meas.extra["window"]["clients"])
    fraction = meas.extra["window"]["seconds"] - (len(rows) - 1)
    assert rows[-1]["finished"] <= in_window + 1e-9
    assert in_window - rows[-1]["finished"] <= fraction * 2 * max(per_second) + 1e-9


@pytest.mark.parametrize("mode", MODES)
def test_spread_has_the_keys_and_units_of_one_client(mode: str) -> None:
    meas = aggregate(mode)
    one = next(iter(meas.hosts.values()))
    for what in ("iops", "bandwidth"):
        assert set(meas.extra[what]) == set(one.extra[what])
        assert meas.extra[what]["unit"] == one.extra[what]["unit"]
    # rados bench printed no average for the clients together
    assert meas.extra["iops"]["average_printed"] is None
    assert meas.extra["op_size"] == meas.extra["object_size"] == 4 * MiB
    assert meas.extra["threads"] == (16 if mode == "write" else None)  # reads print none


@pytest.mark.parametrize("mode", MODES)
def test_whole_run_is_the_clients_summaries_together(mode: str) -> None:
    meas = aggregate(mode)
    whole = meas.extra["whole_run"]
    summaries = [own(n)[0] for n in names(mode)]
    ops = [int(s.get("Total writes made") or s["Total reads made"]) for s in summaries]
    means = [float(s["Average Latency(s)"]) for s in summaries]
    assert whole["ops"] == sum(ops)
    assert whole["bytes"] == sum(ops) * 4 * MiB
    assert whole["total_time_s"] == max(float(s["Total time run"]) for s in summaries)
    lat = whole["latency"]
    assert lat["unit"] == "ns" and lat["samples"] == sum(ops)
    assert lat["min"] == pytest.approx(min(float(s["Min latency(s)"]) for s in summaries) * 1e9)
    assert lat["max"] == pytest.approx(max(float(s["Max latency(s)"]) for s in summaries) * 1e9)
    mean = sum(n * m for n, m in zip(ops, means, strict=True)) / sum(ops)
    assert lat["mean"] == pytest.approx(mean * 1e9)
    assert lat["min"] <= lat["mean"] <= lat["max"]
    if mode == "write":
        sds = [float(s["Stddev Latency(s)"]) for s in summaries]
        n = sum(ops)
        ss = sum(
            (k - 1) * sd**2 + k * (m - mean) ** 2 for k, m, sd in zip(ops, means, sds, strict=True)
        )
        assert lat["stddev"] == pytest.approx(math.sqrt(ss / (n - 1)) * 1e9)
        assert min(sds) * 1e9 < lat["stddev"] < lat["max"] - lat["min"]
    else:
        assert "Stddev Latency(s)" not in summaries[0]
        assert lat["stddev"] is None  # reads: rados bench measures none


def _last_latencies() -> list[float]:
    """Real latencies: the "last lat(s)" column of a 22 s recording (a row per second)."""
    out = []
    for line in (DATA / "write-4k-22s-plain.out").read_text().splitlines():
        cells = line.split()
        if len(cells) == 8 and cells[0].isdigit() and cells[6] != "-":
            out.append(float(cells[6]))
    return out


def test_pooled_stddev_is_that_of_the_union() -> None:
    values = _last_latencies()
    assert len(values) >= 20
    groups = [values[:5], values[5:13], values[13:]]
    parts = [(len(g), statistics.fmean(g), statistics.stdev(g)) for g in groups]
    assert rados.pooled_stddev(parts) == pytest.approx(statistics.stdev(values), rel=1e-12)
    # a group of one has no stddev of its own (0), but still counts
    parts1 = [
        (1, values[0], 0.0),
        (len(values) - 1, statistics.fmean(values[1:]), statistics.stdev(values[1:])),
    ]
    assert rados.pooled_stddev(parts1) == pytest.approx(statistics.stdev(values), rel=1e-12)
    assert rados.pooled_stddev([(1, values[0], 0.0)]) is None
    assert rados.pooled_stddev([]) is None


def test_a_window_shorter_than_a_second_has_no_spread() -> None:
    """Clients that ran together less than a second: no whole second, so no per-second
    value (None, never 0); the totals are still there. A real seq -f json output (1.08 s,
    no wall clock) taken as two clients whose start times are 0.3 s apart."""
    res = rados.parse_rados_bench((DATA / "seq-4m-json.out").read_text(), "json", "seq")
    assert res.total_time_s is not None and 0.5 < res.total_time_s - 0.3 < 1
    meas = rados.aggregate_clients([res, res], ["c1", "c2"], [100.0, 100.3])
    assert meas.extra["window"]["seconds"] == pytest.approx(res.total_time_s - 0.3)
    for what in ("iops", "bandwidth"):
        assert [meas.extra[what][k] for k in ("stddev", "min", "max")] == [None] * 3
    assert len(meas.extra["series"]["rows"]) == 1
    assert meas.extra["whole_run"]["ops"] == 2 * (res.ops or 0)
