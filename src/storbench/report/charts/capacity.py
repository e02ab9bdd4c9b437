"""The capacity chart (``--kind capacity``): every step of a capacity search (``slo:``,
analysis/capacity.py) as the latency-against-load curve with the target line.

A panel per search (workload on a target, with its other axes' values): x is the load the
step offered (the closed-loop probe, which offers none, at the rate it achieved, where the
search counts it), y the latency the objective judges (its percentile or the mean of fio's
total latency) in the unit the answer prints the target in. Each step is a marker of its
verdict -- met the target, missed it, saturated (the device took less than it was offered:
its latency understates what an open-loop client would see, fio's rate limiting waits
instead of queueing), the probe, the capacity found -- and a small hollow marker at the
rate it achieved, tied to its offer by a thin line. A dashed line is the target, a dotted
vertical line the capacity found."""

from __future__ import annotations

from storbench.analysis.capacity import Step
from storbench.analysis.capacityanswer import CapacityRow, capacity_answer
from storbench.analysis.summary import PointSummary
from storbench.model.units import fmt_iops, fmt_ns
from storbench.report.charts.model import Chart, Line, Mark, Panel, Rule, RunReport

#: What each line of a panel is, in legend order (draw.STYLES draws each its own way).
LABELS = {
    "meets": "meets the target",
    "capacity": "capacity: the highest load that met it",
    "misses": "misses the target",
    "saturated": "saturated: took less than offered",
    "probe": "probe (closed loop, at its achieved rate)",
    "achieved": "achieved rate (same step)",
}

#: The panel's note when it has saturated steps (report/capacity.py's table note says more).
SATURATED_NOTE = (
    "× saturated: the device took less than it was offered; fio's rate limiting waits "
    "instead of queueing, so their latency understates what an open-loop client would see"
)


def has_searches(runs: list[RunReport]) -> bool:
    """Whether any of ``runs`` holds a step of a capacity search."""
    return any(s.slo is not None and s.capacity_step for r in runs for s in r.summaries)


def capacity_chart(runs: list[RunReport]) -> Chart:
    """A panel per search of ``runs`` (none: a run without ``slo:``)."""
    multi = len(runs) > 1
    panels = []
    for res in runs:
        by_point = {s.index + 1: s for s in res.summaries}
        for row in capacity_answer(res.summaries, {}, None).rows:
            panels.append(_panel(res, row, by_point, multi))
    used = {ln.key for p in panels for ln in p.lines}
    named = runs[0].label if len(runs) == 1 else " vs ".join(r.short for r in runs)
    return Chart(
        kind="capacity",
        title=f"Latency against offered load — {named}",
        panels=panels,
        legend=[(k, label) for k, label in LABELS.items() if k in used],
    )


def y_unit(latency_ns: float) -> tuple[float, str]:
    """The divisor and unit of the latency axis: the unit the answer prints the target in
    (model.units.fmt_ns)."""
    if latency_ns >= 1e6:
        return 1e6, "ms"
    if latency_ns >= 1e3:
        return 1e3, "µs"
    return 1.0, "ns"


def verdict(step: Step, row: CapacityRow) -> str:
    """Which line a step is drawn in (LABELS)."""
    if step is row.capacity.met:
        return "capacity"
    if step.offered_iops is None:
        return "probe"
    return "saturated" if step.saturated else "meets" if step.meets else "misses"


def _panel(
    res: RunReport, row: CapacityRow, by_point: dict[int, PointSummary], multi: bool
) -> Panel:
    slo = row.slo
    which = "mean" if slo.percentile is None else f"p{slo.percentile:g}"
    unit, u = y_unit(slo.latency_ns)
    axes = "".join(f" {k}={v}" for k, v in row.axes.items())
    title = f"{row.workload}{axes} on {row.target}" + (f" — {res.short}" if multi else "")
    lines: dict[str, Line] = {}
    ys = [slo.latency_ns]
    for c in row.steps:
        s = c.step
        if s is None or s.latency_ns is None:  # failed: in the answer's table
            continue
        point = by_point.get(c.point)
        ref = res.anchor(point) if point is not None else None
        head = f"{res.label}\n" if multi else ""
        kind = verdict(s, row)
        x = s.offered_iops if s.offered_iops is not None else s.achieved_iops
        lat = f"{which} {fmt_ns(s.latency_ns)}{s.interval_said()}"
        tip = f"{head}{_said(c.point, s)}\n{lat}: {_judged(s, kind, row)}"
        _line(lines, kind).marks.append(Mark(x=x, y=s.latency_ns, tip=tip, ref=ref))
        ys.append(s.latency_ns)
        if s.offered_iops is not None:
            short = 1 - s.achieved_iops / s.offered_iops
            _line(lines, "achieved").marks.append(
                Mark(
                    x=s.achieved_iops,
                    y=s.latency_ns,
                    tip=f"{head}point {c.point}: achieved {fmt_iops(s.achieved_iops)} IOPS "
                    f"of {fmt_iops(s.offered_iops)} offered ({short * 100:.1f} % short)",
                    ref=ref,
                    base=s.offered_iops,
                )
            )
    for ln in lines.values():
        ln.marks.sort(key=lambda m: m.x)
    panel = Panel(
        title=title,
        lines=[lines[k] for k in LABELS if k in lines],
        xlabel="offered load (IOPS; the probe at the rate it achieved)",
        ylabel=f"{which} latency ({u})",
        yunit=unit,
        yscale="log" if max(ys) / min(ys) > 30 else "linear",
        xfmt="plain",
        rules=_rules(row),
        join=True,
    )
    panel.note = "\n".join(_notes(row, panel))
    return panel


def _line(lines: dict[str, Line], kind: str) -> Line:
    if kind not in lines:
        lines[kind] = Line(LABELS[kind], kind, [], style=kind, aside=kind == "achieved")
    return lines[kind]


def _said(point: int, s: Step) -> str:
    if s.offered_iops is None:
        return f"point {point}: probe (closed loop), achieved {fmt_iops(s.achieved_iops)} IOPS"
    return (
        f"point {point}: offered {fmt_iops(s.offered_iops)} IOPS, "
        f"achieved {fmt_iops(s.achieved_iops)}"
    )


def _judged(s: Step, kind: str, row: CapacityRow) -> str:
    label = row.slo.label
    if kind == "capacity":
        return f"meets {label}: the capacity"
    if s.saturated:
        return (
            f"saturated, misses {label} (took less than offered: this latency understates "
            "what an open-loop client would see)"
        )
    return f"meets {label}" if s.meets else f"misses {label}"


def _rules(row: CapacityRow) -> list[Rule]:
    """The target, and the capacity found (at the rate its step offered, where it is drawn)."""
    rules = [Rule("y", row.slo.latency_ns, f"target {row.slo.label}")]
    met = row.capacity.met
    if met is not None and row.capacity.iops is not None:
        x = met.offered_iops if met.offered_iops is not None else met.achieved_iops
        offered = f" (offered {fmt_iops(met.offered_iops)})" if met.offered_iops else ""
        rules.append(Rule("x", x, f"capacity {fmt_iops(row.capacity.iops)} IOPS{offered}"))
    return rules


def _notes(row: CapacityRow, panel: Panel) -> list[str]:
    notes = []
    if row.capacity.met is None:
        notes.append(f"no load meets {row.slo.label}")
    if any(ln.key == "saturated" for ln in panel.lines):
        notes.append(SATURATED_NOTE)
    return notes
