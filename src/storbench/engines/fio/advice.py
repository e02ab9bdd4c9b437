"""What a reviewer would warn of in fio points before they run: options fio ignores as
given, so that a table along them measures nothing.

- ``iodepth`` above 1 with a synchronous ioengine: fio keeps one I/O in flight per job
  whatever ``iodepth`` says (backend.c: "note: both iodepth >= 1 and synchronous I/O engine
  are selected, queue depth will be capped at 1"), so points that differ only in
  ``iodepth`` are the same workload and any difference between them is noise. The engines
  are those fio 3.33 flags ``FIO_SYNCIO`` (engines/*.c): sync, psync, vsync, pvsync, pvsync2,
  mmap, splice, net, http, and the file-operation engines.
"""

from __future__ import annotations

from typing import Any

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
