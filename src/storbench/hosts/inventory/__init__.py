"""Inventory of the host and of the targets, captured before any I/O and stored with the run.

Everything here is best effort and fast: sysfs and /proc first, then ``lsblk``, ``findmnt``,
``smartctl`` and ``fio`` when installed. A missing tool, a failing command or an unreadable file
makes the affected field None — these functions never raise for that.

Modules: ``probe`` (commands and files, None on failure), ``host`` (the local host),
``devices`` (block devices through sysfs), ``targets`` (a target's device or filesystem),
``identity`` (the disk behind a target, for qualification tables).
"""

from __future__ import annotations

from storbench.hosts.inventory.devices import DEVICE_KEYS
from storbench.hosts.inventory.host import host_inventory
from storbench.hosts.inventory.identity import disk_identity
from storbench.hosts.inventory.probe import COMMAND_TIMEOUT, one_look
from storbench.hosts.inventory.targets import FS_KEYS, target_inventory

__all__ = [
    "COMMAND_TIMEOUT",
    "DEVICE_KEYS",
    "FS_KEYS",
    "disk_identity",
    "host_inventory",
    "one_look",
    "target_inventory",
]
