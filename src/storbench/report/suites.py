"""The seeds' own tables: qualify (seed 002), profiles (seed 001), matrix (seeds 003/004),
rados (seed 000's appendix: rados bench with one column per client count)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rich.table import Table

from storbench.analysis.answers import (  # noqa: F401  (the answers' data, rendered here)
    RADOS_MODES,
    RADOS_ROWS,
    SuiteAnswer,
    is_rados_bench,
    matrix_rows,
    profiles_rows,
    qualify_rows,
    rados_groups,
    suite_answer,
)
from storbench.analysis.summary import PointSummary
from storbench.analysis.sweep import Knee
from storbench.report.safe import md_table, md_text
from storbench.units import (
    UnitError,
    fmt_iops,
    fmt_ns,
    fmt_rate,
    fmt_size_short,
    parse_size,
    parse_time,
)


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
    """Seed 001's two tables: the overview, then the completion latency."""
    overview, latency = _profiles_tables(rows)
    return (
        md_table(overview.headers, overview.rows, overview.right)
        + "\n"
        + md_table(latency.headers, latency.rows, latency.right)
    )


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


def matrix_saturation(rows: list[dict[str, Any]]) -> list[str]:
    """Per target, rw and block size (the matrix answer's rows): the optimal iodepth, the
    best, and the latency knee."""
    lines = []
    for r in rows:
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

#: what seed 000 calls its columns
CLIENT_WORDS = {1: "Single Client", 2: "Two Clients", 3: "Three Clients"}
#: shown for a figure that does not exist (rados bench measures no latency stddev for reads)
NONE = "—"


def clients_heading(n: int) -> str:
    """Seed 000's column name: Single Client, Two Clients, Three Clients, then N Clients."""
    return CLIENT_WORDS.get(n, f"{n} Clients")


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


def rados_markdown(groups: list[dict[str, Any]]) -> str:
    """Seed 000's appendix (the rados answer's groups): per mode a table with one column per
    client count."""
    out = []
    several_targets = len({g["target"] for g in groups}) > 1
    for g in groups:
        heading = rados_heading(g["params"]) + (f" — {g['target']}" if several_targets else "")
        t = _rados_table(g, several=False)
        lines = [
            f"### {md_text(heading)}",
            "",
            "| | " + " | ".join(t.headers[1:]) + " |",
            "|---|" + "---:|" * (len(t.headers) - 1),
        ]
        lines += ["| " + " | ".join(row) + " |" for row in t.rows]
        lines.append("")
        lines += [f"- {md_text(note)}" for note in t.notes]
        out.append("\n".join(lines) + "\n")
    return "\n".join(out) if out else "(no rados bench point in this run)\n"


# ---------------------------------------------------------------------------- answer tables


@dataclass
class AnswerTable:
    """A suite's answer as a table of text cells, for presenters that draw their own tables
    (the HTML report): formatted like the Markdown, escaped by the presenter."""

    title: str
    headers: list[str]
    rows: list[list[str]]
    right: set[int] = field(default_factory=set)  # columns aligned right
    notes: list[str] = field(default_factory=list)


def answer_tables(answer: SuiteAnswer) -> list[AnswerTable]:
    """The tables of a suite's answer, in the order the Markdown report shows them."""
    if answer.kind == "qualify":
        return _qualify_tables(answer.rows)
    if answer.kind == "profiles":
        return _profiles_tables(answer.rows)
    if answer.kind == "matrix":
        return _matrix_tables(answer.rows)
    if answer.kind == "rados":
        return [
            _rados_table(g, several=len({x["target"] for x in answer.rows}) > 1)
            for g in answer.rows
        ]
    return []


def _qualify_tables(rows: list[dict[str, Any]]) -> list[AnswerTable]:
    cells = [
        [
            str(r["id"]),
            r["size"],
            r["type"],
            r["proto"],
            f"{r['iops']:.0f}",
            str(r["jobs"]),
            r["notes"],
        ]
        for r in rows
    ]
    return [
        AnswerTable(
            "Best job count for 4k sync writes (iodepth 1)",
            ["ID", "Size", "Type", "Proto", "IOPS", "#Jobs", "Notes"],
            cells,
            right={4, 5},
            notes=qualify_text(rows).splitlines(),
        )
    ]


def _profiles_tables(rows: list[dict[str, Any]]) -> list[AnswerTable]:
    overview = [
        [
            r["target"],
            f"{fmt_rate(r.get('seq_read_bw'))} MiB/s",
            f"{fmt_rate(r.get('seq_write_bw'))} MiB/s",
            f"{fmt_iops(r.get('rand_read_iops'))} IOPS",
            f"{fmt_iops(r.get('rand_write_iops'))} IOPS",
        ]
        for r in rows
    ]
    latency = [
        [r["target"], f"{label} {ddir}"]
        + [fmt_ns(r.get(f"{kind}_{ddir}_{x}")) for x in ("mean", "p95", "p99")]
        for r in rows
        for kind, label in (("seq", "Seq"), ("rand", "Rand 4k"))
        for ddir in ("read", "write")
        if f"{kind}_{ddir}_mean" in r
    ]
    return [
        AnswerTable(
            "Overview (seq 1 MiB rw iodepth 16; 4k randrw 70/30 iodepth 64)",
            ["Storage Backend", "Seq Read", "Seq Write", "Rand 4k Read", "Rand 4k Write"],
            overview,
            right={1, 2, 3, 4},
        ),
        AnswerTable(
            "Completion latency (clat)",
            ["Storage Backend", "Direction", "clat mean", "p95", "p99"],
            latency,
            right={2, 3, 4},
        ),
    ]


def _matrix_tables(rows: list[dict[str, Any]]) -> list[AnswerTable]:
    grids: dict[tuple[str, str], dict[str, dict[Any, float]]] = {}
    for r in rows:
        grid = grids.setdefault((str(r["target"]), str(r["rw"])), {})
        grid[str(r["bs"])] = {v: t for v, t, _ in r["sweep"].values}
    out = []
    for (target, rw), grid in grids.items():
        depths = list(dict.fromkeys(q for by_q in grid.values() for q in by_q))
        out.append(
            AnswerTable(
                f"{target}: {rw} IOPS by block size and iodepth",
                ["bs \\ iodepth", *map(str, depths)],
                [
                    [bs] + [fmt_iops(by_q[q]) if q in by_q else "-" for q in depths]
                    for bs, by_q in grid.items()
                ],
                right=set(range(1, len(depths) + 1)),
            )
        )
    out.append(matrix_optimal_table(rows))
    return out


def _rados_table(g: dict[str, Any], several: bool) -> AnswerTable:
    cols = g["columns"]
    read = g["mode"] != "write"
    return AnswerTable(
        rados_heading(g["params"]) + (f" — {g['target']}" if several else ""),
        ["", *(clients_heading(n) for n, _ in cols)],
        [
            [read_label if read else write_label]
            + [_fmt_figure(g["figures"][n][key], divisor, decimals) for n, _ in cols]
            for write_label, read_label, key, divisor, decimals in RADOS_ROWS
        ],
        right=set(range(1, len(cols) + 1)),
        notes=rados_notes(g),
    )


def matrix_optimal_table(rows: list[dict[str, Any]]) -> AnswerTable:
    """The matrix answer's table: per target, rw and block size, the optimal iodepth and
    its IOPS, the best, and where p99 climbs faster than IOPS."""
    optimal = [
        [
            str(r["target"]),
            str(r["rw"]),
            str(r["bs"]),
            str(r["optimal_iodepth"]),
            fmt_iops(r["optimal_iops"]),
            str(r["best_iodepth"]),
            fmt_iops(r["best_iops"]),
            f"{r['knee'].before} → {r['knee'].at}" if r["knee"] else "-",
        ]
        for r in rows
    ]
    return AnswerTable(
        "Optimal iodepth (the smallest reaching 95 % of the best IOPS)",
        [
            "target",
            "rw",
            "bs",
            "optimal iodepth",
            "IOPS",
            "best iodepth",
            "best IOPS",
            "p99 climbs faster than IOPS",
        ],
        optimal,
        right={3, 4, 5, 6, 7},
    )
