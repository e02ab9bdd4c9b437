"""The history report (report/historymodel.py) as tables every presenter draws: the runs
followed, one figure of each point per run with its change against the point's previous
run, the significant changes, and the test bed's changes between consecutive runs; and
as JSON."""

from __future__ import annotations

import json
from typing import Any

from storbench.analysis.history import (
    FIGURES,
    IMPROVEMENT,
    REGRESSION,
    Cell,
    History,
    figure_of,
)
from storbench.model.units import fmt_iops, fmt_ns, fmt_rate, when
from storbench.report.fmt import AnswerTable
from storbench.report.historymodel import HistoryReport

#: the mark beside a value whose change is significant
MARKS = {REGRESSION: "▼", IMPROVEMENT: "▲"}

FLAGS = (
    "▲ improvement, ▼ regression: the change against the point's previous run is "
    "significant at 95 % (the comparison's Welch test of {judged} over repetitions, as "
    "`compare` judges); a change without a mark is within the runs' noise, or untested "
    "(one repetition per run: `repeat: 2` or more makes it testable)"
)


def fmt_figure(figure: str, value: float | None) -> str:
    if value is None:
        return "-"
    if figure == "iops":
        return fmt_iops(value)
    if figure == "bw":
        return fmt_rate(value)
    return fmt_ns(value)


def _change(cell: Cell, figure: str) -> float | None:
    v = cell.versus
    if v is None:
        return None
    return {
        "iops": v.iops_change_pct,
        "bw": v.bw_change_pct,
        "lat": v.mean_lat_change_pct,
        "p99": v.p99_lat_change_pct,
    }[figure]


def _cell(cell: Cell | None, figure: str) -> str:
    if cell is None:
        return "-"
    text = fmt_figure(figure, figure_of(cell.summary, figure))
    pct = _change(cell, figure)
    if pct is not None:
        text += f" ({pct:+.1f} %)"
    if cell.flag:
        text += f" {MARKS[cell.flag]}"
    return text


def run_heading(h: History, i: int) -> str:
    return h.runs[i].heading


def _runs_table(report: HistoryReport) -> AnswerTable:
    h = report.history
    keys = list(dict.fromkeys(k for r in h.runs for k in r.labels))
    rows = [
        [
            r.heading,
            when(r.started_at),
            r.name,
            r.status,
            *(r.labels.get(k, "-") for k in keys),
            str(len(h.changes[i])) if h.changes[i] else "",
        ]
        for i, r in enumerate(h.runs)
    ]
    notes = [f"Selected: {report.selection}, oldest first."]
    notes += [f"Left out: {why}." for why in report.left_out[:5]]
    return AnswerTable(
        f"History of {len(h.runs)} run{'s' * (len(h.runs) != 1)}, "
        f"{len(h.tracks)} point{'s' * (len(h.tracks) != 1)}",
        ["Run", "Started", "Plan", "Status", *keys, "Test-bed changes"],
        rows,
        right={4 + len(keys)},
        notes=notes,
    )


def _figure_table(report: HistoryReport) -> AnswerTable:
    h, figure = report.history, report.figure
    what, _ = FIGURES[figure]
    unit = " (MiB/s)" if figure == "bw" else ""  # latency cells carry their unit
    rows = [[t.label, *(_cell(c, figure) for c in t.cells)] for t in h.tracks]
    judged = "total IOPS (mean latency for a rate-capped workload)"
    changed = [h.runs[i].heading for i, diffs in enumerate(h.changes) if diffs]
    notes = [
        f"Each value: the point's {what} over its repetitions; in brackets its change "
        "against the point's previous run.",
        FLAGS.format(judged=judged),
    ]
    if changed:
        notes.append("The test bed changed before " + ", ".join(changed) + " (below).")
    return AnswerTable(
        f"{what[0].upper() + what[1:]} per run{unit}",
        ["Point", *(run_heading(h, i) for i in range(len(h.runs)))],
        rows,
        right=set(range(1, len(h.runs) + 1)),
        notes=notes,
    )


def _flagged_table(h: History) -> AnswerTable:
    rows = []
    for track, i, cell in h.flagged:
        v = cell.versus
        assert v is not None
        prev = next(h.runs[j] for j in range(i - 1, -1, -1) if track.cells[j] is not None)
        rows.append(
            [
                track.label,
                f"{prev.heading} → {h.runs[i].heading}",
                str(cell.flag),
                "-" if v.iops_change_pct is None else f"{v.iops_change_pct:+.1f} %",
                "-" if v.p99_lat_change_pct is None else f"{v.p99_lat_change_pct:+.1f} %",
                "-" if v.p_value is None else f"{v.p_value:.3g}",
                "yes" if h.changes[i] else "",
            ]
        )
    return AnswerTable(
        "Significant changes",
        ["Point", "Runs", "Change", "IOPS", "p99 latency", "p", "Test bed changed"],
        rows,
        right={3, 4, 5},
        notes=[] if rows else ["None: no point changed significantly from one run to the next."],
    )


def _value(v: Any) -> str:
    return "-" if v is None else json.dumps(v) if isinstance(v, dict | list) else str(v)


def _testbed_table(h: History) -> AnswerTable | None:
    rows = [
        [f"{h.runs[i - 1].heading} → {h.runs[i].heading}", k, _value(a), _value(b)]
        for i, diffs in enumerate(h.changes)
        for k, a, b in diffs
    ]
    if not rows:
        return None
    return AnswerTable(
        "Test-bed changes between consecutive runs",
        ["Runs", "Setting", "Before", "After"],
        rows,
        notes=[
            "What the runs' inventories (kernel, fio and Ceph versions, tunables, disks' "
            "settings) and labels say differs from the run before."
        ],
    )


def history_tables(report: HistoryReport) -> list[AnswerTable]:
    """The history as tables: runs, the figure per run, significant changes, test bed."""
    tables = [_runs_table(report), _figure_table(report), _flagged_table(report.history)]
    testbed = _testbed_table(report.history)
    return tables + ([testbed] if testbed else [])


def history_json(report: HistoryReport) -> str:
    doc = {"selection": report.selection, "left_out": report.left_out}
    return json.dumps(doc | report.history.to_dict(), default=str) + "\n"
