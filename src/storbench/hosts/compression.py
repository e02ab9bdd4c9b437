"""Whether what is written to a target on this machine is compressed or deduplicated below
it, where the system says so: the ``compressible`` finding's evidence for files, directories
and devices (Ceph pools: hosts/ceph.py's ``pool_compression``).

- **btrfs** mounted with ``compress=`` or ``compress-force=`` (its super options in
  mountinfo; ``compress=no`` is off): every file written there is compressed where it
  compresses.
- **ZFS**: the dataset's ``compression`` (other than ``off``; OpenZFS 2.2 defaults to
  ``on``, lz4) or ``dedup`` property, asked of ``zfs get``; a zvol (``/dev/zd*``) the same
  way, by the dataset its ``/dev/zvol/`` link names.
- **VDO**: a device-mapper device with a ``vdo`` target in its table, or above one (LVM's
  VDO volumes map a linear device over the VDO pool): VDO compresses and deduplicates.

Per-file compression (``chattr +c`` on btrfs) is not looked at. Every question is asked
once per path and run (cached).
"""

from __future__ import annotations

import contextlib
import functools
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from storbench.hosts.mounts import mount_of

#: Seconds a question to ``zfs`` or ``dmsetup`` may take.
TIMEOUT = 5.0


@dataclass(frozen=True)
class Compression:
    """What compresses below a target."""

    #: in words: "btrfs at /mnt/b (compress=zstd:3)"
    what: str
    #: the setting as the system names it: "compress=zstd:3", "compression=lz4", "vdo"
    setting: str


def _ask(cmd: list[str]) -> str | None:
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def _btrfs(options: str) -> str | None:
    for option in options.split(","):
        name, _, value = option.partition("=")
        if name in ("compress", "compress-force") and value and value != "no":
            return option
    return None


def _zfs(dataset: str) -> str | None:
    """The dataset's compression or dedup as ``zfs get`` says it (None: both off, or no
    answer)."""
    out = _ask(["zfs", "get", "-H", "-o", "property,value", "compression,dedup", dataset])
    settings = []
    for line in (out or "").splitlines():
        prop, _, value = line.partition("\t")
        if prop in ("compression", "dedup") and value.strip() not in ("off", "-", ""):
            settings.append(f"{prop}={value.strip()}")
    return ", ".join(settings) or None


def _dm_tables(sysdir: Path, seen: set[str]) -> list[str]:
    """The device-mapper target types of a block device and of every device below it."""
    found: list[str] = []
    if sysdir.name in seen:
        return found
    seen.add(sysdir.name)
    with contextlib.suppress(OSError):
        name = (sysdir / "dm" / "name").read_text().strip()
        table = _ask(["dmsetup", "table", name]) or ""
        found += [line.split()[2] for line in table.splitlines() if len(line.split()) > 2]
    with contextlib.suppress(OSError):
        for below in (sysdir / "slaves").iterdir():
            found += _dm_tables(Path("/sys/class/block") / below.name, seen)
    return found


def _vdo(device: str) -> bool:
    try:
        rdev = os.stat(device).st_rdev
    except OSError:
        return False
    sysdir = Path(f"/sys/dev/block/{os.major(rdev)}:{os.minor(rdev)}")
    with contextlib.suppress(OSError):
        sysdir = sysdir.resolve(strict=True)
        return "vdo" in _dm_tables(sysdir, set())
    return False


def _zvol(device: str) -> str | None:
    """The dataset of a zvol device (``/dev/zvol/POOL/VOL`` links to ``/dev/zdN``)."""
    real = os.path.realpath(device)
    root = Path("/dev/zvol")
    if not os.path.basename(real).startswith("zd") or not root.is_dir():
        return None
    for link in root.rglob("*"):
        if link.is_symlink() and os.path.realpath(link) == real:
            return str(link.relative_to(root))
    return None


@functools.cache
def of_path(path: str, kind: str) -> Compression | None:
    """What compresses what is written to ``path`` (a ``file``, ``directory`` or
    ``device`` target on this machine), None when nothing does or nothing says."""
    if kind == "device":
        dataset = _zvol(path)
        setting = _zfs(dataset) if dataset else None
        if setting:
            return Compression(f"ZFS volume {dataset} ({setting})", setting)
        if _vdo(path):
            return Compression(f"{path} is (or lies on) a VDO device", "vdo")
        return None
    existing = path
    while existing and not os.path.exists(existing):
        existing = os.path.dirname(existing)
    mount = mount_of(existing or "/")
    if mount is None:
        return None
    if mount.fstype == "btrfs":
        setting = _btrfs(mount.options)
        if setting:
            return Compression(f"btrfs at {mount.mountpoint} ({setting})", setting)
    elif mount.fstype == "zfs":
        setting = _zfs(mount.source)
        if setting:
            return Compression(f"ZFS dataset {mount.source} ({setting})", setting)
    elif mount.source.startswith("/dev/") and _vdo(mount.source):
        return Compression(f"{mount.source} under {mount.mountpoint} is a VDO device", "vdo")
    return None
