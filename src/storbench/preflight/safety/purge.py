"""Whether a device may be purged (plan key ``precondition: {purge: ...}``, run by
storbench.execute.purge): the hardest case of the safety rule, since a purge erases the whole device
whatever it holds. So it is refused unless the device is a block device of this machine,
the user named that exact device with ``--destroy-data`` (even a blank device, which plain
writes would not need), blkdiscard is installed and, for ``discard``, the device supports
discard. A device in use is refused by the device checks before this (never overridable).
"""

from __future__ import annotations

from collections.abc import Iterable

from storbench.preflight.safety.devices import _blockdev, is_destroy_allowed
from storbench.preflight.safety.system import _read, _which

#: util-linux's tool that discards (or securely erases) a block device.
BLKDISCARD = "blkdiscard"


def blkdiscard_path() -> str | None:
    """Where blkdiscard is (also in /usr/sbin and /sbin), or None."""
    return _which(BLKDISCARD)


def discard_max_bytes(device: str) -> int | None:
    """The device's ``queue/discard_max_bytes`` (0: it does not discard; a partition reads
    its disk's), or None when sysfs does not say."""
    dev = _blockdev(device)
    if isinstance(dev, str):
        return None
    queue = dev.sysdir / "queue"
    if not queue.is_dir():
        queue = dev.sysdir.parent / "queue"
    value = _read(queue / "discard_max_bytes")
    return int(value) if value is not None and value.isdigit() else None


def purge_refusal(device: str, how: str, destroy_data: Iterable[str]) -> str | None:
    """Why ``purge: how`` of ``device`` must be refused, or None (then the device checks of
    its writes decide: in use, signatures)."""
    what = f"`purge: {how}` erases the whole device"
    dev = _blockdev(device)
    if isinstance(dev, str):
        return f"{what}, and {dev}"
    if not is_destroy_allowed(device, destroy_data):
        return (
            f"{what} {dev.shown} (blkdiscard), and storbench purges only a device the "
            f"command line names with --destroy-data, even one that holds no data"
        )
    if blkdiscard_path() is None:
        return f"{what} with blkdiscard, which is not installed (util-linux)"
    if how == "discard":
        most = discard_max_bytes(device)
        if not most:
            said = "0" if most == 0 else "nothing"
            return (
                f"{dev.shown} does not support discard (/sys/class/block/{dev.kname}/queue/"
                f"discard_max_bytes says {said}), so `purge: discard` cannot erase it"
            )
    return None
