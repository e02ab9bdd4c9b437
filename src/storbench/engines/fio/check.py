"""Is a decoded fio JSON document a real result? What storbench reads of it, checked.

fio writes counts, rates and times as non-negative finite numbers, latency percentiles as
``"99.000000": ns`` and json+ histogram bins as ``"ns": count`` (older versions: µs, or
bins by index; engines/fio/versions.py); every job entry has its
``read``, ``write`` and ``trim`` objects (``mixed`` with unified_rw_reporting). A document
that breaks this was not written by fio (or was damaged): storbench refuses it rather than
store garbage as an ``ok`` measurement -- whether it comes from ``storbench import`` or
from fio's own output during a run. Fields storbench does not read are not checked.
"""

from __future__ import annotations

import math
from typing import Any

from storbench.model.metrics import DIRECTIONS  # read, write, trim; mixed: unified_rw_reporting

#: Numbers of a direction storbench reads: each finite and >= 0 when present.
DIRECTION_NUMBERS = ("iops", "bw", "bw_bytes", "io_bytes", "io_kbytes", "total_ios", "runtime")
LATENCIES = ("slat_ns", "clat_ns", "lat_ns", "slat", "clat", "lat")
LATENCY_NUMBERS = ("N", "mean", "stddev", "min", "max")
PLAT_KEYS = ("FIO_IO_U_PLAT_BITS", "FIO_IO_U_PLAT_VAL", "FIO_IO_U_PLAT_NR")
ENTRY_NUMBERS = ("usr_cpu", "sys_cpu", "job_runtime", "ctx", "majf", "minf")
#: Whole numbers of an entry and their largest value (an errno, a group, a TCP port).
ENTRY_INTS = {"error": 2**31 - 1, "groupid": 2**31 - 1, "port": 65535}


class DocumentError(ValueError):
    """What is wrong with a document, where (``jobs[0].read.iops``)."""


#: The largest count or latency a database stores as a whole number (64-bit signed).
INT64 = 2**63 - 1


def check_document(doc: Any) -> None:
    """Raise :class:`DocumentError` naming the first thing in ``doc`` that no fio writes."""
    if not isinstance(doc, dict):
        raise DocumentError("the document is not a JSON object")
    for key in ("jobs", "client_stats"):
        if key in doc and not isinstance(doc[key], list):
            raise DocumentError(f"`{key}` is not a list")
    if "global options" in doc:
        _options(doc["global options"], "global options")
    if "fio version" in doc and not isinstance(doc["fio version"], str):
        raise DocumentError(f"`fio version` is not text: {doc['fio version']!r}")
    entries = [
        (f"{key}[{i}]", e)
        for key in ("jobs", "client_stats")
        for i, e in enumerate(doc.get(key) or [])
    ]
    results = 0
    for where, e in entries:
        if not isinstance(e, dict):
            raise DocumentError(f"{where} is not an object")
        if e.get("jobname") == "All clients":
            continue  # fio's own sum, which storbench ignores
        _entry(e, where)
        results += 1
    if not results:
        raise DocumentError("it holds no job results (`jobs` and `client_stats` are empty)")
    _strings(doc, "")


def _entry(e: dict[str, Any], where: str) -> None:
    for key in ENTRY_NUMBERS:
        if key in e:
            _number(e[key], f"{where}.{key}")
    for key, top in ENTRY_INTS.items():
        if key in e and (not _is_int(e[key]) or not 0 <= e[key] <= top):
            raise DocumentError(f"{where}.{key} is not a whole number from 0 to {top}: {e[key]!r}")
    for key in ("jobname", "hostname"):
        if key in e and not isinstance(e[key], str):
            raise DocumentError(f"{where}.{key} is not text: {e[key]!r}")
    if "job options" in e:
        _options(e["job options"], f"{where}.job options")
    dirs = [d for d in DIRECTIONS if d in e]
    if not dirs:
        raise DocumentError(f"{where} has no read, write or trim results")
    for d in dirs:
        _direction(e[d], f"{where}.{d}")


def _direction(d: Any, where: str) -> None:
    if not isinstance(d, dict):
        raise DocumentError(f"`{where.rsplit('.', 1)[-1]}` ({where}) is not an object: {d!r}")
    for key in DIRECTION_NUMBERS:
        if key in d:
            _number(d[key], f"{where}.{key}")
    for key in LATENCIES:
        if key in d:
            _latency(d[key], f"{where}.{key}")


def _latency(lat: Any, where: str) -> None:
    if not isinstance(lat, dict):
        raise DocumentError(f"{where} is not an object: {lat!r}")
    for key in LATENCY_NUMBERS:
        if key in lat:
            _number(lat[key], f"{where}.{key}")
    pcts = lat.get("percentile")
    if pcts is not None:
        if not isinstance(pcts, dict):
            raise DocumentError(f"{where}.percentile is not an object")
        for k, v in pcts.items():
            try:
                rank = float(k)
            except ValueError:
                rank = math.nan
            if not 0 <= rank <= 100:  # fio < 2.2 pads the list with "0.00": 0
                raise DocumentError(f"{where}.percentile has a key that is no percentile: {k!r}")
            _number(v, f"{where}.percentile[{k}]")
    bins = lat.get("bins")
    if bins is not None:
        if not isinstance(bins, dict):
            raise DocumentError(f"{where}.bins is not an object")
        for k, v in bins.items():
            if k in PLAT_KEYS:  # fio 2.12 to 2.1x: bins by index, with the layout's constants
                continue
            ns = isinstance(k, str) and k.isascii() and k.isdigit() and len(k) < 20
            if not (ns and int(k) <= INT64):
                raise DocumentError(f"{where}.bins has a key that is no latency in ns: {k!r}")
            if not _is_int(v) or not 0 <= v <= INT64:
                raise DocumentError(f"{where}.bins[{k}] is not a count: {v!r}")


def _options(opts: Any, where: str) -> None:
    if not isinstance(opts, dict):
        raise DocumentError(f"{where} is not an object of options")


def _number(v: Any, where: str) -> None:
    if isinstance(v, bool) or not isinstance(v, int | float):
        raise DocumentError(f"{where} is not a number: {v!r}")
    if not math.isfinite(v) or v < 0:
        raise DocumentError(f"{where} is not a finite number >= 0: {v!r}")


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _strings(node: Any, where: str) -> None:
    """Every text is Unicode that can be stored (JSON's ``\\ud800`` escapes decode to lone
    surrogates, which no database or terminal takes)."""
    stack = [(node, where)]
    while stack:
        item, at = stack.pop()
        if isinstance(item, str):
            if not item.isascii():
                try:
                    item.encode("utf-8")
                except UnicodeEncodeError:
                    raise DocumentError(
                        f"{at or 'a value'} holds an invalid Unicode escape (a lone surrogate)"
                    ) from None
        elif isinstance(item, dict):
            for k, v in item.items():
                if k in ("bins", "percentile"):
                    continue  # checked above, and large
                stack.append((k, at))
                stack.append((v, f"{at}.{k}" if at else str(k)))
        elif isinstance(item, list):
            stack.extend((v, f"{at}[{i}]") for i, v in enumerate(item))
