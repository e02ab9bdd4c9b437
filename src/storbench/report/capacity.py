"""The capacity suite's answer (analysis/capacity.py) as tables every presenter draws: per
search, its answer and its steps (offered, achieved, latency at the objective, whether the
device saturated and whether the step met the objective)."""

from __future__ import annotations

from storbench.analysis.capacityanswer import CapacityAnswer, CapacityRow
from storbench.model.units import fmt_iops, fmt_ns
from storbench.report.fmt import AnswerTable

SATURATED = (
    "saturated: the device took less than it was offered (by more than 2 % and more than "
    "chance): it, not the target, set that step's latency, and fio's rate limiting waits "
    "instead of queueing, so the latency shown understates what an open-loop client would see"
)


def capacity_tables(answer: CapacityAnswer) -> list[AnswerTable]:
    return [_table(r) for r in answer.rows]


def _table(r: CapacityRow) -> AnswerTable:
    which = "mean" if r.slo.percentile is None else f"p{r.slo.percentile:g}"
    rows = []
    for c in r.steps:
        s = c.step
        offered = "probe (closed loop)" if c.offered_iops is None else fmt_iops(c.offered_iops)
        if s is None:
            rows.append([str(c.point), offered, "-", "-", "failed", ""])
            continue
        verdict = "meets" if s.meets else "saturated" if s.saturated else "misses"
        rows.append(
            [str(c.point), offered, fmt_iops(s.achieved_iops), fmt_ns(s.latency_ns), verdict, ""]
        )
    best = r.capacity.met
    for row, c in zip(rows, r.steps, strict=True):
        if best is not None and c.step is best:
            row[5] = "← capacity"
    axes = " ".join(f"{k}={v}" for k, v in r.axes.items())
    notes = [f"capacity: {r.capacity.text}"]
    if any(c.step is not None and c.step.saturated for c in r.steps):
        notes.append(SATURATED)
    return AnswerTable(
        f"Capacity of {r.workload}{' ' + axes if axes else ''} on {r.target} at {r.slo.label}",
        ["Point", "Offered IOPS", "Achieved IOPS", f"{which} latency", "Step", ""],
        rows,
        right={1, 2, 3},
        notes=notes,
    )
