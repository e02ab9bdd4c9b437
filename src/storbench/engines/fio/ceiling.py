"""``page-cache`` found in a whole run: buffered random reads faster than the device itself
showed it can read.

A point that reads with ``direct=0`` is flagged when its data fits in memory
(findings.py); when storbench cannot tell (the host's memory unknown: a remote host of a
``hosts:`` point; a region larger than memory read over a small hot set), the run itself may
still show it: the same target read with ``direct=1`` in the same run, from the same hosts,
at the same concurrency (``numjobs`` x ``iodepth``) or more, is what the device can do, and
buffered reads well beyond that came from RAM. The check runs once the run's points ran
(the runner's ``_run_findings``), so the order of the points does not matter: a ``direct=1``
point measured after the buffered one is its reference as well.

Only random reads are compared: their IOPS against the most IOPS a ``direct=1`` random or
sequential read reached at the same block size or a smaller one (a device gives fewer IOPS
at larger blocks, not more). A buffered random read gets no readahead (fio's default
``fadvise_hint`` advises ``POSIX_FADV_RANDOM``, and the kernel reads a lone random miss as
it is), so each of its misses is one read of the device, at most as large as its block.
Not below the page size (4 KiB): the page cache reads whole pages, so smaller random reads
find their neighbours' bytes cached by right.

Sequential reads are not compared: the kernel reads ahead of a sequential buffered reader
in requests as large as the device's ``read_ahead_kb`` (128 KiB by default, but 8 MiB on
this project's virtio disk and 2.5 MiB on its loop devices), one ahead of the reader, so a
buffered sequential read legitimately moves several times what ``direct=1`` reads at
queue depth 1 move, with no page cache hit at all (measured: tests/integration/
test_findings_ceiling.py). Whether cached or read ahead, its figure alone cannot tell.

The point's figure must exceed the device's :data:`BEYOND` times over; without a fitting
``direct=1`` read of the target in the run, nothing is said.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from storbench.engines.fio.advice import SYNC_ENGINES
from storbench.model.findings import CODES, Finding
from storbench.model.metrics import Measurement
from storbench.model.units import UnitError, fmt_bytes, fmt_iops, parse_size
from storbench.plan.model import Point

#: Buffered random reads this many times beyond the device's own direct figure came from
#: RAM: a cache hit is ten times a device read and more, while two measurements of the same
#: device on a busy machine differ by far less than twice.
BEYOND = 2.0
#: The page cache's unit: random reads smaller than this find their neighbours cached.
PAGE = 4096


@dataclass(frozen=True)
class _Read:
    """A point's read figures, as this check needs them."""

    index: int
    bs: int
    sequential: bool
    iops: float
    #: I/Os it keeps in flight: numjobs x iodepth (1 per job for a synchronous engine)
    concurrency: int


def _mode(params: dict[str, object]) -> tuple[bool, bool] | None:
    """(reads, sequential), or None for a point that does not read."""
    rw = str(params.get("rw", params.get("readwrite", "read"))).split(":")[0].strip()
    if rw in ("read", "rw", "readwrite"):
        return True, True
    if rw in ("randread", "randrw"):
        return True, False
    return None


def _read_bs(params: dict[str, object]) -> int | None:
    """The read block size: ``bs`` (or ``blocksize``), its first part when it gives one per
    direction; None when the point mixes sizes (``bssplit``, ``bsrange``)."""
    if any(k in params for k in ("bssplit", "bsrange", "blocksize_range")):
        return None
    value = str(params.get("bs", params.get("blocksize", "4k"))).split(",")[0].strip()
    try:
        return parse_size(value or "4k")
    except (UnitError, ValueError):
        return None


def _flag(params: dict[str, object], name: str, default: str) -> bool:
    return str(params.get(name, default)).strip().lower() not in ("0", "", "false", "none")


def _read(point: Point, meas: Measurement | None) -> _Read | None:
    mode = _mode(point.params)
    bs = _read_bs(point.params)
    read = meas.directions.get("read") if meas is not None else None
    if mode is None or bs is None or read is None or meas is None or meas.status != "ok":
        return None
    if read.iops <= 0:
        return None
    if any(f.code == "page-cache" for f in meas.findings):
        return None  # said already, or (direct=1 on a cached loop device) no device figure
    return _Read(point.index, bs, mode[1], read.iops, _concurrency(point.params))


def _concurrency(params: dict[str, object]) -> int:
    def whole(name: str) -> int:
        try:
            return max(1, int(str(params.get(name, 1)).strip()))
        except ValueError:
            return 1

    engine = str(params.get("ioengine", "psync")).strip()
    return whole("numjobs") * (1 if engine in SYNC_ENGINES else whole("iodepth"))


def _where(point: Point) -> tuple[str, tuple[str, ...]]:
    """What is read: the target, from which hosts (the same file from other hosts is not
    the same measurement of it)."""
    return point.target.label, tuple(sorted(h.label for h in point.hosts))


def beyond_direct(
    points: Sequence[Point], measured: Callable[[int], Measurement | None]
) -> dict[int, list[Finding]]:
    """Each buffered random read point of a run whose reads went well beyond what a
    ``direct=1`` read of the same target in the run reached (module doc), by point index. Only the
    measurements of targets read both ways are asked for (``measured``: a point index's
    measurement, None without one); points already flagged ``page-cache`` are left as
    they are."""
    ways: dict[tuple[str, tuple[str, ...]], tuple[list[Point], list[Point]]] = {}
    for point in points:
        p = point.params
        mode = _mode(p)
        if point.engine != "fio" or mode is None or _read_bs(p) is None:
            continue
        direct = _flag(p, "direct", "0") or not _flag(p, "buffered", "1")
        if not direct and mode[1]:
            continue  # a buffered sequential read reads ahead: not compared (module doc)
        ways.setdefault(_where(point), ([], []))[0 if direct else 1].append(point)
    out: dict[int, list[Finding]] = {}
    for direct_points, buffered in ways.values():
        if not direct_points or not buffered:
            continue
        refs = [r for r in (_read(p, measured(p.index)) for p in direct_points) if r]
        if not refs:
            continue
        for point in buffered:
            read = _read(point, measured(point.index))
            found = _finding(point, read, refs) if read is not None else None
            if found is not None:
                out[point.index] = [found]
    return out


def _finding(point: Point, read: _Read, refs: list[_Read]) -> Finding | None:
    """A buffered random read's IOPS beyond the best direct read's at blocks as small or
    smaller and the same concurrency or more (module doc: sequential reads read ahead)."""
    if read.sequential or read.bs < PAGE:
        return None
    fits = [r for r in refs if r.concurrency >= read.concurrency and r.bs <= read.bs]
    if not fits:
        return None
    ref = max(fits, key=lambda r: r.iops)
    if read.iops <= BEYOND * ref.iops:
        return None
    return Finding(
        "page-cache",
        f"buffered random reads at {fmt_iops(read.iops)} IOPS, more than {BEYOND:g}x the "
        f"{fmt_iops(ref.iops)} IOPS {point.target.label} gave with direct=1 in this run "
        f"(point {ref.index + 1}, {fmt_bytes(ref.bs)} blocks) at the same concurrency or "
        "more: these reads came from the page cache, not the device",
        CODES["page-cache"].fix,
        {
            "direct": 0,
            "read_iops": round(read.iops, 3),
            "direct_iops": round(ref.iops, 3),
            "direct_point": ref.index + 1,
        },
    )
