"""``network-bound`` of block devices reached over the network: which host a krbd device's
or an iSCSI disk's data goes to (hosts/netblock.py), on sysfs layouts built here.

The layouts are built from the kernel's documentation and sources, not recorded: this
machine's kernel has neither rbd nor iSCSI (CONFIG_BLK_DEV_RBD, CONFIG_CEPH_LIB and the
iSCSI transport are not set and it has no modules), so no real device could be mapped.
krbd: Documentation/ABI/testing/sysfs-bus-rbd (``/sys/bus/rbd/devices/N/``; the line
written to ``/sys/bus/rbd/add`` is ``MON_ADDRS OPTIONS POOL IMAGE [SNAP]``) and
drivers/block/rbd.c (``config_info`` shows that line; the disk is ``rbd<dev_id>``, a child
of the bus device). iSCSI: the SCSI transport class's layout
(``/sys/devices/platform/hostH/sessionS/connectionS:C/iscsi_connection/connectionS:C/
address``, the disk under ``sessionS/targetH:0:0/H:0:0:L/block/``) as open-iscsi and
distributions' AppArmor profiles read it."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest

from storbench.hosts import netblock, netpath
from storbench.plan import Point, Target, load_plan


def _link(at: Path, to: str) -> None:
    at.parent.mkdir(parents=True, exist_ok=True)
    at.symlink_to(to)


def _rbd_layout(sys: Path, config: str, device_link: bool = True) -> None:
    """/sys of a machine that mapped one image as rbd0 (with a partition rbd0p1)."""
    dev = sys / "devices" / "rbd" / "0"
    disk = dev / "block" / "rbd0"
    (disk / "rbd0p1").mkdir(parents=True)
    (disk / "rbd0p1" / "partition").write_text("1\n")
    (dev / "config_info").write_text(config + "\n")
    (dev / "client_addr").write_text("10.20.0.7:0/3123456789\n")
    if device_link:
        _link(disk / "device", "../../../0")
    _link(sys / "bus" / "rbd" / "devices" / "0", "../../../devices/rbd/0")
    _link(sys / "class" / "block" / "rbd0", "../../devices/rbd/0/block/rbd0")
    _link(sys / "class" / "block" / "rbd0p1", "../../devices/rbd/0/block/rbd0/rbd0p1")


def _iscsi_layout(sys: Path, address: str, persistent: str = "192.0.2.99") -> None:
    """/sys of a machine logged in to one iSCSI target, its LUN 0 as sdb."""
    session = sys / "devices" / "platform" / "host3" / "session1"
    conn = session / "connection1:0" / "iscsi_connection" / "connection1:0"
    conn.mkdir(parents=True)
    (conn / "address").write_text(address + "\n")
    (conn / "persistent_address").write_text(persistent + "\n")
    (conn / "port").write_text("3260\n")
    (session / "target3:0:0" / "3:0:0:0" / "block" / "sdb").mkdir(parents=True)
    _link(
        sys / "class" / "block" / "sdb",
        "../../devices/platform/host3/session1/target3:0:0/3:0:0:0/block/sdb",
    )
    local = sys / "devices" / "pci0000:00" / "0000:00:04.0" / "virtio2" / "block" / "vda"
    local.mkdir(parents=True)
    _link(
        sys / "class" / "block" / "vda", "../../devices/pci0000:00/0000:00:04.0/virtio2/block/vda"
    )


def test_findings_network_block_krbd_monitors(tmp_path: Path) -> None:
    """A krbd disk, its partition and a udev name for it: the first monitor it was
    mapped with (msgr2 or v1 port, IPv4 or IPv6)."""
    sys = tmp_path / "sys"
    _rbd_layout(sys, "10.0.0.5:3300,10.0.0.6:3300 name=admin,key=client.admin rbd img -")
    udev = tmp_path / "dev" / "rbd" / "rbd" / "img"
    _link(udev, "/dev/rbd0")  # what udev's rbd rule makes; followed to its name
    for device in ("/dev/rbd0", "/dev/rbd0p1", str(udev)):
        assert netblock.block_endpoint(device, str(sys)) == ("10.0.0.5:3300", "rbd"), device
    v6 = tmp_path / "v6"
    _rbd_layout(v6, "[fd00::5]:6789 name=admin rbd img")
    (monitor, kind) = netblock.block_endpoint("/dev/rbd0", str(v6)) or ("", "")
    assert kind == "rbd" and netpath.address_of(netpath._host_of(monitor) or "") == "fd00::5"


def test_findings_network_block_krbd_by_its_bus_and_unreadable(tmp_path: Path) -> None:
    """No ``device`` link: the bus device of the disk's number; a ``config_info`` that
    cannot be read (EPERM without CAP_SYS_ADMIN: here, a directory in its place) or holds
    too few fields: no endpoint, never a guess."""
    sys = tmp_path / "sys"
    _rbd_layout(sys, "10.0.0.5:6789 name=admin rbd img", device_link=False)
    assert netblock.block_endpoint("/dev/rbd0", str(sys)) == ("10.0.0.5:6789", "rbd")
    info = sys / "devices" / "rbd" / "0" / "config_info"
    info.write_text("10.0.0.5:6789 rbd\n")
    assert netblock.block_endpoint("/dev/rbd0", str(sys)) is None
    info.unlink()
    info.mkdir()
    assert netblock.block_endpoint("/dev/rbd0", str(sys)) is None


def test_findings_network_block_iscsi_portal(tmp_path: Path) -> None:
    """An iSCSI disk: its connection's live address (the persistent one when that is
    empty); a local virtio disk and a device sysfs does not know: none."""
    sys = tmp_path / "sys"
    _iscsi_layout(sys, "192.0.2.10")
    assert netblock.block_endpoint("/dev/sdb", str(sys)) == ("192.0.2.10", "iscsi")
    assert netblock.block_endpoint("/dev/vda", str(sys)) is None
    assert netblock.block_endpoint("/dev/nosuch9", str(sys)) is None
    other = tmp_path / "other"
    _iscsi_layout(other, "")
    assert netblock.block_endpoint("/dev/sdb", str(other)) == ("192.0.2.99", "iscsi")


def _point(target: Target) -> Point:
    p = load_plan("quick", targets=["/tmp/storbench-net.dat"]).expand()[0]
    return dataclasses.replace(p, target=target, params={"rw": "read"}, extra={})


def test_findings_network_block_device_target_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A device target on krbd gets the monitor as its endpoint (the Ceph note: the OSDs
    are on its network) and the link speed of the route toward it as its capacity; on
    iSCSI, the portal."""
    sys = tmp_path / "sys"
    _rbd_layout(sys, "10.0.0.5:3300 name=admin rbd img")
    monkeypatch.setattr(netblock, "SYS", str(sys))
    end = netpath.endpoint_of(Target("device", "/dev/rbd0"))
    assert end is not None and end.host == "10.0.0.5"
    assert end.what == "the Ceph monitor of the RBD device /dev/rbd0" and "OSDs" in end.note
    routes: list[str] = []
    monkeypatch.setattr(netpath, "route_device", lambda a: routes.append(a) or "eth3")
    monkeypatch.setattr(netpath, "link_bits", lambda dev: 1e10 if dev == "eth3" else None)
    target = Target("device", "/dev/rbd0")
    paths, notes = netpath.capacities([_point(target)])
    path = paths[target.label]
    assert routes == ["10.0.0.5"] and path.device == "eth3" and path.source == "link"
    assert path.to_client_bits_per_s == path.from_client_bits_per_s == 1e10
    assert "the link speed of eth3" in notes[0] and "RBD device /dev/rbd0" in notes[0]
    iscsi = tmp_path / "iscsi"
    _iscsi_layout(iscsi, "192.0.2.10")
    monkeypatch.setattr(netblock, "SYS", str(iscsi))
    end = netpath.endpoint_of(Target("device", "/dev/sdb"))
    assert end == netpath.Endpoint("192.0.2.10", "the iSCSI target portal of /dev/sdb")
    assert netpath.endpoint_of(Target("device", "/dev/vda")) is None


def test_findings_network_block_this_machines_devices() -> None:
    """This machine's real block devices (virtio, loop: local) have no network endpoint."""
    for name in sorted(os.listdir("/sys/class/block"))[:8]:
        assert netblock.block_endpoint(f"/dev/{name}") is None, name
