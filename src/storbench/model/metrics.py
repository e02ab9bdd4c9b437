"""The measurement model: what one point produced, in base units.

Bandwidth is bytes/s, latency nanoseconds, time seconds, CPU percent. Latency histograms are
fio's ``json+`` bins (bucket value in ns -> count); percentiles over several jobs, hosts or
repetitions are always computed from merged bins, never by averaging percentiles.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field, fields, is_dataclass
from fractions import Fraction
from itertools import pairwise
from typing import Any

from storbench.model.findings import Finding

#: fio's data directions; "mixed" is all of them in one, with unified_rw_reporting
DIRECTIONS = ("read", "write", "trim", "mixed")
#: Percentiles storbench reports, as fio names them in its JSON ("99.900000" -> "99.9").
PERCENTILES: tuple[float, ...] = (50.0, 90.0, 95.0, 99.0, 99.9, 99.99)


def pct_key(p: float) -> str:
    """Canonical text key of a percentile: 50.0 -> "50", 99.9 -> "99.9"."""
    return f"{p:g}"


#: Significand bits of the C ``long double`` fio computes percentile ranks in: 64 for the x87
#: extended format of x86-64 (the platform of the recorded fixtures). aarch64 and s390x have a
#: 113-bit IEEE quad ``long double``; with it a few ranks of fio's default list (30, 60) can
#: differ by one sample, never those of ``PERCENTILES`` for up to 100k samples (checked).
LONG_DOUBLE_BITS = 64


def _round_significand(x: Fraction, bits: int) -> Fraction:
    """``x`` (>= 0) rounded to ``bits`` significant bits, ties to even (IEEE, as the FPU does)."""
    if x <= 0:
        return Fraction(0)
    num, den = x.numerator, x.denominator
    e = num.bit_length() - den.bit_length()  # floor(log2 x) is e or e - 1
    if (num << max(-e, 0)) < (den << max(e, 0)):
        e -= 1
    shift = bits - 1 - e  # scale x into [2^(bits-1), 2^bits)
    q, r = divmod(num << shift, den) if shift >= 0 else divmod(num, den << -shift)
    if 2 * r > den or (2 * r == den and q & 1):
        q += 1
    return Fraction(q, 1 << shift) if shift >= 0 else Fraction(q << -shift)


def fio_rank(p: float, total: int, *, bits: int = LONG_DOUBLE_BITS) -> int:
    """The cumulative count at which fio reports percentile ``p`` of ``total`` samples.

    fio's stat.c (calc_clat_percentiles, the same in 3.33 and today's master) stops at the
    first bucket where ``sum >= ((long double) plist[j].u.f / 100.0 * nr)``: the division and
    the product are each rounded to a ``long double``. Done in ``double`` instead, the
    threshold can land one sample lower: for p = 99.9 and 33000 samples fio wants the
    32968th sample, ``math.ceil(99.9 / 100 * 33000)`` gives the 32967th (and for p = 60 and 25
    samples the 16th, not the 15th). Both roundings are reproduced here exactly.
    """
    ratio = _round_significand(Fraction(p) / 100, bits)
    return math.ceil(_round_significand(ratio * total, bits))


def percentiles_from_bins(
    bins: Mapping[int, int], percentiles: Iterable[float] = PERCENTILES
) -> dict[str, float]:
    """Percentiles from a latency histogram, computed the way fio does.

    fio reports, for percentile p, the value of the first bucket at which the cumulative
    count reaches p/100 of all samples (stat.c, calc_clat_percentiles), with that threshold
    computed in ``long double`` (see :func:`fio_rank`). Applying the same rule to ``json+``
    bins reproduces fio's own percentiles for one job exactly (checked on every recorded
    json+ file), and for merged bins gives the union's percentile by the same rank rule
    (nearest rank, up to fio's long double rounding).
    """
    items = sorted((int(v), int(c)) for v, c in bins.items() if int(c) > 0)
    total = sum(c for _, c in items)
    if total == 0:
        return {}
    wanted = sorted((fio_rank(p, total), pct_key(p)) for p in percentiles)
    out: dict[str, float] = {}
    cum = 0
    j = 0
    for value, count in items:
        cum += count
        while j < len(wanted) and cum >= wanted[j][0]:
            out[wanted[j][1]] = float(value)
            j += 1
        if j == len(wanted):
            break
    return out


def merge_bins(histograms: Iterable[Mapping[int, int] | None]) -> dict[int, int] | None:
    """Sum histograms bucket by bucket; None when any input lacks bins (cannot be merged)."""
    merged: dict[int, int] = {}
    for h in histograms:
        if h is None:
            return None
        for v, c in h.items():
            merged[int(v)] = merged.get(int(v), 0) + int(c)
    return merged


@dataclass
class LatencyStats:
    """Latency summary of one direction, in nanoseconds."""

    samples: int = 0
    mean: float | None = None
    stddev: float | None = None
    min: float | None = None
    max: float | None = None
    percentiles: dict[str, float] = field(default_factory=dict)
    bins: dict[int, int] | None = None

    @classmethod
    def merge(cls, parts: list[LatencyStats]) -> LatencyStats | None:
        """Combine the latency of several jobs/hosts: sample-weighted mean, pooled stddev,
        min of mins, max of maxes, percentiles from merged bins (none if bins are missing).
        A figure some part lacks (rados bench gives no stddev for reads) is None in the
        union, never computed as if it were 0."""
        parts = [p for p in parts if p is not None and p.samples > 0]
        if not parts:
            return None
        if len(parts) == 1:
            return parts[0]
        n = sum(p.samples for p in parts)
        if any(p.mean is None for p in parts):
            return cls(
                samples=n,
                min=_min_all(p.min for p in parts),
                max=_max_all(p.max for p in parts),
            )
        mean = sum(p.samples * (p.mean or 0.0) for p in parts) / n
        # fio's stddev is the sample one: sqrt(S / (N - 1)), S the sum of squared deviations
        # (stat.c calc_lat). The S of the union is the sum of the parts' S plus each part's
        # N * (its mean - the union's mean)^2, which is what fio's __sum_stat accumulates
        # pairwise for group_reporting (Chan et al.'s parallel variance).
        s_sum = sum(
            (p.stddev or 0.0) ** 2 * (p.samples - 1) + p.samples * ((p.mean or 0.0) - mean) ** 2
            for p in parts
        )
        stddev: float | None = math.sqrt(s_sum / (n - 1)) if n > 1 else 0.0
        if any(p.stddev is None for p in parts):
            stddev = None
        bins = merge_bins(p.bins for p in parts)
        return cls(
            samples=n,
            mean=mean,
            stddev=stddev,
            min=_min_all(p.min for p in parts),
            max=_max_all(p.max for p in parts),
            percentiles=percentiles_from_bins(bins) if bins else {},
            bins=bins,
        )


#: Values that ``copy.deepcopy`` gives back as they are.
_ATOMS = frozenset((int, float, str, bool, type(None)))


def _plain(obj: Any) -> Any:
    """``dataclasses.asdict``'s conversion (dataclasses to dicts, containers copied, the
    rest deep-copied), atoms kept as they are and a dict of atoms copied at once."""
    kind = type(obj)
    if kind in _ATOMS:
        return obj
    if kind is dict:
        if all(type(k) in _ATOMS and type(v) in _ATOMS for k, v in obj.items()):
            return dict(obj)
        return {_plain(k): _plain(v) for k, v in obj.items()}
    if kind is list:
        return [_plain(v) for v in obj]
    if is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: _plain(getattr(obj, f.name)) for f in fields(obj)}
    return _asdict_value(obj)


def _asdict_value(obj: Any) -> Any:
    """Anything else as ``dataclasses.asdict`` converts it (tuples, other mappings...)."""
    return asdict(_Box(obj))["value"]


@dataclass
class _Box:
    value: Any


def _min_all(values: Iterable[float | None]) -> float | None:
    """The smallest of values that all exist (None when one is missing)."""
    vs = list(values)
    return None if not vs or any(v is None for v in vs) else min(v for v in vs if v is not None)


def _max_all(values: Iterable[float | None]) -> float | None:
    vs = list(values)
    return None if not vs or any(v is None for v in vs) else max(v for v in vs if v is not None)


class ClatOrLat:
    """The latency a table shows of something with ``clat`` and ``lat``: fio's completion
    latency, or, for an engine that reports no clat (rados bench), ``lat``."""

    clat: LatencyStats | None
    lat: LatencyStats | None

    @property
    def latency(self) -> LatencyStats | None:
        return self.clat if self.clat is not None else self.lat

    @property
    def latency_metric(self) -> str | None:
        """What :attr:`latency` is: "clat", "lat", or None when there is none."""
        if self.clat is not None:
            return "clat"
        return "lat" if self.lat is not None else None


@dataclass
class DirectionResult(ClatOrLat):
    """One direction (read, write or trim) of a measurement."""

    iops: float = 0.0
    bw_bytes: float = 0.0
    io_bytes: int = 0
    total_ios: int = 0
    runtime_s: float = 0.0
    slat: LatencyStats | None = None
    clat: LatencyStats | None = None
    lat: LatencyStats | None = None

    @property
    def active(self) -> bool:
        return self.io_bytes > 0 or self.total_ios > 0


@dataclass
class Measurement:
    """What one point produced (or one host of it, see ``hosts``)."""

    status: str = "ok"  # ok | failed | partial | skipped (beyond a knee: execute/climbs.py)
    error_code: int = 0
    error: str | None = None
    directions: dict[str, DirectionResult] = field(default_factory=dict)
    usr_cpu: float | None = None  # percent of one CPU, as fio reports
    sys_cpu: float | None = None
    disk_util: list[dict[str, Any]] = field(default_factory=list)
    jobs: int = 0  # number of fio job entries this aggregates
    hosts: dict[str, Measurement] = field(default_factory=dict)
    engine_version: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    #: the traps found in it after it ran (model/findings.py), those of its hosts included
    findings: list[Finding] = field(default_factory=list)

    def direction(self, name: str) -> DirectionResult | None:
        d = self.directions.get(name)
        return d if d is not None and d.active else None

    def to_dict(self) -> dict[str, Any]:
        """What ``dataclasses.asdict`` gives (a copy throughout), without its deep copy of
        every number of every histogram (3/4 of the time of recording a point); without
        ``findings`` where there are none (a measurement recorded before findings reads the
        same)."""
        data: dict[str, Any] = _plain(
            {
                **{f.name: getattr(self, f.name) for f in fields(self)},
                "findings": [f.to_dict() for f in self.findings],
            }
        )
        for d in (data, *data["hosts"].values()):
            if not d["findings"]:
                del d["findings"]
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Measurement:
        def lat(d: Mapping[str, Any] | None) -> LatencyStats | None:
            if d is None:
                return None
            bins = d.get("bins")
            return LatencyStats(
                samples=d.get("samples", 0),
                mean=d.get("mean"),
                stddev=d.get("stddev"),
                min=d.get("min"),
                max=d.get("max"),
                # one key object for every measurement's "99.9": a big run holds thousands
                percentiles={sys.intern(k): v for k, v in (d.get("percentiles") or {}).items()},
                bins={int(k): int(v) for k, v in bins.items()} if bins else None,
            )

        dirs = {
            k: DirectionResult(
                iops=v["iops"],
                bw_bytes=v["bw_bytes"],
                io_bytes=v["io_bytes"],
                total_ios=v["total_ios"],
                runtime_s=v["runtime_s"],
                slat=lat(v.get("slat")),
                clat=lat(v.get("clat")),
                lat=lat(v.get("lat")),
            )
            for k, v in (data.get("directions") or {}).items()
        }
        return cls(
            status=data.get("status", "ok"),
            error_code=data.get("error_code", 0),
            error=data.get("error"),
            directions=dirs,
            usr_cpu=data.get("usr_cpu"),
            sys_cpu=data.get("sys_cpu"),
            disk_util=list(data.get("disk_util") or []),
            jobs=data.get("jobs", 0),
            hosts={h: cls.from_dict(m) for h, m in (data.get("hosts") or {}).items()},
            engine_version=data.get("engine_version"),
            extra=dict(data.get("extra") or {}),
            findings=[Finding.from_dict(f) for f in data.get("findings") or ()],
        )


# ---------------------------------------------------------------------------- many hosts

#: A point whose hosts all ran for less than this fraction of its measured time is flagged.
OVERLAP_MIN = 0.90


@dataclass
class HostSeries:
    """When one host of a multi-host point measured, and how much it had done when.

    Times are seconds from the common origin of the point (see engines/fio/hosts.py: the moment
    each fio server began the run, which fio's client starts on every server at once).
    ``knots`` holds, per direction, the cumulative (seconds, I/Os, bytes) at known instants:
    (start, 0, 0), fio's status reports in between, (end, totals) — cumulative counts are
    linear between them (an assumption: a host's rate between two reports is constant).
    """

    start_s: float
    end_s: float
    knots: dict[str, list[tuple[float, int, int]]] = field(default_factory=dict)

    def done_at(self, ddir: str, t: float) -> tuple[float, float]:
        """(I/Os, bytes) the host had completed in ``ddir`` at ``t`` (clamped to its run)."""
        pts = self.knots.get(ddir) or []
        if not pts:
            return 0.0, 0.0
        if t <= pts[0][0]:
            return float(pts[0][1]), float(pts[0][2])
        for (t0, i0, b0), (t1, i1, b1) in pairwise(pts):
            if t <= t1:
                f = (t - t0) / (t1 - t0) if t1 > t0 else 1.0
                return i0 + f * (i1 - i0), b0 + f * (b1 - b0)
        return float(pts[-1][1]), float(pts[-1][2])


@dataclass
class Overlap:
    """How the hosts of a point overlapped in time (seconds; see :func:`overlap`)."""

    start_spread_s: float  # latest start - earliest start
    end_spread_s: float  # latest end - earliest end
    span_s: float  # earliest start to latest end: the measured time
    window_s: float  # latest start to earliest end: all hosts running (0 if none)
    window_start_s: float
    window_end_s: float

    @property
    def fraction(self) -> float:
        """Share of the measured time in which every host was running."""
        return self.window_s / self.span_s if self.span_s > 0 else 1.0

    @property
    def low(self) -> bool:
        return self.fraction < OVERLAP_MIN


def overlap(series: Iterable[HostSeries]) -> Overlap:
    items = list(series)
    starts = [s.start_s for s in items]
    ends = [s.end_s for s in items]
    lo, hi = max(starts), min(ends)
    return Overlap(
        start_spread_s=max(starts) - min(starts),
        end_spread_s=max(ends) - min(ends),
        span_s=max(ends) - min(starts),
        window_s=max(hi - lo, 0.0),
        window_start_s=lo,
        window_end_s=max(hi, lo),
    )


def window_totals(
    series: Iterable[HostSeries], ddir: str, t0: float, t1: float
) -> tuple[float, float]:
    """I/Os and bytes all hosts completed in ``ddir`` between ``t0`` and ``t1``."""
    ios = nbytes = 0.0
    for s in series:
        i0, b0 = s.done_at(ddir, t0)
        i1, b1 = s.done_at(ddir, t1)
        ios += i1 - i0
        nbytes += b1 - b0
    return ios, nbytes


# ---------------------------------------------------------------------------- one after another


def merge_in_time(parts: list[Measurement]) -> Measurement:
    """Measurements of the same load run one after another (a steady-state window's rounds)
    as one: per direction the I/Os, bytes and runtime summed, rates over the summed runtime,
    latency merged (:meth:`LatencyStats.merge`: percentiles from the summed bins), CPU
    weighted by runtime; each host the same way. What only one part can say (fio's disk
    utilisation, which covers a whole fio run) is the last part's."""
    if len(parts) == 1:
        return parts[0]
    last = parts[-1]
    dirs: dict[str, DirectionResult] = {}
    for name in DIRECTIONS:
        ds = [d for d in (p.directions.get(name) for p in parts) if d is not None]
        if not ds:
            continue
        runtime = sum(d.runtime_s for d in ds)
        ios, nbytes = sum(d.total_ios for d in ds), sum(d.io_bytes for d in ds)
        dirs[name] = DirectionResult(
            iops=ios / runtime if runtime > 0 else 0.0,
            bw_bytes=nbytes / runtime if runtime > 0 else 0.0,
            io_bytes=nbytes,
            total_ios=ios,
            runtime_s=runtime,
            slat=_merged(d.slat for d in ds),
            clat=_merged(d.clat for d in ds),
            lat=_merged(d.lat for d in ds),
        )
    weights = [max((d.runtime_s for d in p.directions.values()), default=0.0) for p in parts]
    hosts = {
        h: merge_in_time([p.hosts[h] for p in parts if h in p.hosts])
        for h in dict.fromkeys(h for p in parts for h in p.hosts)
    }
    extra = dict(last.extra)
    reports = sum(int(p.extra.get("status_reports", 0)) for p in parts)
    if reports:
        extra["status_reports"] = reports
    return Measurement(
        status=last.status,
        error_code=last.error_code,
        error=last.error,
        directions=dirs,
        usr_cpu=_weighted([p.usr_cpu for p in parts], weights),
        sys_cpu=_weighted([p.sys_cpu for p in parts], weights),
        disk_util=list(last.disk_util),
        jobs=last.jobs,
        hosts=hosts,
        engine_version=last.engine_version,
        extra=extra,
    )


def _merged(stats: Iterable[LatencyStats | None]) -> LatencyStats | None:
    """The parts' latency together; None when some part has none (not a partial union)."""
    items = list(stats)
    if any(s is None for s in items):
        return None
    return LatencyStats.merge([s for s in items if s is not None])


def _weighted(values: list[float | None], weights: list[float]) -> float | None:
    if any(v is None for v in values) or sum(weights) <= 0:
        return None
    return sum((v or 0.0) * w for v, w in zip(values, weights, strict=True)) / sum(weights)
