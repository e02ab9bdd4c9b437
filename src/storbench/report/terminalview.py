"""The terminal's presenter: what ``show RUN`` prints (a header, the suite's answer, the
table of points, hosts, drills, timeline and test bed), what ``run``, ``resume`` and
``import`` print at their end (the same without header and test bed), and ``compare``'s
table. It draws the report model (report/model.py) onto a console of its own and returns
the text: with ``color`` the terminal's styles (red failed points, yellow warnings) as ANSI
codes, else plain text (``storbench report RUN --format terminal``)."""

from __future__ import annotations

import io
import shlex
from typing import Any

from storbench.hosts.load import summary
from storbench.hosts.netbaseline import fmt_bits
from storbench.model.constants import SHOW_LIMIT
from storbench.model.units import fmt_duration, when
from storbench.report import safe
from storbench.report import terminal as term
from storbench.report.comparison import comparison_text, testbed_lines
from storbench.report.drill import drill_text
from storbench.report.findings import finding_lines
from storbench.report.fmt import came_from, ran_between
from storbench.report.model import ComparisonReport, RunReport
from storbench.report.pointmodel import PointReport
from storbench.report.series import timeline
from storbench.report.soak import host_rows
from storbench.report.steady import rounds_text

#: the width of the text when no terminal says otherwise (logs, files)
WIDTH = 160


class TerminalPresenter:
    """``limit``: the points the table shows (None: all); ``header`` and ``testbed``: show's
    lines before and after the results; ``width`` and ``color_system``: the terminal's
    (None: plain text :data:`WIDTH` columns wide)."""

    name = "terminal"

    def __init__(
        self,
        *,
        limit: int | None = SHOW_LIMIT,
        header: bool = True,
        testbed: bool = True,
        width: int | None = None,
        color_system: str | None = None,
    ) -> None:
        self.limit = limit
        self.header = header
        self.testbed = testbed
        self.width = width or WIDTH
        self.color_system = color_system

    def _console(self) -> safe.SafeConsole:
        return safe.console(
            file=io.StringIO(),
            width=self.width,
            force_terminal=self.color_system is not None,
            color_system=self.color_system,  # type: ignore[arg-type]
        )

    def run(self, report: RunReport) -> str:
        c = self._console()
        if self.header:
            for line in header_lines(report):
                c.print(line, soft_wrap=True)
            c.print()
        _results(c, report, self.limit, testbed_of(report) if self.testbed else [])
        return _text(c)

    def comparison(self, report: ComparisonReport) -> str:
        pairs = zip(report.comparisons, report.differences, strict=True)
        return "\n".join(comparison_text(c) + testbed_lines(d, "  ") for c, d in pairs)


def _text(c: Any) -> str:
    text: str = c.file.getvalue()
    return text


def header_lines(report: RunReport) -> list[str]:
    """What ran, when, with which engines (show's first lines)."""
    r, rows = report.run, report.rows
    dur = fmt_duration(r.ended_at - r.started_at) if r.ended_at else "-"
    # the engines' versions as recorded with the measurements (rados bench: "ceph version
    # 16.2.15"), else the run's fio
    engines = dict.fromkeys(
        " ".join(v.split()[:3]) if v.startswith("ceph version") else v
        for m in rows
        if (v := m.measurement.engine_version)
    )
    versions = ", ".join(engines) or r.fio_version or "fio ?"
    lines = [
        f"run {r.id}: {r.name}  [{r.effective_status}]  {r.kind} from {r.source}",
        f"  started {when(r.started_at)}, took {dur}; {versions}, storbench {r.storbench_version}",
    ]
    ran = ran_between(rows) if r.kind == "import" else None
    if ran is not None:
        lines.append(f"  fio ran {ran} (the imported outputs' own timestamps)")
    if r.overrides:
        lines.append("  overrides: " + " ".join(r.overrides))
    labels = r.inventory.get("labels")
    if isinstance(labels, dict) and labels:
        lines.append("  labels: " + ", ".join(f"{k}={v}" for k, v in labels.items()))
    return lines


def _results(c: Any, report: RunReport, limit: int | None, testbed: list[str]) -> None:
    """A run as a reviewer reads it: its suite's answer first, then the table of its points
    (the first ``limit``; None: all), hosts, drills and timeline, then ``testbed``."""
    r, summaries = report.run, report.summaries
    title = f"run {r.id}: {r.name} ({r.effective_status}, {r.measured}/{r.points} points)"
    if report.answer is not None:
        c.print(term.answer_text(report.tables, report.kind), soft_wrap=True)  # aligned
    for line in report.advice:
        c.print(f"warning: {line}", style="yellow")
    if summaries:
        c.print(term.summary_table(summaries, title=title, limit=limit))
        if limit is not None and len(summaries) > limit:
            c.print(
                f"(the first {limit:,} of {len(summaries):,} points; every point: storbench show "
                f"{r.id} --all, or --limit N; one point whole: storbench show {r.id} --point N)",
                soft_wrap=True,  # one line, whatever the width: commands to copy
            )
    else:
        c.print(title)
    for line in finding_lines(report.findings):
        c.print(line, soft_wrap=True)
    _hosts(c, report, limit)
    if report.drills:
        c.print(drill_text(report.drills))
    for line in term.timeline_lines(report.ceph):
        c.print(line, soft_wrap=True)
    if testbed:
        c.print("test bed:")
        for line in testbed:
            c.print(line)
    where = f" in {report.where}" if report.where is not None else ""
    c.print(
        f"results: run {r.id}{where}  "
        f"(storbench show {r.id} | storbench export {r.id} --format csv)"
    )


def _hosts(c: Any, report: RunReport, limit: int | None) -> None:
    """A run on several hosts: each point's aggregate beside every host's own figures (of
    the first ``limit`` such points), the points to read with care (partial, hosts
    overlapping < 90 %), client scaling."""
    rows = [m for m in report.rows if m.measurement.hosts]
    if not rows:
        return
    if all(m.measurement.extra.get("engine") == "rados bench" for m in rows):
        title = "per client (each a rados bench process)"
    else:
        title = "per host (ran: seconds from the servers' start)"
    shown = rows if limit is None else rows[:limit]
    c.print(term.hosts_table(shown, title=title))
    if len(shown) < len(rows):
        c.print(
            f"(the first {len(shown):,} of {len(rows):,} points run on several hosts; "
            "every one: --all)",
            soft_wrap=True,
        )
    for line in term.host_notes(rows) + term.client_scaling_lines(report.summaries):
        c.print(line, soft_wrap=True)


def testbed_of(report: RunReport) -> list[str]:
    """The run's test bed as ``show`` lists it after the results: host, power, targets,
    fio servers, the Ceph cluster."""
    r = report.run
    lines = [f"  came from {line}" for line in came_from(r.inventory)]
    host = r.inventory.get("host") or {}
    if host:
        lines.append(
            f"  host {host.get('hostname')}: {host.get('distribution')}, kernel "
            f"{host.get('kernel')}, {host.get('cpu_count')} x {host.get('cpu_model')}"
        )
        pw = host.get("power") or {}
        if pw:
            src = pw.get("source")
            lines.append(f"  power: {src} sensor" if src else f"  power: none ({pw.get('why')})")
    for t in r.inventory.get("targets") or []:
        ident = t.get("identity") or {}
        lines.append(
            f"  target {t.get('path')}: {t.get('kind')}"
            + (f", {ident.get('model')}" if ident.get("model") else "")
            + (f", {ident.get('type')}" if ident.get("type") else "")
            + (f" {ident.get('proto')}" if ident.get("proto") else "")
            + (f", {t.get('fstype')} on {t.get('source')}" if t.get("fstype") else "")
        )
    for h in r.inventory.get("hosts") or []:
        lines.append(
            f"  fio server {h.get('label')}: {h.get('hostname') or '?'}, {h.get('os') or '?'} "
            f"{h.get('arch') or ''}, {h.get('fio_version') or 'fio ?'}; targets "
            + ", ".join(str(t.get("path")) for t in h.get("targets") or [])
        )
        own = h.get("host") or {}
        if own:  # a host with `ssh:`: what its agent said of it
            lines.append(
                f"    over ssh ({(h.get('agent') or {}).get('ssh')}): {own.get('distribution')}, "
                f"kernel {own.get('kernel')}, {own.get('cpu_count')} x {own.get('cpu_model')}"
            )
    for n in r.inventory.get("network") or []:
        storage = n.get("kind") == "endpoint"  # a target's storage (hosts/netpath.py)
        lines.append(
            f"  network to {'storage endpoint ' if storage else ''}{n.get('host')}"
            + (f" ({', '.join(n.get('targets') or [])})" if storage else "")
            + f": {fmt_bits(n.get('to_host_bits_per_s'))}, back "
            f"{fmt_bits(n.get('from_host_bits_per_s'))} (iperf3, {n.get('seconds')} s each way)"
        )
    lines += term.ceph_cluster_lines(report.ceph)
    return lines


def point_text(p: PointReport, width: int | None = None) -> str:
    """``show RUN --point N``: the point's command, preconditioning, steady-state rounds,
    time series, hosts' samples, job file and raw output, as text ``width`` columns wide
    (every string shown as text: control characters made visible)."""
    c = TerminalPresenter(width=width)._console()
    m, raw = p.row, p.originals
    error = f" ({m.error})" if m.error else ""
    c.print(f"# run {p.run_id} point {p.no}: status {m.status}{error}")
    for f in m.measurement.findings:
        host = f" on {f.host}" if f.host else ""
        c.print(f"# finding {f.code}{host}: {f.evidence}", soft_wrap=True)
        c.print(f"#   fix: {f.advice}", soft_wrap=True)
    for cmd in commands(raw["command"]):
        c.print("# command: " + shlex.join(cmd))
    for e, phase in p.phases:
        c.print(f"# preconditioning ({e.data.get('mode')}): {e.message}")
        if phase is None:
            c.print("# purge command: " + shlex.join(e.data["command"]))
        elif phase:
            c.print(timeline(phase, most=20))
    rounds = rounds_text(m.measurement)
    if rounds:
        c.print("# steady state (SNIA PTS rounds):")
        c.print(rounds)
    if p.series:
        c.print("# time series (t: end of each interval, s after the engine started):")
        c.print(timeline(p.series))
    for host, samples in p.host_samples.items():
        for figure, value, _ in host_rows(summary(samples), host or "this host"):
            c.print(f"# {figure}: {value}")
    if raw["job_file"]:
        c.print("# job file:")
        c.print(raw["job_file"], end="")
    c.print("# raw output:")
    c.print(raw["raw_output"] or "")
    if raw["stderr"]:
        c.print("# stderr:")
        c.print(raw["stderr"])
    return _text(c)


def commands(command: list[str] | list[list[str]] | None) -> list[list[str]]:
    """A stored command: one argv (fio) or one per process (rados bench clients)."""
    if not command:
        return []
    return [c for c in command if isinstance(c, list)] or [[str(c) for c in command]]


#: ``storbench report RUN --format terminal``: show's whole text, every point, no colour
PRESENTER = TerminalPresenter(limit=None)
