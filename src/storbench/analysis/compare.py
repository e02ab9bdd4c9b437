"""A against B: per-point relative changes, significance, and seed 004's summary.

Definitions (also in the README):

- **Matching.** Points match when their workload name and every workload parameter are
  equal (values compared as text, so ``iodepth: 32`` matches an imported ``"32"``). The
  target is left out, so two targets, hosts or runs of the same plan line up; it is put
  back only when a side has several points with the same parameters (several targets in
  one run), so that ``/dev/sdb`` is compared with ``/dev/sdb``. Points of one side without
  a partner are listed in ``only_base``/``only_other``, never dropped.
- **Figures of a point** are over all its I/Os, whatever their direction: total IOPS and
  bandwidth (read + write + trim), and the completion latency (clat) of every I/O — its
  sample-weighted mean and the p99 of the summed histograms. A 70/30 randrw point is thus
  judged by all it did, not by its reads alone. A point of an engine without clat (rados
  bench) has its lat (submission to completion) instead, compared only with lat, and no p99.
- **Changes** are ``(other - base) / base`` in percent: of the means over repetitions for
  IOPS and bandwidth, of the mean (and p99) over all I/Os of all repetitions for latency
  (pooled moments, merged histograms: a repetition that did more I/O weighs more); for
  latency negative is better (lower).
- **Beat** (seed 004's "Proxmox beat VMware in 56 of 57 tests"): OTHER's mean total IOPS is
  higher than BASELINE's — a plain comparison of means, significant or not. For a workload
  that caps its own rate (fio ``rate``/``rate_iops``), IOPS are what the plan asked for, so
  there the figure is the mean clat and lower beats.
- **Verdict**: the same figure, per repetition (each repetition's total IOPS, or its mean
  clat for a rate-capped workload), in a two-sided Welch t-test of OTHER against BASELINE
  at 95 %: ``better`` or ``worse`` when p < 0.05, else ``no significant difference``. With
  fewer than two repetitions on either side, or a side without a usable measurement, the
  difference is ``untested`` (and ``p_value`` is None).
- **Summary**: ``wins`` of ``total`` matched points with figures on both sides; the average
  IOPS gain and average mean-latency reduction (``-change``, positive = OTHER lower) over
  those points; the same per iodepth (a plain mean over the points at that iodepth, i.e.
  over the block sizes and whatever else varies — seed 004's "averaged across block
  sizes") and per block size. A point without ``iodepth`` (``bs``) counts as fio's default
  1 (``4k``) when others set it.
"""

from __future__ import annotations

import hashlib
import json
import statistics
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from storbench.analysis.stats import Spread, change_pct, welch
from storbench.analysis.summary import PointSummary
from storbench.model.units import UnitError, parse_size

BETTER = "better"
WORSE = "worse"
NO_DIFFERENCE = "no significant difference"
UNTESTED = "untested"
VERDICTS = (BETTER, WORSE, NO_DIFFERENCE, UNTESTED)

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
    mean_lat_change_pct: float | None  # clat mean, negative = lower latency
    p99_lat_change_pct: float | None
    verdict: str  # "better" | "worse" | "no significant difference" | "untested"
    p_value: float | None

    @property
    def by_latency(self) -> bool:
        """Judged by latency (a rate-capped workload) rather than by IOPS."""
        return self.base.rate_capped

    def to_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "label": self.label,
            "params": self.params,
            "iops_change_pct": self.iops_change_pct,
            "bw_change_pct": self.bw_change_pct,
            "mean_lat_change_pct": self.mean_lat_change_pct,
            "p99_lat_change_pct": self.p99_lat_change_pct,
            "verdict": self.verdict,
            "p_value": self.p_value,
            "judged_by": "clat mean" if self.by_latency else "IOPS",
            "beat": self.beat,
            "baseline": point_dict(self.base),
            "other": point_dict(self.other),
        }

    @property
    def beat(self) -> bool | None:
        """Whether OTHER beat BASELINE here (module doc); None without figures on both sides."""
        if self.by_latency:
            return None if self.mean_lat_change_pct is None else self.mean_lat_change_pct < 0
        return None if self.iops_change_pct is None else self.iops_change_pct > 0


@dataclass
class Comparison:
    base_name: str
    other_name: str
    matched: list[PointComparison]
    only_base: list[PointSummary]
    only_other: list[PointSummary]
    wins: int
    total: int
    avg_iops_gain_pct: float | None
    avg_lat_reduction_pct: float | None
    # value -> (avg iops gain %, avg lat reduction %), averaged over block sizes
    by_iodepth: dict[Any, tuple[float | None, float | None]]
    by_bs: dict[Any, tuple[float | None, float | None]]
    # options set to one value throughout each side, but to different values on the two
    # sides (the configuration under test, e.g. ioengine libaio vs psync): not matched on
    differs: dict[str, tuple[Any, Any]] = field(default_factory=dict)

    def count(self, verdict: str) -> int:
        return sum(1 for m in self.matched if m.verdict == verdict)

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON (base units: IOPS, bytes/s, ns; changes in percent)."""
        return {
            "baseline": self.base_name,
            "other": self.other_name,
            "summary": {
                "wins": self.wins,
                "total": self.total,
                "avg_iops_gain_pct": self.avg_iops_gain_pct,
                "avg_lat_reduction_pct": self.avg_lat_reduction_pct,
                "verdicts": {v: self.count(v) for v in VERDICTS},
            },
            "differs": {k: {"baseline": v[0], "other": v[1]} for k, v in self.differs.items()},
            "by_iodepth": [_group_dict("iodepth", k, v) for k, v in self.by_iodepth.items()],
            "by_bs": [_group_dict("bs", k, v) for k, v in self.by_bs.items()],
            "points": [m.to_dict() for m in self.matched],
            "only_baseline": [point_dict(s) for s in self.only_base],
            "only_other": [point_dict(s) for s in self.only_other],
        }


def _group_dict(name: str, value: Any, gains: tuple[float | None, float | None]) -> dict[str, Any]:
    return {name: value, "avg_iops_gain_pct": gains[0], "avg_lat_reduction_pct": gains[1]}


def _spread_dict(sp: Spread | None) -> dict[str, Any] | None:
    return None if sp is None else asdict(sp)


def point_dict(s: PointSummary) -> dict[str, Any]:
    """A point's figures over all its I/Os, with their spread over repetitions."""
    return {
        "target": s.target.to_dict(),
        "workload": s.workload,
        "params": s.params,
        "runs": s.runs,
        "failed": s.failed,
        "iops": _spread_dict(s.iops_spread),
        "bw_bytes": _spread_dict(s.bw_spread),
        "clat_mean_ns": _spread_dict(s.clat_mean_spread),
        "clat_p99_ns": s.clat_p99,
        **({"steady_state": [v.to_dict() for v in s.steady]} if s.steady else {}),
    }


def _text(v: Any) -> str:
    if isinstance(v, bool):
        return "1" if v else "0"
    return str(v)


def _param_key(s: PointSummary, ignore: frozenset[str] = frozenset()) -> str:
    params = sorted((k, _text(v)) for k, v in s.params.items() if k not in ignore)
    return json.dumps([s.workload, params])


def constant_options(items: list[PointSummary]) -> dict[str, str]:
    """Options that every point of ``items`` sets, to the same value."""
    if not items:
        return {}
    first = {k: _text(v) for k, v in items[0].params.items()}
    for s in items[1:]:
        first = {k: v for k, v in first.items() if _text(s.params.get(k, object())) == v}
    return first


def differing_options(
    base: list[PointSummary], other: list[PointSummary]
) -> dict[str, tuple[Any, Any]]:
    """Options constant within each side but different between the sides: what the two runs
    were set up to compare (ioengine, direct, ...). Matching ignores them."""
    cb, co = constant_options(base), constant_options(other)
    return {k: (base[0].params[k], other[0].params[k]) for k in cb if k in co and cb[k] != co[k]}


def _with_target(items: list[PointSummary], keys: list[str]) -> list[str]:
    return [s.target.label + "\0" + k for s, k in zip(items, keys, strict=True)]


def _mean(values: list[float | None]) -> float | None:
    vals = [v for v in values if v is not None]
    return statistics.fmean(vals) if vals else None


def _size_key(v: Any) -> tuple[int, float, str]:
    try:
        return (0, float(parse_size(v)), "")
    except (UnitError, ValueError):
        return (1, 0.0, str(v))


def _num_key(v: Any) -> tuple[int, float, str]:
    try:
        return (0, float(v), "")
    except (TypeError, ValueError):
        return (1, 0.0, str(v))


def _group(
    judged: list[PointComparison],
    names: tuple[str, ...],
    default: Any,
    norm: Callable[[Any], tuple[int, float, str]],
) -> dict[Any, tuple[float | None, float | None]]:
    """Average gains per value of the parameter ``names[0]`` (or its aliases): values that
    mean the same (``4k`` and ``4096``) are one group, shown as first written."""

    def value(m: PointComparison) -> Any:
        return next((m.params[n] for n in names if n in m.params), default)

    if not any(n in m.params for m in judged for n in names):
        return {}
    groups: dict[tuple[int, float, str], tuple[Any, list[PointComparison]]] = {}
    for m in judged:
        raw = value(m)
        groups.setdefault(norm(raw), (raw, []))[1].append(m)
    return {
        raw: (
            _mean([m.iops_change_pct for m in items]),
            _mean([_reduction(m) for m in items]),
        )
        for _, (raw, items) in sorted(groups.items(), key=lambda kv: kv[0])
    }


def _reduction(m: PointComparison) -> float | None:
    return -m.mean_lat_change_pct if m.mean_lat_change_pct is not None else None


def _label(s: PointSummary, label_keys: list[str], with_target: bool) -> str:
    shown = " ".join(f"{k}={s.params[k]}" for k in label_keys if k in s.params)
    text = f"{s.workload} {shown}".strip()
    return f"{s.target.label} {text}" if with_target else text


def _verdict(b: PointSummary, o: PointSummary) -> tuple[str, float | None]:
    if b.rate_capped:
        a, c, higher_is_better = b.rep_clat_mean, o.rep_clat_mean, False
    else:
        a, c, higher_is_better = b.rep_iops, o.rep_iops, True
    if b.runs == 0 or o.runs == 0:
        return UNTESTED, None
    res = welch(a, c)
    if res is None:
        return UNTESTED, None
    if res.p_value >= ALPHA:
        return NO_DIFFERENCE, res.p_value
    up = res.t > 0
    return (BETTER if up == higher_is_better else WORSE), res.p_value


def compare_point(
    b: PointSummary, o: PointSummary, *, key: str = "", label: str = ""
) -> PointComparison:
    """Compare one pair of matched points (module doc for the definitions)."""
    both = b.runs > 0 and o.runs > 0
    # clat, or lat for an engine without clat (rados bench): compared only like with like
    lat_both = both and b.latency_metric == o.latency_metric
    verdict, p = _verdict(b, o)
    return PointComparison(
        key=key,
        label=label or b.workload,
        params=b.params,
        base=b,
        other=o,
        iops_change_pct=change_pct(b.total_iops, o.total_iops) if both else None,
        bw_change_pct=change_pct(b.total_bw, o.total_bw) if both else None,
        mean_lat_change_pct=change_pct(b.latency_mean, o.latency_mean) if lat_both else None,
        p99_lat_change_pct=change_pct(b.latency_p99, o.latency_p99) if lat_both else None,
        verdict=verdict,
        p_value=p,
    )


def compare(
    base: list[PointSummary], other: list[PointSummary], *, base_name: str, other_name: str
) -> Comparison:
    """Match the points of ``other`` with those of ``base`` and compare each pair."""
    differs = differing_options(base, other)
    ignore = frozenset(differs)
    bkeys = [_param_key(s, ignore) for s in base]
    okeys = [_param_key(s, ignore) for s in other]
    with_target = len(set(bkeys)) != len(bkeys) or len(set(okeys)) != len(okeys)
    if with_target:
        bkeys, okeys = _with_target(base, bkeys), _with_target(other, okeys)
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
            )
        )
    left = {id(s) for items in pending.values() for s in items}
    only_other = [s for s in other if id(s) in left]

    judged = [m for m in matched if m.beat is not None]
    return Comparison(
        base_name=base_name,
        other_name=other_name,
        matched=matched,
        only_base=only_base,
        only_other=only_other,
        wins=sum(1 for m in judged if m.beat),
        total=len(judged),
        avg_iops_gain_pct=_mean([m.iops_change_pct for m in judged]),
        avg_lat_reduction_pct=_mean([_reduction(m) for m in judged]),
        by_iodepth=_group(judged, ("iodepth",), 1, _num_key),
        by_bs=_group(judged, ("bs", "blocksize"), "4k", _size_key),
        differs=differs,
    )
