"""The seeds' own tables: qualify (seed 002), profiles (seed 001), matrix (seeds 003/004)."""

from __future__ import annotations

from typing import Any

from rich.table import Table

from storbench.analysis.summary import PointSummary
from storbench.analysis.sweep import Knee, Sweep, sweeps
from storbench.units import fmt_iops, fmt_ns, fmt_rate


def _identity(inventory: dict[str, Any], target_path: str) -> dict[str, Any]:
    for t in inventory.get("targets") or []:
        if t.get("path") == target_path:
            return t.get("identity") or {}
    return {}


def _size_gb(n: int | None) -> str:
    """Decimal size as drive vendors (and seed 002) write it: 240GB, 3.2TB."""
    if not n:
        return "?"
    if n >= 10**12:
        return f"{n / 10**12:.1f}TB".replace(".0TB", "TB")
    return f"{n / 10**9:.0f}GB"


def qualify_rows(summaries: list[PointSummary], inventory: dict[str, Any]) -> list[dict[str, Any]]:
    """Per target: the job count with the highest sync-write IOPS and the IOPS at the others."""
    rows = []
    for sw in sweeps(summaries, "numjobs"):
        best_jobs, best_iops, best = sw.best
        ident = _identity(inventory, best.target.path)
        others = [(v, f) for v, f, _ in sw.values if v != best_jobs]
        notes = ", ".join(
            f"{v} job{'s' if int(v) > 1 else ''}: {f:.0f}" if i == 0 else f"{v}: {f:.0f}"
            for i, (v, f) in enumerate(others)
        )
        rows.append(
            {
                "id": ident.get("model") or best.target.label,
                "size": _size_gb(ident.get("size_bytes")),
                "type": ident.get("type") or "?",
                "proto": ident.get("proto") or "?",
                "iops": best_iops,
                "jobs": best_jobs,
                "notes": notes,
                "target": best.target.label,
                "saturation": sw.saturation(0.95)[0],
                "knee": sw.knee(),
                "sweep": sw,
            }
        )
    return rows


def qualify_markdown(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| ID | Size | Type | Proto | IOPS | #Jobs | Notes |",
        "|----|------|------|-------|-----:|------:|-------|",
    ]
    for r in rows:
        lines.append(
            f"| {r['id']} | {r['size']} | {r['type']} | {r['proto']} | "
            f"{r['iops']:.0f} | {r['jobs']} | {r['notes']} |"
        )
    return "\n".join(lines) + "\n"


def _jobs(n: Any) -> str:
    return f"{n} job{'s' if str(n) != '1' else ''}"


def knee_text(knee: Knee | None, axis: str) -> str:
    """``p99 climbs faster than IOPS from iodepth 16 to 32 (+80 % vs +3 %)``."""
    if knee is None:
        return f"p99 never climbs faster than throughput along {axis}"
    return (
        f"p99 climbs faster than throughput from {axis} {knee.before} to {knee.at} "
        f"(p99 {_signed(knee.p99_change_pct)}, throughput {_signed(knee.throughput_change_pct)})"
    )


def _signed(v: float) -> str:
    return f"{v:+.0f} %".replace("-", "\u2212")


def qualify_text(rows: list[dict[str, Any]]) -> str:
    out = []
    for r in rows:
        out.append(
            f"{r['target']}: best job count is {r['jobs']}: {r['iops']:,.0f} IOPS "
            f"(4k sync writes, iodepth 1); {_jobs(r['saturation'])} reach 95 % of it; "
            + knee_text(r["knee"], "numjobs")
        )
    return "\n".join(out)


def _kind(s: PointSummary) -> str:
    rw = str(s.params.get("rw", s.params.get("readwrite", "read")))
    return "rand" if rw.startswith("rand") else "seq"


def profiles_rows(summaries: list[PointSummary]) -> list[dict[str, Any]]:
    """Seed 001's overview: per target, sequential MiB/s and random IOPS, with latency."""
    rows: dict[str, dict[str, Any]] = {}
    for s in summaries:
        r = rows.setdefault(s.target.label, {"target": s.target.label})
        kind = _kind(s)
        for ddir in ("read", "write"):
            ds = s.dirs.get(ddir)
            if ds is None:
                continue
            r[f"{kind}_{ddir}_bw"] = ds.bw_mean
            r[f"{kind}_{ddir}_iops"] = ds.iops_mean
            lat = ds.clat
            r[f"{kind}_{ddir}_mean"] = lat.mean if lat else None
            r[f"{kind}_{ddir}_p95"] = lat.percentiles.get("95") if lat else None
            r[f"{kind}_{ddir}_p99"] = lat.percentiles.get("99") if lat else None
    return list(rows.values())


def profiles_table(rows: list[dict[str, Any]]) -> Table:
    t = Table(
        title="Overview (seed 001 profiles: seq 1 MiB rw iodepth 16; 4k randrw 70/30 iodepth 64)",
        title_justify="left",
    )
    for c in (
        "target",
        "Seq Read MiB/s",
        "Seq Write MiB/s",
        "Rand 4k Read IOPS",
        "Rand 4k Write IOPS",
    ):
        t.add_column(c, justify="left" if c == "target" else "right")
    for r in rows:
        t.add_row(
            r["target"],
            fmt_rate(r.get("seq_read_bw")),
            fmt_rate(r.get("seq_write_bw")),
            fmt_iops(r.get("rand_read_iops")),
            fmt_iops(r.get("rand_write_iops")),
        )
    return t


def profiles_latency_table(rows: list[dict[str, Any]]) -> Table:
    t = Table(title="Completion latency (clat) mean / p95 / p99", title_justify="left")
    t.add_column("target")
    for kind in ("Seq", "Rand 4k"):
        for ddir in ("read", "write"):
            t.add_column(f"{kind} {ddir}", justify="right")
    for r in rows:
        cells = [r["target"]]
        for kind in ("seq", "rand"):
            for ddir in ("read", "write"):
                cells.append(
                    " / ".join(fmt_ns(r.get(f"{kind}_{ddir}_{x}")) for x in ("mean", "p95", "p99"))
                )
        t.add_row(*cells)
    return t


def profiles_markdown(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| Storage Backend | Seq Read | Seq Write | Rand 4k Read | Rand 4k Write |",
        "|---|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['target']} | {fmt_rate(r.get('seq_read_bw'))} MiB/s | "
            f"{fmt_rate(r.get('seq_write_bw'))} MiB/s | "
            f"{fmt_iops(r.get('rand_read_iops'))} IOPS | "
            f"{fmt_iops(r.get('rand_write_iops'))} IOPS |"
        )
    lines += [
        "",
        "| Storage Backend | Direction | clat mean | p95 | p99 |",
        "|---|---|---:|---:|---:|",
    ]
    for r in rows:
        for kind, label in (("seq", "Seq"), ("rand", "Rand 4k")):
            for ddir in ("read", "write"):
                if f"{kind}_{ddir}_mean" in r:
                    lines.append(
                        f"| {r['target']} | {label} {ddir} | "
                        f"{fmt_ns(r.get(f'{kind}_{ddir}_mean'))} | "
                        f"{fmt_ns(r.get(f'{kind}_{ddir}_p95'))} | "
                        f"{fmt_ns(r.get(f'{kind}_{ddir}_p99'))} |"
                    )
    return "\n".join(lines) + "\n"


def matrix_tables(summaries: list[PointSummary]) -> list[Table]:
    """IOPS by block size (rows) × iodepth (columns), one table per target and rw."""
    tables = []
    groups: dict[tuple[str, str], list[PointSummary]] = {}
    for s in summaries:
        rw = str(s.params.get("rw", "read"))
        groups.setdefault((s.target.label, rw), []).append(s)
    for (target, rw), items in groups.items():
        qds = list(dict.fromkeys(s.params.get("iodepth", 1) for s in items))
        bss = list(dict.fromkeys(s.params.get("bs", "4k") for s in items))
        t = Table(title=f"{target}: {rw} IOPS (rows bs, columns iodepth)", title_justify="left")
        t.add_column("bs")
        for q in qds:
            t.add_column(str(q), justify="right")
        cell = {(s.params.get("bs", "4k"), s.params.get("iodepth", 1)): s for s in items}
        for bs in bss:
            t.add_row(
                str(bs),
                *[
                    fmt_iops(cell[(bs, q)].total_iops)
                    if (bs, q) in cell and cell[(bs, q)].runs
                    else "-"
                    for q in qds
                ],
            )
        tables.append(t)
    return tables


def matrix_rows(summaries: list[PointSummary]) -> list[dict[str, Any]]:
    """Per target, rw and block size, along iodepth: the best point, the optimal iodepth
    (the smallest reaching 95 % of the best IOPS: seed 003's "optimal queue depth") and
    the latency knee."""
    rows = []
    for sw in sweeps(summaries, "iodepth"):
        bq, biops, _ = sw.best
        q, qiops, _ = sw.saturation(0.95)
        rows.append(
            {
                "target": sw.fixed.get("target"),
                "rw": sw.fixed.get("rw", _param(sw, "rw")),
                "bs": sw.fixed.get("bs", _param(sw, "bs")),
                "fixed": sw.fixed,
                "best_iodepth": bq,
                "best_iops": biops,
                "optimal_iodepth": q,
                "optimal_iops": qiops,
                "knee": sw.knee(),
                "sweep": sw,
            }
        )
    return rows


def _param(sw: Sweep, name: str) -> Any:
    return sw.values[0][2].params.get(name, "-") if sw.values else "-"


def matrix_saturation(summaries: list[PointSummary]) -> list[str]:
    """Per target, rw and block size: the optimal iodepth, the best, and the latency knee."""
    lines = []
    for r in matrix_rows(summaries):
        what = ", ".join(f"{k}={v}" for k, v in r["fixed"].items() if k != "workload")
        knee = r["knee"]
        lines.append(
            f"{what}: optimal iodepth {r['optimal_iodepth']} reaches 95 % of the best "
            f"({fmt_iops(r['best_iops'])} IOPS at iodepth {r['best_iodepth']}); "
            + (
                f"p99 climbs faster than IOPS from iodepth {knee.before} to {knee.at}"
                if knee
                else "p99 never climbs faster than IOPS"
            )
        )
    return lines
