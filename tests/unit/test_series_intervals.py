"""A local fio point's time series (engines/fio/intervals.py), on real --status-interval
streams recorded by tests/data/fio/record-status.sh. Expected values are read here from the
recorded documents themselves: the final document's totals, and each report's cumulative
histograms, whose difference is the interval's own."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any

import pytest

from storbench.engines.fio.intervals import StatusStream
from storbench.engines.fio.parse import parse_output
from storbench.model.metrics import percentiles_from_bins
from storbench.model.series import Interval, measured

DATA = Path(__file__).resolve().parents[1] / "data" / "fio"
INTERVAL_MS = 500  # what record-status.sh asked


def docs(name: str) -> list[dict[str, Any]]:
    text = (DATA / f"{name}.stdout").read_text()
    out, i, dec = [], 0, json.JSONDecoder()
    while (j := text.find("{", i)) >= 0:
        doc, i = dec.raw_decode(text, j)
        out.append(doc)
    return out


def started(name: str) -> float:
    """A start time 100 ms before fio's first report (the stream's times are relative)."""
    return (docs(name)[0]["timestamp_ms"] - 100) / 1000


def read(name: str, chunk: int | None = None) -> tuple[list[Interval], list[list[Interval]]]:
    text = (DATA / f"{name}.stdout").read_text()
    given: list[list[Interval]] = []
    stream = StatusStream(started(name), INTERVAL_MS, given.append)
    if chunk is None:
        stream.feed(text)
    else:
        rng = random.Random(chunk)
        i = 0
        while i < len(text):
            n = rng.randint(1, chunk)
            stream.feed(text[i : i + n])
            i += n
    return stream.close(), given


def totals(doc: dict[str, Any], ddir: str) -> tuple[int, int, int]:
    jobs = [j[ddir] for j in doc["jobs"]]
    return (
        sum(d["total_ios"] for d in jobs),
        sum(d["io_bytes"] for d in jobs),
        max(d["runtime"] for d in jobs),
    )


def bins(doc: dict[str, Any], ddir: str) -> dict[int, int]:
    out: dict[int, int] = {}
    for j in doc["jobs"]:
        for k, v in j[ddir]["clat_ns"].get("bins", {}).items():
            out[int(k)] = out.get(int(k), 0) + v
    return out


@pytest.mark.parametrize(
    ("name", "dirs"),
    [("status-ramp-jsonplus", ("read", "write")), ("status-plain-jsonplus", ("read",))],
)
def test_series_intervals_sum_to_fios_final_result(name: str, dirs: tuple[str, ...]) -> None:
    """The measured intervals add up to the final document: every I/O, byte and ms once."""
    intervals, _ = read(name)
    final = docs(name)[-1]
    for ddir in dirs:
        mine = [i for i in measured(intervals) if i.direction == ddir]
        ios, nbytes, runtime = totals(final, ddir)
        assert sum(i.ios for i in mine) == ios > 0
        assert sum(i.bytes for i in mine) == nbytes
        assert sum(i.dur_ms for i in mine) == runtime
        assert [i.seq for i in intervals if i.direction == ddir] == list(
            range(len([i for i in intervals if i.direction == ddir]))
        )


def test_series_intervals_percentiles_are_each_intervals_own_histogram() -> None:
    """Each measured interval's p50/p99/p99.9 are those of the difference of two consecutive
    cumulative json+ histograms (not an average of the reports' percentiles)."""
    name = "status-ramp-jsonplus"
    intervals, _ = read(name)
    all_docs = docs(name)
    at = {d["timestamp_ms"] - round(started(name) * 1000): k for k, d in enumerate(all_docs)}
    checked = 0
    for iv in measured(intervals):
        k = at[iv.t_ms]
        if all_docs[k]["timestamp_ms"] - all_docs[k - 1]["timestamp_ms"] < INTERVAL_MS / 2:
            k_before = k - 2  # the last document, moments after a report: merged
        else:
            k_before = k - 1
        now = bins(all_docs[k], iv.direction)
        before = bins(all_docs[k_before], iv.direction)
        if all_docs[k_before]["jobs"][0][iv.direction]["clat_ns"]["N"] == 0:
            before = {}  # the first report after the ramp counts from 0
        diff = {b: c - before.get(b, 0) for b, c in now.items() if c - before.get(b, 0) > 0}
        want = percentiles_from_bins(diff, (50.0, 99.0, 99.9))
        assert (iv.p50_ns, iv.p99_ns, iv.p999_ns) == (want["50"], want["99"], want["99.9"])
        assert sum(diff.values()) == iv.ios
        checked += 1
    assert checked >= 8


def test_series_intervals_mark_the_ramp_and_merge_the_short_tail() -> None:
    intervals, _ = read("status-ramp-jsonplus")
    ramp = [i for i in intervals if i.ramp]
    assert ramp and all(i.lat_mean_ns is None and i.p99_ns is None and i.ios > 0 for i in ramp)
    assert all(not i.ramp for i in intervals[len(ramp) :])  # the ramp comes first
    measured_ = measured(intervals)
    assert all(i.lat_mean_ns is not None and i.p99_ns is not None for i in measured_)
    # no interval of a few ms at the end: the last document came moments after a report
    last = docs("status-ramp-jsonplus")
    assert last[-1]["timestamp_ms"] - last[-2]["timestamp_ms"] < INTERVAL_MS / 2
    assert min(i.dur_ms for i in intervals) >= INTERVAL_MS / 2


@pytest.mark.parametrize("chunk", [7, 97, 4096])
def test_series_intervals_read_as_fio_writes_them(chunk: int) -> None:
    """Fed in pieces of any size, the stream gives the same intervals, in order, each to
    the sink the moment its document is read: stored as the store does (an interval given
    again with its seq replaces it), they are the stream's; only the short tail revises."""
    whole, _ = read("status-ramp-jsonplus")
    pieces, given = read("status-ramp-jsonplus", chunk)
    assert pieces == whole
    stored: dict[tuple[str, int], Interval] = {}
    for batch in given:
        for i in batch:
            stored[(i.direction, i.seq)] = i
    assert sorted(stored.values(), key=lambda i: (i.t_ms, i.direction)) == sorted(
        whole, key=lambda i: (i.t_ms, i.direction)
    )
    again = [i for batch in given for i in batch]
    assert len(again) - len(whole) == len({i.direction for i in whole})  # the tail, once


def test_series_intervals_each_given_when_its_report_is_read() -> None:
    """No interval waits for the next report: after each report, the sink has the interval
    that report ends (the live figures are not one interval late)."""
    text = (DATA / "status-plain-jsonplus.stdout").read_text()
    given: list[Interval] = []
    stream = StatusStream(started("status-plain-jsonplus"), INTERVAL_MS, given.extend)
    marks = [m.start() for m in re.finditer(r'\{\n  "fio version"', text)] + [len(text)]
    for k in range(1, len(marks) - 1):  # up to and with report k (not the final document)
        stream.feed(text[marks[k - 1] : marks[k]])
        assert given and given[-1].t_ms == docs("status-plain-jsonplus")[k - 1][
            "timestamp_ms"
        ] - round(started("status-plain-jsonplus") * 1000), k


def test_series_intervals_rates_are_per_second() -> None:
    iv = Interval(seq=0, t_ms=1000, dur_ms=500, direction="read", ios=1000, bytes=4096000)
    assert (iv.iops, iv.bw_bytes) == (2000.0, 8192000.0)


def kept(text: str, chunk: int | None = None) -> tuple[str, int]:
    """What the stream keeps of ``text``, fed whole or in pieces of up to ``chunk``."""
    stream = StatusStream(0.0, INTERVAL_MS)
    rng = random.Random(chunk)
    i = 0
    while i < len(text):
        n = rng.randint(1, chunk) if chunk else len(text)
        stream.feed(text[i : i + n])
        i += n
    stream.close()
    return stream.kept()


@pytest.mark.parametrize("name", ["status-ramp-jsonplus", "status-plain-jsonplus"])
def test_series_raw_output_keeps_the_result_not_every_report(name: str) -> None:
    """What the database keeps of a stream: fio's last document, byte for byte, and what it
    printed besides; it reads to the same measurement as the whole stream."""
    text = (DATA / f"{name}.stdout").read_text()
    kept_text, left_out = kept(text)
    assert left_out == len(docs(name)) - 1 > 0
    last = text[text.rindex('{\n  "fio version"') :]
    assert kept_text == last  # these recordings hold nothing besides the documents
    assert parse_output(kept_text)[0].to_dict() == parse_output(text)[0].to_dict()
    assert kept(kept_text) == (kept_text, 0)


@pytest.mark.parametrize("chunk", [7, 97, 4096])
def test_series_stream_keeps_what_the_database_keeps(chunk: int) -> None:
    """Read as fio prints it, in pieces of any size, the stream keeps the same text as the
    whole output gives (so storbench need not read a long point's output again at its end)."""
    text = (DATA / "status-ramp-jsonplus.stdout").read_text()
    assert kept(text, chunk) == kept(text)
