"""A point's time chart, without matplotlib: its series (IOPS per direction over time, p99
latency below), the spans to shade (ramp, steady-state window), the run's events during the
point as labelled markers, and a hover text for each slice of time.

A long series is downsampled for drawing only: at most :data:`MAX_DRAWN` points per line,
each standing for ``per`` consecutive intervals; a drawn IOPS point keeps the bucket's mean
and its min-max envelope (a dip of a single interval stays visible), a drawn p99 the worst of
the bucket. The database keeps every interval (``storbench export --series``).

A point on several hosts without a series of its own (fio client/server) is drawn as the
sum of its hosts' IOPS per interval (``seq``), and the worst host's p99.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from storbench.model.metrics import DIRECTIONS
from storbench.model.series import Interval
from storbench.model.units import fmt_iops, fmt_ns, fmt_rate
from storbench.report.safe import one_line
from storbench.store import EventRow

#: Most points one line of a time chart draws: about one per pixel of its plot (6.5 in,
#: 624 px at 96 px/in: charts/timedraw.py), more would not show; 6 h at 1 s: 36 intervals
#: a point (a 6-hour chart: 140 KB of SVG, 1 s to draw).
MAX_DRAWN = 600
#: Most slices of time a chart has a hover text for.
MAX_SLICES = 150
#: Event kinds drawn as markers, and the most markers one chart draws.
MARKER_KINDS = ("health", "action")
MAX_MARKERS = 40
#: Characters of an event's message its marker's label shows.
LABEL_CHARS = 28


@dataclass(frozen=True)
class Sample:
    """One interval of one direction as drawn: its time span (ms after the engine started),
    rates and p99; for a sum over hosts, the hosts' rates added and the worst p99."""

    seq: int
    start_ms: float
    end_ms: float
    iops: float
    bw: float  # bytes/s
    p99_ns: float | None
    ramp: bool


@dataclass(frozen=True)
class Bucket:
    """Consecutive samples of one direction drawn as one point."""

    start_ms: float
    end_ms: float
    n: int
    iops: float  # mean over the bucket's time
    iops_min: float
    iops_max: float
    p99_ns: float | None  # the worst of the bucket
    ramp: bool

    @property
    def mid_ms(self) -> float:
        return (self.start_ms + self.end_ms) / 2


@dataclass
class DirLine:
    direction: str
    buckets: list[Bucket]


@dataclass(frozen=True)
class Marker:
    x_ms: float
    label: str  # short, one line
    tip: str  # the whole message, when it happened


@dataclass(frozen=True)
class Slice:
    """A span of time the chart shows a hover text for (every direction's figures)."""

    start_ms: float
    end_ms: float
    tip: str


@dataclass
class TimeChart:
    title: str  # the point: target, workload, options
    lines: list[DirLine]
    per: int  # intervals per drawn point
    interval_ms: int  # the usual length of an interval
    span_ms: float  # the x axis: 0 .. span
    ramps: list[tuple[float, float]] = field(default_factory=list)
    steady: tuple[float, float] | None = None
    markers: list[Marker] = field(default_factory=list)
    markers_left_out: int = 0
    slices: list[Slice] = field(default_factory=list)
    hosts: int = 0  # 0: the point's own series; N: the sum of N hosts'

    @property
    def has_p99(self) -> bool:
        return any(b.p99_ns is not None for ln in self.lines for b in ln.buckets)

    @property
    def note(self) -> str:
        """What a drawn point is (said on the chart and under it)."""
        every = _dur_text(self.interval_ms)
        if self.per > 1:
            text = (
                f"downsampled: each drawn point = {self.per} intervals of {every} "
                "(IOPS: their mean, band: their min-max; p99: their worst)"
            )
        else:
            text = f"each point = one interval of {every}"
        if self.hosts:
            text += f"; IOPS summed over {self.hosts} hosts, p99 the worst host's"
        if self.markers_left_out:
            text += f"; {self.markers_left_out} more events not marked"
        return text


def _dur_text(ms: float) -> str:
    return f"{ms / 1000:g} s" if ms < 60_000 else f"{ms / 60_000:g} min"


# --------------------------------------------------------------------------- samples


def samples_of(rows: Iterable[Interval]) -> dict[str, list[Sample]]:
    """The point's own intervals as samples, per direction, in ``seq`` order."""
    out: dict[str, list[Sample]] = {}
    for i in sorted(rows, key=lambda i: (i.direction, i.seq)):
        out.setdefault(i.direction, []).append(
            Sample(i.seq, i.t_ms - i.dur_ms, i.t_ms, i.iops, i.bw_bytes, i.p99_ns, i.ramp)
        )
    return _ordered(out)


def summed_hosts(rows: Iterable[Interval]) -> tuple[dict[str, list[Sample]], int]:
    """Each host's intervals added up per direction and ``seq``: IOPS and bandwidth summed,
    the worst p99, the widest time span; a ramp interval when any host's is. And how many
    hosts there were."""
    groups: dict[tuple[str, int], list[Interval]] = {}
    hosts = set()
    for i in rows:
        groups.setdefault((i.direction, i.seq), []).append(i)
        hosts.add(i.host)
    out: dict[str, list[Sample]] = {}
    for (ddir, seq), g in sorted(groups.items()):
        p99s = [i.p99_ns for i in g if i.p99_ns is not None]
        out.setdefault(ddir, []).append(
            Sample(
                seq,
                min(i.t_ms - i.dur_ms for i in g),
                max(i.t_ms for i in g),
                sum(i.iops for i in g),
                sum(i.bw_bytes for i in g),
                max(p99s) if p99s else None,
                any(i.ramp for i in g),
            )
        )
    return _ordered(out), len(hosts)


def _ordered(by_dir: dict[str, list[Sample]]) -> dict[str, list[Sample]]:
    order = DIRECTIONS
    return dict(sorted(by_dir.items(), key=lambda kv: order.index(kv[0]) if kv[0] in order else 9))


# --------------------------------------------------------------------------- downsampling


def bucket_size(longest: int, most: int = MAX_DRAWN) -> int:
    """Intervals per drawn point for a line of ``longest`` intervals: at most ``most``
    points (one more where a ramp ends inside a bucket)."""
    return max(1, math.ceil(longest / max(1, most)))


def downsample(samples: Sequence[Sample], per: int) -> list[Bucket]:
    """Runs of at most ``per`` consecutive samples, a new one where the ramp ends: each as
    its mean IOPS (over its time), min and max IOPS and worst p99."""
    out: list[Bucket] = []
    run: list[Sample] = []

    def close() -> None:
        ms = sum(s.end_ms - s.start_ms for s in run)
        iops = [s.iops for s in run]
        mean = sum(s.iops * (s.end_ms - s.start_ms) for s in run) / ms if ms > 0 else iops[0]
        p99s = [s.p99_ns for s in run if s.p99_ns is not None]
        out.append(
            Bucket(
                start_ms=run[0].start_ms,
                end_ms=run[-1].end_ms,
                n=len(run),
                iops=mean,
                iops_min=min(iops),
                iops_max=max(iops),
                p99_ns=max(p99s) if p99s else None,
                ramp=run[0].ramp,
            )
        )

    for s in samples:
        if run and (len(run) >= per or run[-1].ramp != s.ramp):
            close()
            run = []
        run.append(s)
    if run:
        close()
    return out


def ramp_spans(samples: Iterable[Sample]) -> list[tuple[float, float]]:
    """The time spans of ramp intervals (any direction), merged where they overlap or
    nearly touch (a gap shorter than half an interval: the engine's reports are not
    exactly back to back)."""
    spans = sorted((s.start_ms, s.end_ms) for s in samples if s.ramp)
    out: list[tuple[float, float]] = []
    for a, b in spans:
        if out and a <= out[-1][1] + (b - a) / 2:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


# --------------------------------------------------------------------------- hover texts


def clock(ms: float, span_ms: float) -> str:
    """A time of the chart: seconds for a short series, h:mm:ss for a long one."""
    if span_ms < 600_000:
        return f"{ms / 1000:.1f} s"
    s = round(ms / 1000)
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"


def slices(by_dir: dict[str, list[Sample]], span_ms: float, most: int = MAX_SLICES) -> list[Slice]:
    """Hover texts: the series cut by ``seq`` into at most ``most`` slices, each with every
    direction's figures (exact for a slice of one interval)."""
    seqs = sorted({s.seq for ss in by_dir.values() for s in ss})
    if not seqs:
        return []
    per = max(1, math.ceil(len(seqs) / most))
    index = {q: k // per for k, q in enumerate(seqs)}
    groups: list[dict[str, list[Sample]]] = [{} for _ in range(math.ceil(len(seqs) / per))]
    for d, ss in by_dir.items():
        for s in ss:
            groups[index[s.seq]].setdefault(d, []).append(s)
    out = []
    for parts in groups:
        got = [s for ss in parts.values() for s in ss]
        a, b = min(s.start_ms for s in got), max(s.end_ms for s in got)
        first, last = min(s.seq for s in got), max(s.seq for s in got)
        which = f"interval {first}" if first == last else f"intervals {first}-{last}"
        head = f"t {clock(a, span_ms)} - {clock(b, span_ms)} ({which})"
        if all(s.ramp for s in got):
            head += ", ramp (not measured)"
        lines = [head] + [_slice_line(d, ss) for d, ss in parts.items()]
        out.append(Slice(max(0.0, a), min(span_ms, b), "\n".join(lines)))
    return out


def _slice_line(ddir: str, ss: list[Sample]) -> str:
    p99s = [s.p99_ns for s in ss if s.p99_ns is not None]
    if len(ss) == 1:
        s = ss[0]
        return (
            f"{ddir}: {fmt_iops(s.iops)} IOPS, {fmt_rate(s.bw)} MiB/s, "
            f"p99 {fmt_ns(s.p99_ns) if p99s else '-'}"
        )
    ms = sum(s.end_ms - s.start_ms for s in ss)
    mean = sum(s.iops * (s.end_ms - s.start_ms) for s in ss) / ms if ms > 0 else ss[0].iops
    iops = [s.iops for s in ss]
    return (
        f"{ddir}: {fmt_iops(mean)} IOPS (min {fmt_iops(min(iops))}, max {fmt_iops(max(iops))}), "
        f"p99 worst {fmt_ns(max(p99s)) if p99s else '-'}"
    )


# --------------------------------------------------------------------------- markers


def markers(
    events: Iterable[EventRow], started_at: float | None, ended_at: float | None
) -> list[Marker]:
    """The run's health changes and actions during the point, at ms after its start."""
    if started_at is None or ended_at is None:
        return []
    out = []
    for e in events:
        if e.kind not in MARKER_KINDS or not started_at <= e.at <= ended_at:
            continue
        msg = one_line(e.message or e.kind)
        label = msg if len(msg) <= LABEL_CHARS else msg[: LABEL_CHARS - 1] + "…"
        x = (e.at - started_at) * 1000
        out.append(Marker(x, label, f"{e.kind} at {x / 1000:.1f} s: {e.message}"))
    return out


def steady_window(extra: dict[str, Any]) -> tuple[float, float] | None:
    """The measurement's steady-state window ``[start_ms, end_ms]``, when it has a sane one."""
    ss = extra.get("steady_state")
    window = ss.get("window_ms") if isinstance(ss, dict) else None
    if (
        isinstance(window, list | tuple)
        and len(window) == 2
        and all(isinstance(v, int | float) and math.isfinite(v) for v in window)
        and window[0] <= window[1]
    ):
        return float(window[0]), float(window[1])
    return None


# --------------------------------------------------------------------------- the chart


def time_chart(
    intervals: Sequence[Interval],
    *,
    title: str,
    started_at: float | None = None,
    ended_at: float | None = None,
    events: Iterable[EventRow] = (),
    extra: dict[str, Any] | None = None,
    most: int = MAX_DRAWN,
) -> TimeChart | None:
    """A point's time chart from all its intervals (``store.series.of_point(run, idx,
    host=None)``): its own series, else the sum of its hosts'. None without intervals."""
    own = [i for i in intervals if not i.host]
    hosts = 0
    if own:
        by_dir = samples_of(own)
    elif intervals:
        by_dir, hosts = summed_hosts(intervals)
    else:
        return None
    every = [s for ss in by_dir.values() for s in ss]
    durs = sorted(s.end_ms - s.start_ms for s in every)
    steady = steady_window(extra or {})
    marks = markers(events, started_at, ended_at)
    span = max([s.end_ms for s in every] + [m.x_ms for m in marks] + [steady[1] if steady else 0])
    per = bucket_size(max(len(ss) for ss in by_dir.values()), most)
    return TimeChart(
        title=title,
        lines=[DirLine(d, downsample(ss, per)) for d, ss in by_dir.items()],
        per=per,
        interval_ms=round(durs[len(durs) // 2]),
        span_ms=max(span, 1.0),
        ramps=ramp_spans(every),
        steady=steady,
        markers=marks[:MAX_MARKERS],
        markers_left_out=max(0, len(marks) - MAX_MARKERS),
        slices=slices(by_dir, max(span, 1.0)),
        hosts=hosts,
    )
