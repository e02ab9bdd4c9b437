"""fio's JSON across its versions: which fields each version writes, and in which units.

Read from fio's own history (stat.c's add_ddir_status_json and the latency objects it
writes, tag by tag) and checked on real outputs of each version (tests/data/fio-versions):

- ``io_bytes``: bytes since fio 2.21, which also added ``io_kbytes``; before, ``io_bytes``
  held KiB (``io_bytes >> 10``). So ``io_bytes`` is bytes exactly when ``io_kbytes`` is
  there too.
- ``bw``: KiB/s in every version; ``bw_bytes`` (bytes/s) since 3.x.
- ``total_ios``: since 2.2. fio 2.0 and 2.1 print no I/O count; their ``iops`` is
  ``1000 * total_io_u / runtime_ms`` cut to a whole number. The count is then the bytes
  over the block size when the job has one fixed ``bs`` that divides them, else the
  nearest whole number to ``iops * runtime``, which the import says it estimated.
- latency: ``slat``/``clat``/``lat`` in microseconds before 3.0, ``slat_ns``/``clat_ns``/
  ``lat_ns`` in nanoseconds since; their percentiles in the same unit. The sample count
  ``N`` exists since 3.18; before, an object with samples is one with a non-zero ``max``
  (fio writes zeros when a statistic has none), and its count is the direction's I/O count
  (fio takes one completion and one total latency per I/O; a submission latency per I/O
  too where the engine has one).
- json+ histogram ``bins``: from 2.12, first keyed by bucket *index* with
  ``FIO_IO_U_PLAT_BITS``/``FIO_IO_U_PLAT_VAL``/``FIO_IO_U_PLAT_NR`` beside them, later by
  the bucket's value (fio's plat_idx_to_val); in µs before 3.0, ns since.
- ``unified_rw_reporting``: one direction named ``mixed`` instead of read/write/trim.
"""

from __future__ import annotations

from typing import Any

from storbench.model.units import UnitError, parse_size

#: the latency objects of a direction: (name since 3.0 in ns, name before 3.0 in µs)
LATENCIES = {"slat": ("slat_ns", "slat"), "clat": ("clat_ns", "clat"), "lat": ("lat_ns", "lat")}


def latency_object(d: dict[str, Any], kind: str) -> tuple[dict[str, Any] | None, float]:
    """The direction's ``kind`` (slat, clat, lat) latency object and the factor to ns."""
    ns, us = LATENCIES[kind]
    if isinstance(d.get(ns), dict):
        return d[ns], 1.0
    if isinstance(d.get(us), dict):
        return d[us], 1000.0
    return None, 1.0


def io_bytes(d: dict[str, Any]) -> int:
    if "io_kbytes" in d:
        return int(d.get("io_bytes", int(d["io_kbytes"]) * 1024))
    return int(d.get("io_bytes", 0)) * 1024  # fio < 2.21: KiB under that name


def bw_bytes(d: dict[str, Any]) -> float:
    return float(d["bw_bytes"]) if "bw_bytes" in d else float(d.get("bw", 0)) * 1024


def total_ios(d: dict[str, Any], bs: Any = None) -> tuple[int, bool]:
    """(I/O count, whether it is estimated): fio's own, else derived (fio < 2.2)."""
    if "total_ios" in d:
        return int(d["total_ios"]), False
    nbytes = io_bytes(d)
    size = _fixed_size(bs)
    if size and nbytes % size == 0:
        return nbytes // size, False
    runtime_ms = float(d.get("runtime", 0))
    return round(float(d.get("iops", 0)) * runtime_ms / 1000.0), nbytes > 0


def estimated_counts(doc: dict[str, Any]) -> bool:
    """Whether some I/O count of the document had to be estimated from ``iops`` (fio < 2.2
    with no fixed block size that divides the bytes)."""
    options = doc.get("global options")
    default = options.get("bs") if isinstance(options, dict) else None
    for job in doc.get("jobs") or []:
        own = job.get("job options")
        bs = own.get("bs", default) if isinstance(own, dict) else default
        for name in ("read", "write", "trim", "mixed"):
            d = job.get(name)
            if isinstance(d, dict) and total_ios(d, bs)[1]:
                return True
    return False


def _fixed_size(bs: Any) -> int | None:
    """A job's one block size in bytes (``4k``), or None (several, a range, none)."""
    if bs is None or any(c in str(bs) for c in ",-:/"):
        return None
    try:
        return parse_size(str(bs)) or None
    except UnitError:
        return None


def samples(obj: dict[str, Any], ios: int) -> int:
    """The latency object's sample count: ``N`` (fio >= 3.18), else the I/O count when it
    has samples at all (a non-zero max), else 0."""
    if "N" in obj:
        return int(obj["N"])
    return ios if float(obj.get("max", 0) or 0) > 0 else 0


#: The largest whole number every smaller one of which a float holds exactly (2^53).
_EXACT = 2**53


def bins_ns(bins: dict[str, Any] | None, scale: float) -> dict[int, int] | None:
    """A json+ histogram as {bucket value in ns: count}, whatever the version's layout."""
    if not bins:
        return None
    if "FIO_IO_U_PLAT_BITS" in bins:  # keyed by bucket index (fio 2.12 to 2.1x)
        bits = int(bins["FIO_IO_U_PLAT_BITS"])
        val = int(bins.get("FIO_IO_U_PLAT_VAL", 1 << bits))
        out: dict[int, int] = {}
        for k, v in bins.items():
            if k.isdigit() and int(v):
                value = round(_plat_idx_to_val(int(k), bits, val) * scale)
                out[value] = out.get(value, 0) + int(v)
        return out or None
    if scale == 1.0:  # ns (fio >= 3.0): whole numbers as they are, while a float holds them
        exact = {int(k): int(v) for k, v in bins.items()}
        if max(exact, default=0) <= _EXACT and min(exact, default=0) >= -_EXACT:
            return exact or None
    return {round(int(k) * scale): int(v) for k, v in bins.items()} or None


def _plat_idx_to_val(idx: int, bits: int, val: int) -> int:
    """fio's plat_idx_to_val(): the value a histogram bucket stands for (the mean of its
    range), in the histogram's unit."""
    if idx < (val << 1):
        return idx
    error_bits = (idx >> bits) - 1
    base = 1 << (error_bits + bits)
    k = idx % val
    return int(base + (k + 0.5) * (1 << error_bits))
