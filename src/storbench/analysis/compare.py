"""A against B: per-point relative changes, significance, verdicts, and the summary.

Definitions (also in the README):

- **Matching.** Points match when their workload name and every workload parameter are
  equal (values compared as text, so ``iodepth: 32`` matches an imported ``"32"``). The
  target is left out, so two targets, hosts or runs of the same plan line up; it is put
  back only when a side has several points with the same parameters (several targets in
  one run), so that ``/dev/sdb`` is compared with ``/dev/sdb``. An option each side sets to
  one value but the two sides set differently (``differs``: ioengine, direct, size...) is
  left out of the match. Points of one side without a partner are listed in
  ``only_base``/``only_other``, never dropped.
- **Figures of a point** are over all its I/Os, whatever their direction: total IOPS and
  bandwidth (read + write + trim), and the latency of every I/O — fio's total latency
  ``lat`` (submission + completion; the clat where an engine reports no lat), its
  sample-weighted mean, with the completion latency (clat) mean beside it, and a p99: of
  lat where fio printed lat percentiles (``lat_percentiles=1``, one measurement), else of
  clat from the summed histograms (``p99_metric`` says which). A 70/30 randrw point is thus
  judged by all it did, not by its reads alone. An engine without clat (rados bench) has
  only its lat, no p99.
- **Changes** are ``(other - base) / base`` in percent: of the means over repetitions for
  IOPS and bandwidth, of the mean (and p99) over all I/Os of all repetitions for latency
  (pooled moments, merged histograms: a repetition that did more I/O weighs more). For
  latency negative is lower: "latency −44.6 %" means OTHER's is lower, in every format.
- **Not comparable**: a pair whose settings change what is measured (``direct``/
  ``buffered``, ``ioengine``, ``engine``, ``sync``/``fsync``/``fdatasync``, the requested
  rate: storbench.analysis.comparable), whether they differ point by point or between the
  runs, gets the verdict ``not comparable`` with the reason, its figures shown but left
  out of every summary.
- **Verdict** of a comparable pair: per repetition its total IOPS (for a workload that caps
  its own rate, fio ``rate``/``rate_iops``, its mean total latency: IOPS are what the plan
  asked for), in a two-sided Welch t-test of OTHER against BASELINE at 95 %: ``better`` or
  ``worse`` when p < 0.05, else ``no significant difference``. With fewer than two
  repetitions on either side, or a side without a usable measurement, the difference is
  ``untested`` (and ``p_value`` is None).
- **Summary** over the *judged* points (comparable, measured on both sides): the geometric
  mean of the per-point ratios OTHER / BASELINE of total IOPS (rate-capped points left out:
  their IOPS are the plan's) and of the mean latency, each with a 95 % bootstrap interval
  over the points (storbench.analysis.ratios: fixed seed, reproducible; it says how much the
  summary depends on which points were measured); ``wins``/``losses``/``ties``: points
  ``better``/``worse``/``no significant difference`` (only significant verdicts win or
  lose); ``higher``: points where OTHER's mean IOPS is higher (lower mean latency for a
  rate-capped one), significant or not. The same geometric means per iodepth (over block
  sizes and whatever else varies) and per block size; a point without ``iodepth`` (``bs``)
  counts as fio's default 1 (``4k``) when others set it. ``as_measured``: the same
  geometric means over every matched point with figures on both sides, not comparable ones
  included: what the figures say, never a verdict.
"""

from __future__ import annotations

import functools
import hashlib
import statistics
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from storbench.analysis import matching, sequential
from storbench.analysis.comparable import not_comparable
from storbench.analysis.ratios import NONE, RatioSummary, ratio, summarize_ratios
from storbench.analysis.sequential import Look
from storbench.analysis.stats import Spread, change_pct, welch
from storbench.analysis.summary import PointSummary

BETTER = "better"
WORSE = "worse"
NO_DIFFERENCE = "no significant difference"
#: known equal: repeated until the ratio's interval lay within the rule's margin
EQUAL = "equal"
UNTESTED = "untested"
NOT_COMPARABLE = "not comparable"
VERDICTS = (BETTER, WORSE, NO_DIFFERENCE, EQUAL, UNTESTED, NOT_COMPARABLE)

#: Significance level of the verdict (95 % confidence).
ALPHA = 0.05


@dataclass
class PointComparison:
    key: str  # match key (workload name + params, target excluded when comparing across targets)
    label: str  # e.g. "rand4k rw=randread bs=4k iodepth=32"
    params: dict[str, Any]
    base: PointSummary
    other: PointSummary
    iops_change_pct: float | None
    bw_change_pct: float | None
    mean_lat_change_pct: float | None  # of the judged latency (lat), negative = lower
    p99_lat_change_pct: float | None  # of the p99 named by p99_metric
    verdict: str  # one of VERDICTS
    p_value: float | None
    #: why the pair is not comparable (verdict NOT_COMPARABLE), else None
    reason: str | None = None
    #: what mean_lat_change_pct is of: "lat" (fio's total latency) or "clat" (no lat)
    lat_metric: str | None = None
    clat_mean_change_pct: float | None = None  # the completion latency, shown beside
    #: what p99_lat_change_pct is of: "lat", or "clat" when lat has no percentiles
    p99_metric: str | None = None
    #: repeated until known (``repeat: {until: significant}``): the look that stopped it
    #: (analysis/sequential.py), whose level, not 0.05, the verdict was held to
    sequential: Look | None = None

    @property
    def by_latency(self) -> bool:
        """Judged by latency (a rate-capped workload) rather than by IOPS."""
        return self.base.rate_capped

    @property
    def comparable(self) -> bool:
        return self.verdict != NOT_COMPARABLE

    @property
    def judged(self) -> bool:
        """Comparable and measured on both sides: counted in the summary."""
        return self.comparable and self.base.runs > 0 and self.other.runs > 0

    @property
    def significant(self) -> bool:
        return self.verdict in (BETTER, WORSE)

    def to_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "label": self.label,
            "params": self.params,
            "iops_change_pct": self.iops_change_pct,
            "bw_change_pct": self.bw_change_pct,
            "mean_lat_change_pct": self.mean_lat_change_pct,
            "lat_metric": self.lat_metric,
            "clat_mean_change_pct": self.clat_mean_change_pct,
            "p99_lat_change_pct": self.p99_lat_change_pct,
            "p99_metric": self.p99_metric,
            "iops_ratio": self.iops_ratio,
            "lat_ratio": self.lat_ratio,
            "verdict": self.verdict,
            "reason": self.reason,
            "p_value": self.p_value,
            **({"repeat_until": self._until_dict()} if self.sequential else {}),
            "judged_by": f"{self.lat_metric or 'latency'} mean" if self.by_latency else "IOPS",
            "higher": self.higher,
            "baseline": point_dict(self.base),
            "other": point_dict(self.other),
        }

    def _until_dict(self) -> dict[str, Any]:
        assert self.sequential is not None and self.base.until is not None
        return {**self.sequential.to_dict(), "rule": self.base.until.to_dict()}

    @functools.cached_property
    def iops_ratio(self) -> float | None:
        """OTHER / BASELINE of total IOPS; None without figures on both sides."""
        if self.base.runs == 0 or self.other.runs == 0:
            return None
        return ratio(self.base.total_iops, self.other.total_iops)

    @functools.cached_property
    def lat_ratio(self) -> float | None:
        """OTHER / BASELINE of the mean judged latency (the same metric on both sides)."""
        b, o = self.base, self.other
        if b.runs == 0 or o.runs == 0 or b.judged_latency_metric != o.judged_latency_metric:
            return None
        bl, ol = b.judged_latency, o.judged_latency
        return ratio(bl.mean if bl else None, ol.mean if ol else None)

    @property
    def higher(self) -> bool | None:
        """Whether OTHER's mean figure is the better one here (higher IOPS; lower mean
        latency for a rate-capped workload), significant or not; None without figures on
        both sides."""
        if self.by_latency:
            return None if self.mean_lat_change_pct is None else self.mean_lat_change_pct < 0
        return None if self.iops_change_pct is None else self.iops_change_pct > 0


@dataclass(frozen=True)
class Group:
    """The geometric means of the judged points with one value of iodepth (or bs)."""

    iops: RatioSummary
    lat: RatioSummary


@dataclass
class Comparison:
    base_name: str
    other_name: str
    matched: list[PointComparison]
    only_base: list[PointSummary]
    only_other: list[PointSummary]
    #: geometric means of the judged points' ratios (module doc)
    iops: RatioSummary = NONE
    lat: RatioSummary = NONE
    # value -> geometric means of the judged points with that iodepth (over block sizes)
    by_iodepth: dict[Any, Group] = field(default_factory=dict)
    by_bs: dict[Any, Group] = field(default_factory=dict)
    # options set to one value throughout each side, but to different values on the two
    # sides (the configuration under test, e.g. ioengine libaio vs psync): not matched on
    differs: dict[str, tuple[Any, Any]] = field(default_factory=dict)
    #: the same geometric means over every matched point with figures, comparable or not
    as_measured: Group = field(default_factory=lambda: Group(NONE, NONE))

    def count(self, verdict: str) -> int:
        return sum(1 for m in self.matched if m.verdict == verdict)

    @property
    def judged(self) -> list[PointComparison]:
        return [m for m in self.matched if m.judged]

    @property
    def wins(self) -> int:
        return self.count(BETTER)

    @property
    def losses(self) -> int:
        return self.count(WORSE)

    @property
    def ties(self) -> int:
        return self.count(NO_DIFFERENCE) + self.count(EQUAL)

    @property
    def total(self) -> int:
        """Judged points: comparable, with figures on both sides."""
        return len(self.judged)

    @property
    def higher(self) -> int:
        """Judged points where OTHER's mean figure is the better one, significant or not."""
        return sum(1 for m in self.judged if m.higher)

    @property
    def lat_metric(self) -> str | None:
        """What the latency summary is of: "lat", "clat", "mixed" or None."""
        metrics = {m.lat_metric for m in self.judged if m.lat_ratio is not None}
        return None if not metrics else metrics.pop() if len(metrics) == 1 else "mixed"

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON (base units: IOPS, bytes/s, ns; changes in percent)."""
        return {
            "baseline": self.base_name,
            "other": self.other_name,
            "summary": {
                **_ratios_dict(self.iops, self.lat),
                "lat_metric": self.lat_metric,
                "wins": self.wins,
                "losses": self.losses,
                "ties": self.ties,
                "total": self.total,
                "higher": self.higher,
                "verdicts": {v: self.count(v) for v in VERDICTS},
                "as_measured": _ratios_dict(self.as_measured.iops, self.as_measured.lat),
            },
            "differs": {k: {"baseline": v[0], "other": v[1]} for k, v in self.differs.items()},
            "by_iodepth": [_group_dict("iodepth", k, g) for k, g in self.by_iodepth.items()],
            "by_bs": [_group_dict("bs", k, g) for k, g in self.by_bs.items()],
            "points": [m.to_dict() for m in self.matched],
            "only_baseline": [point_dict(s) for s in self.only_base],
            "only_other": [point_dict(s) for s in self.only_other],
        }


def _ratios_dict(iops: RatioSummary, lat: RatioSummary) -> dict[str, Any]:
    return {
        "iops_ratio_geomean": iops.geomean,
        "iops_ratio_ci95": list(iops.ci95) if iops.ci95 else None,
        "points": iops.points,
        "lat_ratio_geomean": lat.geomean,
        "lat_ratio_ci95": list(lat.ci95) if lat.ci95 else None,
        "lat_points": lat.points,
    }


def _group_dict(name: str, value: Any, g: Group) -> dict[str, Any]:
    return {name: value, **_ratios_dict(g.iops, g.lat)}


def _spread_dict(sp: Spread | None) -> dict[str, Any] | None:
    return None if sp is None else asdict(sp)


def point_dict(s: PointSummary) -> dict[str, Any]:
    """A point's figures over all its I/Os, with their spread over repetitions."""
    tl = s.total_lat
    return {
        "target": s.target.to_dict(),
        "workload": s.workload,
        "params": s.params,
        "runs": s.runs,
        "failed": s.failed,
        **({"skipped": s.skipped} if s.skipped else {}),
        "iops": _spread_dict(s.iops_spread),
        "bw_bytes": _spread_dict(s.bw_spread),
        "lat_mean_ns": tl.mean if tl is not None else None,
        "lat_p99_ns": tl.percentiles.get("99") if tl is not None else None,
        "clat_mean_ns": _spread_dict(s.clat_mean_spread),
        "clat_p99_ns": s.clat_p99,
        **({"steady_state": [v.to_dict() for v in s.steady]} if s.steady else {}),
        "findings": [f.to_dict() for f in s.findings],
    }


def _group(
    judged: list[PointComparison],
    names: tuple[str, ...],
    default: Any,
    norm: Callable[[Any], tuple[int, float, str]],
) -> dict[Any, Group]:
    """Geometric means per value of the parameter ``names[0]`` (or its aliases): values that
    mean the same (``4k`` and ``4096``) are one group, shown as first written."""

    def value(m: PointComparison) -> Any:
        return next((m.params[n] for n in names if n in m.params), default)

    if not any(n in m.params for m in judged for n in names):
        return {}
    groups: dict[tuple[int, float, str], tuple[Any, list[PointComparison]]] = {}
    for m in judged:
        raw = value(m)
        groups.setdefault(norm(raw), (raw, []))[1].append(m)
    return {raw: _ratios(items) for _, (raw, items) in sorted(groups.items(), key=lambda kv: kv[0])}


def _ratios(items: list[PointComparison]) -> Group:
    """The geometric means of ``items``' ratios: IOPS of those not rate-capped (a rate-capped
    point's IOPS are what its plan asked for), latency of all."""
    return Group(
        iops=summarize_ratios([m.iops_ratio for m in items if not m.by_latency]),
        lat=summarize_ratios([m.lat_ratio for m in items]),
    )


def _label(s: PointSummary, label_keys: list[str], with_target: bool) -> str:
    shown = " ".join(f"{k}={s.params[k]}" for k in label_keys if k in s.params)
    text = f"{s.workload} {shown}".strip()
    return f"{s.target.label} {text}" if with_target else text


def _sides(b: PointSummary, o: PointSummary) -> tuple[list[float], list[float], bool] | None:
    """Each side's figure per repetition and whether higher is better; None: untested."""
    if b.rate_capped:
        if b.judged_latency_metric != o.judged_latency_metric:
            return None
        return b.rep_judged_latency_mean, o.rep_judged_latency_mean, False
    return b.rep_iops, o.rep_iops, True


def _sequential(b: PointSummary, o: PointSummary) -> tuple[str, float | None, Look] | None:
    """The verdict of a pair repeated until known (A against B of one rule), judged at the
    look that stopped it; None: not such a pair (compare's own test judges it)."""
    if b.until is None or b.until != o.until or {b.side, o.side} != {0, 1}:
        return None
    sides = _sides(b, o)
    if sides is None or b.runs == 0 or o.runs == 0:
        return None
    a, c, higher_is_better = sides
    seen = sequential.replay(a, c, b.until)
    if seen.state == sequential.EQUAL:
        return EQUAL, seen.p, seen
    if seen.state != sequential.SIGNIFICANT:
        return NO_DIFFERENCE if seen.p is not None else UNTESTED, seen.p, seen
    up = statistics.fmean(c[: seen.n]) > statistics.fmean(a[: seen.n])
    return (BETTER if up == higher_is_better else WORSE), seen.p, seen


def _verdict(b: PointSummary, o: PointSummary) -> tuple[str, float | None]:
    sides = _sides(b, o)
    if sides is None or b.runs == 0 or o.runs == 0:
        return UNTESTED, None
    a, c, higher_is_better = sides
    res = welch(a, c)
    if res is None:
        return UNTESTED, None
    if res.p_value >= ALPHA:
        return NO_DIFFERENCE, res.p_value
    up = res.t > 0
    return (BETTER if up == higher_is_better else WORSE), res.p_value


def _p99(s: PointSummary, metric: str) -> float | None:
    lat = s.total_lat if metric == "lat" else s.latency
    return lat.percentiles.get("99") if lat is not None else None


def compare_point(
    b: PointSummary,
    o: PointSummary,
    *,
    key: str = "",
    label: str = "",
    base_name: str = "baseline",
    other_name: str = "other",
) -> PointComparison:
    """Compare one pair of matched points (module doc for the definitions)."""
    both = b.runs > 0 and o.runs > 0
    # lat (submission + completion), or clat where there is no lat: like with like only
    metric = b.judged_latency_metric
    lat_both = both and metric is not None and metric == o.judged_latency_metric
    bl, ol = b.judged_latency, o.judged_latency
    # p99: of lat where both sides have lat percentiles, else of clat (labelled so)
    p99_metric = None
    if lat_both and _p99(b, "lat") is not None and _p99(o, "lat") is not None:
        p99_metric = "lat"
    elif both and b.latency_metric == o.latency_metric == "clat":
        p99_metric = "clat"
    clat_both = both and b.clat is not None and o.clat is not None
    reason = not_comparable(b, o, base_name=base_name, other_name=other_name)
    until = None if reason else _sequential(b, o)
    seen = until[2] if until else None
    verdict, p = (NOT_COMPARABLE, None) if reason else until[:2] if until else _verdict(b, o)
    return PointComparison(
        key=key,
        label=label or b.workload,
        params=b.params,
        base=b,
        other=o,
        iops_change_pct=change_pct(b.total_iops, o.total_iops) if both else None,
        bw_change_pct=change_pct(b.total_bw, o.total_bw) if both else None,
        mean_lat_change_pct=(
            change_pct(bl.mean if bl else None, ol.mean if ol else None) if lat_both else None
        ),
        p99_lat_change_pct=(
            change_pct(_p99(b, p99_metric), _p99(o, p99_metric)) if p99_metric else None
        ),
        verdict=verdict,
        p_value=p,
        reason=reason,
        lat_metric=metric if lat_both else None,
        clat_mean_change_pct=change_pct(b.clat_mean, o.clat_mean) if clat_both else None,
        p99_metric=p99_metric,
        sequential=seen,
    )


def compare(
    base: list[PointSummary], other: list[PointSummary], *, base_name: str, other_name: str
) -> Comparison:
    """Match the points of ``other`` with those of ``base`` and compare each pair."""
    differs = matching.differing_options(base, other)
    ignore = frozenset(differs)
    bkeys = [matching.param_key(s, ignore) for s in base]
    okeys = [matching.param_key(s, ignore) for s in other]
    with_target = len(set(bkeys)) != len(bkeys) or len(set(okeys)) != len(okeys)
    if with_target:
        bkeys, okeys = matching.with_target(base, bkeys), matching.with_target(other, okeys)
    label_keys = list(dict.fromkeys(k for s in [*base, *other] for k in s.axes))
    pending: dict[str, list[PointSummary]] = {}
    for k, s in zip(okeys, other, strict=True):
        pending.setdefault(k, []).append(s)
    matched: list[PointComparison] = []
    only_base: list[PointSummary] = []
    for k, b in zip(bkeys, base, strict=True):
        partners = pending.get(k)
        if not partners:
            only_base.append(b)
            continue
        o = partners.pop(0)
        matched.append(
            compare_point(
                b,
                o,
                key=hashlib.sha256(k.encode()).hexdigest()[:16],
                label=_label(b, label_keys, with_target),
                base_name=base_name,
                other_name=other_name,
            )
        )
    left = {id(s) for items in pending.values() for s in items}
    only_other = [s for s in other if id(s) in left]

    judged = [m for m in matched if m.judged]
    overall = _ratios(judged)
    measured = [m for m in matched if m.base.runs > 0 and m.other.runs > 0]
    return Comparison(
        base_name=base_name,
        other_name=other_name,
        matched=matched,
        only_base=only_base,
        only_other=only_other,
        iops=overall.iops,
        lat=overall.lat,
        by_iodepth=_group(judged, ("iodepth",), 1, matching.num_key),
        by_bs=_group(judged, ("bs", "blocksize"), "4k", matching.size_key),
        differs=differs,
        # the same points (none not comparable): the same figures, not computed twice
        as_measured=overall if len(measured) == len(judged) else _ratios(measured),
    )
