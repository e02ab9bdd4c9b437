"""Inventory of the host and of the targets, captured before any I/O and stored with the run.

Everything here is best effort and fast: sysfs and /proc first, then ``lsblk``, ``findmnt``,
``smartctl`` and ``fio`` when installed. A missing tool, a failing command or an unreadable file
makes the affected field None — these functions never raise for that.
"""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import socket
import stat
import subprocess
from pathlib import Path
from typing import Any

import storbench

__all__ = ["disk_identity", "host_inventory", "target_inventory"]

#: Timeout for each external command, in seconds.
COMMAND_TIMEOUT = 5.0

_SYS_DEV_BLOCK = Path("/sys/dev/block")
_SYS_CLASS_BLOCK = Path("/sys/class/block")
_EXTRA_PATH = ("/usr/sbin", "/sbin", "/usr/bin", "/bin")

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
)
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


# --------------------------------------------------------------------------------------------
# helpers


def _which(cmd: str) -> str | None:
    path = os.environ.get("PATH", "")
    return shutil.which(cmd, path=os.pathsep.join([path, *_EXTRA_PATH]))


def _run(args: list[str], ok_codes: tuple[int, ...] = (0,)) -> str | None:
    """stdout of a command (argument list, never a shell), or None when missing/failed/hung."""
    exe = _which(args[0])
    if exe is None:
        return None
    try:
        proc = subprocess.run(
            [exe, *args[1:]],
            capture_output=True,
            text=True,
            timeout=COMMAND_TIMEOUT,
            env={**os.environ, "LC_ALL": "C"},
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    if proc.returncode not in ok_codes:
        return None
    return proc.stdout


def _run_json(args: list[str], ok_codes: tuple[int, ...] = (0,)) -> dict[str, Any] | None:
    out = _run(args, ok_codes)
    if not out:
        return None
    try:
        data = json.loads(out)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _read(path: Path | str) -> str | None:
    try:
        text = Path(path).read_text(errors="replace").strip()
    except OSError:
        return None
    return text or None


def _read_int(path: Path | str) -> int | None:
    text = _read(path)
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


def _clean(value: Any) -> str | None:
    if value is None:
        return None
    text = str(value).strip()
    return text or None


def _nearest_existing(path: str) -> str:
    current = os.path.abspath(path)
    while not os.path.exists(current):
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    return current


# --------------------------------------------------------------------------------------------
# host


def _os_release() -> str | None:
    for candidate in ("/etc/os-release", "/usr/lib/os-release"):
        text = _read(candidate)
        if text is None:
            continue
        for line in text.splitlines():
            key, _, value = line.partition("=")
            if key.strip() == "PRETTY_NAME":
                return _clean(value.strip().strip("\"'"))
    return None


def _cpu_model() -> str | None:
    text = _read("/proc/cpuinfo")
    if text:
        for key in ("model name", "Model", "Hardware", "cpu model", "cpu"):
            for line in text.splitlines():
                name, sep, value = line.partition(":")
                if sep and name.strip() == key and value.strip():
                    return value.strip()
    data = _run_json(["lscpu", "-J"])
    if data:
        for entry in data.get("lscpu", []):
            if isinstance(entry, dict) and str(entry.get("field", "")).startswith("Model name"):
                return _clean(entry.get("data"))
    return _clean(platform.processor())


def _memory_bytes() -> int | None:
    text = _read("/proc/meminfo")
    if text:
        match = re.search(r"^MemTotal:\s+(\d+)\s*kB", text, re.MULTILINE)
        if match:
            return int(match.group(1)) * 1024
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        return None


def _fio_version() -> str | None:
    from storbench import engines  # the engine decides which fio runs (STORBENCH_FIO)

    text = engines.get(engines.RUN_VERSION_ENGINE).version()
    return _clean(text.removeprefix("fio-")) if text else None


def host_inventory() -> dict[str, Any]:
    """The local host: every key always present, None when unknown.

    Keys: ``hostname``, ``kernel`` (uname release and version, e.g. "6.1.0-18-amd64 #1 SMP
    PREEMPT_DYNAMIC Debian 6.1.76-1"), ``arch``, ``distribution`` (PRETTY_NAME), ``cpu_model``,
    ``cpu_count`` (logical CPUs), ``memory_bytes`` (MemTotal), ``python_version``,
    ``fio_version`` ("3.33", from ``fio --version``; None when fio is missing) and
    ``storbench_version``.
    """
    uname = platform.uname()
    kernel = " ".join(part for part in (uname.release, uname.version) if part) or None
    try:
        hostname: str | None = socket.gethostname() or None
    except OSError:
        hostname = None
    return {
        "hostname": hostname or _clean(uname.node),
        "kernel": kernel,
        "arch": _clean(uname.machine),
        "distribution": _os_release(),
        "cpu_model": _cpu_model(),
        "cpu_count": os.cpu_count(),
        "memory_bytes": _memory_bytes(),
        "python_version": platform.python_version(),
        "fio_version": _fio_version(),
        "storbench_version": getattr(storbench, "__version__", None),
    }


# --------------------------------------------------------------------------------------------
# block devices


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


def _as_int(value: Any) -> int | None:
    if isinstance(value, bool):
        return int(value)
    try:
        return int(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def _as_bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if value in (0, 1, "0", "1"):
        return str(value) == "1"
    return None


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


# --------------------------------------------------------------------------------------------
# files and directories


def _findmnt(existing: str) -> dict[str, Any] | None:
    data = _run_json(["findmnt", "--json", "-T", existing, "-o", "TARGET,SOURCE,FSTYPE,OPTIONS"])
    if not data:
        return None
    filesystems = data.get("filesystems") or []
    return filesystems[0] if filesystems and isinstance(filesystems[0], dict) else None


def _unescape(text: str) -> str:
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), text)


def _mountinfo(existing: str) -> dict[str, Any] | None:
    """findmnt fallback: the mount whose mount point is the longest prefix of *existing*."""
    text = _read("/proc/self/mountinfo")
    if not text:
        return None
    real = os.path.realpath(existing)
    best: dict[str, Any] | None = None
    best_len = -1
    for line in text.splitlines():
        left, sep, right = line.partition(" - ")
        fields, rest = left.split(), right.split()
        if not sep or len(fields) < 6 or len(rest) < 2:
            continue
        target = _unescape(fields[4])
        inside = real == target or real.startswith(target.rstrip("/") + "/")
        if inside and len(target) >= best_len:
            best_len = len(target)
            options = fields[5] + ("," + rest[2] if len(rest) > 2 else "")
            best = {
                "target": target,
                "source": _unescape(rest[1]),
                "fstype": rest[0],
                "options": options,
            }
    return best


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


# --------------------------------------------------------------------------------------------
# disk identity (qualification tables)


def _smartctl(device: str) -> dict[str, Any] | None:
    # exit status is a bit mask; bits 0-1 mean the command line / device open failed
    out = _run(["smartctl", "-i", "-j", "-n", "standby", device], ok_codes=tuple(range(256)))
    if not out:
        return None
    try:
        data = json.loads(out)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    status = (data.get("smartctl") or {}).get("exit_status", 0)
    if isinstance(status, int) and status & 0b11:
        return None
    return data


def _smart_model(data: dict[str, Any]) -> str | None:
    model = _clean(data.get("model_name")) or _clean(data.get("scsi_model_name"))
    if model:
        return model
    vendor = _clean(data.get("scsi_vendor") or data.get("vendor"))
    product = _clean(data.get("scsi_product") or data.get("product"))
    return " ".join(p for p in (vendor, product) if p) or None


def _smart_proto(data: dict[str, Any], transport: str | None) -> str | None:
    protocol = _clean((data.get("device") or {}).get("protocol"))
    if protocol is None:
        return None
    upper = protocol.upper()
    if upper == "NVME":
        return "NVMe"
    if upper == "ATA":
        return "SATA" if transport in (None, "sata", "ata") or "sata_version" in data else None
    if upper == "SCSI":
        scsi_transport = _clean((data.get("scsi_transport_protocol") or {}).get("name")) or ""
        if scsi_transport.upper().startswith("SAS") or transport == "sas":
            return "SAS"
        return None  # USB bridges, virtio-scsi, iSCSI…: the transport says more
    return None


def disk_identity(path: str) -> dict[str, Any]:
    """Identity of the disk behind *path*, for qualification tables (seed 002 style).

    *path* is a block device (a partition or a device-mapper device resolves to its single
    underlying disk) or a file/directory (through the disk under its filesystem). Returns
    ``model``, ``size_bytes``, ``type`` ("SSD"/"HDD"/None), ``proto`` ("SATA"/"SAS"/"NVMe"/
    other transport/None), ``device`` (the disk's node, e.g. "/dev/sda") and ``source`` (where
    the identity came from: "smartctl" when ``smartctl -i -j`` answered, whose model name,
    capacity, rotation rate and protocol are preferred, else "sysfs"; None when no disk was
    found). All values are None when there is no identifiable disk (tmpfs, overlay, NFS…).
    """
    result: dict[str, Any] = dict.fromkeys(
        ("model", "size_bytes", "type", "proto", "device", "source")
    )
    sysdir = _sysdir_of_device(path)
    if sysdir is not None:
        leaves = _leaf_disks(sysdir)
        disk: Path | None = leaves[0] if len(leaves) == 1 else None
    else:
        existing = _nearest_existing(path)
        mount = _findmnt(existing) or _mountinfo(existing)
        disk = _disk_sysdir_of_file(existing, (mount or {}).get("source"))
    if disk is None:
        return result
    info = _device_from_sysdir(f"/dev/{disk.name}", disk)
    result.update(
        model=info["model"],
        size_bytes=info["size_bytes"],
        type=info["type"],
        proto=info["protocol"],
        device=info["device"],
        source="sysfs",
    )
    if _is_virtual(disk):
        return result
    smart = _smartctl(info["device"])
    if smart is not None:
        model = _smart_model(smart)
        capacity = _as_int((smart.get("user_capacity") or {}).get("bytes"))
        rotation = smart.get("rotation_rate")
        proto = _smart_proto(smart, info["transport"])
        if (smart.get("device") or {}).get("protocol") == "NVMe":
            result["type"] = "SSD"
        elif isinstance(rotation, int):
            result["type"] = "SSD" if rotation == 0 else "HDD"
        if model:
            result["model"] = model
        if capacity:
            result["size_bytes"] = capacity
        if proto:
            result["proto"] = proto
        if model or proto:
            result["source"] = "smartctl"
    return result
