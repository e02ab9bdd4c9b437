"""Write safety: storbench never destroys data.

Block devices
    :func:`device_write_refusal` says why writing to a block device must be refused. There are
    two kinds of reasons:

    * *in use* (the device or one of its partitions is mounted or used as swap, it has holders
      such as device-mapper/LVM/MD, or the kernel refuses an exclusive open): these can never be
      overridden — writing would corrupt a live filesystem or mapping. See
      :func:`device_in_use_refusal`.
    * *data present* (partitions, or a filesystem/LVM/RAID/swap/partition-table signature found
      by ``wipefs``/``blkid``): these are waived only when the user names that exact device in
      ``--destroy-data`` (see :func:`is_destroy_allowed`).

    When storbench cannot find out (tool missing, permission denied), it refuses.

Files
    storbench never writes to an existing file it did not create. :func:`create_scratch_file`
    creates a file exclusively and marks it with :func:`mark_created`; the mark is the extended
    attribute ``user.storbench.created`` holding the file's inode number (so a copy made with
    ``cp -a`` or a restored backup, which gets a new inode, is *not* considered storbench's).

    Sidecar registry: when the filesystem does not support user extended attributes (tmpfs on
    old kernels, some NFS/FUSE mounts), the mark goes to a registry file named
    ``.storbench-created`` in the same directory as the file. It holds one JSON object per line,
    ``{"name": "<file name>", "ino": <inode number>}``, appended on each creation; a file counts
    as storbench's when a line matches both its name and its current inode number. Entries are
    never rewritten, stale ones are harmless (the inode no longer matches). Residual risk: on such
    a filesystem, if storbench's file is deleted and a new file of the same name happens to get
    the same inode number, the new file would pass as storbench's.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import stat
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "REGISTRY_NAME",
    "XATTR_NAME",
    "create_scratch_file",
    "created_by_storbench",
    "device_in_use_refusal",
    "device_write_refusal",
    "file_write_refusal",
    "free_space_refusal",
    "human_bytes",
    "is_destroy_allowed",
    "mark_created",
]

#: Extended attribute that marks a file storbench created; its value is the inode number.
XATTR_NAME = "user.storbench.created"
#: Sidecar registry used when user xattrs are unsupported (one per directory).
REGISTRY_NAME = ".storbench-created"

#: Timeout for each external command, in seconds.
COMMAND_TIMEOUT = 10.0

_SYS_DEV_BLOCK = Path("/sys/dev/block")
_PROC_MOUNTINFO = Path("/proc/self/mountinfo")
_PROC_SWAPS = Path("/proc/swaps")
_EXTRA_PATH = ("/usr/sbin", "/sbin", "/usr/bin", "/bin")

_PARTITION_TABLES = frozenset(
    {"gpt", "dos", "PMBR", "atari", "bsd", "mac", "sgi", "sun", "solaris", "unixware", "minix"}
)
_DESCRIPTIONS = {
    "LVM2_member": "an LVM physical volume signature",
    "LVM1_member": "an LVM1 physical volume signature",
    "linux_raid_member": "a Linux MD RAID member signature",
    "swap": "a swap signature",
    "crypto_LUKS": "a LUKS encryption signature",
    "BitLocker": "a BitLocker encryption signature",
    "zfs_member": "a ZFS pool member signature",
    "ceph_bluestore": "a Ceph BlueStore OSD signature",
    "bcache": "a bcache signature",
    "drbd": "a DRBD signature",
    "VMFS_volume_member": "a VMFS volume member signature",
}


# --------------------------------------------------------------------------------------------
# helpers


def human_bytes(n: float) -> str:
    """Binary human units: 512 -> "512 B", 1536 -> "1.5 KiB", 3 * 2**30 -> "3.0 GiB"."""
    value = float(n)
    if abs(value) < 1024:
        return f"{int(value)} B"
    for unit in ("KiB", "MiB", "GiB", "TiB", "PiB"):
        value /= 1024
        if abs(value) < 1024:
            return f"{value:.1f} {unit}"
    return f"{value / 1024:.1f} EiB"


def _which(cmd: str) -> str | None:
    path = os.environ.get("PATH", "")
    return shutil.which(cmd, path=os.pathsep.join([path, *_EXTRA_PATH]))


def _run(args: list[str]) -> subprocess.CompletedProcess[str] | None:
    """Run a command (argument list, never a shell); None when it is missing or hangs."""
    exe = _which(args[0])
    if exe is None:
        return None
    env = {**os.environ, "LC_ALL": "C"}
    try:
        return subprocess.run(
            [exe, *args[1:]],
            capture_output=True,
            text=True,
            timeout=COMMAND_TIMEOUT,
            env=env,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


def _unescape_mount(field_: str) -> str:
    r"""Undo the octal escapes of /proc/self/mountinfo and /proc/swaps (\040 for space…)."""
    if "\\" not in field_:
        return field_
    out = []
    i = 0
    while i < len(field_):
        chunk = field_[i : i + 4]
        if len(chunk) == 4 and chunk[0] == "\\" and chunk[1:].isdigit():
            out.append(chr(int(chunk[1:], 8)))
            i += 4
        else:
            out.append(field_[i])
            i += 1
    return "".join(out)


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _shown(device: str, real: str) -> str:
    """The device as the user named it, plus its real name when that differs."""
    return device if device == real else f"{device} ({real})"


# --------------------------------------------------------------------------------------------
# block devices


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


# --------------------------------------------------------------------------------------------
# files


def _registry_entries(directory: str) -> list[tuple[str, int]]:
    try:
        with open(os.path.join(directory, REGISTRY_NAME), encoding="utf-8") as f:
            lines = f.readlines()
    except OSError:
        return []
    entries = []
    for line in lines:
        try:
            obj = json.loads(line)
            entries.append((str(obj["name"]), int(obj["ino"])))
        except (ValueError, KeyError, TypeError):
            continue
    return entries


def _register(real: str, ino: int) -> None:
    directory, name = os.path.split(real)
    line = json.dumps({"name": name, "ino": ino}) + "\n"
    fd = os.open(
        os.path.join(directory, REGISTRY_NAME),
        os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC | os.O_NOFOLLOW,
        0o644,
    )
    try:
        os.write(fd, line.encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)


def mark_created(path: str) -> None:
    """Mark *path* (a regular file storbench just created) as storbench's own.

    Sets the ``user.storbench.created`` extended attribute to the file's inode number; when the
    filesystem refuses user xattrs, appends an entry to the ``.storbench-created`` registry in
    the file's directory instead (see the module docstring). Raises OSError when neither works.
    """
    real = os.path.realpath(path)
    st = os.stat(real)
    if not stat.S_ISREG(st.st_mode):
        raise ValueError(f"{path} is not a regular file")
    try:
        os.setxattr(real, XATTR_NAME, str(st.st_ino).encode("ascii"))
        return
    except FileNotFoundError:
        raise
    except OSError:
        pass  # ENOTSUP and friends: fall back to the registry
    _register(real, st.st_ino)


def created_by_storbench(path: str) -> bool:
    """True when *path* is a regular file that storbench created (xattr or registry mark)."""
    real = os.path.realpath(path)
    try:
        st = os.stat(real)
    except OSError:
        return False
    if not stat.S_ISREG(st.st_mode):
        return False
    try:
        if os.getxattr(real, XATTR_NAME) == str(st.st_ino).encode("ascii"):
            return True
    except OSError:
        pass
    directory, name = os.path.split(real)
    return (name, st.st_ino) in _registry_entries(directory)


def _parent_refusal(path: str, real: str) -> str | None:
    parent = os.path.dirname(real) or "."
    if not os.path.exists(parent):
        return f"the directory {parent} for {path} does not exist; create it first"
    if not os.path.isdir(parent):
        return f"{parent} (the parent of {path}) is not a directory; choose another path"
    if not os.access(parent, os.W_OK | os.X_OK):
        return (
            f"the directory {parent} is not writable for this user, so storbench cannot create "
            f"{path}; choose another path or fix its permissions"
        )
    return None


def file_write_refusal(path: str) -> str | None:
    """Reason why storbench must not write the file *path*, or None.

    None when the file does not exist (and its directory exists and is writable) or when
    storbench created it. Refuses existing files it did not create, block/character devices,
    directories and other special files, broken symlinks, and a missing or read-only parent
    directory.
    """
    real = os.path.realpath(path)
    try:
        st = os.stat(real)
    except FileNotFoundError:
        if os.path.islink(path) or os.path.islink(real):
            return (
                f"{path} is a symbolic link to a missing file; storbench only creates new files "
                "— remove the link or choose another path"
            )
        return _parent_refusal(path, real)
    except OSError as exc:
        return f"cannot examine {path} ({exc.strerror}); choose another path"
    mode = st.st_mode
    if stat.S_ISBLK(mode):
        return f"{path} is a block device, not a file; use a device target for it"
    if stat.S_ISCHR(mode):
        return f"{path} is a character device, not a file; storbench will not write to it"
    if stat.S_ISDIR(mode):
        return f"{path} is a directory, not a file; use a directory target or give a file path"
    if not stat.S_ISREG(mode):
        return f"{path} is a special file (FIFO or socket), not a regular file; choose another path"
    if not created_by_storbench(real):
        return (
            f"{path} already exists and was not created by storbench, which never overwrites "
            "files it did not create; remove it or choose another path"
        )
    if not os.access(real, os.W_OK):
        return f"{path} was created by storbench but is not writable now; fix its permissions"
    return None


def create_scratch_file(path: str) -> None:
    """Create *path* exclusively (O_CREAT|O_EXCL, fails if anything exists there) and mark it.

    If the mark cannot be recorded, the new empty file is removed and the error re-raised.
    """
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
    os.close(fd)
    try:
        mark_created(path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(path)
        raise


def _nearest_existing(path: str) -> str:
    current = os.path.abspath(path)
    while not os.path.exists(current):
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    return current


def free_space_refusal(path: str, needed_bytes: int) -> str | None:
    """Reason when the filesystem holding *path* lacks *needed_bytes* of free space, or None.

    Uses ``os.statvfs`` on *path* or its nearest existing parent (space available to
    unprivileged users: ``f_bavail * f_frsize``). *needed_bytes* is what still has to be
    allocated: a caller reusing an existing scratch file subtracts what the file already holds.
    Meant for file and directory targets, not block devices.
    """
    if needed_bytes <= 0:
        return None
    where = _nearest_existing(path)
    try:
        vfs = os.statvfs(where)
    except OSError as exc:
        return f"cannot check free space for {path} ({exc.strerror}); choose another path"
    available = vfs.f_bavail * vfs.f_frsize
    if needed_bytes <= available:
        return None
    return (
        f"not enough free space for {path}: needs {human_bytes(needed_bytes)}, "
        f"the filesystem at {where} has {human_bytes(available)} available; "
        "free some space or use a smaller size"
    )
