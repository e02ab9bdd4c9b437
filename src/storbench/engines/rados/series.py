"""A rados bench point's time series, from the per-second table rados bench prints.

Each row of the table holds counters since the start (operations finished, the mean latency
of all of them); an interval is the difference of two consecutive rows: the operations that
finished in it, their bytes (operations x the operation size), and their mean latency from
the difference of ``avg lat`` x ``finished`` (as :mod:`.clients` reads the window). rados
bench gives no histogram: the intervals have no percentiles (None, never 0). The table's
last row comes before the end of the run, so the intervals add up to its ``finished``
count, not to the summary's ``Total writes made`` (the last fraction of a second is in the
summary only). Times are rados bench's own seconds since it started its load.
"""

from __future__ import annotations

from storbench.engines.rados.result import RadosBenchResult
from storbench.model.series import Interval


def client_intervals(result: RadosBenchResult, host: str = "") -> list[Interval]:
    """One rados bench process's intervals (``host``: its name when a point had several)."""
    rows = sorted({r.sec: r for r in result.series}.values(), key=lambda r: r.sec)
    out: list[Interval] = []
    prev_sec, prev_finished, prev_lat = 0, 0, 0.0
    for r in rows:
        dur_ms = (r.sec - prev_sec) * 1000
        ios = r.finished - prev_finished
        lat_sum = r.avg_lat_s * r.finished if r.avg_lat_s is not None else None
        mean = None
        if lat_sum is not None and prev_lat is not None and ios > 0:
            mean = round((lat_sum - prev_lat) / ios * 1e9, 1)
        if dur_ms > 0:
            out.append(
                Interval(
                    seq=len(out),
                    t_ms=r.sec * 1000,
                    dur_ms=dur_ms,
                    direction=result.direction,
                    ios=ios,
                    bytes=ios * (result.op_size or 0),
                    lat_mean_ns=mean,
                    host=host,
                )
            )
        prev_sec, prev_finished = r.sec, r.finished
        prev_lat = lat_sum if lat_sum is not None else (0.0 if r.finished == 0 else None)
    return out
