"""Raw engine outputs as the store keeps them (storbench.model.rawpack): every recorded output
reads back character for character, json+ ones in much less room, and what is not fio's
layout is kept as it is."""

from __future__ import annotations

import zlib
from pathlib import Path

import pytest

from storbench.model import rawpack

DATA = Path(__file__).resolve().parents[1] / "data"
RECORDED = sorted(
    p
    for pattern in ("fio/*.json", "fio/*.stdout", "s3/*.json", "fio-versions/**/*.json")
    for p in DATA.glob(pattern)
)


def test_store_rawpack_every_recorded_output_reads_back_exactly() -> None:
    assert len(RECORDED) > 50
    plain = packed = 0
    for path in RECORDED:
        text = path.read_text()
        blob = rawpack.pack(text)
        assert rawpack.unpack(blob) == text, path
        plain += len(zlib.compress(text.encode(), 6))
        packed += len(blob)
    assert packed < plain


def test_store_rawpack_a_json_plus_output_keeps_its_bins_packed() -> None:
    for name in ("null-engine-jsonplus", "libaio-randrw-jsonplus", "numjobs4-nogroup-jsonplus"):
        text = (DATA / "fio" / f"{name}.json").read_text()
        blob = rawpack.pack(text)
        assert blob[0] == rawpack.PACKED, name
        assert len(blob) < 0.8 * len(zlib.compress(text.encode(), 6)), name


@pytest.mark.parametrize(
    "change",
    [
        lambda t: t.replace('"bins" : {\n', '"bins" : {\n ', 1),  # an indent off by one
        lambda t: t.replace(",\n", " ,\n", 3),  # a space before a comma
        lambda t: t + "\0",  # a NUL: the packed form's separator
    ],
)
def test_store_rawpack_what_is_not_fio_layout_stays_as_it_is(change: object) -> None:
    text = change((DATA / "fio" / "null-engine-jsonplus.json").read_text())  # type: ignore[operator]
    assert rawpack.unpack(rawpack.pack(text)) == text


def test_store_rawpack_reads_what_earlier_releases_stored() -> None:
    text = (DATA / "fio" / "null-engine-jsonplus.json").read_text()
    assert rawpack.unpack(zlib.compress(text.encode(), 6)) == text  # plain zlib, before 7
