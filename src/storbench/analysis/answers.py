"""Each suite's answer, computed once as data: what every presenter (terminal, Markdown,
HTML, JSON export) renders.

- **qualify** (seed 002): per target, the job count with the highest 4k sync-write IOPS, the
  IOPS at the other counts, the smallest count reaching 95 % of the best, the latency knee;
- **profiles** (seed 001): per target, sequential bandwidth and random IOPS with latency;
- **matrix** (seeds 003/004): per target, rw and block size, the optimal iodepth (the
  smallest reaching 95 % of the best IOPS), the best, and the latency knee;
- **rados** (seed 000's appendix): the rados bench points grouped by mode and parameters,
  one column per client count, rados bench's figures averaged over repetitions.

Figures are in base units (bytes/s, IOPS, ns, s) and are not formatted here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from storbench.analysis.summary import PointSummary
from storbench.analysis.sweep import Knee, Sweep, sweeps
from storbench.plan import RADOS_BENCH


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


#: the order of seed 000's tables (the write first: the reads read what it left)
RADOS_MODES = ("write", "seq", "rand")

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


def is_rados_bench(s: PointSummary) -> bool:
    return str(s.params.get("engine", "")) == RADOS_BENCH


def _clients(s: PointSummary) -> int:
    try:
        return int(s.params.get("clients", 1))
    except (TypeError, ValueError):
        return 1


def _mean_figure(reps: list[dict[str, Any]], key: str) -> float | None:
    """The mean over repetitions; None when a repetition lacks the figure."""
    vals = [r.get(key) for r in reps]
    if not vals or any(v is None for v in vals):
        return None
    return sum(float(v) for v in vals) / len(vals)


def rados_groups(summaries: list[PointSummary]) -> list[dict[str, Any]]:
    """Seed 000's tables: the rados bench points grouped by target, mode and every parameter
    but ``clients`` (write first, then seq, then rand), each with its points by client count.

    Each group: ``mode``, ``params`` (of its first point), ``target``, ``columns``
    [(clients, summary)] ordered by clients, ``figures`` {clients: {figure: mean over
    repetitions}} (see storbench.analysis.summary.engine_figures; base units), ``reps``
    {clients: repetitions}.
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
                "params": dict(s.params),
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


#: the suites whose report has an answer of its own
KINDS = ("qualify", "profiles", "matrix", "rados")


@dataclass
class SuiteAnswer:
    """One run's answer: ``kind`` (a suite's report kind) and its rows (see each
    ``*_rows``/``rados_groups`` function for their keys)."""

    kind: str
    rows: list[dict[str, Any]]


def suite_answer(
    kind: str | None, summaries: list[PointSummary], inventory: dict[str, Any]
) -> SuiteAnswer | None:
    """The answer of a run whose plan asks for the ``kind`` report; None for other runs."""
    if kind == "qualify":
        return SuiteAnswer(kind, qualify_rows(summaries, inventory))
    if kind == "profiles":
        return SuiteAnswer(kind, profiles_rows(summaries))
    if kind == "matrix":
        return SuiteAnswer(kind, matrix_rows(summaries))
    if kind == "rados":
        return SuiteAnswer(kind, rados_groups(summaries))
    return None


def answer_data(answer: SuiteAnswer) -> dict[str, Any]:
    """The answer as plain JSON data: knees as objects, each point by its index (the
    ``point`` of the export's measurements) instead of the summary object, sweeps as
    [value, throughput, point] lists (throughput in IOPS, or bytes/s along ``bs``)."""
    return {"kind": answer.kind, "rows": [_plain(r) for r in answer.rows]}


def _plain(value: Any) -> Any:
    if isinstance(value, Knee):
        return {
            "before": value.before,
            "at": value.at,
            "throughput_change_pct": value.throughput_change_pct,
            "p99_change_pct": value.p99_change_pct,
        }
    if isinstance(value, Sweep):
        return {
            "axis": value.axis,
            "figure": value.figure,
            "values": [[v, t, s.index] for v, t, s in value.values],
        }
    if isinstance(value, PointSummary):
        return value.index
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value
