"""Several rados bench clients at once: their common wall-clock window, per-second sums and
the whole run's figures (bandwidth and IOPS over the window in which all of them ran).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from storbench.engines.rados.command import NS_PER_S, PERCENTILES_NOTE, MiB, rados_version
from storbench.engines.rados.result import RadosBenchResult
from storbench.engines.rados.validate import SERIES_COLUMNS, _scale, _stddev, to_measurement
from storbench.model.metrics import DirectionResult, LatencyStats, Measurement

# ---------------------------------------------------------------------------- several clients


@dataclass
class ClientWindow:
    """One client's operations in the common window ``[start, end]``: its cumulative
    counters at the window's edges, interpolated between the table rows on either side."""

    name: str
    start: float  # wall clock, s
    end: float
    ops: float  # operations finished in the window (fractional: interpolated)
    bytes: float
    lat_sum_s: float | None  # sum of the latencies of those operations (from avg lat)

    @property
    def seconds(self) -> float:
        return self.end - self.start

    @property
    def bw_bytes(self) -> float:
        return self.bytes / self.seconds

    @property
    def iops(self) -> float:
        return self.ops / self.seconds

    @property
    def lat_mean_s(self) -> float | None:
        return self.lat_sum_s / self.ops if self.lat_sum_s is not None and self.ops else None


#: (wall clock s, operations finished so far, sum of their latencies in s or None)
_Point = tuple[float, float, float | None]


def timeline(res: RadosBenchResult, start_time: float | None = None) -> list[_Point]:
    """A client's cumulative counters on the wall clock: at every table row and at the end
    (first row + total time run; the summary's own stamp comes up to 1 s late).

    Row times are rados bench's ``--show-time`` stamps; without them (JSON, plain text
    without --show-time) ``start_time`` + the row's second (approximate: the process's
    start-up, ~40 ms here, is not known). The latency sum at a row is avg lat x finished.
    """
    stamped = res.start_time is not None
    if not stamped and start_time is None:
        raise ValueError(
            "no wall clock for this client: run it with --show-time (or give its start time)"
        )
    pts: list[_Point] = []
    for r in res.series:
        if stamped:
            if r.time is None:
                continue
            t = r.time
        else:
            t = (start_time or 0.0) + r.sec
        lat = r.avg_lat_s * r.finished if r.avg_lat_s is not None else None
        pts.append((t, float(r.finished), 0.0 if r.finished == 0 else lat))
    if res.total_time_s is not None and res.ops is not None and pts:
        end = pts[0][0] + res.total_time_s
        lat_end = None if res.average_latency_s is None else res.average_latency_s * res.ops
        if end > pts[-1][0]:
            pts.append((end, float(res.ops), lat_end))
    return pts


def _at(pts: Sequence[_Point], t: float) -> tuple[float, float | None]:
    """The cumulative (operations, latency sum) at time ``t``, linear between two points."""
    for (t_a, f_a, s_a), (t_b, f_b, s_b) in itertools.pairwise(pts):
        if t_a <= t <= t_b:
            k = (t - t_a) / (t_b - t_a) if t_b > t_a else 1.0
            lat = None if s_a is None or s_b is None else s_a + (s_b - s_a) * k
            return f_a + (f_b - f_a) * k, lat
    raise ValueError(f"time {t} outside the client's run")


#: below this overlap (s) the clients did not really run together
MIN_WINDOW_S = 0.5


def common_window(
    results: Sequence[RadosBenchResult],
    names: Sequence[str],
    start_times: Sequence[float | None] | None = None,
) -> tuple[float, float, list[ClientWindow]]:
    """The time all clients were running, and each client's operations in it.

    The window runs from the latest start to the earliest end (:func:`timeline`). Each
    client's operations in it are its cumulative ``finished`` count at the window's end
    minus that at its start; at an edge that falls between two table rows the count is
    interpolated linearly (operations assumed to finish at an even rate within that
    second). Same for the latency sum. Raises ValueError when the overlap is shorter than
    :data:`MIN_WINDOW_S` or a client has no wall clock.
    """
    starts = list(start_times) if start_times is not None else [None] * len(results)
    lines = [timeline(r, t) for r, t in zip(results, starts, strict=True)]
    if any(len(pts) < 2 for pts in lines):
        raise ValueError("a client has no per-second row: nothing to align")
    w0 = max(pts[0][0] for pts in lines)
    w1 = min(pts[-1][0] for pts in lines)
    if w1 - w0 < MIN_WINDOW_S:
        raise ValueError(
            f"the clients ran together for {max(w1 - w0, 0):.2f} s only (< {MIN_WINDOW_S} s)"
        )
    out = []
    for res, name, pts in zip(results, names, lines, strict=True):
        f0, s0 = _at(pts, w0)
        f1, s1 = _at(pts, w1)
        ops = f1 - f0
        out.append(
            ClientWindow(
                name=name,
                start=w0,
                end=w1,
                ops=ops,
                bytes=ops * (res.op_size or 0),
                lat_sum_s=None if s0 is None or s1 is None else s1 - s0,
            )
        )
    return w0, w1, out


#: the aggregate series' columns mean what they mean in :func:`series_table`, summed over
#: the clients and counted from the start of the common window
AGGREGATE_SERIES_UNITS = {
    "sec": "whole seconds since the start of the common window (all clients running)",
    "time": "s since the epoch, wall clock of the second's end",
    "cur_ops": "operations in flight, all clients (interpolated)",
    "started": "operations started since the window's start, all clients (interpolated)",
    "finished": "operations finished since the window's start, all clients (interpolated)",
    "avg_bw": "bytes/s since the window's start, all clients",
    "cur_bw": "bytes/s in this second (the one ending at time), all clients",
    "last_lat": "null: no single last operation across clients",
    "avg_lat": "ns, mean latency of the operations finished since the window's start",
}


@dataclass
class WindowSecond:
    """The clients' cumulative counters, summed, at one whole second of the common window
    (``sec`` seconds after its start): counted from the window's start, each client's
    counters interpolated linearly between its table rows (as at the window's edges)."""

    sec: int
    time: float  # wall clock, s
    started: float  # operations started since the window's start
    finished: float  # operations finished since the window's start
    in_flight: float  # operations in flight at ``time``
    bytes: float  # bytes of the finished operations
    lat_sum_s: float | None  # sum of their latencies (None: a client has no avg lat)


def _started_line(res: RadosBenchResult, start_time: float | None) -> list[tuple[float, float]]:
    """A client's cumulative ``started`` count on the wall clock, at the instants of
    :func:`timeline` (every started operation has finished at the end)."""
    stamped = res.start_time is not None
    pts: list[tuple[float, float]] = []
    for r in res.series:
        t = r.time if stamped else (start_time or 0.0) + r.sec
        if t is not None:
            pts.append((t, float(r.started)))
    if res.total_time_s is not None and res.ops is not None and pts:
        end = pts[0][0] + res.total_time_s
        if end > pts[-1][0]:
            pts.append((end, float(res.ops)))
    return pts


def _lerp(pts: Sequence[tuple[float, float]], t: float) -> float:
    for (t_a, v_a), (t_b, v_b) in itertools.pairwise(pts):
        if t_a <= t <= t_b:
            return v_a + (v_b - v_a) * ((t - t_a) / (t_b - t_a) if t_b > t_a else 1.0)
    raise ValueError(f"time {t} outside the client's run")


def window_seconds(
    results: Sequence[RadosBenchResult],
    start_times: Sequence[float | None] | None = None,
) -> list[WindowSecond]:
    """The clients' summed counters at the start of the common window (:func:`common_window`)
    and at every whole second after it that lies in the window: ``floor(length)`` seconds,
    the fraction of a second at its end is left out (rados bench's own per-second values
    leave out the part of the last second after its last row too)."""
    names = [f"client{i + 1}" for i in range(len(results))]
    w0, w1, _ = common_window(results, names, start_times)
    starts = list(start_times) if start_times is not None else [None] * len(results)
    lines = [
        (timeline(r, t), _started_line(r, t), r.op_size or 0)
        for r, t in zip(results, starts, strict=True)
    ]
    origin = [(_at(fin, w0), _lerp(st, w0)) for fin, st, _ in lines]
    out = []
    for k in range(math.floor(w1 - w0 + 1e-9) + 1):
        t = min(w0 + k, w1)
        started = finished = in_flight = nbytes = 0.0
        lat_sum: float | None = 0.0
        for (fin, st, size), ((f0, s0), st0) in zip(lines, origin, strict=True):
            f, s = _at(fin, t)
            started_now = _lerp(st, t)
            finished += f - f0
            started += started_now - st0
            in_flight += max(started_now - f, 0.0)
            nbytes += (f - f0) * size
            lat_sum = None if lat_sum is None or s is None or s0 is None else lat_sum + s - s0
        out.append(
            WindowSecond(
                sec=k,
                time=t,
                started=started,
                finished=finished,
                in_flight=in_flight,
                bytes=nbytes,
                lat_sum_s=lat_sum,
            )
        )
    return out


def window_samples(seconds: Sequence[WindowSecond]) -> tuple[list[float], list[float]]:
    """Per-second IOPS (operations/s) and bandwidth (bytes/s) of the clients together: the
    operations (bytes) all clients finished in each whole second of the common window.
    Not truncated to integers (the counts are interpolated, hence fractional)."""
    iops = [b.finished - a.finished for a, b in itertools.pairwise(seconds)]
    bw = [b.bytes - a.bytes for a, b in itertools.pairwise(seconds)]
    return iops, bw


def spread_of(samples: Sequence[float]) -> dict[str, float | None]:
    """rados bench's statistics of per-second values: stddev (n - 1; 0 for one value, as
    obj_bencher.cc's vec_stddev), min, max; all None without a value."""
    if not samples:
        return {"stddev": None, "min": None, "max": None}
    return {"stddev": _stddev(samples), "min": min(samples), "max": max(samples)}


def window_series_table(seconds: Sequence[WindowSecond]) -> dict[str, Any]:
    """The clients' per-second table over the common window, in the shape of
    :func:`series_table` (columns, units, rows), counted from the window's start."""
    rows = []
    prev: WindowSecond | None = None
    for s in seconds:
        cur_bw = (s.bytes - prev.bytes) / (s.time - prev.time) if prev is not None else 0.0
        rows.append(
            [
                s.sec,
                s.time,
                s.in_flight,
                s.started,
                s.finished,
                s.bytes / s.sec if s.sec else 0.0,
                cur_bw,
                None,
                (
                    s.lat_sum_s / s.finished * NS_PER_S
                    if s.lat_sum_s is not None and s.finished
                    else None
                ),
            ]
        )
        prev = s
    return {
        "columns": list(SERIES_COLUMNS),
        "units": dict(AGGREGATE_SERIES_UNITS),
        "rows": rows,
    }


def pooled_stddev(parts: Sequence[tuple[int, float, float]]) -> float | None:
    """The sample stddev (n - 1) of the union of groups given as ``(n, mean, stddev)``, each
    stddev a sample one (as rados bench's latency stddev: obj_bencher.cc's vec_stddev over
    every operation's latency). Exact: the union's sum of squared deviations is each group's
    ``(n - 1) stddev²`` plus ``n (mean - union mean)²``. None for fewer than 2 values."""
    parts = [p for p in parts if p[0] > 0]
    n = sum(p[0] for p in parts)
    if n < 2:
        return None
    mean = sum(k * m for k, m, _ in parts) / n
    ss = sum((k - 1) * sd * sd + k * (m - mean) ** 2 for k, m, sd in parts)
    return math.sqrt(ss / (n - 1))


def _same(values: Iterable[int | None]) -> int | None:
    """The value every client has, or None when they differ or one lacks it."""
    vals = set(values)
    return vals.pop() if len(vals) == 1 else None


def whole_run(results: Sequence[RadosBenchResult]) -> dict[str, Any]:
    """The clients' whole runs together, as rados bench's summaries give them: total
    operations and bytes (sums), the longest total time run, and the latency of every
    operation of every client (ns): mean weighted by operations, stddev pooled from each
    client's n, mean and stddev (writes only: reads print no stddev), min and max over
    clients. A figure is None when a client lacks what it needs."""
    ops = [r.ops or 0 for r in results]
    n = sum(ops)
    times = [r.total_time_s for r in results]
    avgs = [r.average_latency_s for r in results]
    sds = [r.stddev_latency_s for r in results]
    mins = [r.min_latency_s for r in results]
    maxs = [r.max_latency_s for r in results]
    mean = None
    if n and all(a is not None for a in avgs):
        mean = sum(k * (a or 0.0) for k, a in zip(ops, avgs, strict=True)) / n * NS_PER_S
    stddev = None
    if all(a is not None for a in avgs) and all(s is not None for s in sds):
        sd = pooled_stddev(
            [(k, a or 0.0, s or 0.0) for k, a, s in zip(ops, avgs, sds, strict=True)]
        )
        stddev = _scale(sd, NS_PER_S)
    return {
        "ops": n,
        "bytes": sum(k * (r.op_size or 0) for k, r in zip(ops, results, strict=True)),
        "total_time_s": (
            max(t for t in times if t is not None) if all(t is not None for t in times) else None
        ),
        "bw_bytes_sum": sum((r.bandwidth_mib_s or 0.0) * MiB for r in results),
        "latency": {
            "unit": "ns",
            "samples": n,
            "mean": mean,
            "stddev": stddev,
            "min": (
                min(m for m in mins if m is not None) * NS_PER_S
                if all(m is not None for m in mins)
                else None
            ),
            "max": (
                max(m for m in maxs if m is not None) * NS_PER_S
                if all(m is not None for m in maxs)
                else None
            ),
        },
    }


#: How :func:`aggregate_clients` combines the clients (kept with each measurement).
WINDOW_METHOD = (
    "sum over clients of each client's bandwidth/IOPS in the common window (latest "
    "start to earliest end; cumulative counters interpolated linearly at its edges); "
    "latency mean weighted by operations in the window; IOPS/bandwidth stddev, min, "
    "max of the per-second sums over clients in each whole second of the window"
)


def aggregate_clients(
    results: Sequence[RadosBenchResult],
    names: Sequence[str] | None = None,
    start_times: Sequence[float | None] | None = None,
) -> Measurement:
    """One measurement from N rados bench processes that ran at the same time.

    Bandwidth and IOPS are the **sum** over clients of each client's rate **in the common
    window** (:func:`common_window`; the clients' own starts and ends, when they did not all
    run, are left out). The latency mean is the mean over the operations finished in the
    window, weighted by operations (from each client's cumulative "avg lat" column: sum of
    latencies = avg lat x finished). Latency min/max are those of the clients' whole runs;
    the stddev is not given (rados bench's per-client stddev covers the whole run, not the
    window). **Percentiles cannot be derived from rados bench output.**

    ``total_ios``/``io_bytes`` count the operations in the window (rounded: the edges are
    interpolated), ``runtime_s`` is the window's length; ``hosts`` holds each client's own
    whole-run measurement by name, and ``extra["window"]`` each client's window figures.
    Clients need wall-clock rows (``--show-time``) or a ``start_times`` entry (JSON output:
    approximate).

    The spread is rados bench's kind, of per-second values (:func:`window_seconds`): per
    whole second of the window, the operations all clients finished in it (interpolated at
    the second's edges); ``extra["iops"]``/``extra["bandwidth"]`` hold their stddev, min
    and max (operations/s, bytes/s: the keys and units of :func:`to_measurement`, the
    averages being the window's), ``extra["series"]`` the per-second table
    (:func:`window_series_table`). ``extra["whole_run"]`` (:func:`whole_run`) is the clients'
    whole runs summed as rados bench's summaries give them: total operations, bytes, the
    longest time run, the latency of every operation (pooled stddev for writes).
    """
    if not results:
        raise ValueError("no client results to aggregate")
    names = list(names) if names else [f"client{i + 1}" for i in range(len(results))]
    modes = {r.mode for r in results}
    if len(modes) != 1:
        raise ValueError(f"clients ran different modes: {sorted(modes)}")
    direction = results[0].direction
    w0, w1, windows = common_window(results, names, start_times)
    seconds = window_seconds(results, start_times)
    iops_samples, bw_samples = window_samples(seconds)
    warnings = [f"{n}: {w}" for n, r in zip(names, results, strict=True) for w in r.warnings]
    if w1 - w0 < 2.0:
        warnings.append(
            f"the clients ran together for {w1 - w0:.2f} s only: the aggregate is noisy"
        )
    hosts = {n: to_measurement(r) for n, r in zip(names, results, strict=True)}
    meas = Measurement(jobs=len(results), hosts=hosts, engine_version=rados_version())
    failed = [n for n, m in hosts.items() if m.status != "ok"]
    if failed:
        meas.status = "partial" if len(failed) < len(hosts) else "failed"
        meas.error = "; ".join(f"{n}: {hosts[n].error}" for n in failed)
    d = meas.directions[direction] = _window_direction(results, windows, w1 - w0)
    meas.extra = {
        "engine": "rados bench",
        "mode": results[0].mode,
        "clients": len(results),
        "object_size": _same(r.object_size for r in results),
        "op_size": _same(r.op_size for r in results),
        "threads": _same(r.concurrent_ios for r in results),
        "method": WINDOW_METHOD,
        "iops": {
            "unit": "operations/s",
            "average": d.iops,
            "average_printed": None,
            **spread_of(iops_samples),
        },
        "bandwidth": {
            "unit": "bytes/s",
            "average": d.bw_bytes,
            **spread_of(bw_samples),
        },
        "series": window_series_table(seconds),
        "window": _window_figures(w0, w1, windows),
        "whole_run": whole_run(results),
        "percentiles": PERCENTILES_NOTE,
        "warnings": warnings,
    }
    return meas


def _window_direction(
    results: Sequence[RadosBenchResult], windows: Sequence[ClientWindow], seconds: float
) -> DirectionResult:
    """The clients' direction over the common window (see :func:`aggregate_clients`)."""
    ops = sum(w.ops for w in windows)
    lat_sums = [w.lat_sum_s for w in windows]
    mean_ns = None
    if ops and all(s is not None for s in lat_sums):
        mean_ns = sum(s for s in lat_sums if s is not None) / ops * NS_PER_S
    mins = [r.min_latency_s for r in results if r.min_latency_s is not None]
    maxs = [r.max_latency_s for r in results if r.max_latency_s is not None]
    return DirectionResult(
        iops=sum(w.iops for w in windows),
        bw_bytes=sum(w.bw_bytes for w in windows),
        io_bytes=round(sum(w.bytes for w in windows)),
        total_ios=round(ops),
        runtime_s=seconds,
        lat=LatencyStats(
            samples=round(ops),
            mean=mean_ns,
            stddev=None,
            min=min(mins) * NS_PER_S if len(mins) == len(results) else None,
            max=max(maxs) * NS_PER_S if len(maxs) == len(results) else None,
        ),
    )


def _window_figures(w0: float, w1: float, windows: Sequence[ClientWindow]) -> dict[str, Any]:
    """The common window and each client's figures in it (``extra["window"]``)."""
    return {
        "start": w0,
        "end": w1,
        "seconds": w1 - w0,
        "clients": [
            {
                "name": w.name,
                "start": w.start,
                "end": w.end,
                "ops": w.ops,
                "bytes": w.bytes,
                "bw_bytes": w.bw_bytes,
                "iops": w.iops,
                "lat_mean_ns": _scale(w.lat_mean_s, NS_PER_S),
            }
            for w in windows
        ],
    }
