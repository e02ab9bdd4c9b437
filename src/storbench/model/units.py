"""fio's size and time syntax (``4k``, ``1m``, ``10G``, ``60s``) and human-readable output.

Sizes follow fio's default ``kb_base=1024``: ``k``, ``KB`` and ``KiB`` all mean 1024.
Times without a unit are seconds, as for fio's ``runtime`` and ``ramp_time``; ``m`` is minutes.
"""

from __future__ import annotations

import datetime as dt
import re
from fractions import Fraction

from storbench.model.errors import clipped

_SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgtpe]?)(i?b?)\s*$", re.IGNORECASE)
_SIZE_MULT = {
    "": 1,
    "k": 1 << 10,
    "m": 1 << 20,
    "g": 1 << 30,
    "t": 1 << 40,
    "p": 1 << 50,
    "e": 1 << 60,
}
#: The most digits a size may have (Python's int() converts at most 4,300).
_MAX_DIGITS = 4000
_TIME_RE = re.compile(
    r"^\s*(\d+(?:\.\d+)?)\s*(us|usec|ms|msec|s|sec|m|min|h|d)?\s*$", re.IGNORECASE
)
_TIME_MULT = {
    None: 1.0,
    "us": 1e-6,
    "usec": 1e-6,
    "ms": 1e-3,
    "msec": 1e-3,
    "s": 1.0,
    "sec": 1.0,
    "m": 60.0,
    "min": 60.0,
    "h": 3600.0,
    "d": 86400.0,
}


class UnitError(ValueError):
    """A value that is not in fio's size or time syntax."""


def parse_size(value: object) -> int:
    """Bytes from a fio size: ``4096``, ``4k``, ``1m``, ``10G``, ``4KiB``, ``512b``."""
    if isinstance(value, bool):
        raise UnitError(f"{value!r} is not a size")
    if isinstance(value, int):
        return value
    m = _SIZE_RE.match(str(value))
    if not m:
        raise UnitError(f"{value!r} is not a size (examples: 4k, 1m, 10g, 4096)")
    number, suffix, _ = m.groups()
    if suffix == "" and m.group(3).lower() not in ("", "b"):
        raise UnitError(f"{value!r} is not a size (examples: 4k, 1m, 10g, 4096)")
    mult = _SIZE_MULT[suffix.lower()]
    if len(number) <= 15:  # what a float holds exactly enough
        return int(float(number) * mult)
    if len(number) > _MAX_DIGITS:  # int() converts no more digits (float() gives inf)
        raise UnitError(f"{clipped(str(value))!r} is larger than any size")
    return int(Fraction(number) * mult)  # exact: float() of 400 nines is inf


def parse_time(value: object) -> float:
    """Seconds from a fio time: ``60``, ``60s``, ``1m`` (a minute), ``500ms``, ``2h``."""
    if isinstance(value, bool):
        raise UnitError(f"{value!r} is not a time")
    if isinstance(value, int | float):
        return float(value)
    m = _TIME_RE.match(str(value))
    if not m:
        raise UnitError(f"{value!r} is not a time (examples: 60, 60s, 1m, 500ms)")
    number, unit = m.groups()
    return float(number) * _TIME_MULT[unit.lower() if unit else None]


def fmt_bytes(n: float | None, digits: int = 1) -> str:
    """Binary units: 1536 -> '1.5 KiB'."""
    if n is None:
        return "-"
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if abs(n) < 1024 or unit == "PiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.{digits}f} {unit}"
        n /= 1024
    raise AssertionError("unreachable")


def fmt_size_short(n: int) -> str:
    """Compact fio-style size: 4096 -> '4k', 1048576 -> '1m', 512 -> '512'."""
    for unit, mult in (("t", 1 << 40), ("g", 1 << 30), ("m", 1 << 20), ("k", 1 << 10)):
        if n >= mult and n % mult == 0:
            return f"{n // mult}{unit}"
    return str(n)


def fmt_rate(bytes_per_s: float | None) -> str:
    """Bandwidth in MiB/s (the unit of fio's own summary lines)."""
    if bytes_per_s is None:
        return "-"
    return f"{bytes_per_s / (1 << 20):,.1f}"


def fmt_iops(iops: float | None) -> str:
    if iops is None:
        return "-"
    return f"{iops:,.0f}" if iops >= 100 else f"{iops:,.1f}"


def fmt_ns(ns: float | None) -> str:
    """Latency with a unit chosen for readability: 850 ns, 12.3 µs, 4.56 ms, 1.20 s."""
    if ns is None:
        return "-"
    if ns < 1_000:
        return f"{ns:.0f} ns"
    if ns < 1_000_000:
        return f"{ns / 1e3:.1f} µs"
    if ns < 1_000_000_000:
        return f"{ns / 1e6:.2f} ms"
    return f"{ns / 1e9:.2f} s"


def when(ts: float | None) -> str:
    """A moment as the reports show it: local time to the second ("-" for none)."""
    if ts is None:
        return "-"
    return dt.datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M:%S")


def fmt_duration(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    seconds = round(seconds)
    h, rem = divmod(seconds, 3600)
    m, s = divmod(rem, 60)
    if h:
        return f"{h}h{m:02d}m{s:02d}s"
    if m:
        return f"{m}m{s:02d}s"
    return f"{s}s"
