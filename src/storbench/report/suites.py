"""The seeds' own tables: qualify (seed 002), profiles (seed 001), matrix (seeds 003/004),
rados (seed 000's appendix: rados bench with one column per client count)."""

from __future__ import annotations

from typing import Any

from rich.table import Table

from storbench.analysis.summary import PointSummary
from storbench.analysis.sweep import Knee, Sweep, sweeps
from storbench.plan import RADOS_BENCH
from storbench.report.safe import md_text
from storbench.units import (
    UnitError,
    fmt_iops,
    fmt_ns,
    fmt_rate,
    fmt_size_short,
    parse_size,
    parse_time,
)


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
        cells = [r["id"], r["size"], r["type"], r["proto"], f"{r['iops']:.0f}", r["jobs"]]
        lines.append("| " + " | ".join(md_text(c) for c in [*cells, r["notes"]]) + " |")
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
            f"| {md_text(r['target'])} | {fmt_rate(r.get('seq_read_bw'))} MiB/s | "
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
                        f"| {md_text(r['target'])} | {label} {ddir} | "
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


# ---------------------------------------------------------------------------- rados (seed 000)

#: the order of seed 000's tables (the write first: the reads read what it left)
RADOS_MODES = ("write", "seq", "rand")
#: what seed 000 calls its columns
CLIENT_WORDS = {1: "Single Client", 2: "Two Clients", 3: "Three Clients"}
#: shown for a figure that does not exist (rados bench measures no latency stddev for reads)
NONE = "—"

#: seed 000's rows: (label of a write, label of a read, figure, unit divisor, decimals)
RADOS_ROWS: tuple[tuple[str, str, str, float, int], ...] = (
    ("Total time run", "Total time run", "total_time_s", 1.0, 2),
    ("Total writes made", "Total reads made", "ops", 1.0, 2),
    ("Write size", "Read size", "op_size", 1.0, 2),
    ("Object size", "Object size", "object_size", 1.0, 2),
    ("Bandwidth (MB/sec)", "Bandwidth (MB/sec)", "bw_bytes", float(1 << 20), 2),
    ("Stddev Bandwidth", "Stddev Bandwidth", "bw_stddev", float(1 << 20), 2),
    ("Max bandwidth (MB/sec)", "Max bandwidth (MB/sec)", "bw_max", float(1 << 20), 2),
    ("Min bandwidth (MB/sec)", "Min bandwidth (MB/sec)", "bw_min", float(1 << 20), 2),
    ("Average IOPS", "Average IOPS", "iops", 1.0, 2),
    ("Stddev IOPS", "Stddev IOPS", "iops_stddev", 1.0, 2),
    ("Max IOPS", "Max IOPS", "iops_max", 1.0, 2),
    ("Min IOPS", "Min IOPS", "iops_min", 1.0, 2),
    ("Average Latency(s)", "Average Latency(s)", "lat_mean", 1e9, 4),
    ("Stddev Latency(s)", "Stddev Latency(s)", "lat_stddev", 1e9, 4),
    ("Max latency(s)", "Max latency(s)", "lat_max", 1e9, 4),
    ("Min latency(s)", "Min latency(s)", "lat_min", 1e9, 4),
)


def clients_heading(n: int) -> str:
    """Seed 000's column name: Single Client, Two Clients, Three Clients, then N Clients."""
    return CLIENT_WORDS.get(n, f"{n} Clients")


def is_rados_bench(s: PointSummary) -> bool:
    return str(s.params.get("engine", "")) == RADOS_BENCH


def _clients(s: PointSummary) -> int:
    try:
        return int(s.params.get("clients", 1))
    except (TypeError, ValueError):
        return 1


def _rados_size(bs: Any) -> str:
    """rados bench's ``-b`` as seed 000 writes it: ``4m`` -> ``4M``."""
    try:
        return fmt_size_short(parse_size(bs)).upper()
    except (UnitError, ValueError):
        return str(bs)


def _seconds_arg(runtime: Any) -> str:
    try:
        return f"{parse_time(runtime):g}"
    except (UnitError, ValueError):
        return str(runtime)


def rados_heading(params: dict[str, Any]) -> str:
    """Seed 000's table heading, from a point's parameters:
    ``rados bench 600 write -b 4M -t 16 --no-cleanup``, ``rados bench 600 seq -t 16 (uses 4M
    from write)``."""
    mode = str(params.get("mode", "write"))
    secs = _seconds_arg(params.get("runtime", "?"))
    threads = params.get("threads", 16)
    size = _rados_size(params.get("bs", "4m"))
    if mode == "write":
        return f"rados bench {secs} write -b {size} -t {threads} --no-cleanup"
    return f"rados bench {secs} {mode} -t {threads} (uses {size} from write)"


def _mean_figure(reps: list[dict[str, Any]], key: str) -> float | None:
    """The mean over repetitions; None when a repetition lacks the figure."""
    vals = [r.get(key) for r in reps]
    if not vals or any(v is None for v in vals):
        return None
    return sum(float(v) for v in vals) / len(vals)


def rados_groups(summaries: list[PointSummary]) -> list[dict[str, Any]]:
    """Seed 000's tables: the rados bench points grouped by target, mode and every parameter
    but ``clients`` (write first, then seq, then rand), each with its points by client count.

    Each group: ``mode``, ``heading``, ``target``, ``columns`` [(clients, summary)] ordered by
    clients, ``figures`` {clients: {figure: mean over repetitions}} (see
    storbench.analysis.summary.engine_figures; base units), ``reps`` {clients: repetitions}.
    """
    groups: dict[tuple[str, str, str], dict[str, Any]] = {}
    for s in summaries:
        if not is_rados_bench(s):
            continue
        mode = str(s.params.get("mode", "write"))
        rest = sorted((k, str(v)) for k, v in s.params.items() if k != "clients")
        key = (s.target.label, mode, repr(rest))
        g = groups.setdefault(
            key,
            {
                "mode": mode,
                "heading": rados_heading(s.params),
                "target": s.target.label,
                "columns": [],
                "figures": {},
                "reps": {},
            },
        )
        n = _clients(s)
        g["columns"].append((n, s))
        g["figures"][n] = {
            key: _mean_figure(s.engine_figures, key) for _, _, key, _, _ in RADOS_ROWS
        } | {"window_s": _mean_figure(s.engine_figures, "window_s")}
        g["reps"][n] = len(s.engine_figures)
    order = {m: i for i, m in enumerate(RADOS_MODES)}
    out = sorted(groups.values(), key=lambda g: order.get(g["mode"], len(order)))
    for g in out:
        g["columns"].sort(key=lambda c: c[0])
    return out


def _fmt_figure(v: float | None, divisor: float, decimals: int) -> str:
    return NONE if v is None else f"{v / divisor:,.{decimals}f}"


def rados_notes(g: dict[str, Any]) -> list[str]:
    """How the columns of one table were computed, what "—" stands for, repetitions."""
    notes = []
    read = g["mode"] != "write"
    several = [n for n, _ in g["columns"] if n > 1]
    if any(n == 1 for n, _ in g["columns"]):
        notes.append(
            f"{clients_heading(1)}: rados bench's own summary, except Average IOPS: "
            "operations / time run (rados bench truncates it to an integer)."
        )
    if several:
        windows = ", ".join(
            f"{clients_heading(n)} {g['figures'][n]['window_s']:.2f} s"
            for n in several
            if g["figures"][n].get("window_s") is not None
        )
        notes.append(
            "Several clients (one rados bench process each, started together): Total time "
            "run is the longest client's; Total "
            + ("reads" if read else "writes")
            + " made the sum of the clients'; Bandwidth and Average IOPS the sum of each "
            "client's rate over the common window (latest start to earliest end"
            + (f"; {windows}" if windows else "")
            + "); their Stddev, Max and Min those of the per-second sums: the operations all "
            "clients finished in each whole second of that window (counts interpolated "
            "between each client's one-second rows, hence not integers); the latency rows "
            "are over every operation of every client (mean weighted by operations, "
            + ("" if read else "stddev pooled, ")
            + "max and min of the clients')."
        )
    if read:
        notes.append(
            "rados bench prints no bandwidth spread for reads: Stddev, Max and Min bandwidth "
            "are computed from its per-second table as it does for writes. It measures no "
            f"latency stddev for reads: {NONE}."
        )
    notes.append("MB = 2^20 bytes, as in rados bench; latencies in seconds.")
    reps: dict[int, int] = g["reps"]
    if any(r > 1 for r in reps.values()):
        if len(set(reps.values())) == 1:
            notes.append(f"Each figure is the mean over {next(iter(reps.values()))} repetitions.")
        else:
            notes.append(
                "Each figure is the mean over the repetitions: "
                + ", ".join(f"{r} ({clients_heading(n)})" for n, r in sorted(reps.items()))
                + "."
            )
    for n, s in g["columns"]:
        if s.failed:
            what = f"{s.failed} of {s.runs + s.failed} repetitions" if s.runs else "every run"
            err = f": {s.errors[0]}" if s.errors else ""
            notes.append(f"{clients_heading(n)}: {what} failed{err}.")
    return notes


def rados_markdown(summaries: list[PointSummary]) -> str:
    """Seed 000's appendix: per mode a table with one column per client count."""
    out = []
    several_targets = len({s.target for s in summaries if is_rados_bench(s)}) > 1
    for g in rados_groups(summaries):
        heading = g["heading"] + (f" — {g['target']}" if several_targets else "")
        cols = g["columns"]
        lines = [
            f"### {md_text(heading)}",
            "",
            "| | " + " | ".join(clients_heading(n) for n, _ in cols) + " |",
            "|---|" + "---:|" * len(cols),
        ]
        read = g["mode"] != "write"
        for write_label, read_label, key, divisor, decimals in RADOS_ROWS:
            cells = [_fmt_figure(g["figures"][n][key], divisor, decimals) for n, _ in cols]
            lines.append(f"| {read_label if read else write_label} | " + " | ".join(cells) + " |")
        lines.append("")
        lines += [f"- {md_text(note)}" for note in rados_notes(g)]
        out.append("\n".join(lines) + "\n")
    return "\n".join(out) if out else "(no rados bench point in this run)\n"
