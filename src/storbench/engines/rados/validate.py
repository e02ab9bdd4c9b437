"""Never trust a value rados bench prints that cannot be right: checks, values recomputed from
the per-second table, and the measurement storbench records.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from storbench.engines.rados.command import _INT_RE, NS_PER_S, PERCENTILES_NOTE, MiB, rados_version
from storbench.engines.rados.result import SUMMARY_FIELDS, RadosBenchResult, SeriesRow, _reject
from storbench.model.metrics import DirectionResult, LatencyStats, Measurement

# ---------------------------------------------------------------------------- validation


def per_second_samples(series: Sequence[SeriesRow], op_size: int) -> tuple[list[int], list[float]]:
    """rados bench's per-second IOPS and bandwidth (MB/s) samples, recomputed from the table.

    As its status printer does (obj_bencher.cc): at every row after the first, the
    operations finished since the last row at which the count changed, divided by the
    seconds since then; IOPS is truncated to an int. A second in which nothing finished
    is a sample of 0. Min, max and stddev (n - 1) of these are rados bench's own figures.
    """
    iops: list[int] = []
    bw: list[float] = []
    prev_finished = 0
    cycles = 0
    for i, r in enumerate(series):
        if i > 0 and cycles:
            delta = r.finished - prev_finished
            iops.append(int(delta / cycles))
            bw.append(delta * op_size / MiB / cycles)
        if r.finished != prev_finished:
            prev_finished = r.finished
            cycles = 0
        cycles += 1
    return iops, bw


def _stddev(values: Sequence[float]) -> float:
    n = len(values)
    if n < 2:
        return 0.0
    mean = sum(values) / n
    return math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))


def _close(a: float, b: float, rel: float = 2e-5, abs_: float = 1e-6) -> bool:
    return abs(a - b) <= max(rel * max(abs(a), abs(b)), abs_)


def validate(res: RadosBenchResult) -> RadosBenchResult:
    """Reject values that cannot be right; recompute per-second statistics where possible.

    See the module docstring for the rules. Works in place and returns ``res``.
    """
    # the write benchmark's JSON stddev_iops is printf("%d", double): meaningless
    raw = res.printed.get("stddev_iops")
    if (
        res.fmt == "json"
        and res.mode == "write"
        and raw is not None
        and _INT_RE.match(raw)
        and "stddev_iops" not in res.rejected
    ):
        _reject(
            res,
            "stddev_iops",
            raw,
            "rados bench -f json prints the write stddev_iops with %d from a double "
            "(undefined: garbage)",
        )
    for prefix, unit in (
        ("bandwidth_mib_s", "MB/s"),
        ("iops", "IOPS"),
        ("latency_s", "s"),
    ):
        lo_f, hi_f, sd_f = f"min_{prefix}", f"max_{prefix}", f"stddev_{prefix}"
        lo, hi, sd = getattr(res, lo_f), getattr(res, hi_f), getattr(res, sd_f)
        if lo is not None and hi is not None and lo > hi:
            _reject(res, lo_f, res.printed[lo_f], f"min {lo} {unit} > max {hi} {unit}")
            _reject(res, hi_f, res.printed[hi_f], f"max {hi} {unit} < min {lo} {unit}")
            lo = hi = None
        if sd is not None and hi is not None:
            spread = hi - (lo or 0.0)
            if sd > spread and not _close(sd, spread):
                _reject(
                    res,
                    sd_f,
                    res.printed[sd_f],
                    f"a stddev larger than max - min ({spread:g} {unit}) is impossible",
                )
    avg, lo, hi = res.average_latency_s, res.min_latency_s, res.max_latency_s
    if (
        avg is not None
        and lo is not None
        and hi is not None
        and not (lo <= avg <= hi or _close(avg, lo) or _close(avg, hi))
    ):
        _reject(
            res,
            "average_latency_s",
            res.printed["average_latency_s"],
            f"outside [min, max] = [{lo:g}, {hi:g}] s",
        )
    ops, size, secs = res.ops, res.op_size, res.total_time_s
    if ops is not None and size is not None and secs:
        expect_bw = ops * size / secs / MiB
        bw = res.bandwidth_mib_s
        if bw is not None and not _close(bw, expect_bw, rel=0.01, abs_=0.01):
            _reject(
                res,
                "bandwidth_mib_s",
                res.printed["bandwidth_mib_s"],
                f"ops x size / time = {expect_bw:.6g} MB/s",
            )
        if res.bandwidth_mib_s is None:
            res.bandwidth_mib_s = expect_bw
            res.derived["bandwidth_mib_s"] = "ops x op size / total time"
        avg_iops = res.average_iops
        if avg_iops is not None and abs(avg_iops - int(ops / secs)) > 1:
            _reject(
                res,
                "average_iops",
                res.printed["average_iops"],
                f"ops / time = {ops / secs:.6g}",
            )
    _check_series(res)
    _derive_per_second(res)
    return res


def _check_series(res: RadosBenchResult) -> None:
    prev: SeriesRow | None = None
    for r in res.series:
        if prev is not None:
            if r.sec <= prev.sec:
                res.warnings.append(f"table row {r.sec} after row {prev.sec}")
            if r.finished < prev.finished or r.started < prev.started:
                res.warnings.append(f"table row {r.sec}: cumulative counts went down")
        if r.finished > r.started:
            res.warnings.append(f"table row {r.sec}: more finished than started")
        prev = r
    if res.series and res.ops is not None and res.series[-1].finished > res.ops:
        res.warnings.append("the table counts more operations than the summary")


def _derive_per_second(res: RadosBenchResult) -> None:
    """Per-second IOPS/bandwidth min, max, stddev from the table: fill what is missing or
    rejected (marked in ``derived``), and warn where printed values disagree."""
    if res.op_size is None or not res.series:
        return
    iops, bw = per_second_samples(res.series, res.op_size)
    if not iops:
        res.warnings.append(
            "no per-second sample (the run ended within its first second): rados bench's "
            "min/max IOPS are then ops / elapsed time, not per-second values"
        )
        return
    how = "from the per-second table, as rados bench computes it"
    computed: dict[str, float] = {
        "stddev_iops": _stddev(iops),
        "max_iops": max(iops),
        "min_iops": min(iops),
        "stddev_bandwidth_mib_s": _stddev(bw),
        "max_bandwidth_mib_s": max(bw),
        "min_bandwidth_mib_s": min(bw),
    }
    for name, value in computed.items():
        have = getattr(res, name)
        if have is None:
            if SUMMARY_FIELDS[name]:
                value = int(value)
            setattr(res, name, value)
            res.derived[name] = how + (
                "" if name in res.rejected else " (rados bench does not print it for reads)"
            )
        elif not _close(float(have), value, rel=1e-4, abs_=1e-3):
            res.warnings.append(
                f"{name} printed as {res.printed.get(name)!r}, "
                f"the per-second table gives {value:.6g}"
            )


# ---------------------------------------------------------------------------- measurement

SERIES_COLUMNS = (
    "sec",
    "time",
    "cur_ops",
    "started",
    "finished",
    "avg_bw",
    "cur_bw",
    "last_lat",
    "avg_lat",
)
SERIES_UNITS = {
    "sec": "s since the start (rados bench's row number)",
    "time": "s since the epoch, wall clock of the row (--show-time); null without it",
    "cur_ops": "operations in flight",
    "started": "operations started since the start (cumulative)",
    "finished": "operations finished since the start (cumulative)",
    "avg_bw": "bytes/s since the start",
    "cur_bw": "bytes/s since the previous row at which operations finished",
    "last_lat": "ns, latency of the last operation finished; null when none finished",
    "avg_lat": "ns, mean latency of all operations finished so far",
}


def _scale(v: float | None, k: float) -> float | None:
    return None if v is None else v * k


def series_table(res: RadosBenchResult) -> dict[str, Any]:
    """The per-second table in base units, for ``Measurement.extra["series"]``."""
    return {
        "columns": list(SERIES_COLUMNS),
        "units": dict(SERIES_UNITS),
        "rows": [
            [
                r.sec,
                r.time,
                r.cur_ops,
                r.started,
                r.finished,
                _scale(r.avg_mib_s, MiB),
                _scale(r.cur_mib_s, MiB),
                _scale(r.last_lat_s, NS_PER_S),
                _scale(r.avg_lat_s, NS_PER_S),
            ]
            for r in res.series
        ],
    }


def to_measurement(res: RadosBenchResult) -> Measurement:
    """The storbench measurement of one rados bench run, in base units.

    ``write`` fills the ``write`` direction, ``seq``/``rand`` the ``read`` direction:
    ``bw_bytes`` is rados bench's bandwidth x 2^20, ``iops`` ops / total time (rados bench's
    truncated "Average IOPS" is in ``extra["iops"]["average_printed"]``), latency (submission
    to completion) in ``lat``, in ns, without percentiles (see :data:`PERCENTILES_NOTE`).
    ``extra`` holds the IOPS and bandwidth spread, the per-second series with its units,
    and the validator's warnings, rejected and derived values.
    """
    ops = res.ops or 0
    secs = res.total_time_s or 0.0
    size = res.op_size or 0
    io_bytes = ops * size
    bw = res.bandwidth_mib_s * MiB if res.bandwidth_mib_s is not None else 0.0
    lat = None
    if ops:
        lat = LatencyStats(
            samples=ops,
            mean=_scale(res.average_latency_s, NS_PER_S),
            stddev=_scale(res.stddev_latency_s, NS_PER_S),
            min=_scale(res.min_latency_s, NS_PER_S),
            max=_scale(res.max_latency_s, NS_PER_S),
        )
    d = DirectionResult(
        iops=ops / secs if secs else 0.0,
        bw_bytes=bw,
        io_bytes=io_bytes,
        total_ios=ops,
        runtime_s=secs,
        lat=lat,
    )
    meas = Measurement(jobs=1, engine_version=rados_version())
    if ops:
        meas.directions[res.direction] = d
    else:
        meas.status = "failed"
        meas.error = "rados bench finished no operation"
    meas.extra = {
        "engine": "rados bench",
        "mode": res.mode,
        "format": res.fmt,
        "object_size": res.object_size,
        "op_size": res.op_size,
        "threads": res.concurrent_ios,
        "object_prefix": res.object_prefix,
        "iops": {
            "unit": "operations/s",
            "average": d.iops,
            "average_printed": res.average_iops,
            "stddev": res.stddev_iops,
            "min": res.min_iops,
            "max": res.max_iops,
        },
        "bandwidth": {
            "unit": "bytes/s",
            "average": bw,
            "stddev": _scale(res.stddev_bandwidth_mib_s, MiB),
            "min": _scale(res.min_bandwidth_mib_s, MiB),
            "max": _scale(res.max_bandwidth_mib_s, MiB),
        },
        "series": series_table(res),
        "percentiles": PERCENTILES_NOTE,
        "warnings": list(res.warnings),
        "rejected": dict(res.rejected),
        "derived": dict(res.derived),
    }
    return meas
