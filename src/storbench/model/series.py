"""A point's time series: what each interval of its load did, per direction (and per host).

Every engine that can report while it runs gives its intervals as :class:`Interval` rows:
the I/Os and bytes completed in the interval, its length, and the latency of the I/Os that
completed in it -- mean and percentiles computed from that interval's own histogram (fio:
the difference of two consecutive cumulative json+ histograms), never averaged. Units are
explicit: times in ms, latencies in ns, rates derived (I/Os per s, bytes per s).
"""

from __future__ import annotations

from dataclasses import dataclass

#: The interval a plan gets when it names none (``interval:``), and the shortest it may ask.
DEFAULT_INTERVAL_MS = 1000
MIN_INTERVAL_MS = 500
#: The longest interval a plan may ask (an hour: a status report per hour says little).
MAX_INTERVAL_MS = 3_600_000


@dataclass(frozen=True)
class Interval:
    """One direction's figures over one interval of a point's load."""

    seq: int  # 0, 1, ... in time order, per host and direction
    t_ms: int  # the end of the interval, ms after the engine started
    dur_ms: int  # its length, ms (the engine's own clock where it has one)
    direction: str  # read | write | trim
    ios: int  # I/Os completed in the interval
    bytes: int  # bytes moved in the interval
    lat_mean_ns: float | None = None  # of the I/Os completed in it (fio: clat)
    p50_ns: float | None = None
    p99_ns: float | None = None
    p999_ns: float | None = None
    ramp: bool = False  # before the measurement began (fio's ramp_time)
    host: str = ""  # '' for the point itself (the aggregate of its hosts)

    @property
    def iops(self) -> float:
        return self.ios * 1000 / self.dur_ms if self.dur_ms > 0 else 0.0

    @property
    def bw_bytes(self) -> float:
        """Bytes per second over the interval."""
        return self.bytes * 1000 / self.dur_ms if self.dur_ms > 0 else 0.0


def measured(intervals: list[Interval]) -> list[Interval]:
    """The intervals of the measurement itself (ramp left out)."""
    return [i for i in intervals if not i.ramp]
