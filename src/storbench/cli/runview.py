"""What ``show RUN`` prints, and ``run``, ``resume`` and ``import`` at their end: the run's
suite answer, a table of its points (the first ``--limit`` of them), hosts, drills, timeline
and test bed. The run's measurements are read once and every part works from them."""

from __future__ import annotations

from storbench import nogc
from storbench.analysis.summary import PointSummary
from storbench.cli.app import out
from storbench.constants import SHOW_LIMIT
from storbench.netbaseline import fmt_bits
from storbench.report import model
from storbench.report import terminal as term
from storbench.report.details import came_from, ran_between
from storbench.report.drill import drill_text
from storbench.report.terminal import summary_table
from storbench.store import MeasurementRow, RunRow, Store
from storbench.units import fmt_duration, when


def show_run(store: Store, r: RunRow, limit: int | None) -> None:
    """``show RUN``: a header (what ran, when, with which engines), then :func:`print_run`
    with the test bed."""
    with nogc.paused():  # a big run's rows, summaries and table cells: collecting costs 10 %
        _show_run(store, r, limit)


def _show_run(store: Store, r: RunRow, limit: int | None) -> None:
    report = model.load_run(store, r.id)
    rows = report.rows
    out.print(
        f"run {r.id}: {r.name}  [{r.effective_status}]  {r.kind} from {r.source}", markup=False
    )
    dur = fmt_duration(r.ended_at - r.started_at) if r.ended_at else "-"
    # the engines' versions as recorded with the measurements (rados bench: "ceph version
    # 16.2.15"), else the run's fio
    engines = dict.fromkeys(
        " ".join(v.split()[:3]) if v.startswith("ceph version") else v
        for m in rows
        if (v := m.measurement.engine_version)
    )
    versions = ", ".join(engines) or r.fio_version or "fio ?"
    out.print(
        f"  started {when(r.started_at)}, took {dur}; {versions}, storbench {r.storbench_version}",
        markup=False,
    )
    ran = ran_between(rows) if r.kind == "import" else None
    if ran is not None:
        out.print(f"  fio ran {ran} (the imported outputs' own timestamps)", markup=False)
    if r.overrides:
        out.print("  overrides: " + " ".join(r.overrides), markup=False)
    out.print()
    print_report(report, testbed=testbed_lines(report), limit=limit)


def print_run(store: Store, run_id: int) -> None:
    """What ``run``, ``resume`` and ``import`` print at their end: :func:`print_report` of
    the run, without its test bed."""
    with nogc.paused():
        print_report(model.load_run(store, run_id))


def print_report(
    report: model.RunReport, testbed: list[str] | None = None, *, limit: int | None = SHOW_LIMIT
) -> None:
    """A run as a reviewer reads it: its suite's answer first, then the table of its points
    (the first ``limit``; None: all), hosts, drills and timeline, then ``testbed`` (show's
    inventory lines)."""
    r, rows, summaries = report.run, report.rows, report.summaries
    title = f"run {r.id}: {r.name} ({r.effective_status}, {r.measured}/{r.points} points)"
    if report.answer is not None:
        text = term.answer_text(report.tables, report.kind)  # aligned: never re-wrapped
        out.print(text, markup=False, highlight=False, soft_wrap=True)
    for line in report.advice:
        out.print(f"warning: {line}", style="yellow", markup=False, highlight=False)
    if summaries:
        out.print(summary_table(summaries, title=title, limit=limit))
        if limit is not None and len(summaries) > limit:
            out.print(
                f"(the first {limit:,} of {len(summaries):,} points; every point: storbench show "
                f"{r.id} --all, or --limit N; one point whole: storbench show {r.id} --point N)",
                markup=False,
                highlight=False,
                soft_wrap=True,  # one line, whatever the width: commands to copy
            )
    else:
        out.print(title)
    _print_hosts(rows, summaries, limit)
    if report.drills:
        out.print(drill_text(report.drills), markup=False, highlight=False)
    for line in term.timeline_lines(report.ceph):
        out.print(line, markup=False, highlight=False, soft_wrap=True)
    if testbed:
        out.print("test bed:", markup=False)
        for line in testbed:
            out.print(line, markup=False, highlight=False)
    where = f" in {report.source.path}" if report.source is not None else ""
    out.print(
        f"results: run {r.id}{where}  "
        f"(storbench show {r.id} | storbench export {r.id} --format csv)"
    )


def _print_hosts(
    rows: list[MeasurementRow], summaries: list[PointSummary], limit: int | None
) -> None:
    """A run on several hosts: each point's aggregate beside every host's own figures (of
    the first ``limit`` such points), the points to read with care (partial, hosts
    overlapping < 90 %), client scaling."""
    rows = [m for m in rows if m.measurement.hosts]
    if not rows:
        return
    if all(m.measurement.extra.get("engine") == "rados bench" for m in rows):
        title = "per client (each a rados bench process)"
    else:
        title = "per host (ran: seconds from the servers' start)"
    shown = rows if limit is None else rows[:limit]
    out.print(term.hosts_table(shown, title=title))
    if len(shown) < len(rows):
        out.print(
            f"(the first {len(shown):,} of {len(rows):,} points run on several hosts; "
            "every one: --all)",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
    for line in term.host_notes(rows) + term.client_scaling_lines(summaries):
        out.print(line, markup=False, highlight=False, soft_wrap=True)


def testbed_lines(report: model.RunReport) -> list[str]:
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
        lines.append(
            f"  network to {n.get('host')}: {fmt_bits(n.get('to_host_bits_per_s'))}, back "
            f"{fmt_bits(n.get('from_host_bits_per_s'))} (iperf3, {n.get('seconds')} s each way)"
        )
    lines += term.ceph_cluster_lines(report.ceph)
    return lines
