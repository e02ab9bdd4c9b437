"""Inventory of a target: a block device, or the filesystem (and the disk under it) holding
a file or directory.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from storbench.hosts.inventory.devices import (
    _device_from_sysdir,
    _device_inventory,
    _is_virtual,
    _leaf_disks,
    _sysdir_of_device,
    _sysdir_of_rdev,
)
from storbench.hosts.inventory.probe import _clean, _nearest_existing, _read, _run_json
from storbench.hosts.mounts import mount_of

FS_KEYS = (
    "path",
    "existing_path",
    "fstype",
    "source",
    "mountpoint",
    "mount_options",
    "disk",
    "error",
)


def _findmnt(existing: str) -> dict[str, Any] | None:
    data = _run_json(["findmnt", "--json", "-T", existing, "-o", "TARGET,SOURCE,FSTYPE,OPTIONS"])
    if not data:
        return None
    filesystems = data.get("filesystems") or []
    return filesystems[0] if filesystems and isinstance(filesystems[0], dict) else None


def _mountinfo(existing: str) -> dict[str, Any] | None:
    """findmnt fallback: the mount whose mount point is the longest prefix of *existing*."""
    text = _read("/proc/self/mountinfo")
    mount = mount_of(existing, text) if text else None
    if mount is None:
        return None
    return {
        "target": mount.mountpoint,
        "source": mount.source,
        "fstype": mount.fstype,
        "options": ",".join(o for o in (mount.mount_options, mount.options) if o),
    }


def _disk_sysdir_of_file(existing: str, source: str | None) -> Path | None:
    """The single physical whole disk under a path's filesystem, or None."""
    sysdir: Path | None = None
    try:
        sysdir = _sysdir_of_rdev(os.stat(existing).st_dev)
    except OSError:
        sysdir = None
    if sysdir is None and source and source.startswith("/dev/"):
        sysdir = _sysdir_of_device(source.split("[", 1)[0])
    if sysdir is None:
        return None
    leaves = _leaf_disks(sysdir)
    if len(leaves) != 1 or _is_virtual(leaves[0]):
        return None
    return leaves[0]


def _fs_inventory(path: str) -> dict[str, Any]:
    info: dict[str, Any] = dict.fromkeys(FS_KEYS)
    info["path"] = path
    existing = _nearest_existing(path)
    info["existing_path"] = existing
    mount = _findmnt(existing) or _mountinfo(existing)
    if mount:
        info["fstype"] = _clean(mount.get("fstype"))
        info["source"] = _clean(mount.get("source"))
        info["mountpoint"] = _clean(mount.get("target"))
        info["mount_options"] = _clean(mount.get("options"))
    else:
        info["error"] = f"could not find the filesystem holding {existing}"
    disk = _disk_sysdir_of_file(existing, info["source"])
    if disk is not None:
        info["disk"] = _device_from_sysdir(f"/dev/{disk.name}", disk)
    return info


def target_inventory(kind: str, path: str) -> dict[str, Any]:
    """Inventory of a target: ``kind`` is "device", "file" or "directory".

    device: ``path``, ``device`` (resolved node), ``kname``, ``parent`` (the disk, for a
    partition), ``model``, ``vendor``, ``serial``, ``size_bytes``, ``rotational``,
    ``transport`` (lsblk TRAN or derived from sysfs: "sata", "sas", "nvme", "usb", "virtio"…),
    ``scheduler`` (the active one), ``logical_block_size``, ``physical_block_size``, ``type``
    ("SSD"/"HDD" from rotational; None for virtual devices such as loop), ``protocol``
    ("SATA", "SAS", "NVMe", "USB"…) and ``error`` (None unless the path is not a block device).
    Disk properties of a partition come from its parent disk; ``size_bytes`` is its own.

    file/directory (which may not exist yet: the nearest existing parent is used): ``path``,
    ``existing_path``, ``fstype``, ``source``, ``mountpoint``, ``mount_options`` (findmnt -T),
    ``disk`` (the device inventory of the single physical whole disk under the filesystem, or
    None for loop, overlay, tmpfs, network or multi-disk filesystems) and ``error``.

    Every key is always present. Raises ValueError only for an unknown *kind*.
    """
    info: dict[str, Any]
    if kind == "device":
        info = _device_inventory(path)
    elif kind in ("file", "directory"):
        info = _fs_inventory(path)
    else:
        raise ValueError(f"unknown target kind {kind!r}: expected device, file or directory")
    return {"kind": kind, **info}
