"""An engine's raw output as the database keeps it: exactly the text the engine printed, in
less room.

Most of a fio json+ output is its latency histograms (``"bins" : {...}``: a line per
bucket), which zlib squeezes least: a 1 s null-engine point's 17.5 KB output takes 3.3 KB
compressed, 2.2 KB of it the one ``bins`` object. So each ``bins`` object that fio wrote
the way fio writes them -- ``"bins" : {``, then one ``"BUCKET" : COUNT`` a line, indented
alike, in bucket order, then ``}`` -- is kept packed (storbench.model.histpack, with its two
indents) and the rest of the text compressed with a NUL where it was. Reading puts every
object back character for character; :func:`pack` checks that before it keeps the packed
form, and keeps a text it cannot give back exactly as plain zlib (as every raw output was
kept before: :func:`unpack` reads both).

Layout: ``0x02``, the number of packed objects (4 bytes, little-endian), per object its
indent and closing indent (1 byte each) and its histpack length (4 bytes) and bytes, then
zlib of the text. Plain: zlib's own stream (its first byte is 0x78, never 0x02).
"""

from __future__ import annotations

import re
import struct
import zlib

from storbench.model import histpack

PACKED = 2
_BINS = re.compile(r'(?<="bins" : )\{\n[^{}]*\}')
_PAIR = re.compile(r'"(\d+)" : (\d+)')
_MAX_INDENT = 255


def _render(bins: dict[int, int], indent: int, close: int) -> str:
    pad = " " * indent
    body = ",\n".join(f'{pad}"{k}" : {v}' for k, v in bins.items())
    return "{\n" + body + "\n" + " " * close + "}"


def _read(obj: str) -> tuple[dict[int, int], int, int] | None:
    """The buckets and indents of one ``bins`` object, when rendering them gives it back."""
    pairs = _PAIR.findall(obj)
    if not pairs:
        return None
    indent = len(obj) - len(obj[2:].lstrip(" ")) - 2
    close = len(obj) - obj.rindex("\n") - 2
    if indent > _MAX_INDENT or close > _MAX_INDENT:
        return None
    bins = {int(k): int(v) for k, v in pairs}
    if len(bins) != len(pairs) or _render(bins, indent, close) != obj:
        return None  # not fio's layout, a bucket twice or out of order: kept as text
    if any(a >= b for a, b in zip(bins, list(bins)[1:], strict=False)):
        return None
    return bins, indent, close


def pack(text: str) -> bytes:
    """``text`` as the database keeps it (module comment)."""
    if "\0" in text or '"bins" : {' not in text:
        return zlib.compress(text.encode(), 6)
    parts: list[str] = []
    objects: list[bytes] = []
    pos = 0
    for m in _BINS.finditer(text):
        read = _read(m.group(0))
        if read is None:
            continue  # left in the text as it is
        bins, indent, close = read
        blob = histpack.encode(bins)
        objects.append(bytes([indent, close]) + struct.pack("<I", len(blob)) + blob)
        parts.append(text[pos : m.start()])
        pos = m.end()
    if not objects:
        return zlib.compress(text.encode(), 6)
    parts.append(text[pos:])
    head = bytes([PACKED]) + struct.pack("<I", len(objects)) + b"".join(objects)
    return head + zlib.compress("\0".join(parts).encode(), 6)


def unpack(blob: bytes) -> str:
    """The text :func:`pack` was given (or plain zlib, as raw outputs were kept before)."""
    if not blob or blob[0] != PACKED:
        return zlib.decompress(blob).decode()
    (count,) = struct.unpack_from("<I", blob, 1)
    pos = 5
    objects = []
    for _ in range(count):
        indent, close = blob[pos], blob[pos + 1]
        (size,) = struct.unpack_from("<I", blob, pos + 2)
        start = pos + 6
        objects.append(_render(histpack.decode(blob[start : start + size]), indent, close))
        pos = start + size
    parts = zlib.decompress(blob[pos:]).decode().split("\0")
    if len(parts) != count + 1:
        raise ValueError("a packed raw output that does not hold what it says")
    out = [parts[0]]
    for obj, rest in zip(objects, parts[1:], strict=True):
        out += [obj, rest]
    return "".join(out)
