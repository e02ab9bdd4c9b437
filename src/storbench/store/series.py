"""The time series of a results database: each point's intervals, written while the point
runs (a crash keeps what was measured), one row per interval, host and direction; and
:class:`RunSeries`, a run's intervals and host samples as analyses read them.

A row costs about 52 bytes on disk (integers where they fit: times in ms, latencies in
whole ns; ``bench/series`` measures it): a 6-hour point at 1 s, one direction, is 21,600
rows, about 1.1 MB; with 4 hosts and their aggregate 5.6 MB.
"""

from __future__ import annotations

from storbench.hosts.load import HostSample
from storbench.model.series import Interval
from storbench.store.base import Part, _locked, storable
from storbench.store.dialect import upsert
from storbench.store.hostload import HostSamples

_COLUMNS = "host, direction, seq, t_ms, dur_ms, ramp, ios, bytes, lat_mean, p50, p99, p999"
#: an interval given again (same key) replaces the one stored
_UPSERT = upsert(
    "intervals",
    ("run_id", "point_idx", "host", "direction", "seq"),
    ["run_id", "point_idx", *_COLUMNS.split(", ")],
)


def _ns(v: float | None) -> float | int | None:
    """A latency as stored: whole ns where it is one (SQLite stores those as integers)."""
    return None if v is None else (int(v) if float(v).is_integer() else v)


class Series(Part):
    """Each point's time series (``intervals``: I/Os, bytes and latencies of each interval,
    of each host and direction); ``store.series`` of a
    :class:`~storbench.store.db.Store`."""

    @_locked
    def add(self, run_id: int, point_idx: int, rows: list[Interval]) -> None:
        """Store intervals of a point and commit at once (safe from any thread)."""
        with self.tx():
            self.db.executemany(
                _UPSERT,
                [
                    (
                        run_id,
                        point_idx,
                        r.host,
                        r.direction,
                        r.seq,
                        r.t_ms,
                        r.dur_ms,
                        int(r.ramp),
                        r.ios,
                        r.bytes,
                        _ns(r.lat_mean_ns),
                        _ns(r.p50_ns),
                        _ns(r.p99_ns),
                        _ns(r.p999_ns),
                    )
                    for r in rows
                ],
            )

    @_locked
    def clear(self, run_id: int, point_idx: int) -> None:
        """Forget a point's intervals (it runs again: a resume after an interruption)."""
        with self.tx():
            self.db.execute(
                "DELETE FROM intervals WHERE run_id=? AND point_idx=?", (run_id, point_idx)
            )

    @_locked
    def of_point(self, run_id: int, point_idx: int, host: str | None = "") -> list[Interval]:
        """A point's intervals in time order (``host`` '' : the point's own; None: all)."""
        if not storable(run_id, point_idx):  # beyond any key stored: none
            return []
        sql = f"SELECT {_COLUMNS} FROM intervals WHERE run_id=? AND point_idx=?"
        args: tuple[object, ...] = (run_id, point_idx)
        if host is not None:
            sql += " AND host=?"
            args += (host,)
        return [
            Interval(
                seq=r["seq"],
                t_ms=r["t_ms"],
                dur_ms=r["dur_ms"],
                direction=r["direction"],
                ios=r["ios"],
                bytes=r["bytes"],
                lat_mean_ns=r["lat_mean"],
                p50_ns=r["p50"],
                p99_ns=r["p99"],
                p999_ns=r["p999"],
                ramp=bool(r["ramp"]),
                host=r["host"],
            )
            for r in self.db.execute(sql + " ORDER BY host, t_ms, direction", args)
        ]

    @_locked
    def counts(self, run_id: int) -> dict[int, int]:
        """How many intervals each point of a run has (points without any left out; a
        point's preconditioning, kept under a negative index, too:
        storbench.execute.precondition)."""
        return {
            r[0]: r[1]
            for r in self.db.execute(
                "SELECT point_idx, COUNT(*) FROM intervals WHERE run_id=? AND point_idx >= 0"
                " GROUP BY point_idx",
                (run_id,),
            )
        }


class RunSeries:
    """One run's intervals and host samples by point index (what storbench.analysis.soak
    reads: its ``SeriesSource``)."""

    def __init__(self, series: Series, host_samples: HostSamples, run_id: int) -> None:
        self.series, self.samples, self.run_id = series, host_samples, run_id

    def intervals(self, point_idx: int) -> list[Interval]:
        return self.series.of_point(self.run_id, point_idx)

    def every_host(self, point_idx: int) -> list[Interval]:
        """The point's intervals of every host (the aggregate's and each host's own)."""
        return self.series.of_point(self.run_id, point_idx, host=None)

    def host_samples(self, point_idx: int) -> list[HostSample]:
        return self.samples.of_point(self.run_id, point_idx)
