"""Failure drills for people (analysis/drill.py computes them): per point that ran actions,
its actions and then each figure; the same table in the terminal, Markdown and HTML."""

from __future__ import annotations

from storbench.analysis.drill import HOLD_S, DrillRow
from storbench.model.units import fmt_iops, fmt_ns, fmt_rate
from storbench.plan.actionkeys import step_label
from storbench.report.fmt import AnswerTable, text_table
from storbench.report.safe import md_table, md_text
from storbench.report.soak import host_rows

HEADERS = ["figure", "value"]


def _s(v: float | None, missing: str) -> str:
    return f"{v:.1f} s" if v is not None else missing


def drill_cells(r: DrillRow) -> list[list[str]]:
    """figure | value, for one point."""
    out = []
    for a in r.actions:
        when = f"at {a['started_s']:.1f} s" if a.get("started_s") is not None else "not run"
        took = ""
        if a.get("ended_s") is not None and a.get("started_s") is not None:
            took = f", took {a['ended_s'] - a['started_s']:.1f} s"
        label = step_label(str(a["step"]), str(a["arg"]), str(a.get("host") or ""))
        out.append([f"action: {label}", f"{a['outcome']} {when}{took}"])
    base = r.baseline_iops
    baseline = f"{fmt_iops(base)} IOPS, p99 {fmt_ns(r.baseline_p99_ns)}" if base else "-"
    dip = (
        f"{r.dip_pct:.1f} % of the baseline at {r.dip_at_s:.1f} s" if r.dip_pct is not None else "-"
    )
    rec = "-"
    if r.recovery_bytes_per_s_max is not None:
        mean, top = r.recovery_bytes_per_s_mean, r.recovery_bytes_per_s_max
        rec = f"{fmt_rate(mean)} MiB/s mean, {fmt_rate(top)} MiB/s max"
    out += [
        ["baseline (before the first action)", baseline],
        ["dip (worst interval after it)", dip],
        ["longest stall (no I/O completed)", f"{r.longest_stall_s:.1f} s"],
        ["time below 50 % / 90 % of baseline", f"{r.below_50_s:.1f} s / {r.below_90_s:.1f} s"],
        ["recovered to 90 % (from the action)", _s(r.recovered_s, "not before the load ended")],
        [
            f"HEALTH_OK, all PGs active+clean, held {HOLD_S:g} s",
            _s(r.healed_s, "not while the run ran"),
        ],
        ["recovery throughput (cluster)", rec],
        ["engine errors", "; ".join(r.errors) or "none"],
    ]
    out += [[a, b] for a, b, _ in host_rows(r.host, "host during recovery:")]
    for name, h in r.remote.items():
        out += [[a, b] for a, b, _ in host_rows(h, f"{name} during recovery:")]
    return out


def drill_text(rows: list[DrillRow]) -> str:
    out = []
    for r in rows:
        out += [f"failure drill, {r.label}", text_table(HEADERS, drill_cells(r), right=set()), ""]
    return "\n".join(out)


def drill_markdown(rows: list[DrillRow]) -> str:
    out = []
    for r in rows:
        out += [f"**Failure drill, {md_text(r.label)}**", "", md_table(HEADERS, drill_cells(r))]
    return "\n".join(out)


def drill_tables(rows: list[DrillRow]) -> list[AnswerTable]:
    return [AnswerTable(f"Failure drill, {r.label}", HEADERS, drill_cells(r)) for r in rows]
