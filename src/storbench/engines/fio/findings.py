"""What only fio's options tell of a measurement (model/findings.py has the codes):

- ``page-cache``: buffered I/O (``direct=0``, fio's default, and not ``buffered=0``) through
  an ioengine that goes through the kernel's page cache, over data that fits in the memory
  its host has available: reads come from RAM once read or written, writes land in RAM and
  are flushed later. A point that only writes and syncs each write (``sync``, ``fsync``,
  ``fdatasync``) reaches the storage each time and is not flagged. The data is the point's
  ``size`` (per job on a directory target: each job has its files) or, without one, the
  target's own size (a file or device on this machine). A loop device without direct I/O
  caches its backing file whatever ``direct`` says: with ``direct=1`` too, when the file
  fits in memory.
- ``unwritten-read``: a point that reads a region of which less than 90 % holds data: a
  file's or a loop device's backing file's holes, an RBD image's absent objects
  (hosts/allocation.py); checked after the point, so a mix that writes as it reads counts
  what it wrote.
- ``compressible``: a point that writes fio's default buffers (one per job, reused) to a
  Ceph pool whose BlueStore compression compresses unhinted data, or to a file, directory
  or device on this machine that btrfs, ZFS or VDO compresses (hosts/compression.py).
- ``sync-iodepth``: ``iodepth`` above 1 with an ioengine fio runs one I/O at a time per job
  (advice.py's SYNC_ENGINES).
- ``ended-early``: a point without ``time_based`` that ran shorter than its runtime
  (advice.py's ended_early; the session keeps its text in the measurement's extra).
"""

from __future__ import annotations

import contextlib
import functools
import os
from typing import Any

from storbench.engines.fio.advice import SYNC_ENGINES
from storbench.engines.fio.files import workload_writes
from storbench.hosts import allocation, compression
from storbench.hosts.ceph import COMPRESSING_MODES, CephClient, pool_compression
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


def _loop_cache(point: Point, facts: Facts) -> list[Finding]:
    """A loop device without direct I/O over a file that fits in memory: ``direct=1`` on
    the device, the page cache under it."""
    target = point.target
    if point.hosts or target.kind != "device":
        return []
    loop = allocation.loop_backing(target.path)
    memory = facts.memory_available.get("")
    if loop is None or loop.direct_io or memory is None or loop.size > memory:
        return []
    return [
        Finding(
            "page-cache",
            f"{target.path} is a loop device that reads and writes its backing file "
            f"{loop.file} ({fmt_bytes(loop.size)}) through the page cache (its direct I/O "
            f"is off), which fits in the {fmt_bytes(memory)} of memory available on this "
            "host: direct=1 stops at the loop device",
            f"`losetup --direct-io=on {target.path}` (or set up the device with "
            "`losetup --direct-io=on`), or measure the storage under the file itself",
            {"direct": 1, "data_bytes": loop.size, "memory_available_bytes": memory},
        )
    ]


def page_cache(point: Point, facts: Facts) -> list[Finding]:
    p = point.params
    engine = str(p.get("ioengine", "psync")).strip()
    if engine in UNCACHED_ENGINES:
        return []
    if _flag(p, "direct") or not _flag(p, "buffered", "1"):
        return _loop_cache(point, facts)
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


#: Less than this share of the region a point reads holding data: it reads holes.
WRITTEN_ENOUGH = 0.9


def _reads(params: dict[str, Any]) -> bool:
    rw = str(params.get("rw", params.get("readwrite", "read"))).split(":")[0].strip()
    if rw in ("read", "randread"):
        return True
    return rw in ("rw", "readwrite", "randrw") and _whole(params.get("rwmixread", 50)) > 0


def _allocation(target: Target) -> allocation.Allocation | None:
    if target.kind in ("file", "device"):
        return allocation.local(target.path)
    if target.kind == "rbd":
        return allocation.rbd(target.path, CephClient(target.conf, target.client))
    return None


def unwritten_read(point: Point) -> list[Finding]:
    """``unwritten-read``: a point reading a target (on this machine, or an RBD image) of
    which less than 90 % of the region it reads holds data."""
    p = point.params
    if point.hosts or not _reads(p) or str(p.get("ioengine", "")).strip() in ("null", "cpuio"):
        return []
    found = _allocation(point.target)
    if found is None or found.size <= 0:
        return []
    region = found.size
    if "size" in p:
        with contextlib.suppress(UnitError, ValueError):
            region = min(region, parse_size(p["size"]))
    if region <= 0 or found.used >= WRITTEN_ENOUGH * region:
        return []
    share = found.used / region * 100
    return [
        Finding(
            "unwritten-read",
            f"{found.what} holds data in {fmt_bytes(found.used)} of the {fmt_bytes(region)} "
            f"this point reads ({share:.0f} %): the rest reads as zeroes without touching "
            "the storage",
            CODES["unwritten-read"].fix,
            {"region_bytes": region, "written_bytes": found.used},
        )
    ]


#: options with which fio states what its buffers hold (its default: one random buffer per
#: job, reused for every write with a few bytes scrambled)
BUFFER_OPTIONS = (
    "refill_buffers",
    "buffer_compress_percentage",
    "buffer_compress_chunk",
    "buffer_pattern",
    "dedupe_percentage",
    "zero_buffers",
)


@functools.cache
def _pool_compression(pool: str, conf: str | None, client: str | None) -> str | None:
    """Once per pool and run (a run's pools do not change their compression)."""
    return pool_compression(pool, CephClient(conf, client))


def compressible(point: Point) -> list[Finding]:
    """``compressible``: a point writing with fio's default buffers to a Ceph pool that
    compresses what it is given, or to a file, directory or device on this machine under
    which btrfs, ZFS or VDO compresses or deduplicates (hosts/compression.py)."""
    p = point.params
    if not workload_writes(p) or any(k in p for k in BUFFER_OPTIONS):
        return []
    out = []
    places = [h.target for h in point.hosts if h.local] if point.hosts else [point.target]
    for target in places:
        if target.ceph:
            mode = _pool_compression(target.pool, target.conf, target.client)
            if mode not in COMPRESSING_MODES:
                continue
            below = f"pool {target.pool} compresses what it is given (compression_mode {mode})"
            data = {"compression_mode": mode}
        elif target.kind in ("file", "directory", "device"):
            found = compression.of_path(target.path, target.kind)
            if found is None:
                continue
            below = f"{found.what} compresses what it is given"
            data = {"compression": found.setting}
        else:
            continue
        out.append(
            Finding(
                "compressible",
                f"{below} and this point writes fio's default buffers (one per job, reused "
                "for every write): the storage may store and move less than the figures say",
                CODES["compressible"].fix,
                data,
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
    out = [
        *page_cache(point, facts),
        *unwritten_read(point),
        *compressible(point),
        *sync_iodepth(point),
    ]
    early = meas.extra.get("ended_early")
    if early:
        out.append(Finding("ended-early", str(early), CODES["ended-early"].fix))
    return out


def cache_advice(points: list[Point]) -> list[str]:
    """One line per workload and target whose points will measure the page cache: the
    finding page-cache, said before the run where the plan alone shows it (plan check,
    run's warnings), with this machine's memory."""
    from storbench.hosts.inventory.host import memory_available

    memory = memory_available()
    facts = Facts(memory_available={"": memory} if memory is not None else {})
    said: set[tuple[str, str]] = set()
    out = []
    for p in points:
        if (p.workload, p.target.label) in said:
            continue
        for f in page_cache(p, facts):
            said.add((p.workload, p.target.label))
            out.append(f"workload {p.workload!r} on {p.target.label} (page-cache): {f.evidence}")
    return out
