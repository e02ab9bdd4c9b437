"""Latency histograms as the database keeps them (schema 7): exact and compact.

A histogram is fio's json+ ``bins``: bucket value (ns) -> I/O count, only the buckets that
count. Stored as one BLOB: a format byte (1), then zlib of the byte planes of one array of
signed 64-bit little-endian integers -- the number of buckets n, the n bucket values as
differences from the previous one (the first from 0), the n counts. Byte planes (all first
bytes, then all second bytes, ...) put the many zero high bytes of small numbers together,
which zlib then nearly removes: fio's histograms take about 1/8 of their JSON text (362
against 3,031 bytes on average over the recorded outputs in tests/data/fio), exactly.

numpy reads it without a Python loop (:func:`pairs_array`), so merged percentiles over a
20,000-point run stay fast; :func:`decode` gives the mapping back for one measurement.
"""

from __future__ import annotations

import sys
import zlib
from array import array
from collections.abc import Mapping
from typing import Any

FORMAT = 1
_WIDTH = 8  # bytes of each integer


def _shuffle(raw: bytes) -> bytes:
    return b"".join(raw[i::_WIDTH] for i in range(_WIDTH))


def _unshuffle(planes: bytes) -> bytes:
    n = len(planes) // _WIDTH
    out = bytearray(len(planes))
    for i in range(_WIDTH):
        out[i::_WIDTH] = planes[i * n : (i + 1) * n]
    return bytes(out)


def encode(bins: Mapping[Any, int]) -> bytes:
    """The stored form of ``bins`` (bucket -> count; keys may be the JSON text's strings)."""
    items = sorted((int(k), int(v)) for k, v in bins.items())
    values = array("q", [len(items)])
    prev = 0
    for k, _ in items:
        values.append(k - prev)
        prev = k
    values.extend(c for _, c in items)
    if sys.byteorder != "little":
        values.byteswap()
    return bytes([FORMAT]) + zlib.compress(_shuffle(values.tobytes()), 9)


def _integers(blob: bytes) -> array[int]:
    if not blob or blob[0] != FORMAT:
        raise ValueError(f"not a stored histogram (format {blob[:1]!r})")
    values = array("q")
    values.frombytes(_unshuffle(zlib.decompress(blob[1:])))
    if sys.byteorder != "little":
        values.byteswap()
    if not values or len(values) != 1 + 2 * values[0]:
        raise ValueError("a stored histogram of the wrong length")
    return values


def decode(blob: bytes) -> dict[int, int]:
    """The histogram ``blob`` holds: bucket value (ns) -> count, in bucket order."""
    values = _integers(blob)
    n = values[0]
    out: dict[int, int] = {}
    key = 0
    for i in range(n):
        key += values[1 + i]
        out[key] = values[1 + n + i]
    return out


def pairs_array(blobs: list[bytes]) -> Any:
    """Every ``(bucket, count)`` pair of the stored histograms ``blobs`` as an (m, 2) int64
    numpy array (the buckets of different histograms are not merged)."""
    import numpy as np  # here: only merged percentiles need it, and it is slow to import

    parts = []
    for blob in blobs:
        values = np.frombuffer(_unshuffle(zlib.decompress(blob[1:])), dtype="<i8")
        n = int(values[0])
        if blob[0] != FORMAT or len(values) != 1 + 2 * n:
            raise ValueError("not a stored histogram")
        parts.append(np.stack([np.cumsum(values[1 : 1 + n]), values[1 + n :]], axis=1))
    return np.concatenate(parts) if parts else np.zeros((0, 2), dtype=np.int64)
