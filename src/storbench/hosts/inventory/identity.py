"""Identity of the disk behind a target (model, size, SSD/HDD, protocol) for qualification
tables: from sysfs, improved by ``smartctl -i`` when it answers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from storbench.hosts.inventory.devices import (
    _device_from_sysdir,
    _is_virtual,
    _leaf_disks,
    _sysdir_of_device,
)
from storbench.hosts.inventory.probe import _as_int, _clean, _nearest_existing, _run_json
from storbench.hosts.inventory.targets import _disk_sysdir_of_file, _findmnt, _mountinfo


def _smartctl(device: str) -> dict[str, Any] | None:
    # exit status is a bit mask; bits 0-1 mean the command line / device open failed
    data = _run_json(["smartctl", "-i", "-j", "-n", "standby", device], tuple(range(256)))
    if data is None:
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
