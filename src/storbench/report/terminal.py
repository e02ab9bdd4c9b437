"""Terminal output: progress while running, summary tables afterwards.

On a terminal the progress is a live bar; in a log (CI, a pipe) it is one plain line per
point, so the output stays readable.

Tables and lines here hold names, paths and fio's messages as plain strings: print them on
a :func:`storbench.report.safe.console`, which shows every string as text (a plain Rich
console would read ``[/dev/sdb]`` as markup). The progress prints its own lines safely.
"""

from __future__ import annotations

import time
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, Progress, ProgressColumn, Task, TextColumn
from rich.table import Table
from rich.text import Text

from storbench.analysis import steady
from storbench.analysis.summary import PointSummary
from storbench.analysis.sweep import sweeps
from storbench.model.findings import Finding
from storbench.model.metrics import DIRECTIONS, OVERLAP_MIN, Measurement
from storbench.model.series import Interval
from storbench.model.units import fmt_duration, fmt_iops, fmt_ns, fmt_rate
from storbench.plan import Point
from storbench.report.ceph import CephReport, cluster_line
from storbench.report.comparison import comparison_text  # noqa: F401  (re-exported: cli, tests)
from storbench.report.fmt import (
    LAT_NOTE,
    AnswerTable,
    SummaryLead,
    fmt_direction_latency,
    fmt_spread,
    latency_label,
    text_table,
)
from storbench.report.safe import one_line, visible


class _Eta:
    """ETA from the planned durations of the points still to run."""

    def __init__(self, points: list[Point]) -> None:
        self.planned = [p.est_seconds for p in points]
        self.done = 0
        self.actual: list[float] = []
        self.current_started: float | None = None

    def _guess(self, est: float | None) -> float:
        if est is not None:
            return est
        return sum(self.actual) / len(self.actual) if self.actual else 10.0

    def remaining(self) -> float:
        rest = sum(self._guess(e) for e in self.planned[self.done + 1 :])
        if self.done < len(self.planned) and self.current_started is not None:
            cur = self._guess(self.planned[self.done])
            rest += max(cur - (time.monotonic() - self.current_started), 0.0)
        elif self.done < len(self.planned):
            rest += self._guess(self.planned[self.done])
        return rest


class _EtaColumn(ProgressColumn):
    def __init__(self, eta: _Eta) -> None:
        super().__init__()
        self.eta = eta

    def render(self, task: Task) -> Text:
        return Text(f"ETA {fmt_duration(self.eta.remaining())}", style="progress.remaining")


def point_result_line(meas: Measurement) -> str:
    line = _result_line(meas)
    verdict = steady.verdict_of(meas)
    return f"{line}; {steady.short(verdict)}" if verdict is not None else line


def round_line(point: Point, n: int, value: float, verdict: steady.Verdict | None) -> str:
    """What a steady-state round gave, and the window so far."""
    cfg = point.steady
    metric = cfg.metric if cfg else "iops"
    shown = {"iops": f"{fmt_iops(value)} IOPS", "bw": f"{fmt_rate(value)} MiB/s"}.get(
        metric, f"mean latency {fmt_ns(value)}"
    )
    line = f"round {n}: {shown}"
    if verdict is not None and cfg is not None:
        state = "steady" if verdict.reached else "not yet"
        line += (
            f"; rounds {verdict.first}-{verdict.last}: range {verdict.range_pct:.1f} % "
            f"(≤ {cfg.range_pct:g}), slope {verdict.slope_pct:.1f} % (≤ {cfg.slope_pct:g}): "
            f"{state}"
        )
    return line


def _result_line(meas: Measurement) -> str:
    if meas.status == "skipped":  # its error says so, and why (execute/climbs.py)
        return meas.error or "skipped"
    if meas.status != "ok" and not (meas.status == "partial" and meas.hosts):
        return f"{meas.status.upper()}: {meas.error}"
    if meas.hosts:
        line = _direction_parts(meas) + " " + host_summary(meas)
        return f"PARTIAL: {meas.error}; the others: {line}" if meas.status != "ok" else line
    return _direction_parts(meas)


def _direction_parts(meas: Measurement) -> str:
    parts = []
    for ddir in DIRECTIONS:
        d = meas.direction(ddir)
        if d is None:
            continue
        p99 = d.clat.percentiles.get("99") if d.clat else None
        if d.clat is None and d.lat is not None:  # rados bench: lat, no percentiles
            parts.append(
                f"{ddir} {fmt_iops(d.iops)} IOPS {fmt_rate(d.bw_bytes)} MiB/s "
                f"lat mean {fmt_ns(d.lat.mean)}"
            )
            continue
        parts.append(
            f"{ddir} {fmt_iops(d.iops)} IOPS {fmt_rate(d.bw_bytes)} MiB/s p99 {fmt_ns(p99)}"
        )
    return "; ".join(parts) or "no I/O"


class ProgressReporter:
    """Observer for the runner: live bar on a terminal, plain lines otherwise."""

    def __init__(self, console: Console, points: list[Point], *, offset: int = 0) -> None:
        self.console = console
        self.live = console.is_terminal
        self.eta = _Eta(points)
        self.offset = offset
        self.progress: Progress | None = None
        self.task: Any = None
        self.said_at: dict[int, int] = {}  # point -> the t (ms) of its last interval line

    def __enter__(self) -> ProgressReporter:
        if self.live:
            self.progress = Progress(
                TextColumn("{task.fields[n]}", style="bold", markup=False),
                BarColumn(),
                TextColumn("{task.description}", markup=False),  # made visible() below
                _EtaColumn(self.eta),
                console=self.console,
                transient=True,
            )
            self.progress.__enter__()
            self.task = self.progress.add_task("", total=len(self.eta.planned), n="")
        return self

    def __exit__(self, *exc: object) -> None:
        if self.progress is not None:
            self.progress.__exit__(None, None, None)

    def _say(self, text: str, style: str | None = None) -> None:
        """A line of text on any console: names and fio's messages never as markup."""
        self.console.print(
            visible(text), style=style, markup=False, emoji=False, highlight=False, soft_wrap=True
        )

    def point_started(self, point: Point, n: int, total: int) -> None:
        self.eta.current_started = time.monotonic()
        while len(self.eta.planned) < total:  # a capacity search's next step (searches.py)
            self.eta.planned.append(point.est_seconds)
            if self.progress is not None:
                self.progress.update(self.task, total=len(self.eta.planned))
        label = f"[{n}/{total}]"
        desc = f"{point.target.label} {point.label()}"
        if point.repetition:
            desc += f" (repetition {point.repetition + 1})"
        if self.progress is not None:
            self.progress.update(self.task, description=one_line(desc), n=label)
        else:
            self._say(f"{label} {desc}  (ETA {fmt_duration(self.eta.remaining())})")

    def point_finished(
        self, point: Point, meas: Measurement, n: int, total: int, seconds: float
    ) -> None:
        self.eta.done += 1
        if meas.status != "skipped":  # no time spent: not one to estimate the rest by
            self.eta.actual.append(seconds)
        self.eta.current_started = None
        line = point_result_line(meas)
        style = {"ok": None, "skipped": "dim"}.get(meas.status, "red")
        if self.progress is not None:
            self.progress.advance(self.task)
            self._say(f"[{n}/{total}] {point.label()}: {line}", style)
        else:
            self._say(f"      -> {line}", style)
        for f in meas.findings:
            host = f" on {f.host}" if f.host else ""
            self._say(f"      finding {f.code}{host}: {f.evidence}", "yellow")

    def finding(self, point: Point, finding: Finding) -> None:
        """A finding only the whole run showed, said once its points ran."""
        host = f" on {finding.host}" if finding.host else ""
        self._say(
            f"finding {finding.code} of point {point.index + 1} ({point.label()}){host}: "
            f"{finding.evidence}",
            "yellow",
        )

    def round_finished(
        self, point: Point, n: int, value: float, verdict: steady.Verdict | None
    ) -> None:
        self._say(f"      {round_line(point, n, value, verdict)}")

    def phase(self, point: Point, text: str) -> None:
        """A phase before the point's measurement (its preconditioning)."""
        self._say(f"      {text}")

    def ceph_health(self, cluster: str, sample: Any) -> None:
        """A Ceph cluster's health sample (from a monitor's thread): the run's events keep
        its changes and the timeline shows them; the progress lines stay the points'."""

    def intervals(self, point: Point, rows: list[Interval]) -> None:
        """The latest interval's figures: on the live line, and as a line a minute of the
        point's load on a plain console (a soak runs for hours)."""
        own = [r for r in rows if not r.host] or rows
        t = max(r.t_ms for r in own)
        latest = [r for r in own if r.t_ms == t]
        figures = "; ".join(
            f"{r.direction} {fmt_iops(r.iops)} IOPS p99 {fmt_ns(r.p99_ns)}" for r in latest
        )
        planned = f" of {fmt_duration(point.est_seconds)}" if point.est_seconds else ""
        line = f"{fmt_duration(t / 1000)}{planned}: {figures}"
        if self.progress is not None:
            desc = f"{point.target.label} {point.label()}  {line}"
            self.progress.update(self.task, description=one_line(desc))
        elif t - self.said_at.get(point.index, 0) >= 60_000:
            self.said_at[point.index] = t
            self._say(f"      {line}")

    def point_interrupted(self, point: Point) -> None:
        self._say(f"interrupted during {point.label()}: that point is not recorded", "yellow")


def answer_text(tables: list[AnswerTable], kind: str | None = None) -> str:
    """A suite's answer (the report model's tables) as plain aligned text: each table's
    title, its rows, its notes."""
    if not tables:
        return f"(no point of this run answers the {kind} report)"
    out: list[str] = []
    for t in tables:
        out += [t.title, text_table(t.headers, t.rows, t.right), *t.notes, ""]
    return "\n".join(out)


def summary_table(
    summaries: list[PointSummary], title: str | None = None, limit: int | None = None
) -> Table:
    """One row per point and direction: the point's swept values, IOPS, MiB/s, latency;
    with ``limit``, of the first ``limit`` points only (the columns are the whole run's)."""
    layout = SummaryLead.of(summaries)
    reps = layout.reps
    shown = summaries if limit is None else summaries[:limit]
    show_err = any(s.failed or s.skipped for s in shown)
    metrics = [ds.latency_metric for s in summaries for ds in s.dirs.values()]
    label = latency_label(metrics)
    t = Table(title=title, title_justify="left")
    if "lat" in metrics:
        t.caption = LAT_NOTE
        t.caption_justify = "left"
    for c in layout.columns():
        t.add_column(c, justify="left" if c in ("target", "workload") else "right")
    t.add_column("dir")
    for c in ("IOPS", "MiB/s", f"{label} mean", f"{label} p99"):
        t.add_column(c, justify="right")
        if c == "IOPS" and reps > 1:
            t.add_column("IOPS ±95%", justify="right")
    if show_err:
        t.add_column("error")
    for s in shown:
        lead = layout.cells(s)
        dirs = [d for d in DIRECTIONS if d in s.dirs] or ["-"]
        for i, d in enumerate(dirs):
            ds = s.dirs.get(d)
            row = lead if i == 0 else [""] * len(lead)
            row = [
                *row,
                d,
                fmt_iops(ds.iops_mean) if ds else "-",
                *([fmt_spread(ds.iops_spread if ds else None)] if reps > 1 else []),
                fmt_rate(ds.bw_mean) if ds else "-",
                fmt_direction_latency(ds, "mean", label),
                fmt_direction_latency(ds, "99", label),
            ]
            if show_err:
                row.append(s.note if i == 0 else "")
            empty = "dim" if s.only_skipped else "red"
            t.add_row(*row, style=empty if s.runs == 0 else None)
    return t


# ---------------------------------------------------------------------------- many hosts


def host_summary(meas: Measurement) -> str:
    """``[3 hosts, all running 99.9 % of the time]`` after a multi-host point's figures."""
    x = meas.extra
    n, ok = len(meas.hosts), sum(1 for m in meas.hosts.values() if m.status == "ok")
    if x.get("engine") == "rados bench":  # concurrent rados bench processes
        text = f"{n} clients" if ok == n else f"{ok} of {n} clients"
        if "window" in x:
            text += f", all running together {x['window']['seconds']:.2f} s"
        return f"[{text}]"
    text = f"{n} host{'s' if n != 1 else ''}" if ok == n else f"{ok} of {n} hosts"
    if "overlap" in x:
        text += f", all running {100 * x['overlap']:.1f} % of the time"
        if x.get("low_overlap"):
            text += f" (< {100 * OVERLAP_MIN:.0f} %!)"
    elif x.get("aggregate") == "sum of host rates":
        text += ", start times unknown: sum of the hosts' rates"
    return f"[{text}]"


def _seconds(v: float | None) -> str:
    return "-" if v is None else f"{v:.3f}"


def hosts_table(rows: list[Any], title: str | None = None) -> Table:
    """Per point with hosts: the aggregate, then each host's own figures and when it ran
    (seconds from the moment the fio servers began the point)."""
    t = Table(title=title, title_justify="left")
    metrics = [
        d.latency_metric
        for r in rows
        for m in (r.measurement, *r.measurement.hosts.values())
        for d in m.directions.values()
        if d.active
    ]
    label = latency_label(metrics)
    if "lat" in metrics:
        t.caption = LAT_NOTE
        t.caption_justify = "left"
    for c in ("point", "host", "status", "dir", "IOPS", "MiB/s", f"{label} mean", f"{label} p99"):
        t.add_column(
            c, justify="right" if c in ("point", "IOPS", "MiB/s") or label in c else "left"
        )
    t.add_column("ran (s)", justify="right")
    for r in rows:
        meas: Measurement = r.measurement
        label = f"{r.point_idx + 1}"
        if r.point is not None and r.point.axes:
            label += " " + " ".join(f"{k}={v}" for k, v in r.point.axes.items())
        x = meas.extra
        ok = sum(1 for m in meas.hosts.values() if m.status == "ok")
        timing = (
            f"window {x['window_s']:.3f} of {x['span_s']:.3f}"
            if "window_s" in x
            else ("sum of rates" if x.get("aggregate") == "sum of host rates" else "")
        )
        entries: list[tuple[str, str, Measurement, str]] = [
            (label, f"all ({ok}/{len(meas.hosts)})", meas, timing)
        ]
        for h, m in meas.hosts.items():
            ran = (
                f"{_seconds(m.extra.get('start_s'))}-{_seconds(m.extra.get('end_s'))}"
                if "end_s" in m.extra
                else (f"to {m.extra['last_report_s']:.3f}" if "last_report_s" in m.extra else "")
            )
            entries.append(("", h, m, ran))
        for i, (pt, host, m, ran) in enumerate(entries):
            dirs = [d for d in DIRECTIONS if m.direction(d)] or ["-"]
            style = None if m.status == "ok" else "red"
            if i == 0 and x.get("low_overlap"):
                style = "yellow"
            for j, ddir in enumerate(dirs):
                d = m.direction(ddir)
                t.add_row(
                    pt if j == 0 else "",
                    host if j == 0 else "",
                    m.status if j == 0 else "",
                    ddir,
                    fmt_iops(d.iops) if d else "-",
                    fmt_rate(d.bw_bytes) if d else "-",
                    fmt_direction_latency(d, "mean", label),
                    fmt_direction_latency(d, "99", label),
                    ran if j == 0 else "",
                    style=style,
                    end_section=i == len(entries) - 1 and j == len(dirs) - 1,
                )
    return t


def host_notes(rows: list[Any]) -> list[str]:
    """What a reader of a multi-host table must know: partial points (which host failed and
    why), points whose hosts overlapped less than 90 % of the measured time, aggregates that
    fell back to the sum of the hosts' rates."""
    out = []
    for r in rows:
        m: Measurement = r.measurement
        x = m.extra
        where = f"point {r.point_idx + 1}"
        if r.point is not None:
            where += f" ({r.point.label()})"
        if m.status != "ok" and m.hosts:
            out.append(f"{where}: {m.status}: {m.error}")
        if x.get("low_overlap"):
            out.append(
                f"{where}: all {len(x.get('hosts') or [])} hosts ran together only "
                f"{100 * x['overlap']:.1f} % of the measured {x['span_s']:.2f} s (start spread "
                f"{x['start_spread_s']:.3f} s); IOPS and MiB/s are over the {x['window_s']:.2f} s "
                "in which all ran"
            )
        if x.get("aggregate") == "sum of host rates":
            why = x.get("aggregate_why")
            out.append(f"{where}: IOPS and MiB/s are the sum of the hosts' rates ({why})")
        for note in x.get("notes") or []:
            out.append(f"{where}: fio: {note}")
    return out


def client_scaling_lines(summaries: list[PointSummary]) -> list[str]:
    """Aggregate throughput and p99 against the number of clients, per sweep of the
    ``clients`` axis, and where adding clients stops paying: the fewest clients that reach
    95 % of the best throughput (the sweep's saturation point)."""
    out = []
    for sw in sweeps(summaries, "clients"):
        if len(sw.values) < 2:
            continue
        fixed = " ".join(f"{k}={v}" for k, v in sw.fixed.items() if k != "target")
        steps = []
        for v, fig, s in sw.values:
            if s.latency_metric == "lat":  # rados bench: no percentiles
                steps.append(f"{v}: {fmt_iops(fig)} IOPS, lat mean {fmt_ns(s.latency_mean)}")
                continue
            p99 = next((d.clat.percentiles.get("99") for d in s.dirs.values() if d.clat), None)
            steps.append(f"{v}: {fmt_iops(fig)} IOPS, p99 {fmt_ns(p99)}")
        best_v, best_f, _ = sw.best
        sat_v, sat_f, _ = sw.saturation()
        out.append(f"clients ({fixed}): " + "; ".join(steps))
        if sat_v == sw.values[-1][0]:
            out.append(
                f"  adding clients still paid at {sat_v} (best {fmt_iops(best_f)} IOPS): "
                "try more clients"
            )
        else:
            out.append(
                f"  adding clients stops paying at {sat_v}: it reaches "
                f"{100 * sat_f / best_f:.0f} % of the best ({fmt_iops(best_f)} IOPS at {best_v})"
            )
    return out


# ---------------------------------------------------------------------------- Ceph


def ceph_cluster_lines(report: CephReport | None) -> list[str]:
    """``storbench show``'s header: one line per Ceph cluster of the run (fsid, health at
    the start, OSDs and their objectstores, each benchmarked pool's size/min_size/pg_num)."""
    if report is None:
        return []
    return [f"  {cluster_line(c)}" for c in report.clusters]


def timeline_lines(report: CephReport | None) -> list[str]:
    """After the table: the run's events, one line each, seconds from the run's start."""
    if report is None or not report.timeline:
        return []
    rows = report.timeline
    w_time = max(len(r.offset) for r in rows)
    w_kind = max(len(r.kind) for r in rows)
    out = [
        f"timeline ({len(rows)} event{'s' if len(rows) != 1 else ''}; time from the run's start):"
    ]
    out += [f"  {r.offset.rjust(w_time)}  {r.kind.ljust(w_kind)}  {r.message}" for r in rows]
    return out
