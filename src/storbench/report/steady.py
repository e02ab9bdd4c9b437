"""A point's steady-state rounds for people: the table ``storbench show --point N`` prints,
in the layout of SNIA PTS's steady-state report (each round's tracking variable, the
measurement window, and the bands of ±10 % and ±20 % around the window's mean)."""

from __future__ import annotations

from storbench.analysis.steady import describe, verdict_of
from storbench.model.metrics import Measurement
from storbench.model.units import fmt_iops, fmt_ns, fmt_rate
from storbench.plan.steadykeys import SteadyState
from storbench.report.fmt import text_table


def fmt_value(metric: str, value: float) -> str:
    """A round's value in the unit of its metric (IOPS, MiB/s, or a latency)."""
    if metric == "iops":
        return f"{fmt_iops(value)} IOPS"
    if metric == "bw":
        return f"{fmt_rate(value)} MiB/s"
    return fmt_ns(value)


def rounds_text(meas: Measurement) -> str | None:
    """The rounds of a point that ran until steady state, or None for one that did not."""
    verdict = verdict_of(meas)
    data = meas.extra.get("steady_state") or {}
    if verdict is None:
        return None
    cfg = SteadyState.from_dict(data.get("config") or {})
    mean = verdict.mean
    rows = []
    for n, value in enumerate(verdict.values, 1):
        inside = verdict.first <= n <= verdict.last
        off = (value - mean) / mean * 100 if mean else 0.0
        rows.append(
            [
                str(n),
                fmt_value(cfg.metric, value),
                f"{off:+.1f} %" if inside else "",
                "window" if inside else "",
            ]
        )
    lines = [
        describe(verdict, cfg),
        f"window mean {fmt_value(cfg.metric, mean)}; bands: ±10 % "
        f"{fmt_value(cfg.metric, mean * 0.9)} .. {fmt_value(cfg.metric, mean * 1.1)}, ±20 % "
        f"{fmt_value(cfg.metric, mean * 0.8)} .. {fmt_value(cfg.metric, mean * 1.2)}; "
        f"slope {fmt_value(cfg.metric, verdict.slope)} per round",
        text_table(["round", cfg.metric, "vs window mean", ""], rows, right={0, 1, 2}),
    ]
    if verdict.reached:
        lines.append("the point's figures are the window's rounds together")
    else:
        lines.append("the point's figures are its last rounds together, NOT a steady-state result")
    return "\n".join(lines)
