"""Fuzzing the interval stream reader (engines/fio/intervals.py's StatusStream: a local
point's time series, read from fio's --status-interval output as fio prints it) with
streams derived from the real ones tests/data/fio/record-status.sh recorded: documents
changed (a value replaced by one no fio writes, a key deleted, a counter lowered), dropped,
repeated or cut short, text between them, fed in pieces of any size.

The property: the reader never raises, and what it gives is a series a chart and the
database can hold (each interval a positive length, counts and bytes whole numbers from 0
to what the database stores, latencies finite and >= 0 or unknown, numbered in order per
direction); the output it keeps reads to a measurement or to fio's clear error
(FioOutputError), never a traceback. Bounded (``examples``) to a few seconds."""

from __future__ import annotations

import copy
import json
import math
import random
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from test_fuzz_inputs import BAD, examples, mutate, paths

from storbench.engines.fio.intervals import StatusStream
from storbench.engines.fio.parse import parse_output
from storbench.engines.fio.tool import FioOutputError
from storbench.model.series import Interval

DATA = Path(__file__).resolve().parents[1] / "data" / "fio"
RECORDED = ("status-plain-jsonplus", "status-ramp-jsonplus")
INTERVAL_MS = 500  # what record-status.sh asked
MAX_KEY = 2**63 - 1  # the largest integer the database stores


def recorded(name: str) -> list[dict[str, Any]]:
    text = (DATA / f"{name}.stdout").read_text()
    out, i, dec = [], 0, json.JSONDecoder()
    while (j := text.find("{", i)) >= 0:
        doc, i = dec.raw_decode(text, j)
        out.append(doc)
    return out


DOCS = {name: recorded(name) for name in RECORDED}
#: Values fio never writes where a count, a time or a histogram is, beside test_fuzz_inputs'.
ODD: list[Any] = [*BAD, 0, 1, -1, 2**63, 2**64, 10**400 // 10**390, 0.5, "12", "1e3", [1]]


@st.composite
def changed(draw: st.DrawFn, doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` with one to three of its values replaced, deleted or scaled down."""
    doc = copy.deepcopy(doc)
    for _ in range(draw(st.integers(1, 3))):
        where = draw(st.sampled_from(list(paths(doc))))
        how = draw(st.sampled_from(["replace", "delete", "lower"]))
        try:
            old: Any = doc
            for k in where:
                old = old[k]
            if how == "lower" and isinstance(old, int | float) and not isinstance(old, bool):
                new: Any = type(old)(old * draw(st.sampled_from([0, 0.5, 0.99])))
            else:
                new = copy.deepcopy(draw(st.sampled_from(ODD)))
            doc = mutate(doc, where, new, how == "delete")
        except (KeyError, IndexError, TypeError):
            continue
    return doc


@st.composite
def stream(draw: st.DrawFn) -> tuple[str, float]:
    """A status stream as fio would print it, changed; and the engine's start (unix s)."""
    name = draw(st.sampled_from(RECORDED))
    docs = list(DOCS[name])
    started = (docs[0]["timestamp_ms"] - 100) / 1000
    for _ in range(draw(st.integers(0, 3))):
        k = draw(st.integers(0, len(docs) - 1))
        what = draw(st.sampled_from(["change", "change", "drop", "repeat", "swap"]))
        if what == "change":
            docs[k] = draw(changed(docs[k]))
        elif what == "drop" and len(docs) > 1:
            del docs[k]
        elif what == "repeat":
            docs.insert(k, copy.deepcopy(docs[k]))
        elif what == "swap" and k + 1 < len(docs):
            docs[k], docs[k + 1] = docs[k + 1], docs[k]
    between = st.sampled_from(["", "", "\n", "fio: a warning\n", "{", "}\n", "{\n  x"])
    text = "".join(draw(between) + json.dumps(d, indent=2, allow_nan=True) + "\n" for d in docs)
    if draw(st.booleans()):
        text = text[: draw(st.integers(0, len(text)))]  # fio killed mid-document
    return text, started


def assert_holdable(intervals: list[Interval]) -> None:
    seqs: dict[str, int] = {}
    for i in intervals:
        assert isinstance(i.t_ms, int) and abs(i.t_ms) <= MAX_KEY, i
        assert isinstance(i.dur_ms, int) and 0 < i.dur_ms <= MAX_KEY, i
        assert isinstance(i.ios, int) and 0 <= i.ios <= MAX_KEY, i
        assert isinstance(i.bytes, int) and 0 <= i.bytes <= MAX_KEY, i
        for v in (i.lat_mean_ns, i.p50_ns, i.p99_ns, i.p999_ns):
            assert v is None or (math.isfinite(v) and v >= 0), i
        assert i.seq == seqs.get(i.direction, 0), i
        seqs[i.direction] = i.seq + 1


@examples(150)
@given(case=stream(), seed=st.integers(0, 2**16))
def test_fuzz_intervals_stream_reader(case: tuple[str, float], seed: int) -> None:
    text, started = case
    given_: list[Interval] = []
    reader = StatusStream(started, INTERVAL_MS, given_.extend)
    rng = random.Random(seed)
    i = 0
    while i < len(text):
        n = rng.randint(1, 4096)
        reader.feed(text[i : i + n])
        i += n
    intervals = reader.close()
    stored: dict[tuple[str, int], Interval] = {}  # as the store's upsert keeps them
    for iv in given_:
        stored[(iv.direction, iv.seq)] = iv
    # in order; a document soon after the one before revises the interval given last
    assert list(stored.values()) == intervals
    assert_holdable(intervals)
    kept, _ = reader.kept()
    try:
        parse_output(kept)
    except FioOutputError as e:
        assert str(e), "an error that says nothing"


@examples(5)
@given(name=st.sampled_from(RECORDED))
def test_fuzz_intervals_unchanged_streams_read_as_recorded(name: str) -> None:
    """The harness itself: a stream written back as the fuzzer writes it reads to the same
    series as the recorded one, whose intervals add up to fio's final result."""
    docs = DOCS[name]
    text = "".join(json.dumps(d, indent=2) + "\n" for d in docs)
    started = (docs[0]["timestamp_ms"] - 100) / 1000
    ours = StatusStream(started, INTERVAL_MS)
    ours.feed(text)
    theirs = StatusStream(started, INTERVAL_MS)
    theirs.feed((DATA / f"{name}.stdout").read_text())
    assert ours.close() == theirs.close() != []
    final = docs[-1]["jobs"]
    ios = sum(j["read"]["total_ios"] for j in final)
    assert sum(i.ios for i in theirs.intervals if i.direction == "read" and not i.ramp) == ios
