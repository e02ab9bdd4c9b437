"""What only fio's options tell of a measurement (model/findings.py has the codes):

- ``page-cache``: buffered I/O (``direct=0``, fio's default, and not ``buffered=0``) through
  an ioengine that goes through the kernel's page cache, over data that fits in the memory
  its host has available: reads come from RAM once read or written, writes land in RAM and
  are flushed later. A point that only writes and syncs each write (``sync``, ``fsync``,
  ``fdatasync``) reaches the storage each time and is not flagged. The data is the point's
  ``size`` (per job on a directory target: each job has its files) or, without one, the
  target's own size (a file or device on this machine).
- ``sync-iodepth``: ``iodepth`` above 1 with an ioengine fio runs one I/O at a time per job
  (advice.py's SYNC_ENGINES).
- ``ended-early``: a point without ``time_based`` that ran shorter than its runtime
  (advice.py's ended_early; the session keeps its text in the measurement's extra).
"""

from __future__ import annotations

import os
from typing import Any

from storbench.engines.fio.advice import SYNC_ENGINES
from storbench.model.findings import CODES, Facts, Finding
from storbench.model.metrics import Measurement
from storbench.model.units import UnitError, fmt_bytes, parse_size
from storbench.plan.model import Point, Target

#: ioengines that do not go through the page cache of the host fio runs on (they reach the
#: storage over the network, through a library, or do no I/O at all)
UNCACHED_ENGINES = frozenset(
    ("null", "cpuio", "rbd", "rados", "http", "net", "netsplice", "nbd", "libblkio", "dev-dax")
)
#: rw values without a read
_WRITE_ONLY = ("write", "randwrite", "trimwrite", "trim", "randtrim", "randtrimwrite")


def _flag(params: dict[str, Any], name: str, default: str = "0") -> bool:
    return str(params.get(name, default)).strip().lower() not in ("0", "", "false", "none")


def _whole(value: Any, default: int = 1) -> int:
    try:
        return int(str(value).strip())
    except ValueError:
        return default


def _target_bytes(target: Target, params: dict[str, Any], local: bool) -> int | None:
    """The bytes a point touches on ``target`` (None: unknown)."""
    if "size" in params:
        try:
            size = parse_size(params["size"])
        except (UnitError, ValueError):
            return None
        return size * _whole(params.get("numjobs", 1)) if target.kind == "directory" else size
    if not local or target.kind not in ("file", "device"):
        return None
    try:
        fd = os.open(target.path, os.O_RDONLY)
    except OSError:
        return None
    try:
        return os.lseek(fd, 0, os.SEEK_END)
    except OSError:
        return None
    finally:
        os.close(fd)


def _syncs_each_write(params: dict[str, Any]) -> bool:
    rw = str(params.get("rw", params.get("readwrite", "read"))).split(":")[0].strip()
    if rw not in _WRITE_ONLY and not (
        rw in ("rw", "readwrite", "randrw") and _whole(params.get("rwmixread", 50)) == 0
    ):
        return False
    sync = str(params.get("sync", "0")).strip().lower()
    return sync not in ("0", "none", "false", "") or any(
        _whole(params.get(k, 0), 0) >= 1 for k in ("fsync", "fdatasync")
    )


def page_cache(point: Point, facts: Facts) -> list[Finding]:
    p = point.params
    engine = str(p.get("ioengine", "psync")).strip()
    if _flag(p, "direct") or not _flag(p, "buffered", "1") or engine in UNCACHED_ENGINES:
        return []
    if _syncs_each_write(p):
        return []
    places = [(h.label, h.target, h.local) for h in point.hosts] or [("", point.target, True)]
    out = []
    for label, target, local in places:
        if target.kind not in ("file", "device", "directory"):
            continue
        memory = facts.memory_available.get("" if local else label)
        data = _target_bytes(target, p, local)
        if memory is None or data is None or data > memory:
            continue
        where = "this host" if local or not label else label
        out.append(
            Finding(
                "page-cache",
                f"buffered I/O (direct=0) over {fmt_bytes(data)}, which fits in the "
                f"{fmt_bytes(memory)} of memory available on {where}: reads can come from "
                "the page cache and writes land in it, so this is the host's memory, not "
                f"{target.label}",
                CODES["page-cache"].fix,
                {"direct": 0, "data_bytes": data, "memory_available_bytes": memory},
                host=label,
            )
        )
    return out


def sync_iodepth(point: Point) -> list[Finding]:
    engine = str(point.params.get("ioengine", "psync")).strip()
    depth = _whole(point.params.get("iodepth", 1))
    if engine not in SYNC_ENGINES or depth <= 1:
        return []
    return [
        Finding(
            "sync-iodepth",
            f"iodepth={depth} with ioengine={engine}: a synchronous engine keeps one I/O in "
            "flight per job (fio caps iodepth at 1), so this point measured iodepth 1",
            CODES["sync-iodepth"].fix,
            {"iodepth": depth},
        )
    ]


def findings(point: Point, meas: Measurement, facts: Facts) -> list[Finding]:
    """fio's findings of a measurement of ``point`` (module doc)."""
    out = [*page_cache(point, facts), *sync_iodepth(point)]
    early = meas.extra.get("ended_early")
    if early:
        out.append(Finding("ended-early", str(early), CODES["ended-early"].fix))
    return out
