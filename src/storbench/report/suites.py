"""Each built-in suite's answer as the seeds' own tables (:class:`AnswerTable`, text cells):
qualify (seed 002), profiles (seed 001), matrix (seeds 003/004), rados (seed 000's appendix:
rados bench with one column per client count), soak and s3 (report/soak.py, report/objects.py).
storbench.hooks registers ``KIND_tables`` of each; every presenter draws what they return."""

from __future__ import annotations

from typing import Any

from storbench.analysis.answers import (  # noqa: F401  (re-exported: the data rendered here)
    RADOS_ROWS,
    MatrixAnswer,
    MatrixRow,
    ProfilesAnswer,
    ProfilesRow,
    QualifyAnswer,
    QualifyRow,
    RadosAnswer,
    RadosGroup,
    is_rados_bench,
    matrix_rows,
    profiles_rows,
    qualify_rows,
    rados_groups,
)
from storbench.analysis.summary import PointSummary
from storbench.analysis.sweep import Knee
from storbench.model.units import (
    UnitError,
    fmt_iops,
    fmt_ns,
    fmt_rate,
    fmt_size_short,
    parse_size,
    parse_time,
)
from storbench.report.fmt import AnswerTable
from storbench.report.objects import s3_tables  # noqa: F401  (registered in storbench.hooks)
from storbench.report.soak import soak_tables  # noqa: F401  (registered in storbench.hooks)


def _size_gb(n: int | None) -> str:
    """Decimal size as drive vendors (and seed 002) write it: 240GB, 3.2TB, 4.3GB, 419MB."""
    if not n:
        return "?"
    if n >= 10**12:
        return f"{n / 10**12:.1f}TB".replace(".0TB", "TB")
    if n >= 10**10:
        return f"{n / 10**9:.0f}GB"
    if n >= 10**9:
        return f"{n / 10**9:.1f}GB".replace(".0GB", "GB")
    if n >= 10**6:
        return f"{n / 10**6:.0f}MB"
    return f"{n / 10**3:.0f}kB"


#: disks with no media type or protocol of their own, by the start of their node's name
VIRTUAL_DISKS = ("zram", "ram", "nbd", "dm-", "md", "rbd", "pmem")


def _disk_kind(value: str | None, device: str | None) -> str:
    """Type or protocol as the inventory found it; a loop or virtual device says so."""
    if value:
        return value
    name = (device or "").rsplit("/", 1)[-1]
    if name.startswith("loop"):
        return "loop"
    if name.startswith(VIRTUAL_DISKS):
        return "virtual"
    return "?"


def _qualify_notes(r: QualifyRow) -> str:
    """Seed 002's Notes: the IOPS at the other job counts (``1 job: 8000, 2: 7969``)."""
    others = [(v, f) for v, f in r.iops_by_jobs if v != r.best_jobs]
    return ", ".join(
        f"{v} job{'s' if int(v) > 1 else ''}: {f:.0f}" if i == 0 else f"{v}: {f:.0f}"
        for i, (v, f) in enumerate(others)
    )


def _qualify_cells(r: QualifyRow) -> list[str]:
    """Seed 002's row: ID, Size, Type, Proto, IOPS, #Jobs, Notes."""
    return [
        str(r.model or r.target),
        _size_gb(r.size_bytes),
        _disk_kind(r.media, r.device),
        _disk_kind(r.proto, r.device),
        f"{r.best_iops:.0f}",
        str(r.best_jobs),
        _qualify_notes(r),
    ]


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


def qualify_text(rows: list[QualifyRow]) -> str:
    out = []
    for r in rows:
        out.append(
            f"{r.target}: best job count is {r.best_jobs}: {r.best_iops:,.0f} IOPS "
            f"(4k sync writes, iodepth 1); {_jobs(r.saturation_jobs)} reach 95 % of it; "
            + knee_text(r.knee, "numjobs")
        )
    return "\n".join(out)


def _figure(r: ProfilesRow, kind: str, ddir: str, name: str) -> float | None:
    """One figure of a profile's direction; None when the run has no such direction."""
    fig = r.figures(kind, ddir)
    return None if fig is None else getattr(fig, name)


#: the latency figures of a profile's direction, as seed 001 shows them
CLAT_FIGURES = ("clat_mean_ns", "clat_p95_ns", "clat_p99_ns")


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


def rados_notes(g: RadosGroup) -> list[str]:
    """How the columns of one table were computed, what "—" stands for, repetitions."""
    notes = []
    read = g.mode != "write"
    several = [c for c in g.columns if c.clients > 1]
    if any(c.clients == 1 for c in g.columns):
        notes.append(
            f"{clients_heading(1)}: rados bench's own summary, except Average IOPS: "
            "operations / time run (rados bench truncates it to an integer)."
        )
    if several:
        windows = ", ".join(
            f"{clients_heading(c.clients)} {c.window_s:.2f} s"
            for c in several
            if c.window_s is not None
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
    reps = {c.clients: c.repetitions for c in g.columns}
    if any(r > 1 for r in reps.values()):
        if len(set(reps.values())) == 1:
            notes.append(f"Each figure is the mean over {next(iter(reps.values()))} repetitions.")
        else:
            notes.append(
                "Each figure is the mean over the repetitions: "
                + ", ".join(f"{r} ({clients_heading(n)})" for n, r in sorted(reps.items()))
                + "."
            )
    for c in g.columns:
        s = c.point
        if s.failed:
            what = f"{s.failed} of {s.runs + s.failed} repetitions" if s.runs else "every run"
            err = f": {s.errors[0]}" if s.errors else ""
            notes.append(f"{clients_heading(c.clients)}: {what} failed{err}.")
    return notes


# ---------------------------------------------------------------------------- answer tables


def qualify_tables(answer: QualifyAnswer) -> list[AnswerTable]:
    return _qualify_tables(answer.rows)


def profiles_tables(answer: ProfilesAnswer) -> list[AnswerTable]:
    return _profiles_tables(answer.rows)


def matrix_tables(answer: MatrixAnswer) -> list[AnswerTable]:
    return _matrix_tables(answer.rows)


def rados_tables(answer: RadosAnswer) -> list[AnswerTable]:
    several = len({g.target for g in answer.rows}) > 1
    return [_rados_table(g, several=several) for g in answer.rows]


def not_rados_bench(summaries: list[PointSummary]) -> list[PointSummary]:
    """The points a rados report lists after seed 000's tables: those of other engines."""
    return [s for s in summaries if not is_rados_bench(s)]


def every_point(summaries: list[PointSummary]) -> list[PointSummary]:
    """Every point: the answer summarises, the point table still lists each."""
    return summaries


def _qualify_tables(rows: list[QualifyRow]) -> list[AnswerTable]:
    return [
        AnswerTable(
            "Best job count for 4k sync writes (iodepth 1)",
            ["ID", "Size", "Type", "Proto", "IOPS", "#Jobs", "Notes"],
            [_qualify_cells(r) for r in rows],
            right={4, 5},
            notes=qualify_text(rows).splitlines(),
        )
    ]


def _profiles_tables(rows: list[ProfilesRow]) -> list[AnswerTable]:
    overview = [
        [
            r.target,
            f"{fmt_rate(_figure(r, 'seq', 'read', 'bw_bytes_per_s'))} MiB/s",
            f"{fmt_rate(_figure(r, 'seq', 'write', 'bw_bytes_per_s'))} MiB/s",
            f"{fmt_iops(_figure(r, 'rand', 'read', 'iops'))} IOPS",
            f"{fmt_iops(_figure(r, 'rand', 'write', 'iops'))} IOPS",
        ]
        for r in rows
    ]
    latency = [
        [r.target, f"{label} {ddir}"] + [fmt_ns(_figure(r, kind, ddir, x)) for x in CLAT_FIGURES]
        for r in rows
        for kind, label in (("seq", "Seq"), ("rand", "Rand 4k"))
        for ddir in ("read", "write")
        if r.figures(kind, ddir) is not None
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


def _matrix_tables(rows: list[MatrixRow]) -> list[AnswerTable]:
    grids: dict[tuple[str, str], dict[str, dict[Any, float]]] = {}
    for r in rows:
        grid = grids.setdefault((str(r.target), str(r.rw)), {})
        grid[str(r.bs)] = {v: t for v, t, _ in r.sweep.values}
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


def _rados_table(g: RadosGroup, several: bool) -> AnswerTable:
    cols = g.columns
    read = g.mode != "write"
    return AnswerTable(
        rados_heading(g.params) + (f" — {g.target}" if several else ""),
        ["", *(clients_heading(c.clients) for c in cols)],
        [
            [read_label if read else write_label]
            + [_fmt_figure(c.figures[key], divisor, decimals) for c in cols]
            for write_label, read_label, key, divisor, decimals in RADOS_ROWS
        ],
        right=set(range(1, len(cols) + 1)),
        notes=rados_notes(g),
    )


def matrix_optimal_table(rows: list[MatrixRow]) -> AnswerTable:
    """The matrix answer's table: per target, rw and block size, the optimal iodepth and
    its IOPS, the best, and where p99 climbs faster than IOPS."""
    optimal = [
        [
            str(r.target),
            str(r.rw),
            str(r.bs),
            str(r.optimal_iodepth),
            fmt_iops(r.optimal_iops),
            str(r.best_iodepth),
            fmt_iops(r.best_iops),
            f"{r.knee.before} → {r.knee.at}" if r.knee else "-",
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
