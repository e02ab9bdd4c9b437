"""What the safety checks read of the system: constants, commands (blkid, wipefs) with a
timeout, /proc and /sys, and byte counts for messages."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from storbench.hosts import procguard

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
    env = procguard.environment({**os.environ, "LC_ALL": "C"})
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
