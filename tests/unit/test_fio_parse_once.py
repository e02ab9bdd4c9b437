"""fio's final document is decoded once per point (issue 26, the gap between two points):
the status stream (engines/fio/intervals.py) decodes and checks each document as fio prints
it, and parse_output takes the last one from it instead of decoding it again; and a
direction's percentiles come from fio's own figures without ranking the json+ bins first
when fio printed every one storbench keeps. Each must give exactly what the full path gives,
on every recorded fio output."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from storbench.engines.fio import parse, versions
from storbench.engines.fio.intervals import StatusStream
from storbench.model.metrics import PERCENTILES, pct_key, percentiles_from_bins

DATA = Path(__file__).resolve().parents[1] / "data" / "fio"
STREAMS = ["status-plain-jsonplus.stdout", "status-ramp-jsonplus.stdout"]
LOCAL = sorted(p.name for p in DATA.glob("*.json") if "clientserver" not in p.name) + STREAMS


class _Counting:
    """parse's JSON decoder, counting its calls."""

    def __init__(self) -> None:
        self.calls = 0

    def raw_decode(self, text: str, start: int = 0) -> tuple[Any, int]:
        self.calls += 1
        return json.JSONDecoder().raw_decode(text, start)


def _streamed(name: str, chunk: int = 4096) -> tuple[StatusStream, str]:
    text = (DATA / name).read_text()
    stream = StatusStream(0.0, 500)
    for i in range(0, len(text), chunk):
        stream.feed(text[i : i + chunk])
    stream.close()
    return stream, stream.kept()[0]


@pytest.mark.parametrize("name", LOCAL)
def test_the_streams_document_gives_what_decoding_gives(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    stream, raw = _streamed(name)
    assert stream.last_document is not None, name  # every recorded output ends in a result
    text, doc = stream.last_document
    assert text in raw and json.loads(text) == doc
    expected = parse.parse_output(raw)
    counting = _Counting()
    monkeypatch.setattr(parse, "_decoder", counting)
    assert parse.parse_output(raw, stream.last_document) == expected
    assert counting.calls == 0  # the final document was not decoded a second time


def test_a_known_document_not_in_the_output_is_not_used(monkeypatch: pytest.MonkeyPatch) -> None:
    other, _ = _streamed("status-ramp-jsonplus.stdout")
    _, raw = _streamed("status-plain-jsonplus.stdout")
    expected = parse.parse_output(raw)
    counting = _Counting()
    monkeypatch.setattr(parse, "_decoder", counting)
    assert parse.parse_output(raw, other.last_document) == expected
    assert counting.calls >= 1


def test_a_known_document_is_not_checked_again(monkeypatch: pytest.MonkeyPatch) -> None:
    stream, raw = _streamed("status-plain-jsonplus.stdout")
    checked: list[object] = []
    monkeypatch.setattr(parse, "check_document", lambda doc: checked.append(doc))
    parse.final_document(raw, stream.last_document)
    assert checked == []
    parse.final_document(raw)
    assert len(checked) == 1


def _latencies(doc: dict[str, Any]) -> list[tuple[dict[str, Any], float]]:
    """Every latency object of a document's job entries with its scale to ns."""
    out = []
    for job in doc.get("jobs") or []:
        for ddir in ("read", "write", "trim"):
            d = job.get(ddir)
            if not isinstance(d, dict):
                continue
            for kind in ("slat", "clat", "lat"):
                obj, scale = versions.latency_object(d, kind)
                if obj is not None:
                    out.append((obj, scale))
    return out


def _documents() -> list[tuple[str, dict[str, Any]]]:
    docs = []
    for name in LOCAL:
        found, _ = parse.split_documents((DATA / name).read_text())
        docs += [(f"{name}#{i}", d) for i, d in enumerate(found)]
    return docs


@pytest.mark.parametrize(
    ("name", "doc"), _documents(), ids=lambda v: v if isinstance(v, str) else ""
)
def test_percentiles_are_what_bins_and_fios_figures_give(name: str, doc: dict[str, Any]) -> None:
    """The full path: every percentile ranked from the bins, then fio's own figures over
    them; the same values in the same order."""
    for obj, scale in _latencies(doc):
        ios = int(obj.get("N", 0))
        got = parse._latency({"clat_ns": obj} if scale == 1.0 else {"clat": obj}, "clat", ios)
        if got is None:
            continue
        bins = {round(int(k) * scale): int(v) for k, v in (obj.get("bins") or {}).items()}
        bins = {k: v for k, v in bins.items() if k >= 0}
        want = percentiles_from_bins(bins) if bins else {}
        fio = {float(k): float(v) * scale for k, v in (obj.get("percentile") or {}).items()}
        want.update({pct_key(p): fio[p] for p in PERCENTILES if p in fio})
        assert list(got.percentiles.items()) == list(want.items()), name
        assert got.bins == (bins or None), name
