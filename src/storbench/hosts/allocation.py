"""How much of a target holds written data. Reading a region nothing wrote measures nothing
of the storage: a sparse file's holes (and a loop device's over one) read as zeroes from
the kernel, a thin RBD image's absent objects are answered by the OSDs without a disk read.

:func:`local` tells it of a file or of a loop device on this machine (the file's allocated
blocks); :func:`rbd` of an RBD image (``rbd du``: the bytes its objects hold). Either is None
where it cannot tell (another kind of device, a tool that fails): unknown, never "written".
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from storbench.hosts.ceph import CephClient, ceph_args, run_tool

#: rbd du of a small image takes well under a second; a big one without fast-diff scans
RBD_DU_TIMEOUT = 60.0


@dataclass(frozen=True)
class Allocation:
    """A target's size and how many of its bytes hold data."""

    #: what holds the data, as a message names it ("the loop device's backing file /x")
    what: str
    size: int
    used: int


def _file(path: str, what: str) -> Allocation | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return Allocation(what, st.st_size, min(st.st_size, st.st_blocks * 512))


@dataclass(frozen=True)
class LoopBacking:
    """The file behind a loop device and whether the device reads it with direct I/O."""

    file: str
    size: int
    direct_io: bool


def loop_backing(path: str) -> LoopBacking | None:
    """The backing file of loop device ``path`` (None: not a loop device, or unreadable).
    Without direct I/O (``losetup --direct-io=on``), the loop device reads and writes its
    file through the page cache, whatever ``direct`` its users ask for."""
    try:
        name = os.path.basename(os.path.realpath(path))
        loop = Path("/sys/block") / name / "loop"
        if not name.startswith("loop") or not (loop / "backing_file").is_file():
            return None
        file = (loop / "backing_file").read_text().strip()
        dio = (loop / "dio").read_text().strip() == "1" if (loop / "dio").exists() else False
        return LoopBacking(file, os.stat(file).st_size, dio)
    except (OSError, ValueError):
        return None


def local(path: str) -> Allocation | None:
    """A regular file's allocation, or a loop device's backing file's; None otherwise."""
    try:
        real = os.path.realpath(path)
        if os.path.isfile(real):
            return _file(real, f"the file {path}")
        name = os.path.basename(real)
        backing = Path("/sys/block") / name / "loop" / "backing_file"
        if name.startswith("loop") and backing.is_file():
            file = backing.read_text().strip()
            offset = int((backing.parent / "offset").read_text().strip() or 0)
            found = _file(file, f"the loop device's backing file {file}")
            if found is None or offset:
                return None  # a slice of a file: its holes are not told apart here
            return found
    except (OSError, ValueError):
        return None
    return None


def rbd(image: str, client: CephClient) -> Allocation | None:
    """An RBD image's provisioned size and the bytes its objects hold (``rbd du``)."""
    cmd = ["rbd", *ceph_args(client), "du", "--format", "json", image]
    try:
        out = run_tool(cmd, RBD_DU_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if out.returncode != 0:
        return None
    try:
        images = json.loads(out.stdout).get("images") or []
        row = next(i for i in images if i.get("snapshot") in (None, ""))
        return Allocation(
            f"the RBD image {image}", int(row["provisioned_size"]), int(row["used_size"])
        )
    except (ValueError, StopIteration, KeyError, TypeError, AttributeError):
        return None
