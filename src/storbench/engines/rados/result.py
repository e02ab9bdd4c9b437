"""What one rados bench process reported: its per-second table and its summary, each value
as printed and as storbench reads it (rejected values are kept apart, with why).
"""

from __future__ import annotations

from dataclasses import dataclass, field

# ---------------------------------------------------------------------------- results


@dataclass
class SeriesRow:
    """One row of the per-second table, in rados bench's units (MB = 2^20 bytes, seconds)."""

    sec: int
    time: float | None  # wall clock, seconds since the epoch (--show-time only)
    cur_ops: int  # operations in flight
    started: int  # operations started so far
    finished: int  # operations finished so far
    avg_mib_s: float | None  # MB/s since the start
    cur_mib_s: float | None  # MB/s since the previous row that saw operations finish
    last_lat_s: float | None  # latency of the last finished operation (None: '-')
    avg_lat_s: float | None  # mean latency of all operations finished so far


#: summary field -> whether it holds a whole number
SUMMARY_FIELDS: dict[str, bool] = {
    "total_time_s": False,
    "ops": True,
    "op_size": True,
    "object_size": True,
    "bandwidth_mib_s": False,
    "stddev_bandwidth_mib_s": False,
    "max_bandwidth_mib_s": False,
    "min_bandwidth_mib_s": False,
    "average_iops": True,
    "stddev_iops": False,
    "max_iops": True,
    "min_iops": True,
    "average_latency_s": False,
    "stddev_latency_s": False,
    "max_latency_s": False,
    "min_latency_s": False,
    # header (write only)
    "concurrent_ios": True,
    "seconds_to_run": True,
    "max_objects": True,
}

_TEXT_LABELS = {
    "Total time run": "total_time_s",
    "Total writes made": "ops",
    "Total reads made": "ops",
    "Write size": "op_size",
    "Read size": "op_size",
    "Object size": "object_size",
    "Bandwidth (MB/sec)": "bandwidth_mib_s",
    "Stddev Bandwidth": "stddev_bandwidth_mib_s",
    "Max bandwidth (MB/sec)": "max_bandwidth_mib_s",
    "Min bandwidth (MB/sec)": "min_bandwidth_mib_s",
    "Average IOPS": "average_iops",
    "Stddev IOPS": "stddev_iops",
    "Max IOPS": "max_iops",
    "Min IOPS": "min_iops",
    "Average Latency(s)": "average_latency_s",
    "Stddev Latency(s)": "stddev_latency_s",
    "Max latency(s)": "max_latency_s",
    "Min latency(s)": "min_latency_s",
}

_JSON_KEYS = {
    "total_time_run": "total_time_s",
    "total_writes_made": "ops",
    "total_reads_made": "ops",
    "write_size": "op_size",
    "read_size": "op_size",
    "object_size": "object_size",
    "bandwidth": "bandwidth_mib_s",
    "stddev_bandwidth": "stddev_bandwidth_mib_s",
    "max_bandwidth": "max_bandwidth_mib_s",
    "min_bandwidth": "min_bandwidth_mib_s",
    "average_iops": "average_iops",
    "stddev_iops": "stddev_iops",
    "max_iops": "max_iops",
    "min_iops": "min_iops",
    "average_latency": "average_latency_s",
    "stddev_latency": "stddev_latency_s",
    "max_latency": "max_latency_s",
    "max_latency:": "max_latency_s",  # the key's spelling in older releases
    "min_latency": "min_latency_s",
    "concurrent_ios": "concurrent_ios",
    "op_size": "op_size",
    "seconds_to_run": "seconds_to_run",
    "max_objects": "max_objects",
}


@dataclass
class RadosBenchResult:
    """What one ``rados bench`` process printed, in its own units (MB/s = MiB/s, seconds).

    A field is None when rados bench did not print it (``seq``/``rand`` have no bandwidth
    spread and no latency stddev) or when :func:`validate` rejected it.
    """

    mode: str  # write | seq | rand
    fmt: str  # plain | json
    hints: bool | None = None
    concurrent_ios: int | None = None
    op_size: int | None = None  # bytes per operation ("Write size" / "Read size")
    object_size: int | None = None
    seconds_to_run: int | None = None
    max_objects: int | None = None
    object_prefix: str | None = None
    total_time_s: float | None = None
    ops: int | None = None  # "Total writes made" / "Total reads made"
    bandwidth_mib_s: float | None = None
    stddev_bandwidth_mib_s: float | None = None
    max_bandwidth_mib_s: float | None = None
    min_bandwidth_mib_s: float | None = None
    average_iops: int | None = None  # rados bench's: int(ops / total time)
    stddev_iops: float | None = None
    max_iops: int | None = None
    min_iops: int | None = None
    average_latency_s: float | None = None
    stddev_latency_s: float | None = None
    max_latency_s: float | None = None
    min_latency_s: float | None = None
    series: list[SeriesRow] = field(default_factory=list)
    summary_time: float | None = None  # wall clock stamped on the summary (--show-time)
    cleanup_removed: int | None = None  # a write without --no-cleanup: "Removed N objects"
    cleanup_time_s: float | None = None
    printed: dict[str, str] = field(default_factory=dict)  # summary values as printed
    warnings: list[str] = field(default_factory=list)
    rejected: dict[str, str] = field(default_factory=dict)  # field -> value as printed
    derived: dict[str, str] = field(default_factory=dict)  # field -> how it was computed

    @property
    def direction(self) -> str:
        return "write" if self.mode == "write" else "read"

    @property
    def start_time(self) -> float | None:
        """Wall clock of the first table row (the start of the benchmark), when stamped."""
        return self.series[0].time if self.series and self.series[0].time is not None else None

    @property
    def end_time(self) -> float | None:
        """Wall clock of the end: the first row's stamp plus the total time run (the stamp on
        the summary itself comes up to 1 s late)."""
        if self.start_time is None or self.total_time_s is None:
            return None
        return self.start_time + self.total_time_s


def _reject(res: RadosBenchResult, name: str, raw: str, why: str) -> None:
    setattr(res, name, None)
    res.rejected[name] = raw
    res.warnings.append(f"rejected {name} = {raw!r}: {why}")
