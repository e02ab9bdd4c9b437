"""What a reviewer would warn of in fio points before they run: options fio ignores as
given, so that a table along them measures nothing.

- after a point: ``runtime`` without ``time_based`` lets fio stop when ``size`` is done;
  a point that ran clearly shorter than its runtime says so (``ended_early``), or its
  figures pass for a ``runtime``-long measurement.
- ``iodepth`` above 1 with a synchronous ioengine: fio keeps one I/O in flight per job
  whatever ``iodepth`` says (backend.c: "note: both iodepth >= 1 and synchronous I/O engine
  are selected, queue depth will be capped at 1"), so points that differ only in
  ``iodepth`` are the same workload and any difference between them is noise. The engines
  are those fio 3.33 flags ``FIO_SYNCIO`` (engines/*.c): sync, psync, vsync, pvsync, pvsync2,
  mmap, splice, net, http, and the file-operation engines.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from storbench.model.units import UnitError, parse_time

if TYPE_CHECKING:
    from storbench.model.metrics import Measurement
    from storbench.plan import Point

#: ioengines fio runs one I/O at a time per job (FIO_SYNCIO in fio 3.33's engines/*.c)
SYNC_ENGINES = frozenset(
    (
        "sync",
        "psync",
        "vsync",
        "pvsync",
        "pvsync2",
        "mmap",
        "splice",
        "net",
        "netsplice",
        "http",
        "cpuio",
        "e4defrag",
        "exec",
        "falloc",
        "ftruncate",
        "filecreate",
        "filestat",
        "filedelete",
        "dircreate",
        "dirstat",
        "dirdelete",
        "mtd",
        "dev-dax",
        "libpmem",
        "pmemblk",
        "gfapi",
    )
)


def _depth(value: Any) -> int:
    try:
        return int(str(value).strip())
    except ValueError:
        return 1


def advice(points: list[Point]) -> list[str]:
    """One line per workload whose points ask for a queue a synchronous engine ignores."""
    found: dict[tuple[str, str], set[int]] = {}
    for p in points:
        engine = str(p.params.get("ioengine", "psync"))
        depth = _depth(p.params.get("iodepth", 1))
        if engine in SYNC_ENGINES and depth > 1:
            found.setdefault((p.workload, engine), set()).add(depth)
    return [
        f"workload {workload!r}: iodepth {', '.join(map(str, sorted(depths)))} with "
        f"ioengine={engine} does nothing: a synchronous engine has one I/O in flight per job "
        "(fio caps iodepth at 1), so points that differ only in iodepth measure the same "
        "thing; for a queue use ioengine=libaio or io_uring, for concurrency numjobs"
        for (workload, engine), depths in found.items()
    ]


#: a point that ran less than this share of its runtime ended early (not by rounding)
EARLY = 0.9


def ended_early(point: Point, meas: Measurement) -> str | None:
    """Why a point without ``time_based`` ran shorter than its ``runtime``, or None."""
    p = point.params
    if str(p.get("time_based", "0")).strip() not in ("0", "", "false", "False"):
        return None
    if "runtime" not in p or meas.status != "ok" or not meas.directions:
        return None
    try:
        planned = parse_time(str(p["runtime"]))
    except UnitError:
        return None
    ran = max((d.runtime_s for d in meas.directions.values() if d.active), default=0.0)
    if not planned or ran >= EARLY * planned:
        return None
    size = p.get("size", p.get("io_size", "the file"))
    took = f"{ran:.2f} s" if ran < 10 else f"{ran:.1f} s"
    return (
        f"ran {took} of runtime={p['runtime']}: it wrote or read its size ({size}) sooner "
        f"and fio stopped (no time_based); its figures are for those {took}; set "
        "time_based=1 to run the whole runtime"
    )
