"""Per-point summaries of stored measurements: repetitions folded together.

Rates are averaged over repetitions, with their spread (sample stddev and a Student t 95 %
confidence interval, see :mod:`storbench.analysis.stats`); latency is merged — sample-weighted
mean, pooled stddev, percentiles from the summed histogram bins — never an average of
percentiles.

Besides each direction, a point has figures over *all* its I/Os, which is what comparisons
and sweeps use for a point that reads and writes at once: the total IOPS and bandwidth of
each repetition (read + write + trim), and the completion latency (clat) of every I/O
whatever its direction (sample-weighted mean; percentiles from the bins of every direction
summed).

An engine that reports no completion latency (rados bench: its latency runs from submission
to completion, ``lat``, without percentiles) is summarized by its ``lat`` instead: the
``latency`` properties give clat where there is one and lat otherwise, and
``latency_metric`` says which ("clat" or "lat"), so that tables label what they show.
Such a point has no percentiles: tables show them as missing, never as 0.

What a comparison judges is fio's *total* latency, ``lat`` (submission + completion): with
``direct=0`` and libaio the time moves from completion into submission, so clat alone can
fall while what the application waited for grows. ``total_lat`` is the lat of every I/O of
the point (all directions and repetitions; for rados bench the same as ``lat``) and
``rep_total_lat_mean`` its mean per repetition; ``judged_latency`` is ``total_lat`` where
the engine reports it and the clat (``latency``) otherwise, ``judged_latency_metric`` says
which. lat has percentiles only where fio printed them (``lat_percentiles=1``) for one
measurement: merged over repetitions or directions it has none (the store's merged
histograms are clat's), and a comparison then shows the clat p99, labelled so. Its engine's own
figures (rados bench's per-second IOPS/bandwidth spread, totals, latency stddev) are kept
per repetition in ``PointSummary.engine_figures`` (:func:`engine_figures`).

Percentiles that need merging (several repetitions, or several directions for the point's
figures) need the histograms. :func:`summarize` merges the bins the measurements carry;
measurements loaded without bins (fast) get those percentiles afterwards from
:func:`fill_percentiles`, fed with the histograms of exactly the points :func:`needs_bins`
names.
"""

from __future__ import annotations

import json
import statistics
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from storbench.analysis.capacity import Step, step_of, with_interval
from storbench.analysis.stats import Spread, spread
from storbench.analysis.steady import Verdict, verdict_of
from storbench.model import histpack
from storbench.model.findings import Finding
from storbench.model.metrics import (
    DIRECTIONS,
    PERCENTILES,
    ClatOrLat,
    LatencyStats,
    Measurement,
    fio_rank,
    pct_key,
)
from storbench.plan import Point, Target
from storbench.plan.slokeys import Slo
from storbench.plan.untilkeys import Until

#: fio options that cap the rate of a job: such a point's IOPS are what the plan asked for,
#: so comparisons judge it by its latency instead (see storbench.analysis.compare).
RATE_OPTIONS = frozenset(("rate", "rate_iops", "rate_min", "rate_iops_min"))


@dataclass
class DirSummary(ClatOrLat):
    """One direction of a point over its repetitions (one list entry per repetition)."""

    iops: list[float] = field(default_factory=list)
    bw_bytes: list[float] = field(default_factory=list)
    clat_means: list[float] = field(default_factory=list)  # mean clat of each repetition, ns
    clat: LatencyStats | None = None  # merged over repetitions
    lat: LatencyStats | None = None
    # mean lat of each repetition that has no clat (rados bench), ns
    lat_means: list[float] = field(default_factory=list)

    @property
    def iops_mean(self) -> float:
        return statistics.fmean(self.iops) if self.iops else 0.0

    @property
    def bw_mean(self) -> float:
        return statistics.fmean(self.bw_bytes) if self.bw_bytes else 0.0

    @property
    def iops_stdev(self) -> float | None:
        return statistics.stdev(self.iops) if len(self.iops) > 1 else None

    @property
    def iops_spread(self) -> Spread | None:
        return spread(self.iops)

    @property
    def bw_spread(self) -> Spread | None:
        return spread(self.bw_bytes)

    @property
    def clat_mean_spread(self) -> Spread | None:
        """Spread of the mean completion latency over repetitions (one mean per repetition)."""
        return spread(self.clat_means)

    @property
    def latency_mean_spread(self) -> Spread | None:
        """Spread over repetitions of the mean of :attr:`latency`."""
        return spread(self.clat_means) if self.clat is not None else spread(self.lat_means)


@dataclass
class PointSummary(ClatOrLat):
    key: str
    index: int  # first point index (for ordering)
    target: Target
    workload: str
    params: dict[str, Any]
    axes: dict[str, Any]
    runs: int = 0  # repetitions with a usable measurement
    #: of those, the ones a host or client missed (status partial): counted, never as full
    partial: int = 0
    failed: int = 0
    #: repetitions never measured on purpose (beyond their climb's knee: status skipped),
    #: and why (the first's)
    skipped: int = 0
    skip_reason: str | None = None
    errors: list[str] = field(default_factory=list)
    dirs: dict[str, DirSummary] = field(default_factory=dict)
    # figures over all the point's I/Os (every direction), one entry per usable repetition
    rep_iops: list[float] = field(default_factory=list)
    rep_bw: list[float] = field(default_factory=list)
    rep_clat_mean: list[float] = field(default_factory=list)
    clat: LatencyStats | None = None  # clat of every I/O, all directions and repetitions
    # a point without clat (rados bench): the lat of every I/O and its mean per repetition
    lat: LatencyStats | None = None
    rep_lat_mean: list[float] = field(default_factory=list)
    # per usable repetition, the engine's own figures beyond the measurement's (rados bench,
    # see engine_figures); empty for fio
    engine_figures: list[dict[str, Any]] = field(default_factory=list)
    #: per repetition that ran in steady-state rounds, how they ended (storbench.analysis.steady)
    steady: list[Verdict] = field(default_factory=list)
    #: how long the point ran before Ctrl-C ended it (a soak point, kept), None: its time
    cut_short_s: float | None = None
    #: per repetition with a power sensor, this machine's mean watts over its load
    rep_watts: list[float] = field(default_factory=list)
    #: fio's total latency (lat: submission + completion) of every I/O, all directions and
    #: repetitions, whatever clat there is (module doc); None when no repetition has it
    total_lat: LatencyStats | None = None
    #: its mean per usable repetition that has it
    rep_total_lat_mean: list[float] = field(default_factory=list)
    #: the traps found in its repetitions (model/findings.py), each code and host once
    findings: list[Finding] = field(default_factory=list)
    #: a capacity search's step (``slo:``, analysis/capacity.py): its objective, what it
    #: offered (None: the probe) and what it showed (None: it failed)
    slo: Slo | None = None
    offered_iops: int | None = None
    capacity_step: Step | None = None
    #: repeated until its verdict is known (``repeat: {until: significant}``): the rule and
    #: its side of the comparison (0: A, 1: B); analysis/sequential.py
    until: Until | None = None
    side: int | None = None

    def direction(self, name: str) -> DirSummary | None:
        return self.dirs.get(name)

    @property
    def only_skipped(self) -> bool:
        """Never measured, on purpose (every repetition skipped, none failed)."""
        return self.runs == 0 and self.skipped > 0 and self.failed == 0

    @property
    def note(self) -> str:
        """Why it has no figures: its first error, or why it was skipped ("" when none)."""
        return self.errors[0] if self.errors else (self.skip_reason or "")

    @property
    def watts(self) -> float | None:
        """This machine's mean power over the point's repetitions (W), None: no sensor."""
        return sum(self.rep_watts) / len(self.rep_watts) if self.rep_watts else None

    @property
    def iops_per_watt(self) -> float | None:
        w = self.watts
        return self.total_iops / w if w else None

    @property
    def total_iops(self) -> float:
        return sum(d.iops_mean for d in self.dirs.values())

    @property
    def total_bw(self) -> float:
        return sum(d.bw_mean for d in self.dirs.values())

    @property
    def iops_spread(self) -> Spread | None:
        """Spread of the total IOPS (all directions) over repetitions."""
        return spread(self.rep_iops)

    @property
    def bw_spread(self) -> Spread | None:
        return spread(self.rep_bw)

    @property
    def clat_mean_spread(self) -> Spread | None:
        """Spread of the mean clat of all I/Os over repetitions."""
        return spread(self.rep_clat_mean)

    @property
    def clat_mean(self) -> float | None:
        return self.clat.mean if self.clat is not None else None

    @property
    def clat_p99(self) -> float | None:
        return self.clat.percentiles.get("99") if self.clat is not None else None

    @property
    def latency_mean(self) -> float | None:
        lat = self.latency
        return lat.mean if lat is not None else None

    @property
    def latency_p99(self) -> float | None:
        """p99 of :attr:`latency`; None when the engine reports no percentiles."""
        lat = self.latency
        return lat.percentiles.get("99") if lat is not None else None

    @property
    def rep_latency_mean(self) -> list[float]:
        """The mean of :attr:`latency` of each repetition."""
        return self.rep_clat_mean if self.clat is not None else self.rep_lat_mean

    @property
    def judged_latency(self) -> LatencyStats | None:
        """The latency a comparison judges: :attr:`total_lat` where there is one, else the
        clat (:attr:`latency`)."""
        return self.total_lat if self.total_lat is not None else self.latency

    @property
    def judged_latency_metric(self) -> str | None:
        """What :attr:`judged_latency` is: "lat", "clat", or None."""
        return "lat" if self.total_lat is not None else self.latency_metric

    @property
    def rep_judged_latency_mean(self) -> list[float]:
        """The mean of :attr:`judged_latency` of each repetition."""
        return self.rep_total_lat_mean if self.total_lat is not None else self.rep_latency_mean

    @property
    def rate_capped(self) -> bool:
        """Whether the workload caps its own rate (fio ``rate``/``rate_iops`` options)."""
        return any(self.params.get(k) not in (None, "", 0, "0") for k in RATE_OPTIONS)


def _pooled_mean(parts: list[LatencyStats]) -> float | None:
    """The sample-weighted mean of ``parts``; None without samples."""
    n = sum(c.samples for c in parts)
    return sum(c.samples * (c.mean or 0.0) for c in parts) / n if n else None


def _add_extras(s: PointSummary, meas: Measurement) -> None:
    """What a usable repetition adds beyond its figures: steady-state verdict, cut short,
    findings, power, the engine's own figures."""
    verdict = verdict_of(meas)
    if verdict is not None:
        s.steady.append(verdict)
    if "cut_short" in meas.extra:
        s.cut_short_s = float(meas.extra["cut_short"])
    seen = {(f.code, f.host) for f in s.findings}
    s.findings.extend(f for f in meas.findings if (f.code, f.host) not in seen)
    if isinstance(meas.extra.get("power"), dict):
        s.rep_watts.append(float(meas.extra["power"]["watts_mean"]))
    figures = engine_figures(meas)
    if figures is not None:
        s.engine_figures.append(figures)


def _new_summary(point: Point) -> PointSummary:
    return PointSummary(
        key=point.key,
        index=point.index,
        target=point.target,
        workload=point.workload,
        params=point.params,
        axes=point.axes,
        slo=point.slo,
        offered_iops=point.offered_iops,
        until=point.until,
        side=point.side,
    )


def _usable(s: PointSummary, meas: Measurement) -> bool:
    """Whether a repetition has figures; one without is counted as skipped (never
    measured, on purpose: beyond its climb's knee) or failed (with its error)."""
    if meas.status == "skipped":
        s.skipped += 1
        s.skip_reason = s.skip_reason or meas.error
        return False
    if meas.status == "failed" or not any(meas.direction(d) for d in DIRECTIONS):
        s.failed += 1
        if meas.error:
            s.errors.append(meas.error)
        return False
    return True


def summarize(items: Iterable[tuple[Point, Measurement]]) -> list[PointSummary]:
    """Fold measurements of the same point (its repetitions) into one summary per point."""
    by_key: dict[str, PointSummary] = {}
    lats: dict[tuple[str, str], tuple[list[LatencyStats], list[LatencyStats]]] = {}
    point_clats: dict[str, list[LatencyStats]] = {}
    point_lats: dict[str, list[LatencyStats]] = {}
    point_totals: dict[str, list[LatencyStats]] = {}
    for point, meas in items:
        s = by_key.get(point.key)
        if s is None:
            s = by_key[point.key] = _new_summary(point)
        if point.slo is not None and s.capacity_step is None:  # repeat: 1 (plan/workloads.py)
            s.capacity_step = step_of(point.slo, point.offered_iops, meas)
        if not _usable(s, meas):
            continue
        s.runs += 1
        if meas.status == "partial":
            s.partial += 1
        _add_extras(s, meas)
        rep_iops = rep_bw = 0.0
        rep_clats: list[LatencyStats] = []
        rep_lats: list[LatencyStats] = []  # of the directions without clat
        rep_totals: list[LatencyStats] = []  # lat of every direction that has it
        for ddir in DIRECTIONS:
            d = meas.direction(ddir)
            if d is None:
                continue
            ds = s.dirs.setdefault(ddir, DirSummary())
            ds.iops.append(d.iops)
            ds.bw_bytes.append(d.bw_bytes)
            rep_iops += d.iops
            rep_bw += d.bw_bytes
            cl, la = lats.setdefault((point.key, ddir), ([], []))
            if d.clat:
                cl.append(d.clat)
                if d.clat.mean is not None and d.clat.samples > 0:
                    ds.clat_means.append(d.clat.mean)
                    rep_clats.append(d.clat)
            elif d.lat and d.lat.samples > 0 and d.lat.mean is not None:
                ds.lat_means.append(d.lat.mean)
                rep_lats.append(d.lat)
            if d.lat:
                la.append(d.lat)
                if d.lat.samples > 0 and d.lat.mean is not None:
                    rep_totals.append(d.lat)
        s.rep_iops.append(rep_iops)
        s.rep_bw.append(rep_bw)
        if (m := _pooled_mean(rep_clats)) is not None:
            s.rep_clat_mean.append(m)
        point_clats.setdefault(point.key, []).extend(rep_clats)
        if (m := _pooled_mean(rep_totals)) is not None:
            s.rep_total_lat_mean.append(m)
            point_totals.setdefault(point.key, []).extend(rep_totals)
        if (m := _pooled_mean(rep_lats)) is not None and not rep_clats:
            s.rep_lat_mean.append(m)
            point_lats.setdefault(point.key, []).extend(rep_lats)
    for (key, ddir), (cl, la) in lats.items():
        ds = by_key[key].dirs[ddir]
        ds.clat = LatencyStats.merge(cl)
        ds.lat = LatencyStats.merge(la)
    for key, parts in point_clats.items():
        by_key[key].clat = LatencyStats.merge(parts)
    for key, parts in point_totals.items():
        by_key[key].total_lat = LatencyStats.merge(parts)
    for key, parts in point_lats.items():
        if by_key[key].clat is None:
            by_key[key].lat = LatencyStats.merge(parts)
    return sorted(by_key.values(), key=lambda s: s.index)


#: rados bench's measurements carry this in ``extra["engine"]``
RADOS_BENCH_ENGINE = "rados bench"


def engine_figures(meas: Measurement) -> dict[str, Any] | None:
    """rados bench's own summary figures of one measurement (None for other engines), in base
    units (s, bytes, bytes/s, operations/s, ns), for seed 000's table.

    One client: its summary (total time run, operations, sizes; bandwidth and IOPS with
    their per-second stddev/min/max; latency mean, stddev (writes only), min, max). Several
    clients (``extra["clients"]`` > 1, see storbench.engines.rados.aggregate_clients):
    ``total_time_s`` is the longest client's, ``ops`` the sum of the clients' totals, the
    latency that of every operation of every client (``extra["whole_run"]``); bandwidth,
    IOPS and their spread are over the common window (``window_s``).
    """
    x = meas.extra
    if x.get("engine") != RADOS_BENCH_ENGINE:
        return None
    d = next((meas.direction(k) for k in DIRECTIONS if meas.direction(k)), None)
    if d is None:
        return None
    iops = x.get("iops") or {}
    bw = x.get("bandwidth") or {}
    clients = int(x.get("clients") or 1)
    out: dict[str, Any] = {
        "mode": x.get("mode"),
        "clients": clients,
        "op_size": x.get("op_size"),
        "object_size": x.get("object_size"),
        "bw_bytes": d.bw_bytes,
        "bw_stddev": bw.get("stddev"),
        "bw_max": bw.get("max"),
        "bw_min": bw.get("min"),
        "iops": d.iops,
        "iops_stddev": iops.get("stddev"),
        "iops_max": iops.get("max"),
        "iops_min": iops.get("min"),
    }
    if clients > 1:
        whole = x.get("whole_run") or {}
        lat = whole.get("latency") or {}
        out.update(
            total_time_s=whole.get("total_time_s"),
            ops=whole.get("ops"),
            window_s=(x.get("window") or {}).get("seconds"),
            lat_mean=lat.get("mean"),
            lat_stddev=lat.get("stddev"),
            lat_max=lat.get("max"),
            lat_min=lat.get("min"),
        )
    else:
        la = d.lat
        out.update(
            total_time_s=d.runtime_s,
            ops=d.total_ios,
            window_s=None,
            lat_mean=la.mean if la else None,
            lat_stddev=la.stddev if la else None,
            lat_max=la.max if la else None,
            lat_min=la.min if la else None,
        )
    return out


def needs_bins(s: PointSummary) -> bool:
    """Whether a percentile of ``s`` is missing that merged histograms would give: several
    repetitions of a direction, or several directions for the point's own figures."""
    if s.clat is not None and s.clat.samples and not s.clat.percentiles:
        return True
    return any(
        ds.clat is not None and ds.clat.samples and not ds.clat.percentiles
        for ds in s.dirs.values()
    )


def fill_percentiles(
    s: PointSummary,
    histograms: Iterable[tuple[str, Mapping[Any, int] | str | bytes]],
    *,
    percentiles: Iterable[float] = PERCENTILES,
    directions: bool = True,
) -> None:
    """Set the percentiles :func:`summarize` could not compute without bins.

    ``histograms`` are the clat bins (``{bucket ns: count}``, its JSON text, or its packed
    form as the store keeps it: storbench.model.histpack) of every direction of every usable
    repetition of ``s``, as
    ``(direction, bins)``. They are summed per direction (unless ``directions`` is false:
    the point's own figures only) and over all directions; a sum that does not hold exactly
    the samples the summary counted (a histogram missing) leaves those percentiles empty
    rather than wrong. Only ``percentiles`` are computed; the bins are not kept.
    """
    wanted = tuple(percentiles)
    per_dir: dict[str, list[Mapping[Any, int] | str | bytes]] = {}
    for ddir, bins in histograms:
        per_dir.setdefault(ddir, []).append(bins)
    if directions:
        for ddir, hists in per_dir.items():
            ds = s.dirs.get(ddir)
            if ds is not None and ds.clat is not None and not ds.clat.percentiles:
                ds.clat.percentiles = _merged_percentiles(hists, ds.clat.samples, wanted)
    if s.clat is not None and not s.clat.percentiles:
        every = [h for hists in per_dir.values() for h in hists]
        s.clat.percentiles = _merged_percentiles(every, s.clat.samples, wanted)


#: Turns stored bins text ``{"20": 1, "21": 5}`` into ``20 1 21 5`` for numpy's parser.
_BINS_TEXT = str.maketrans('{}":,', "     ")


def _bin_pairs(hists: list[Mapping[Any, int] | str | bytes]) -> Any:
    """All ``(bucket, count)`` pairs of ``hists`` as an (n, 2) int64 array. A histogram may
    be a mapping, its packed form as the store keeps it (storbench.model.histpack), or its JSON
    text (parsed by numpy, in C: a big run's thousands of histograms are read in a fraction
    of what ``json.loads`` takes)."""
    import numpy as np  # here: only merged percentiles need it, and it is slow to import

    parts = []
    packed = [h for h in hists if isinstance(h, bytes)]
    if packed:
        parts.append(histpack.pairs_array(packed))
        hists = [h for h in hists if not isinstance(h, bytes)]
    texts = [h for h in hists if isinstance(h, str)]
    if texts:
        joined = " ".join(texts)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                flat = np.fromstring(joined.translate(_BINS_TEXT), dtype=np.int64, sep=" ")
            if flat.size != 2 * joined.count(":"):
                raise ValueError("not {int: int}")
            parts.append(flat.reshape(-1, 2))
        except (ValueError, DeprecationWarning):
            hists = [json.loads(h) if isinstance(h, str) else h for h in hists]
            texts = []
    for h in hists:
        if not isinstance(h, str) and h:
            parts.append(np.array([(int(k), int(c)) for k, c in h.items()], dtype=np.int64))
    return np.concatenate(parts) if parts else np.zeros((0, 2), dtype=np.int64)


#: histograms read into one array at a time when many are summed (a point imported or run
#: with thousands of repetitions): memory bounded by this many, not by the repetitions
SUM_CHUNK = 256


def _summed_pairs(hists: list[Mapping[Any, int] | str | bytes]) -> Any:
    """``(bucket, count)`` pairs whose counts per bucket are those of the sum of ``hists``:
    :func:`_bin_pairs` of them all for up to :data:`SUM_CHUNK` histograms; beyond, summed
    :data:`SUM_CHUNK` at a time into one pair per bucket (exact: int64)."""
    import numpy as np

    if len(hists) <= SUM_CHUNK:
        return _bin_pairs(hists)
    acc = np.zeros((0, 2), dtype=np.int64)
    for i in range(0, len(hists), SUM_CHUNK):
        pairs = np.concatenate([acc, _bin_pairs(hists[i : i + SUM_CHUNK])])
        buckets, where = np.unique(pairs[:, 0], return_inverse=True)
        counts = np.zeros(len(buckets), dtype=np.int64)
        np.add.at(counts, where.ravel(), pairs[:, 1])
        acc = np.column_stack([buckets, counts])
    return acc


def _merged_percentiles(
    hists: list[Mapping[Any, int] | str | bytes], samples: int, percentiles: tuple[float, ...]
) -> dict[str, float]:
    """fio's percentiles (:func:`storbench.model.metrics.percentiles_from_bins`: the first bucket
    where the cumulative count reaches fio's rank) of the sum of ``hists``; none when the
    sum does not hold ``samples`` samples."""
    import numpy as np  # here: only merged percentiles need it, and it is slow to import

    pairs = _summed_pairs(hists)
    if not len(pairs):
        return {}
    order = np.argsort(pairs[:, 0], kind="stable")
    values = pairs[order, 0]
    cum = np.cumsum(pairs[order, 1])
    total = int(cum[-1])
    if total != samples or total <= 0:
        return {}
    out = {}
    for p in percentiles:
        i = int(np.searchsorted(cum, fio_rank(p, total)))  # first i with cum[i] >= rank
        out[pct_key(p)] = float(values[i])
    return out


def needs_interval(s: PointSummary) -> bool:
    """Whether ``s`` is a capacity step judged at a percentile whose 95 % interval needs the
    point's total-latency (``lat``) histograms (a summary's measurement carries none)."""
    step = s.capacity_step
    return (
        step is not None
        and step.interval is None
        and s.slo is not None
        and s.slo.percentile is not None
    )


def fill_interval(s: PointSummary, histograms: Iterable[tuple[str, Any]]) -> None:
    """Give ``s``'s capacity step the interval of its percentile (analysis/latencyci.py) from
    the point's ``lat`` histograms (``(direction, bins)``, bins as :func:`fill_percentiles`
    takes them), all directions merged as the step's figure merges them."""
    step, slo = s.capacity_step, s.slo
    if step is None or slo is None or slo.percentile is None:
        return
    pairs = _bin_pairs([b for _, b in histograms])
    bins: dict[int, int] = {}
    for bucket, count in pairs.tolist():
        bins[bucket] = bins.get(bucket, 0) + count
    s.capacity_step = with_interval(step, bins, slo.percentile)
