"""The capacity suite's answer (analysis/capacity.py) as tables every presenter draws: per
search, its answer and its steps (offered, achieved, latency at the objective, whether the
device saturated and whether the step met the objective)."""

from __future__ import annotations

from storbench.analysis.capacity import Step
from storbench.analysis.capacityanswer import CapacityAnswer, CapacityRow
from storbench.model.units import fmt_iops, fmt_ns
from storbench.report.fmt import AnswerTable

SATURATED = (
    "saturated: the device took less than it was offered (by more than 2 % and more than "
    "chance): it, not the target, set that step's latency, and fio's rate limiting waits "
    "instead of queueing, so the latency shown understates what an open-loop client would see"
)

WITHIN_CHANCE = (
    "within chance ({points}): the target lies inside that step's 95 % interval, so "
    "with this many I/Os meeting or missing it could be chance; longer steps narrow it"
)
ABOVE = (
    "achieved above offered ({points}): fio issues each job's first I/O at once and its "
    "Poisson arrivals from then on (backend.c usec_for_io), so a step of few I/Os per job "
    "(its rate_iops × runtime) runs above its rate: 1 s at 1 I/O per second a job does about "
    "2; a longer runtime brings such a step to its rate"
)
#: achieved above offered by more than this share: said (Poisson noise over a step of a
#: few hundred I/Os stays within it)
ABOVE_BY = 0.10

INTERVALS = (
    "95 % CI: how far the step's latency could move by chance with this many I/Os (a "
    "percentile's from the order statistics of its histogram, a mean's from its standard "
    "deviation); they assume independent I/Os, and queueing correlates them, so the true "
    "uncertainty is wider"
)


def _ci(s: Step) -> str:
    i = s.interval
    if i is None:
        return "-"
    return f"{fmt_ns(i.low_ns)}–{'≥ ' if i.open_high else ''}{fmt_ns(i.high_ns)}"


def capacity_tables(answer: CapacityAnswer) -> list[AnswerTable]:
    return [_table(r) for r in answer.rows]


def _table(r: CapacityRow) -> AnswerTable:
    which = "mean" if r.slo.percentile is None else f"p{r.slo.percentile:g}"
    rows = []
    for c in r.steps:
        s = c.step
        offered = "probe (closed loop)" if c.offered_iops is None else fmt_iops(c.offered_iops)
        if s is None:
            rows.append([str(c.point), offered, "-", "-", "-", "failed", ""])
            continue
        verdict = "meets" if s.meets else "saturated" if s.saturated else "misses"
        if s.within_chance(r.slo):
            verdict += " (within chance)"
        achieved, lat = fmt_iops(s.achieved_iops), fmt_ns(s.latency_ns)
        rows.append([str(c.point), offered, achieved, lat, _ci(s), verdict, ""])
    best = r.capacity.met
    for row, c in zip(rows, r.steps, strict=True):
        if best is not None and c.step is best:
            row[6] = "← capacity"
    axes = " ".join(f"{k}={v}" for k, v in r.axes.items())
    notes = [f"capacity: {r.capacity.text}"]
    if any(c.step is not None and c.step.saturated for c in r.steps):
        notes.append(SATURATED)
    chance = [str(c.point) for c in r.steps if c.step is not None and c.step.within_chance(r.slo)]
    if chance:
        named = f"point{'s' if len(chance) > 1 else ''} {', '.join(chance)}"
        notes.append(WITHIN_CHANCE.format(points=named))
    above = [
        str(c.point)
        for c in r.steps
        if c.step is not None
        and c.offered_iops
        and c.step.achieved_iops > (1 + ABOVE_BY) * c.offered_iops
    ]
    if above:
        notes.append(ABOVE.format(points=f"point{'s' * (len(above) > 1)} {', '.join(above)}"))
    if any(c.step is not None and c.step.interval is not None for c in r.steps):
        notes.append(INTERVALS)
    return AnswerTable(
        f"Capacity of {r.workload}{' ' + axes if axes else ''} on {r.target} at {r.slo.label}",
        ["Point", "Offered IOPS", "Achieved IOPS", f"{which} latency", "95 % CI", "Step", ""],
        rows,
        right={1, 2, 3, 4},
        notes=notes,
    )
