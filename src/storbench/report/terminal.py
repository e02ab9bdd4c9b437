"""Terminal output: progress while running, summary tables afterwards.

On a terminal the progress is a live bar; in a log (CI, a pipe) it is one plain line per
point, so the output stays readable.
"""

from __future__ import annotations

import time
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, Progress, ProgressColumn, Task, TextColumn
from rich.table import Table
from rich.text import Text

from storbench.analysis.summary import PointSummary
from storbench.metrics import Measurement
from storbench.plan import Point
from storbench.units import fmt_duration, fmt_iops, fmt_ns, fmt_rate


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
    if meas.status != "ok":
        return f"{meas.status.upper()}: {meas.error}"
    parts = []
    for ddir in ("read", "write", "trim"):
        d = meas.direction(ddir)
        if d is None:
            continue
        p99 = d.clat.percentiles.get("99") if d.clat else None
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

    def __enter__(self) -> ProgressReporter:
        if self.live:
            self.progress = Progress(
                TextColumn("[bold]{task.fields[n]}[/]"),
                BarColumn(),
                TextColumn("{task.description}"),
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

    def point_started(self, point: Point, n: int, total: int) -> None:
        self.eta.current_started = time.monotonic()
        label = f"[{n}/{total}]"
        desc = f"{point.target.label} {point.label()}"
        if point.repetition:
            desc += f" (repetition {point.repetition + 1})"
        if self.progress is not None:
            self.progress.update(self.task, description=desc, n=label)
        else:
            eta = fmt_duration(self.eta.remaining())
            self.console.print(f"{label} {desc}  (ETA {eta})", highlight=False, soft_wrap=True)

    def point_finished(
        self, point: Point, meas: Measurement, n: int, total: int, seconds: float
    ) -> None:
        self.eta.done += 1
        self.eta.actual.append(seconds)
        self.eta.current_started = None
        line = point_result_line(meas)
        style = "red" if meas.status != "ok" else None
        if self.progress is not None:
            self.progress.advance(self.task)
            self.console.print(
                f"[{n}/{total}] {point.label()}: {line}",
                style=style,
                highlight=False,
                soft_wrap=True,
            )
        else:
            self.console.print(f"      -> {line}", style=style, highlight=False, soft_wrap=True)

    def point_interrupted(self, point: Point) -> None:
        self.console.print(
            f"interrupted during {point.label()}: that point is not recorded",
            style="yellow",
            highlight=False,
        )


def _lat(ds: Any, which: str) -> str:
    lat = ds.clat if ds is not None else None
    if lat is None:
        return "-"
    if which == "mean":
        return fmt_ns(lat.mean)
    return fmt_ns(lat.percentiles.get(which))


def summary_table(summaries: list[PointSummary], title: str | None = None) -> Table:
    """One row per point and direction: the point's swept values, IOPS, MiB/s, latency."""
    multi_target = len({s.target for s in summaries}) > 1
    axes: list[str] = list(dict.fromkeys(k for s in summaries for k in s.axes))
    multi_wl = len({s.workload for s in summaries}) > 1
    reps = max((s.runs + s.failed for s in summaries), default=1)
    show_err = any(s.failed for s in summaries)
    t = Table(title=title, title_justify="left")
    if multi_target:
        t.add_column("target")
    if multi_wl or not axes:
        t.add_column("workload")
    for a in axes:
        t.add_column(a, justify="right")
    if reps > 1:
        t.add_column("n", justify="right")
    t.add_column("dir")
    for c in ("IOPS", "MiB/s", "clat mean", "clat p99"):
        t.add_column(c, justify="right")
    if show_err:
        t.add_column("error")
    for s in summaries:
        lead: list[str] = []
        if multi_target:
            lead.append(s.target.label)
        if multi_wl or not axes:
            lead.append(s.workload)
        lead += [str(s.axes.get(a, "")) for a in axes]
        if reps > 1:
            lead.append(str(s.runs))
        dirs = [d for d in ("read", "write", "trim") if d in s.dirs] or ["-"]
        for i, d in enumerate(dirs):
            ds = s.dirs.get(d)
            row = lead if i == 0 else [""] * len(lead)
            row = [
                *row,
                d,
                fmt_iops(ds.iops_mean) if ds else "-",
                fmt_rate(ds.bw_mean) if ds else "-",
                _lat(ds, "mean"),
                _lat(ds, "99"),
            ]
            if show_err:
                row.append((s.errors[0] if s.errors else "") if i == 0 else "")
            t.add_row(*row, style="red" if s.runs == 0 else None)
    return t
