"""A point's time series for people: the timeline ``storbench show --point N`` prints, and
the CSV of every interval ``storbench export --series`` writes."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence

from storbench.model.series import Interval
from storbench.model.units import fmt_iops, fmt_ns, fmt_rate
from storbench.report.fmt import text_table

#: The most rows a timeline shows per direction; longer series are shown in groups of
#: consecutive intervals (the data stays whole in the database and the export).
TIMELINE_ROWS = 60


def _groups(rows: list[Interval], most: int) -> list[list[Interval]]:
    """``rows`` in at most ``most`` runs of consecutive intervals (ramp kept apart)."""
    size = -(-len(rows) // most) if len(rows) > most else 1
    out: list[list[Interval]] = []
    for r in rows:
        if out and len(out[-1]) < size and out[-1][-1].ramp == r.ramp:
            out[-1].append(r)
        else:
            out.append([r])
    return out


def timeline(intervals: Sequence[Interval], most: int = TIMELINE_ROWS) -> str:
    """A point's intervals as a table, per direction: when each ended, its IOPS and MiB/s,
    its latency (mean and percentiles of its own I/Os). A long series is grouped: a row's
    rates are its intervals' together, its latencies the worst of them."""
    own = [i for i in intervals if not i.host]
    if not own:
        return "no time series (the point ran before storbench recorded one, or reported none)"
    out = []
    for ddir in dict.fromkeys(i.direction for i in own):
        rows = sorted((i for i in own if i.direction == ddir), key=lambda i: i.seq)
        groups = _groups(rows, most)
        grouped = any(len(g) > 1 for g in groups)
        cells = [_cells(g) for g in groups]
        worst = " (worst)" if grouped else ""
        headers = [
            "t s",
            "IOPS",
            "MiB/s",
            f"clat mean{worst}",
            "p50" + worst,
            "p99" + worst,
            "p99.9" + worst,
            "",
        ]
        note = f", {len(rows) // len(groups)}+ intervals a row" if grouped else ""
        out.append(f"{ddir}: {len(rows)} intervals{note}")
        out.append(text_table(headers, cells, right=set(range(7))))
    return "\n".join(out)


def _cells(g: list[Interval]) -> list[str]:
    ios, nbytes, ms = sum(i.ios for i in g), sum(i.bytes for i in g), sum(i.dur_ms for i in g)

    def worst(vs: list[float | None]) -> str:
        known = [v for v in vs if v is not None]
        return fmt_ns(max(known)) if known else "-"

    return [
        f"{g[-1].t_ms / 1000:.1f}",
        fmt_iops(ios * 1000 / ms) if ms else "-",
        fmt_rate(nbytes * 1000 / ms) if ms else "-",
        worst([i.lat_mean_ns for i in g]),
        worst([i.p50_ns for i in g]),
        worst([i.p99_ns for i in g]),
        worst([i.p999_ns for i in g]),
        "ramp" if g[0].ramp else "",
    ]


SERIES_COLUMNS = (
    "run",
    "point",
    "host",
    "direction",
    "seq",
    "t_s",
    "dur_s",
    "ramp",
    "ios",
    "bytes",
    "iops",
    "bw_bytes",
    "lat_mean_ns",
    "p50_ns",
    "p99_ns",
    "p999_ns",
)


def series_csv(run_id: int, points: Sequence[tuple[int, Sequence[Interval]]]) -> str:
    """Every interval of the given points (0-based index, intervals), one CSV row each, in
    base units (s, bytes, bytes/s, ns); ``point`` is 1-based as ``show --point`` takes it."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(SERIES_COLUMNS)
    for idx, intervals in points:
        for i in intervals:
            lat = (i.lat_mean_ns, i.p50_ns, i.p99_ns, i.p999_ns)
            w.writerow(
                [
                    run_id,
                    idx + 1,
                    i.host,
                    i.direction,
                    i.seq,
                    i.t_ms / 1000,
                    i.dur_ms / 1000,
                    int(i.ramp),
                    i.ios,
                    i.bytes,
                    i.iops,
                    i.bw_bytes,
                    *("" if v is None else v for v in lat),
                ]
            )
    return buf.getvalue()
