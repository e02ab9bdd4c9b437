"""Block devices whose data crosses the network, for netpath.endpoint_of: which host a
device target's I/O goes to, read from this machine's sysfs (nothing here raises; a
device that is not one of these, or whose sysfs cannot be read, has no endpoint).

- A kernel RBD device (krbd, ``/dev/rbdN``, ``/dev/rbd/POOL/IMAGE``): its
  ``config_info`` (``/sys/bus/rbd/devices/N/``; drivers/block/rbd.c) is the line ``rbd
  map`` wrote to ``/sys/bus/rbd/add``: ``MON_ADDRS OPTIONS POOL IMAGE [SNAP]``
  (Documentation/ABI/testing/sysfs-bus-rbd), the monitors comma-separated. Reading it
  needs CAP_SYS_ADMIN (EPERM otherwise: no endpoint).
- An iSCSI disk (``/dev/sdX`` of an iSCSI session): its SCSI device lives under the
  session, ``/sys/devices/platform/hostH/sessionS/targetH:0:0/H:0:0:L/block/sdX``, and the
  session's connection says where it is connected, ``.../sessionS/connectionS:C/
  iscsi_connection/connectionS:C/address`` (the live peer; ``persistent_address`` when it
  has none).

A partition stands for its disk. Not read: nbd (a device set up through netlink keeps its
socket in the kernel, with no process or sysfs file naming the server), device-mapper or
md stacks over such devices, NVMe over TCP.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

#: sysfs as this machine shows it (tests give a recorded layout instead)
SYS = "/sys"


def _read(path: Path) -> str:
    try:
        return path.read_text().strip()
    except (OSError, UnicodeDecodeError):
        return ""


def disk_node(device: str, sys: str | None = None) -> Path | None:
    """The sysfs directory of the disk ``device`` (a path under /dev, a symlink to one
    followed) is, or is a partition of."""
    name = os.path.basename(os.path.realpath(device))
    try:
        node = (Path(sys or SYS) / "class" / "block" / name).resolve(strict=True)
    except (OSError, RuntimeError):
        return None
    return node.parent if (node / "partition").exists() else node


def rbd_monitors(node: Path, sys: str | None = None) -> list[str]:
    """The monitor addresses a krbd disk was mapped with (``config_info``'s first field),
    as written (``ADDR:PORT``, ``[V6]:PORT``)."""
    info = _read(node / "device" / "config_info")
    found = re.fullmatch(r"rbd(\d+)", node.name)
    if not info and found:
        info = _read(Path(sys or SYS) / "bus" / "rbd" / "devices" / found.group(1) / "config_info")
    fields = info.split()
    return [a for a in fields[0].split(",") if a] if len(fields) >= 4 else []


def iscsi_portal(node: Path) -> str:
    """The address the iSCSI session of a disk is connected to ("" when it is none)."""
    parts = node.parts
    at = next((n for n, p in enumerate(parts) if re.fullmatch(r"session\d+", p)), None)
    if at is None:
        return ""
    session = Path(*parts[: at + 1])
    for conn in sorted(session.glob("connection*/iscsi_connection/connection*")):
        for name in ("address", "persistent_address"):
            address = _read(conn / name)
            if address:
                return address
    return ""


def block_endpoint(device: str, sys: str | None = None) -> tuple[str, str] | None:
    """(the address ``device``'s data crosses the network to, as sysfs writes it (a
    monitor's with its port), what it is: ``rbd`` or ``iscsi``), or None: a local device,
    or not known."""
    node = disk_node(device, sys)
    if node is None:
        return None
    monitors = rbd_monitors(node, sys)
    if monitors:
        return monitors[0], "rbd"
    portal = iscsi_portal(node)
    return (portal, "iscsi") if portal else None
