"""The mount a path lives on, from ``/proc/self/mountinfo``: one reader for every stage that
asks (the inventory's fallback when ``findmnt`` is missing, the network path toward a
network file system's server, the compression a file system applies)."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Mount:
    mountpoint: str
    fstype: str
    #: what is mounted: a device, a server's export, a ZFS dataset
    source: str
    #: the file system's own options (mountinfo's super options: ``compress=zstd:3``)
    options: str = ""
    #: this mount's options (``rw,noatime``)
    mount_options: str = ""


def unescape(field: str) -> str:
    """mountinfo's octal escapes (``\\040`` for a space)."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


def mount_of(path: str, mountinfo: str | None = None) -> Mount | None:
    """The mount ``path`` lives on (the longest mount point above it, the last mounted when
    several share it), from ``mountinfo`` (``/proc/self/mountinfo``'s text; read when
    None)."""
    if mountinfo is None:
        try:
            mountinfo = Path("/proc/self/mountinfo").read_text()
        except OSError:
            return None
    real = os.path.realpath(path)
    best: Mount | None = None
    for line in mountinfo.splitlines():
        # 36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue
        head, sep, tail = line.partition(" - ")
        fields, rest = head.split(), tail.split()
        if not sep or len(fields) < 6 or len(rest) < 2:
            continue
        point = unescape(fields[4])
        inside = real == point or real.startswith(point.rstrip("/") + "/")
        if inside and (best is None or len(point) >= len(best.mountpoint)):
            options = rest[2] if len(rest) > 2 else ""
            best = Mount(point, rest[0], unescape(rest[1]), options, fields[5])
    return best
