"""The settings that explain a result (seeds 000 and 003 list them in their appendices):
the kernel's writeback and network sysctls, the CPU frequency governor, transparent huge
pages and each interface's MTU on the host; each disk's I/O scheduler, read-ahead, queue
limits and write cache. Read from /proc and /sys only (no command, no root needed); a
value that cannot be read is left out. :func:`differences` says what differs between two
runs' inventories, for `storbench compare`.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

#: sysctls that change how writes reach a disk or how the network carries them
SYSCTLS = (
    "vm.dirty_ratio",
    "vm.dirty_background_ratio",
    "vm.dirty_bytes",
    "vm.dirty_background_bytes",
    "vm.dirty_expire_centisecs",
    "vm.dirty_writeback_centisecs",
    "vm.swappiness",
    "vm.vfs_cache_pressure",
    "kernel.numa_balancing",
    "net.core.rmem_max",
    "net.core.wmem_max",
    "net.ipv4.tcp_rmem",
    "net.ipv4.tcp_wmem",
)
#: a disk's queue settings under /sys/block/DISK/queue (and the device's queue_depth)
QUEUE = (
    "scheduler",
    "read_ahead_kb",
    "nr_requests",
    "max_sectors_kb",
    "write_cache",
    "nomerges",
    "rq_affinity",
    "wbt_lat_usec",
)


def _read(path: Path | str) -> str | None:
    try:
        return " ".join(Path(path).read_text().split()) or None
    except (OSError, UnicodeDecodeError):
        return None


def host_tuning(proc: str = "/proc", sys: str = "/sys") -> dict[str, Any]:
    """``sysctl`` (name -> value), ``cpu_governor`` (the governor of every CPU, or
    {governor: CPUs} when they differ), ``transparent_hugepage`` and ``mtu`` (interface ->
    bytes; loopback left out)."""
    out: dict[str, Any] = {}
    sysctl = {
        name: v for name in SYSCTLS if (v := _read(Path(proc, "sys", *name.split(".")))) is not None
    }
    if sysctl:
        out["sysctl"] = sysctl
    cpus = Path(sys, "devices/system/cpu")
    governors = Counter(
        g
        for d in sorted(cpus.glob("cpu[0-9]*"))
        if (g := _read(d / "cpufreq/scaling_governor")) is not None
    )
    if governors:
        out["cpu_governor"] = next(iter(governors)) if len(governors) == 1 else dict(governors)
    thp = _read(Path(sys, "kernel/mm/transparent_hugepage/enabled"))
    if thp:
        out["transparent_hugepage"] = thp
    mtu = {
        d.name: int(v)
        for d in sorted(Path(sys, "class/net").glob("*"))
        if d.name != "lo" and (v := _read(d / "mtu")) is not None and v.isdigit()
    }
    if mtu:
        out["mtu"] = mtu
    return out


def disk_tuning(disk: Path) -> dict[str, Any]:
    """A whole disk's queue settings (its sysfs directory): the scheduler in use (the one
    in brackets), read-ahead, queue limits, write cache mode, the device's queue depth."""
    out: dict[str, Any] = {}
    for name in QUEUE:
        v = _read(disk / "queue" / name)
        if v is None:
            continue
        if name == "scheduler" and "[" in v:
            v = v[v.index("[") + 1 : v.index("]")]
        out[name] = int(v) if v.isdigit() else v
    depth = _read(disk / "device" / "queue_depth")
    if depth is not None and depth.isdigit():
        out["queue_depth"] = int(depth)
    return out
