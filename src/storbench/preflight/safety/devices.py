"""Block devices: in use (mounted, swap, holders, an exclusive open refused) or holding data
(partitions, signatures); see the package docstring."""

from __future__ import annotations

import errno
import json
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from storbench.preflight.safety.system import (
    _DESCRIPTIONS,
    _PARTITION_TABLES,
    _PROC_MOUNTINFO,
    _PROC_SWAPS,
    _SYS_DEV_BLOCK,
    _read,
    _run,
    _same_file,
    _shown,
    _unescape_mount,
)


@dataclass
class _Blockdev:
    """A block device as sysfs sees it."""

    name: str  # as given by the user
    path: str  # realpath of the device node
    rdev: int
    kname: str  # kernel name (loop3, sda1, dm-0)
    sysdir: Path  # /sys/devices/.../kname
    partitions: list[str] = field(default_factory=list)  # knames

    @property
    def shown(self) -> str:
        return _shown(self.name, self.path)

    def all_knames(self) -> list[str]:
        return [self.kname, *self.partitions]


def _major_minor(rdev: int) -> str:
    return f"{os.major(rdev)}:{os.minor(rdev)}"


def _describe_non_block(device: str) -> str:
    """Reason for a path that is not a block device (one sentence)."""
    try:
        st = os.stat(device)
    except FileNotFoundError:
        if os.path.islink(device):
            return f"{device} is a broken symbolic link (to {os.readlink(device)}); check the name"
        return f"{device} does not exist; check the device name (see lsblk)"
    except OSError as exc:
        return f"cannot examine {device} ({exc.strerror}); check the name and your permissions"
    mode = st.st_mode
    if stat.S_ISREG(mode):
        what = "a regular file, not a block device; use a file target for it"
    elif stat.S_ISDIR(mode):
        what = "a directory, not a block device; use a directory target for it"
    elif stat.S_ISCHR(mode):
        what = "a character device, not a block device; storbench writes only to block devices"
    elif stat.S_ISFIFO(mode):
        what = "a FIFO, not a block device"
    elif stat.S_ISSOCK(mode):
        what = "a socket, not a block device"
    else:
        what = "not a block device"
    return f"{device} is {what}"


def _blockdev(device: str) -> _Blockdev | str:
    """Resolve a device name to a :class:`_Blockdev`, or a refusal reason."""
    real = os.path.realpath(device)
    try:
        st = os.stat(real)
    except OSError:
        return _describe_non_block(device)
    if not stat.S_ISBLK(st.st_mode):
        return _describe_non_block(device)
    sysdir = _SYS_DEV_BLOCK / _major_minor(st.st_rdev)
    try:
        sysdir = sysdir.resolve(strict=True)
    except OSError:
        return (
            f"{_shown(device, real)} has no entry in /sys/dev/block ({_major_minor(st.st_rdev)}); "
            "storbench cannot check whether it is in use, so it will not write to it"
        )
    dev = _Blockdev(name=device, path=real, rdev=st.st_rdev, kname=sysdir.name, sysdir=sysdir)
    try:
        dev.partitions = sorted(
            p.name for p in sysdir.iterdir() if (p / "partition").is_file() and p.is_dir()
        )
    except OSError:
        dev.partitions = []
    return dev


def _kname_devnums(dev: _Blockdev) -> dict[str, str]:
    """major:minor -> kname for the device and its partitions."""
    out = {_major_minor(dev.rdev): dev.kname}
    for part in dev.partitions:
        mm = _read(dev.sysdir / part / "dev")
        if mm:
            out[mm] = part
    return out


def _mounts_of(dev: _Blockdev) -> list[tuple[str, str]]:
    """(kname, mount point) for every mount of the device or one of its partitions."""
    devnums = _kname_devnums(dev)
    paths = {f"/dev/{k}": k for k in dev.all_knames()}
    found: list[tuple[str, str]] = []
    try:
        lines = _PROC_MOUNTINFO.read_text().splitlines()
    except OSError:
        return found
    for line in lines:
        # 36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue
        left, sep, right = line.partition(" - ")
        fields = left.split()
        if not sep or len(fields) < 5:
            continue
        kname = devnums.get(fields[2])
        if kname is None:
            source = right.split()[1] if len(right.split()) > 1 else ""
            source = _unescape_mount(source)
            if source.startswith("/"):
                kname = paths.get(os.path.realpath(source))
        if kname is not None:
            found.append((kname, _unescape_mount(fields[4])))
    return found


def _swaps_of(dev: _Blockdev) -> list[str]:
    """knames of the device or its partitions listed in /proc/swaps."""
    paths = {f"/dev/{k}": k for k in dev.all_knames()}
    found = []
    try:
        lines = _PROC_SWAPS.read_text().splitlines()[1:]
    except OSError:
        return found
    for line in lines:
        parts = line.split()
        if not parts:
            continue
        source = _unescape_mount(parts[0])
        kname = paths.get(os.path.realpath(source))
        if kname is None and os.path.exists(source):
            kname = next((k for p, k in paths.items() if _same_file(source, p)), None)
        if kname is not None:
            found.append(kname)
    return found


def _holder_label(holder_dir: Path) -> str:
    """Label of a holder: "dm-0 (device-mapper vg-lv)", "md127 (MD RAID)" or its kernel name."""
    name = holder_dir.name
    dm_name = _read(holder_dir / "dm" / "name")
    if dm_name:
        return f"{name} (device-mapper {dm_name})"
    if (holder_dir / "md").is_dir():
        return f"{name} (MD RAID)"
    return name


def _holders_of(dev: _Blockdev) -> list[str]:
    labels = []
    for kname in dev.all_knames():
        base = dev.sysdir if kname == dev.kname else dev.sysdir / kname
        holders = base / "holders"
        try:
            entries = sorted(holders.iterdir())
        except OSError:
            continue
        for entry in entries:
            try:
                target = entry.resolve(strict=True)
            except OSError:
                target = entry
            label = _holder_label(target)
            labels.append(label if kname == dev.kname else f"{label} on {kname}")
    return labels


def _exclusive_open_refusal(dev: _Blockdev) -> str | None:
    """Refuse when the kernel will not give us an exclusive open (mounted elsewhere, held…)."""
    try:
        fd = os.open(dev.path, os.O_RDONLY | os.O_EXCL | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno == errno.EBUSY:
            return (
                f"{dev.shown} is in use by the kernel or another program (exclusive open failed: "
                "device busy, e.g. mounted in another namespace, or held by a mapping); "
                "stop whatever uses it first — --destroy-data does not override this"
            )
        if exc.errno in (errno.EACCES, errno.EPERM):
            return (
                f"cannot open {dev.shown} (permission denied); run storbench as a user "
                "that may read and write the device (usually root)"
            )
        if exc.errno in (errno.ENXIO, errno.ENOMEDIUM):
            return f"{dev.shown} has no medium (or is a detached loop device); check the name"
        return f"cannot open {dev.shown} ({exc.strerror}); storbench will not write to it"
    os.close(fd)
    return None


def _in_use_refusal(dev: _Blockdev) -> str | None:
    mounts = _mounts_of(dev)
    if mounts:
        kname, mountpoint = mounts[0]
        where = "is mounted" if kname == dev.kname else f"has partition /dev/{kname} mounted"
        more = f" (and {len(mounts) - 1} more mount(s))" if len(mounts) > 1 else ""
        return (
            f"{dev.shown} {where} on {mountpoint}{more}; unmount it first — storbench never "
            "writes to a mounted device, even with --destroy-data"
        )
    swaps = _swaps_of(dev)
    if swaps:
        kname = swaps[0]
        where = "is in use" if kname == dev.kname else f"has partition /dev/{kname} in use"
        return (
            f"{dev.shown} {where} as swap (/proc/swaps); run swapoff /dev/{kname} first — "
            "--destroy-data does not override this"
        )
    holders = _holders_of(dev)
    if holders:
        return (
            f"{dev.shown} is held by {', '.join(holders)} (/sys/class/block/{dev.kname}/holders); "
            "remove that device-mapper/LVM/MD/dm-crypt mapping first — --destroy-data does not "
            "override this"
        )
    size = _read(dev.sysdir / "size")
    if size is not None and size.isdigit() and int(size) == 0:
        return f"{dev.shown} has size 0 (no medium, or a detached loop device); check the name"
    return _exclusive_open_refusal(dev)


def device_in_use_refusal(device: str) -> str | None:
    """Reason why *device* cannot be written even with ``--destroy-data``, or None.

    Refuses when the path is not a block device, when the device or one of its partitions is
    mounted or used as swap, when it has holders (device-mapper, LVM, MD, dm-crypt), and when the
    kernel refuses an exclusive open (busy).
    """
    dev = _blockdev(device)
    if isinstance(dev, str):
        return dev
    return _in_use_refusal(dev)


@dataclass
class _Signature:
    type: str
    tool: str
    usage: str | None = None


def _signatures(dev: _Blockdev) -> list[_Signature] | str:
    """Signatures found by wipefs and blkid on the device, or a reason when neither could tell."""
    sigs: list[_Signature] = []
    answered = False
    failures = []

    wipefs = _run(["wipefs", "--no-act", "--json", dev.path])
    if wipefs is None:
        failures.append("wipefs is not available")
    elif wipefs.returncode != 0:
        failures.append(f"wipefs failed: {wipefs.stderr.strip() or wipefs.returncode}")
    else:
        try:
            data = json.loads(wipefs.stdout) if wipefs.stdout.strip() else {"signatures": []}
            for entry in data.get("signatures", []):
                if entry.get("type"):
                    sigs.append(_Signature(str(entry["type"]), "wipefs"))
            answered = True
        except (ValueError, AttributeError):
            failures.append("wipefs printed unreadable output")

    blkid = _run(["blkid", "-p", "-o", "export", dev.path])
    if blkid is None:
        failures.append("blkid is not available")
    elif blkid.returncode == 2 and not blkid.stderr.strip():  # nothing found
        answered = True
    elif blkid.returncode == 0:
        values = dict(line.split("=", 1) for line in blkid.stdout.splitlines() if "=" in line)
        found = [
            _Signature(values["TYPE"], "blkid", values.get("USAGE"))
            if values.get("TYPE")
            else None,
            _Signature(values["PTTYPE"], "blkid") if values.get("PTTYPE") else None,
        ]
        sigs[:0] = [sig for sig in found if sig is not None]  # blkid's names come first
        answered = True
    elif blkid.returncode == 8:  # ambiguous: several signatures
        sigs.insert(0, _Signature("ambiguous", "blkid"))
        answered = True
    else:
        failures.append(f"blkid failed: {blkid.stderr.strip() or blkid.returncode}")

    if not answered:
        return (
            f"storbench could not check {dev.shown} for filesystem/LVM/RAID signatures "
            f"({'; '.join(failures)}), so it will not write to it; install util-linux or run "
            "as root"
        )
    return sigs


def _describe_signature(sig: _Signature) -> str:
    if sig.type in _PARTITION_TABLES:
        return f"a {sig.type} partition table"
    if sig.type == "ambiguous":
        return "several conflicting signatures"
    if sig.type in _DESCRIPTIONS:
        return _DESCRIPTIONS[sig.type]
    if sig.type.endswith("_member") or sig.usage == "raid":
        return "a RAID/volume member signature"
    if sig.usage == "crypto":
        return "an encryption signature"
    article = "an" if sig.type[:1].lower() in "aeiou" else "a"
    return f"{article} {sig.type} filesystem signature"


def _data_refusal(dev: _Blockdev, sigs: list[_Signature]) -> str | None:
    suffix = f"storbench will not write to it unless you pass --destroy-data {dev.name}"
    tables = [s.type for s in sigs if s.type in _PARTITION_TABLES and s.type != "PMBR"]
    if dev.partitions:
        table = f"a {tables[0]} partition table with " if tables else ""
        names = ", ".join(f"/dev/{p}" for p in dev.partitions)
        return f"{dev.shown} has {table}partitions ({names}); {suffix}"
    if not sigs:
        return None
    # One description per signature type, first tool wins; PMBR is implied by gpt.
    seen: dict[str, _Signature] = {}
    for sig in sigs:
        if sig.type == "PMBR" and "gpt" in {s.type for s in sigs}:
            continue
        seen.setdefault(sig.type, sig)
    if "ambiguous" in seen and len(seen) > 1:
        del seen["ambiguous"]
    descriptions = [_describe_signature(s) for s in seen.values()]
    what = " and ".join(descriptions) if len(descriptions) <= 2 else ", ".join(descriptions)
    # name the raw types the descriptions do not already show, then the tools that found them
    types = [t for t in seen if t != "ambiguous" and t not in what]
    tools = sorted({s.tool for s in seen.values()})
    found = "; ".join(x for x in (", ".join(types), ", ".join(tools)) if x)
    return f"{dev.shown} carries {what} ({found}); {suffix}"


def device_write_refusal(device: str, destroy_data: Iterable[str] = ()) -> str | None:
    """Reason why writing to the block device *device* must be refused, or None.

    Symlinks (``/dev/disk/by-id/…``) are resolved to the real device. Refuses when:

    * the path is not a block device (the message says what it is);
    * the device or one of its partitions is mounted or used as swap, it has holders
      (device-mapper/LVM/MD), or it is busy — never overridable (see
      :func:`device_in_use_refusal`);
    * it has partitions, or carries a signature found by ``wipefs --no-act`` / ``blkid -p``
      (filesystem, LVM2_member, linux_raid_member, swap, gpt/dos partition table…), or those
      tools could not answer.

    The partition/signature reasons are waived when *destroy_data* (the names the user gave to
    ``--destroy-data``) names this exact device; by default nothing is waived, so a caller that
    checks :func:`is_destroy_allowed` itself gets every reason.
    """
    dev = _blockdev(device)
    if isinstance(dev, str):
        return dev
    reason = _in_use_refusal(dev)
    if reason is not None:
        return reason
    names = list(destroy_data)
    if names and is_destroy_allowed(device, names):
        return None
    sigs = _signatures(dev)
    if isinstance(sigs, str):
        return sigs
    return _data_refusal(dev, sigs)


def is_destroy_allowed(device: str, destroy_data: Iterable[str]) -> bool:
    """True only when one of the names in *destroy_data* is the same block device as *device*.

    Names are compared after resolving symlinks (realpath), and two different device nodes of
    the same block device (same major:minor) also match. A partition does not match its disk.
    """
    real = os.path.realpath(device)
    try:
        st = os.stat(real)
    except OSError:
        return False
    if not stat.S_ISBLK(st.st_mode):
        return False
    for name in destroy_data:
        if not name:
            continue
        other = os.path.realpath(name)
        if other == real:
            return True
        try:
            ost = os.stat(other)
        except OSError:
            continue
        if stat.S_ISBLK(ost.st_mode) and ost.st_rdev == st.st_rdev:
            return True
    return False
