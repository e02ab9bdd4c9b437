"""Block devices through sysfs (and ``lsblk`` when installed): which disk a device or a
partition is, its model, size, rotation, transport and scheduler; stacked devices (dm, md)
followed down to their disks.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import Any

from storbench.hosts.inventory.probe import (
    _as_bool,
    _as_int,
    _clean,
    _read,
    _read_int,
    _run_json,
)
from storbench.hosts.inventory.tuning import disk_tuning

_SYS_DEV_BLOCK = Path("/sys/dev/block")
_SYS_CLASS_BLOCK = Path("/sys/class/block")

#: lsblk TRAN (or the transport storbench derived) -> protocol as people write it.
_PROTOCOLS = {
    "sata": "SATA",
    "ata": "ATA",
    "sas": "SAS",
    "nvme": "NVMe",
    "usb": "USB",
    "iscsi": "iSCSI",
    "fc": "FC",
    "spi": "SCSI",
    "mmc": "MMC",
    "virtio": "virtio",
    "ieee1394": "FireWire",
}

#: Kernel name prefixes of virtual block devices that have no physical disk of their own.
_VIRTUAL_PREFIXES = ("loop", "zram", "ram", "nbd", "rbd", "nullb", "pmem")

DEVICE_KEYS = (
    "path",
    "device",
    "kname",
    "parent",
    "model",
    "vendor",
    "serial",
    "size_bytes",
    "rotational",
    "transport",
    "scheduler",
    "logical_block_size",
    "physical_block_size",
    "type",
    "protocol",
    "error",
    "tuning",  # the disk's queue settings (inventory/tuning.py); {} when none are readable
)


def _sysdir_of_rdev(rdev: int) -> Path | None:
    try:
        return (_SYS_DEV_BLOCK / f"{os.major(rdev)}:{os.minor(rdev)}").resolve(strict=True)
    except OSError:
        return None


def _sysdir_of_device(device: str) -> Path | None:
    """sysfs directory of a block device node (symlinks resolved), or None."""
    try:
        st = os.stat(os.path.realpath(device))
    except OSError:
        return None
    if not stat.S_ISBLK(st.st_mode):
        return None
    return _sysdir_of_rdev(st.st_rdev)


def _is_partition(sysdir: Path) -> bool:
    return (sysdir / "partition").is_file()


def _whole_disk(sysdir: Path) -> Path:
    """The disk a partition belongs to (the partition's parent directory in sysfs)."""
    return sysdir.parent if _is_partition(sysdir) else sysdir


def _is_virtual(sysdir: Path) -> bool:
    return "/devices/virtual/" in str(sysdir) or sysdir.name.startswith(_VIRTUAL_PREFIXES)


def _leaf_disks(sysdir: Path, depth: int = 0) -> list[Path]:
    """Whole disks under a (possibly stacked: dm, md) device, following sysfs ``slaves``."""
    disk = _whole_disk(sysdir)
    try:
        slaves = sorted((disk / "slaves").iterdir())
    except OSError:
        slaves = []
    if not slaves or depth > 8:
        return [disk]
    leaves: list[Path] = []
    for slave in slaves:
        try:
            target = slave.resolve(strict=True)
        except OSError:
            continue
        for leaf in _leaf_disks(target, depth + 1):
            if leaf not in leaves:
                leaves.append(leaf)
    return leaves


def _scheduler(disk: Path) -> str | None:
    text = _read(disk / "queue" / "scheduler")
    if not text:
        return None
    match = re.search(r"\[([^\]]+)\]", text)
    if match:
        return match.group(1)
    return text if " " not in text else None


def _sysfs_transport(disk: Path) -> str | None:
    """Transport guessed from the sysfs device path when lsblk has none."""
    name = disk.name
    if name.startswith("nvme"):
        return "nvme"
    try:
        devpath = str((disk / "device").resolve(strict=True))
    except OSError:
        devpath = str(disk)
    if "/devices/virtual/" in str(disk):
        return None
    if "/usb" in devpath:
        return "usb"
    if "/nvme" in devpath:
        return "nvme"
    if "/end_device-" in devpath or "/sas_" in devpath:
        return "sas"
    if "/ata" in devpath:
        return "sata"
    if "/mmc" in devpath:
        return "mmc"
    if "/virtio" in devpath:
        return "virtio"
    return None


def _lsblk(device: str) -> dict[str, Any]:
    data = _run_json(
        [
            "lsblk",
            "--json",
            "--bytes",
            "--nodeps",
            "-o",
            "NAME,PATH,MODEL,VENDOR,SERIAL,SIZE,ROTA,TRAN,SCHED,LOG-SEC,PHY-SEC",
            device,
        ]
    )
    if not data:
        return {}
    devices = data.get("blockdevices") or []
    return devices[0] if devices and isinstance(devices[0], dict) else {}


def _empty_device(path: str, error: str | None) -> dict[str, Any]:
    info: dict[str, Any] = dict.fromkeys(DEVICE_KEYS)
    info["path"] = path
    info["error"] = error
    return info


def _device_from_sysdir(path: str, sysdir: Path) -> dict[str, Any]:
    info = _empty_device(path, None)
    kname = sysdir.name
    disk = _whole_disk(sysdir)
    info["device"] = f"/dev/{kname}"
    info["kname"] = kname
    if disk != sysdir:
        info["parent"] = f"/dev/{disk.name}"

    lsblk = _lsblk(f"/dev/{disk.name}") if os.path.exists(f"/dev/{disk.name}") else {}
    device_dir = disk / "device"
    info["model"] = _clean(lsblk.get("model")) or _read(device_dir / "model")
    info["vendor"] = _clean(lsblk.get("vendor")) or _read(device_dir / "vendor")
    info["serial"] = (
        _clean(lsblk.get("serial")) or _read(disk / "serial") or _read(device_dir / "serial")
    )
    sectors = _read_int(sysdir / "size")
    info["size_bytes"] = sectors * 512 if sectors is not None else None
    rota = _read_int(disk / "queue" / "rotational")
    info["rotational"] = bool(rota) if rota is not None else _as_bool(lsblk.get("rota"))
    transport = _clean(lsblk.get("tran"))
    info["transport"] = transport.lower() if transport else _sysfs_transport(disk)
    info["scheduler"] = _scheduler(disk) or _clean(lsblk.get("sched"))
    info["logical_block_size"] = _read_int(disk / "queue" / "logical_block_size") or _as_int(
        lsblk.get("log-sec")
    )
    info["physical_block_size"] = _read_int(disk / "queue" / "physical_block_size") or _as_int(
        lsblk.get("phy-sec")
    )
    if info["rotational"] is not None and not _is_virtual(disk):
        info["type"] = "HDD" if info["rotational"] else "SSD"
    if info["transport"]:
        info["protocol"] = _PROTOCOLS.get(info["transport"], info["transport"].upper())
    info["tuning"] = disk_tuning(disk)
    return info


def _device_inventory(path: str) -> dict[str, Any]:
    real = os.path.realpath(path)
    try:
        st = os.stat(real)
    except OSError as exc:
        return _empty_device(path, f"{path}: {exc.strerror}")
    if not stat.S_ISBLK(st.st_mode):
        return _empty_device(path, f"{path} is not a block device")
    sysdir = _sysdir_of_rdev(st.st_rdev)
    if sysdir is None:
        info = _empty_device(path, f"{path} has no entry in /sys/dev/block")
        info["device"] = real
        return info
    return _device_from_sysdir(path, sysdir)
