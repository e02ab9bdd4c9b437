"""Each suite's answer, computed once as data: what every presenter (terminal, Markdown,
HTML, JSON export) renders.

- **qualify** (seed 002): per target, the job count with the highest 4k sync-write IOPS, the
  IOPS at every count, the smallest count reaching 95 % of the best, the latency knee;
- **profiles** (seed 001): per target, sequential and random bandwidth, IOPS and latency;
- **matrix** (seeds 003/004): per target, rw and block size, the optimal iodepth (the
  smallest reaching 95 % of the best IOPS), the best, and the latency knee;
- **rados** (seed 000's appendix): the rados bench points grouped by mode and parameters,
  one column per client count, rados bench's figures averaged over repetitions;
- **s3** (seed 003 §5.2): per target, operation and concurrency, requests/s, bytes/s and
  p50/p99 per object size, and where throughput stops growing (analysis/objects.py).

Plain dataclasses: figures in base units named in the field (``_iops``, ``_bytes_per_s``,
``_ns``, ``_s``, ``_bytes``), never formatted here; report/suites.py formats them.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, ClassVar

from storbench.analysis import soak
from storbench.analysis.objects import S3Answer, s3_rows
from storbench.analysis.soak import SeriesSource, SoakAnswer
from storbench.analysis.summary import PointSummary
from storbench.analysis.sweep import Knee, Sweep, sweeps
from storbench.plan.soakkeys import SoakLimits

# ---------------------------------------------------------------------------- qualify


@dataclass
class QualifyRow:
    """One target's numjobs sweep of 4k sync writes (iodepth 1)."""

    target: str  # the target's label
    model: str | None  # from the inventory's identity of the target, None when unknown
    size_bytes: int | None
    media: str | None  # SSD, HDD, ...
    proto: str | None  # SATA, NVMe, ...
    device: str | None  # the disk's node (/dev/sda, /dev/loop0), None when unknown
    best_jobs: Any  # the job count with the highest IOPS (the fewest on a tie)
    best_iops: float
    iops_by_jobs: list[tuple[Any, float]]  # every job count's IOPS, in sweep order
    saturation_jobs: Any  # the fewest jobs reaching 95 % of the best IOPS
    knee: Knee | None  # where p99 climbs faster than IOPS along numjobs
    sweep: Sweep


@dataclass
class QualifyAnswer:
    kind: ClassVar[str] = "qualify"
    rows: list[QualifyRow]


def _identity(inventory: dict[str, Any], target_path: str) -> dict[str, Any]:
    for t in inventory.get("targets") or []:
        if t.get("path") == target_path:
            return t.get("identity") or {}
    return {}


def qualify_rows(summaries: list[PointSummary], inventory: dict[str, Any]) -> list[QualifyRow]:
    """Per target: the job count with the highest sync-write IOPS and the IOPS at the others."""
    rows = []
    for sw in sweeps(summaries, "numjobs"):
        best_jobs, best_iops, best = sw.best
        ident = _identity(inventory, best.target.path)
        rows.append(
            QualifyRow(
                target=best.target.label,
                model=ident.get("model"),
                size_bytes=ident.get("size_bytes"),
                media=ident.get("type"),
                proto=ident.get("proto"),
                device=ident.get("device"),
                best_jobs=best_jobs,
                best_iops=best_iops,
                iops_by_jobs=[(v, f) for v, f, _ in sw.values],
                saturation_jobs=sw.saturation(0.95)[0],
                knee=sw.knee(),
                sweep=sw,
            )
        )
    return rows


# ---------------------------------------------------------------------------- profiles


@dataclass
class ProfileFigures:
    """One direction of one profile (sequential or random) on one target."""

    bw_bytes_per_s: float
    iops: float
    clat_mean_ns: float | None  # None for an engine without completion latency
    clat_p95_ns: float | None
    clat_p99_ns: float | None


@dataclass
class ProfilesRow:
    """Seed 001's overview of one target: each profile's read and write, None when the run
    has no such direction (the last point of a profile wins, as in seed 001's table). A
    plan that varies more than the profiles (``--set direct=[0,1]``) gets a row per
    combination: ``variant`` holds its values, and ``target`` names them after the target's
    label (``NFS direct=0``), so no point is folded away."""

    target: str
    variant: dict[str, Any] = field(default_factory=dict)
    seq_read: ProfileFigures | None = None
    seq_write: ProfileFigures | None = None
    rand_read: ProfileFigures | None = None
    rand_write: ProfileFigures | None = None

    def figures(self, kind: str, ddir: str) -> ProfileFigures | None:
        """``kind`` "seq" or "rand", ``ddir`` "read" or "write"."""
        return getattr(self, f"{kind}_{ddir}")


@dataclass
class ProfilesAnswer:
    kind: ClassVar[str] = "profiles"
    rows: list[ProfilesRow]


#: what tells the profiles apart (each is one row's column): not a variant of its own
PROFILE_AXES = ("rw", "readwrite", "workload")


def _profile(s: PointSummary) -> str:
    rw = str(s.params.get("rw", s.params.get("readwrite", "read")))
    return "rand" if rw.startswith("rand") else "seq"


def profiles_rows(summaries: list[PointSummary]) -> list[ProfilesRow]:
    """Seed 001's overview: per target, sequential and random figures, with latency."""
    rows: dict[tuple[str, str], ProfilesRow] = {}
    for s in summaries:
        variant = {k: v for k, v in s.axes.items() if k not in PROFILE_AXES}
        name = " ".join([s.target.label, *(f"{k}={v}" for k, v in variant.items())])
        r = rows.setdefault((s.target.label, repr(variant)), ProfilesRow(name, variant))
        for ddir in ("read", "write"):
            ds = s.dirs.get(ddir)
            if ds is None:
                continue
            lat = ds.clat
            fig = ProfileFigures(
                bw_bytes_per_s=ds.bw_mean,
                iops=ds.iops_mean,
                clat_mean_ns=lat.mean if lat else None,
                clat_p95_ns=lat.percentiles.get("95") if lat else None,
                clat_p99_ns=lat.percentiles.get("99") if lat else None,
            )
            setattr(r, f"{_profile(s)}_{ddir}", fig)
    return list(rows.values())


# ---------------------------------------------------------------------------- matrix


@dataclass
class MatrixRow:
    """One target, rw and block size along iodepth."""

    target: Any
    rw: Any
    bs: Any
    fixed: dict[str, Any]  # the sweep's other axes, the target and the workload
    best_iodepth: Any
    best_iops: float
    optimal_iodepth: Any  # the smallest reaching 95 % of the best IOPS (seed 003)
    optimal_iops: float
    knee: Knee | None  # where p99 climbs faster than IOPS along iodepth
    sweep: Sweep


@dataclass
class MatrixAnswer:
    kind: ClassVar[str] = "matrix"
    rows: list[MatrixRow]


def matrix_rows(summaries: list[PointSummary]) -> list[MatrixRow]:
    """Per target, rw and block size, along iodepth: the best point, the optimal iodepth
    (the smallest reaching 95 % of the best IOPS: seed 003's "optimal queue depth") and
    the latency knee."""
    rows = []
    for sw in sweeps(summaries, "iodepth"):
        bq, biops, _ = sw.best
        q, qiops, _ = sw.saturation(0.95)
        rows.append(
            MatrixRow(
                target=sw.fixed.get("target"),
                rw=sw.fixed.get("rw", _param(sw, "rw")),
                bs=sw.fixed.get("bs", _param(sw, "bs")),
                fixed=sw.fixed,
                best_iodepth=bq,
                best_iops=biops,
                optimal_iodepth=q,
                optimal_iops=qiops,
                knee=sw.knee(),
                sweep=sw,
            )
        )
    return rows


def _param(sw: Sweep, name: str) -> Any:
    return sw.values[0][2].params.get(name, "-") if sw.values else "-"


# ---------------------------------------------------------------------------- rados

#: the order of seed 000's tables (the write first: the reads read what it left)
RADOS_MODES = ("write", "seq", "rand")

#: seed 000's rows: (label of a write, label of a read, figure, unit divisor, decimals);
#: the figures are engine_figures' (storbench.analysis.summary), in base units
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


@dataclass
class RadosColumn:
    """One client count of a rados group: rados bench's figures, each the mean over the
    point's repetitions (None when a repetition lacks it), keyed as in RADOS_ROWS."""

    clients: int
    point: PointSummary
    figures: dict[str, float | None]
    window_s: float | None  # several clients: the seconds all of them ran together
    repetitions: int


@dataclass
class RadosGroup:
    """Seed 000's table: rados bench points of one target and mode that differ only in the
    number of clients, ordered by clients."""

    target: str
    mode: str  # write, seq, rand
    params: dict[str, Any]  # of its first point
    columns: list[RadosColumn]


@dataclass
class RadosAnswer:
    kind: ClassVar[str] = "rados"
    rows: list[RadosGroup]


def is_rados_bench(s: PointSummary) -> bool:
    return str(s.params.get("engine", "")) == "rados-bench"  # the engine the rados answer reads


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


def rados_groups(summaries: list[PointSummary]) -> list[RadosGroup]:
    """Seed 000's tables: the rados bench points grouped by target, mode and every parameter
    but ``clients`` (write first, then seq, then rand), each with a column per client count."""
    groups: dict[tuple[str, str, str], RadosGroup] = {}
    for s in summaries:
        if not is_rados_bench(s):
            continue
        mode = str(s.params.get("mode", "write"))
        rest = sorted((k, str(v)) for k, v in s.params.items() if k != "clients")
        g = groups.setdefault(
            (s.target.label, mode, repr(rest)), RadosGroup(s.target.label, mode, dict(s.params), [])
        )
        g.columns.append(
            RadosColumn(
                clients=_clients(s),
                point=s,
                figures={k: _mean_figure(s.engine_figures, k) for _, _, k, _, _ in RADOS_ROWS},
                window_s=_mean_figure(s.engine_figures, "window_s"),
                repetitions=len(s.engine_figures),
            )
        )
    order = {m: i for i, m in enumerate(RADOS_MODES)}
    out = sorted(groups.values(), key=lambda g: order.get(g.mode, len(order)))
    for g in out:
        g.columns.sort(key=lambda c: c.clients)
    return out


# ---------------------------------------------------------------------------- any suite

SuiteAnswer = QualifyAnswer | ProfilesAnswer | MatrixAnswer | RadosAnswer | SoakAnswer | S3Answer

# Each suite's answer function (storbench.hooks registers them by name): the points'
# summaries, the run's inventory and its series (a point's intervals by its index) in, the
# answer out. The report model (report/model.py) calls them; nothing else dispatches on kind.


def qualify_answer(
    summaries: list[PointSummary], inventory: dict[str, Any], series: SeriesSource | None
) -> QualifyAnswer:
    return QualifyAnswer(qualify_rows(summaries, inventory))


def profiles_answer(
    summaries: list[PointSummary], inventory: dict[str, Any], series: SeriesSource | None
) -> ProfilesAnswer:
    return ProfilesAnswer(profiles_rows(summaries))


def matrix_answer(
    summaries: list[PointSummary], inventory: dict[str, Any], series: SeriesSource | None
) -> MatrixAnswer:
    return MatrixAnswer(matrix_rows(summaries))


def rados_answer(
    summaries: list[PointSummary], inventory: dict[str, Any], series: SeriesSource | None
) -> RadosAnswer:
    return RadosAnswer(rados_groups(summaries))


def soak_answer(
    summaries: list[PointSummary], inventory: dict[str, Any], series: SeriesSource | None
) -> SoakAnswer:
    return soak.soak_answer(summaries, series, inventory.get("soak") or SoakLimits().to_dict())


def s3_answer(
    summaries: list[PointSummary], inventory: dict[str, Any], series: SeriesSource | None
) -> S3Answer:
    return S3Answer(s3_rows(summaries))


def answer_data(answer: SuiteAnswer) -> dict[str, Any]:
    """The answer as plain JSON data: ``kind`` and ``rows``, each row's fields by name,
    knees as objects, each point by its number (from 1: the ``point`` of the export's
    measurements),
    sweeps as {axis, figure, values: [value, throughput, point]} (throughput in IOPS, or
    bytes/s along ``bs``), pairs as lists; an answer that says its own (``to_dict``) as
    it says."""
    if hasattr(answer, "to_dict"):
        return {"kind": answer.kind, **answer.to_dict()}
    return {"kind": answer.kind, "rows": [_plain(r) for r in answer.rows]}


def _plain(value: Any) -> Any:
    if isinstance(value, Sweep):
        return {
            "axis": value.axis,
            "figure": value.figure,
            "values": [[v, t, s.index + 1] for v, t, s in value.values],
        }
    if isinstance(value, PointSummary):
        return value.index + 1  # as the export's measurements number it: from 1
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value
