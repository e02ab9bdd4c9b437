"""A point's time chart (report/charts/timechart.py, timedraw.py): downsampling for drawing
only (a dip or a latency spike of one interval survives 21,600 intervals; at most MAX_DRAWN
points a line; every interval in exactly one bucket), ramp spans, hover slices, the sum of
hosts, and the SVG of a 6-hour series at 1 s staying small."""

from __future__ import annotations

import itertools
import random
import re

import pytest

from storbench.model.series import Interval
from storbench.model.units import fmt_iops, fmt_ns
from storbench.report.charts.timechart import (
    MAX_DRAWN,
    MAX_SLICES,
    Sample,
    bucket_size,
    downsample,
    ramp_spans,
    samples_of,
    time_chart,
)
from storbench.report.charts.timedraw import render_time_svg
from storbench.store import EventRow

SIX_HOURS = 6 * 3600  # intervals of 1 s
#: The most bytes the SVG of a 6-hour, two-direction series at 1 s may have.
SVG_LIMIT = 600_000


def series(
    n: int,
    dirs: tuple[str, ...] = ("read",),
    *,
    ramp: int = 0,
    dip: int | None = None,
    spike: int | None = None,
    seed: int = 1,
    host: str = "",
) -> list[Interval]:
    """``n`` intervals of 1 s per direction, about 3,000 IOPS and 50 µs p99; interval
    ``dip`` of the first direction completes no I/O, interval ``spike`` has a 40 ms p99."""
    rng = random.Random(seed)
    out = []
    for d in dirs:
        for s in range(n):
            ios = 0 if (d == dirs[0] and s == dip) else 3000 + rng.randint(-150, 150)
            p99 = 40e6 if s == spike else 50_000.0 + rng.random() * 5_000
            out.append(
                Interval(
                    seq=s,
                    t_ms=(s + 1) * 1000,
                    dur_ms=1000,
                    direction=d,
                    ios=ios,
                    bytes=ios * 4096,
                    lat_mean_ns=None if s < ramp else 20_000.0,
                    p50_ns=None if s < ramp else 18_000.0,
                    p99_ns=None if s < ramp else p99,
                    p999_ns=None if s < ramp else p99 * 1.5,
                    ramp=s < ramp,
                    host=host,
                )
            )
    return out


def test_series_downsampling_keeps_a_one_interval_dip_and_spike() -> None:
    dip, spike = 12_345, 17_001
    tc = time_chart(series(SIX_HOURS, dip=dip, spike=spike, ramp=30), title="p")
    assert tc is not None
    assert tc.per == 36 and "each drawn point = 36 intervals" in tc.note
    (line,) = tc.lines
    assert len(line.buckets) <= MAX_DRAWN + 1
    assert sum(b.n for b in line.buckets) == SIX_HOURS
    # the bucket holding the dip: its minimum is the dip, its mean barely moves
    (b,) = [b for b in line.buckets if b.start_ms <= dip * 1000 < b.end_ms]
    assert b.iops_min == 0 and b.iops > 2500
    assert min(x.iops_min for x in line.buckets) == 0
    assert sum(1 for x in line.buckets if x.iops_min < 2000) == 1
    # the spike is the worst p99 of its bucket, and of no other
    (b,) = [b for b in line.buckets if b.start_ms <= spike * 1000 < b.end_ms]
    assert b.p99_ns == 40e6
    assert sum(1 for x in line.buckets if (x.p99_ns or 0) > 1e6) == 1


@pytest.mark.parametrize("n", [1, 7, MAX_DRAWN - 1, MAX_DRAWN, MAX_DRAWN + 1, 5_000, SIX_HOURS])
def test_series_bucket_counts(n: int) -> None:
    samples = samples_of(series(n))["read"]
    per = bucket_size(n)
    buckets = downsample(samples, per)
    assert per == (1 if n <= MAX_DRAWN else -(-n // MAX_DRAWN))
    assert len(buckets) <= MAX_DRAWN
    assert all(1 <= b.n <= per for b in buckets)
    assert sum(b.n for b in buckets) == n
    # in time order, back to back, the first and last interval's ends kept
    assert buckets[0].start_ms == 0 and buckets[-1].end_ms == n * 1000
    assert all(a.end_ms == b.start_ms for a, b in itertools.pairwise(buckets))
    if per == 1:  # drawn as they are: the exact figures
        assert [b.iops for b in buckets] == [s.iops for s in samples]


def test_series_buckets_do_not_mix_ramp_and_measurement() -> None:
    samples = samples_of(series(100, ramp=5))["read"]
    buckets = downsample(samples, 10)
    assert [(b.ramp, b.n) for b in buckets[:3]] == [(True, 5), (False, 10), (False, 10)]
    assert sum(b.n for b in buckets) == 100


def test_series_ramp_spans() -> None:
    # two directions of 3 ramp intervals: one span, from the first start to the last end
    assert ramp_spans(samples_of(series(10, ("read", "write"), ramp=3))["read"]) == [(0, 3000)]
    tc = time_chart(series(10, ("read", "write"), ramp=3), title="p")
    assert tc is not None and tc.ramps == [(0, 3000)]
    # engine reports a few ms apart still make one span; a real gap makes two
    near = [Sample(0, 300, 700, 1, 1, None, True), Sample(1, 710, 1200, 1, 1, None, True)]
    assert ramp_spans(near) == [(300, 1200)]
    apart = [Sample(0, 0, 1000, 1, 1, None, True), Sample(5, 5000, 6000, 1, 1, None, True)]
    assert ramp_spans(apart) == [(0, 1000), (5000, 6000)]
    assert ramp_spans(samples_of(series(10))["read"]) == []


def test_series_hover_slices_hold_each_intervals_figures() -> None:
    rows = series(8, ("read", "write"), ramp=2)
    tc = time_chart(rows, title="p")
    assert tc is not None and len(tc.slices) == 8
    for s, (r, w) in zip(tc.slices, zip(rows[:8], rows[8:], strict=True), strict=True):
        assert f"read: {fmt_iops(r.iops)} IOPS" in s.tip
        assert f"write: {fmt_iops(w.iops)} IOPS" in s.tip
        assert ("ramp (not measured)" in s.tip) == r.ramp
        if not r.ramp:
            assert f"p99 {fmt_ns(r.p99_ns)}" in s.tip
    long = time_chart(series(SIX_HOURS, dip=100), title="p")
    assert long is not None and len(long.slices) <= MAX_SLICES
    assert "min 0.0," in long.slices[0].tip  # the dip, in the first slice's range


def test_series_points_on_hosts_are_drawn_as_the_sum_of_hosts() -> None:
    rows = series(5, host="h1", seed=1) + series(5, host="h2", seed=2)
    tc = time_chart(rows, title="p")
    assert tc is not None and tc.hosts == 2
    assert "summed over 2 hosts" in tc.note
    (line,) = tc.lines
    for b, (a, c) in zip(line.buckets, zip(rows[:5], rows[5:], strict=True), strict=True):
        assert b.iops == pytest.approx(a.iops + c.iops)
        assert b.p99_ns == max(a.p99_ns or 0, c.p99_ns or 0)
    # a point's own series, when it has one, is drawn rather than its hosts'
    own = time_chart(rows + series(5, seed=3), title="p")
    assert own is not None and own.hosts == 0
    assert [b.iops for b in own.lines[0].buckets] == [i.iops for i in series(5, seed=3)]


def test_series_markers_and_steady_window_follow_the_data_contract() -> None:
    t0 = 1_000_000.0
    events = [
        EventRow(1, 1, t0 + 2.5, "health", "HEALTH_WARN <b>1 osd down</b> and a long tail", {}),
        EventRow(2, 1, t0 + 4.0, "action", "kill osd.3", {}),
        EventRow(3, 1, t0 + 4.0, "preflight", "not a marker", {}),
        EventRow(4, 1, t0 + 60.0, "health", "after the point", {}),
    ]
    extra = {"steady_state": {"window_ms": [2000, 7000]}}
    tc = time_chart(
        series(10), title="p", started_at=t0, ended_at=t0 + 10.5, events=events, extra=extra
    )
    assert tc is not None
    assert [(m.x_ms, m.label) for m in tc.markers] == [
        (2500, events[0].message[:27] + "…"),
        (4000, "kill osd.3"),
    ]
    assert tc.markers[0].tip.endswith("HEALTH_WARN <b>1 osd down</b> and a long tail")
    assert tc.steady == (2000, 7000)
    for bad in ({}, {"steady_state": {}}, {"steady_state": {"window_ms": [5, "x"]}}):
        assert time_chart(series(3), title="p", extra=bad).steady is None  # type: ignore[union-attr]


def test_series_six_hours_render_to_a_small_svg() -> None:
    t0 = 1_000_000.0
    events = [EventRow(1, 1, t0 + 3600, "health", "HEALTH_WARN <script>x</script>", {})]
    tc = time_chart(
        series(SIX_HOURS, ("read", "write"), ramp=60, dip=9000),
        title="#1 <img src=x> · $a$",
        started_at=t0,
        ended_at=t0 + SIX_HOURS,
        events=events,
        extra={"steady_state": {"window_ms": [600_000, 20_000_000]}},
    )
    assert tc is not None
    svg = render_time_svg(tc, "t1-")
    assert len(svg.encode()) < SVG_LIMIT, len(svg)
    assert svg.startswith("<svg ") and "<script" not in svg and "<img" not in svg
    assert "&lt;img src=x&gt;" in svg and "&lt;script&gt;x&lt;/script&gt;" in svg
    assert "each drawn point = 36 intervals" in svg
    assert len(re.findall(r'class="pt ts"><title>', svg)) == len(tc.slices)
    assert len(re.findall(r'class="pt ev"><title>health at 3600.0 s', svg)) == 1
    ids = re.findall(r'\sid="([^"]+)"', svg)
    assert all(i.startswith("t1-") for i in ids) and len(ids) == len(set(ids))
    assert {"t1-sbsteady-0", "t1-sbsteady-1", "t1-sbramp0-0", "t1-sbramp0-1"} <= set(ids)
    # the drawn lines have no more vertices than the downsampled buckets
    longest = max(
        len(re.findall(r"[ML] [\d.-]+ [\d.-]+", d)) for d in re.findall(r'd="([^"]*)"', svg)
    )
    assert longest <= 2 * (MAX_DRAWN + 2), longest
