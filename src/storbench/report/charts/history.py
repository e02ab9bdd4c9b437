"""The history chart (``storbench history --chart FILE``, the web view's history page): one
figure of each point per run, a line per point, the runs in time order along x; a dotted
vertical line before each run whose test bed changed (labelled with what changed), and
each significant change marked (▲ improvement, ▼ regression)."""

from __future__ import annotations

from storbench.analysis.history import FIGURES, IMPROVEMENT, REGRESSION, figure_of
from storbench.model.units import when
from storbench.report.charts.facets import split_crowded
from storbench.report.charts.model import Chart, Line, Mark, Panel, Rule
from storbench.report.history import fmt_figure
from storbench.report.historymodel import HistoryReport

#: the look of a significant change (draw.STYLES), in legend order
LABELS = {
    REGRESSION: "regression (significant, 95 %)",
    IMPROVEMENT: "improvement (significant, 95 %)",
}
#: settings a change's label names before "and N more"
NAMED = 2


def _unit(figure: str, values: list[float]) -> tuple[float, str]:
    if figure == "iops":
        return 1.0, "IOPS"
    if figure == "bw":
        return float(1 << 20), "MiB/s"
    top = max(values, default=0.0)
    return (1e6, "ms") if top >= 1e6 else (1e3, "µs") if top >= 1e3 else (1.0, "ns")


def _change_label(diffs: list[tuple[str, object, object]]) -> str:
    names = [k for k, _, _ in diffs]
    more = len(names) - NAMED
    return "changed: " + ", ".join(names[:NAMED]) + (f" and {more} more" if more > 0 else "")


def history_chart(report: HistoryReport) -> Chart:
    """The chart of ``report``'s figure (module doc)."""
    h, figure = report.history, report.figure
    what, _ = FIGURES[figure]
    values = [v for t in h.tracks for v in t.values(figure) if v is not None]
    yunit, unit = _unit(figure, values)
    panel = Panel(
        title="",
        xlabel="run (oldest first)",
        ylabel=f"{what} ({unit})",
        xticks=[(float(i), r.heading) for i, r in enumerate(h.runs)],
        yunit=yunit,
    )
    flagged: dict[str, list[tuple[str, Mark]]] = {REGRESSION: [], IMPROVEMENT: []}
    for k, t in enumerate(h.tracks):
        marks = []
        for i, cell in enumerate(t.cells):
            v = None if cell is None else figure_of(cell.summary, figure)
            if cell is None or v is None:
                continue
            tip = f"{t.label}\n{h.runs[i].heading} ({when(h.runs[i].started_at)}): "
            tip += fmt_figure(figure, v)
            if cell.versus is not None and cell.flag:
                tip += f"\n{cell.flag} against its previous run (p {cell.versus.p_value:.3g})"
            ref = f"r{h.runs[i].id}-p{cell.summary.index + 1}"  # the point's page (web view)
            marks.append(Mark(x=float(i), y=v, tip=tip, ref=ref))
            if cell.flag:
                flagged[cell.flag].append((f"t{k}", Mark(x=float(i), y=v, tip=tip, ref=ref)))
        panel.lines.append(Line(label=t.label, key=f"t{k}", marks=marks))
    for i, diffs in enumerate(h.changes):
        if diffs:
            panel.rules.append(Rule("x", i - 0.5, _change_label(diffs)))
    chart = split_crowded(
        Chart(
            kind="history",
            title=f"{what[0].upper() + what[1:]} over {len(h.runs)} runs — {report.selection}",
            panels=[panel],
            legend=[(ln.key, ln.label) for ln in panel.lines],
            note="Dotted lines: the test bed changed before that run (the tables say how).",
        )
    )
    for p in chart.panels:  # each panel's significant changes, over its own lines
        keys = {ln.key for ln in p.lines}
        for name, marks in flagged.items():
            held = [m for key, m in marks if key in keys]
            if held:
                p.lines.append(Line(LABELS[name], name, held, style=name, aside=True))
    used = {ln.key for p in chart.panels for ln in p.lines}
    chart.legend += [(name, label) for name, label in LABELS.items() if name in used]
    return chart
