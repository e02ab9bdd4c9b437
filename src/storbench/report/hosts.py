"""Per-host rows of a multi-host measurement, shared by the HTML and Markdown reports."""

from __future__ import annotations

from typing import Any

from storbench.model.metrics import DIRECTIONS, Measurement
from storbench.model.units import fmt_iops, fmt_rate
from storbench.report.fmt import fmt_direction_latency


def host_rows(meas: Measurement) -> list[dict[str, str]]:
    """The aggregate and each host's own figures of a multi-host measurement (empty for one
    host): per direction IOPS, MiB/s, clat mean/p99, and when the host ran."""
    if not meas.hosts:
        return []
    x = meas.extra
    ok = sum(1 for m in meas.hosts.values() if m.status == "ok")
    who = "all clients" if x.get("engine") == "rados bench" else "all hosts"
    entries = [(f"{who} ({ok}/{len(meas.hosts)})", meas, _window(x))]
    for host, m in meas.hosts.items():
        ran = ""
        if "end_s" in m.extra:
            ran = f"{m.extra.get('start_s') or 0:.3f}–{m.extra['end_s']:.3f} s"
        entries.append((host, m, ran))
    rows = []
    for host, m, ran in entries:
        for i, ddir in enumerate([d for d in DIRECTIONS if m.direction(d)] or ["-"]):
            d = m.direction(ddir)
            rows.append(
                {
                    "host": host if i == 0 else "",
                    "status": (m.status + (f": {m.error}" if m.error else "")) if i == 0 else "",
                    "dir": ddir,
                    "iops": fmt_iops(d.iops) if d else "-",
                    "mibs": fmt_rate(d.bw_bytes) if d else "-",
                    "mean": fmt_direction_latency(d, "mean", "clat"),
                    "p99": fmt_direction_latency(d, "99", "clat"),
                    "ran": ran if i == 0 else "",
                    "bad": m.status != "ok",
                }
            )
    return rows


def _window(x: dict[str, Any]) -> str:
    if x.get("engine") == "rados bench" and "window" in x:
        return f"all clients ran together {x['window']['seconds']:.3f} s"
    if "window_s" in x:
        text = f"all ran together {x['window_s']:.3f} s of {x['span_s']:.3f} s"
        return text + (" (low overlap)" if x.get("low_overlap") else "")
    return "sum of the hosts' rates" if x.get("aggregate") == "sum of host rates" else ""
