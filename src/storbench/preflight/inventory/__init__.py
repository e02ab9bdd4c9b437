"""Inventory of the host and of the targets (a package: its modules follow)."""

from __future__ import annotations

from storbench.preflight.inventory.devices import (
    COMMAND_TIMEOUT,
    DEVICE_KEYS,
    FS_KEYS,
    disk_identity,
    host_inventory,
    target_inventory,
)

__all__ = [
    "COMMAND_TIMEOUT",
    "DEVICE_KEYS",
    "FS_KEYS",
    "disk_identity",
    "host_inventory",
    "target_inventory",
]
