"""``network-bound``: the check on recorded real fio output against a network path (each
direction against its own figure, beside cases that must not be flagged), and how the
path is found: this machine's real interfaces' link speeds and routes, its real
mountinfo (and network file systems' mounts in the kernel's mountinfo format), a Ceph
conf's monitors, an S3 endpoint."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
from pathlib import Path

import pytest

from storbench.analysis import findings
from storbench.engines import fio
from storbench.hosts import mounts, netbaseline, netpath
from storbench.model.findings import CODES, NetworkPath, unjudged
from storbench.model.metrics import Measurement
from storbench.plan import Point, Target, load_plan

DATA = Path(__file__).resolve().parent.parent / "data" / "fio"


def _meas(name: str) -> Measurement:
    return fio.parse_output((DATA / name).read_text())[0]


def _path(to_client: float, from_client: float, source: str = "iperf3") -> NetworkPath:
    return NetworkPath(
        "10.77.1.2", "10.77.1.2", to_client, from_client, source, "eth1", "the S3 endpoint"
    )


def _codes(found: list) -> list[str]:
    return [f.code for f in found]


def test_findings_network_bound_each_direction_against_its_own_capacity() -> None:
    """libaio randrw: reads 167.6 MB/s (1,341 Mbit/s), writes 71.7 MB/s (573 Mbit/s)."""
    meas = _meas("libaio-randrw-jsonplus.json")
    read_bits = meas.directions["read"].bw_bytes * 8
    write_bits = meas.directions["write"].bw_bytes * 8
    # reads at 98 % of what comes toward the client; writes far below what goes away
    found = findings.findings(meas, network=_path(read_bits / 0.98, 10e9))
    (net,) = [f for f in found if f.code == "network-bound"]
    assert net.data["read_share_pct"] == pytest.approx(98.0, abs=0.1)
    assert "write_share_pct" not in net.data
    assert net.data["source"] == "iperf3" and net.data["endpoint"] == "10.77.1.2"
    assert "reads moved 159.9 MiB/s = 1.34 Gbit/s, 98 % of the 1.37 Gbit/s iperf3" in (net.evidence)
    assert "toward this client from 10.77.1.2" in net.evidence
    assert net.advice == CODES["network-bound"].fix and not net.judged
    assert "network-bound" in _codes(unjudged(found))
    # full duplex: the same figure the other way round flags the writes only
    both = findings.network_bound(meas, _path(10e9, write_bits / 0.95, "link"))
    written = {k: v for k, v in both[0].data.items() if k.startswith("write")}
    assert written["write_share_pct"] == pytest.approx(95, abs=0.1)
    assert "read_share_pct" not in both[0].data and both[0].data["source"] == "link"
    assert "the 603.6 Mbit/s link speed of eth1, the interface toward 10.77.1.2" in (
        both[0].evidence
    )
    # both at once: one finding saying both
    (two,) = findings.network_bound(meas, _path(read_bits / 0.92, write_bits / 0.91))
    assert two.data["read_share_pct"] == pytest.approx(92, abs=0.1)
    assert two.data["write_share_pct"] == pytest.approx(91, abs=0.1)


def test_findings_network_not_flagged_below_above_or_without_a_path() -> None:
    meas = _meas("libaio-randrw-jsonplus.json")
    bits = meas.directions["read"].bw_bytes * 8
    assert findings.network_bound(meas, _path(bits / 0.85, 10e9)) == []  # 85 %: not at it
    # 2x what the network carries: the data did not all cross it (a cache answered)
    assert findings.network_bound(meas, _path(bits / 2, 10e9)) == []
    assert findings.network_bound(meas, None) == []  # local storage, or not known
    assert findings.network_bound(meas, _path(0, 0)) == []
    # the null engine does no I/O: no network to be bound by
    null = findings.findings(meas, params={"ioengine": "null"}, network=_path(bits, bits))
    assert "network-bound" not in _codes(null)
    failed = dataclasses.replace(meas, status="failed")
    assert findings.findings(failed, network=_path(bits, bits)) == []


def test_findings_network_link_speed_of_this_machines_interfaces(tmp_path: Path) -> None:
    """Every real interface: its sysfs speed in bits/s, or None where it reports none."""
    sys_net = Path("/sys/class/net")
    for dev in sorted(os.listdir(sys_net)):
        try:
            mbits = int((sys_net / dev / "speed").read_text())
        except (OSError, ValueError):
            mbits = -1
        want = mbits * 1e6 if mbits > 0 and dev != "lo" else None
        assert netpath.link_bits(dev) == want, dev
    assert netpath.link_bits("lo") is None and netpath.link_bits("no-such-if0") is None
    for dev, text, want in (("a", "1000\n", 1e9), ("b", "-1\n", None), ("c", "x", None)):
        (tmp_path / dev).mkdir()
        (tmp_path / dev / "speed").write_text(text)
        assert netpath.link_bits(dev, str(tmp_path)) == want


def test_findings_network_route_of_loopback_own_and_other_addresses() -> None:
    assert netpath.route_device("127.0.0.1") == "lo" and netpath.route_device("::1") == "lo"
    out = subprocess.run(["ip", "-j", "addr"], capture_output=True, text=True, check=False)
    if out.returncode != 0:
        pytest.skip("no `ip` here (iproute2)")
    own = [
        a["local"]
        for i in json.loads(out.stdout)
        for a in i.get("addr_info", [])
        if a.get("family") == "inet" and not a["local"].startswith("127.")
    ]
    for address in own:  # this machine's own addresses: no network between
        assert netpath.route_device(address) == "lo", address
    other = subprocess.run(["ip", "-j", "route", "get", "192.0.2.200"], capture_output=True)
    if other.returncode == 0:  # a route out (a default route): through its interface
        assert netpath.route_device("192.0.2.200") == json.loads(other.stdout)[0]["dev"]


#: mountinfo lines in the kernel's format (proc(5)): this machine's first lines, then
#: network file systems as the kernel shows them
MOUNTS = """\
27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard
22 27 0:21 / /proc rw,relatime - proc proc rw
51 27 0:45 / /mnt/nfs rw,relatime shared:30 - nfs4 10.77.1.2:/export rw,vers=4.2,addr=10.77.1.2
52 27 0:46 / /mnt/old rw - nfs [fd00::5]:/srv rw,vers=3
53 27 0:47 / /mnt/smb rw - cifs //filer.example/share rw,vers=3.1.1
54 27 0:48 / /mnt/cephfs rw - ceph 10.0.0.1:6789,10.0.0.2:6789:/ rw,name=admin
55 27 0:49 / /mnt/cephnew rw - ceph admin@fsid.cephfs=/ rw,mon_addr=10.0.0.9:3300/10.0.0.8
56 27 0:50 / /mnt/with\\040space rw - nfs4 nas:/a rw
57 51 0:51 / /mnt/nfs/local rw - tmpfs tmpfs rw
"""


def test_findings_network_mountinfo_servers_of_network_file_systems() -> None:
    for path, point, fstype, host in (
        ("/mnt/nfs/data/f.bin", "/mnt/nfs", "nfs4", "10.77.1.2"),
        ("/mnt/old/x", "/mnt/old", "nfs", "fd00::5"),
        ("/mnt/smb/dir", "/mnt/smb", "cifs", "filer.example"),
        ("/mnt/cephfs/x", "/mnt/cephfs", "ceph", "10.0.0.1"),
        ("/mnt/cephnew/x", "/mnt/cephnew", "ceph", "10.0.0.9"),
        ("/mnt/with space/f", "/mnt/with space", "nfs4", "nas"),
        ("/mnt/nfs/local/f", "/mnt/nfs/local", "tmpfs", None),  # a local mount under one
        ("/mnt/nfsx", "/", "ext4", None),  # a prefix of a mount point is not inside it
        ("/proc/self", "/proc", "proc", None),
    ):
        mount = mounts.mount_of(path, MOUNTS)
        assert mount is not None and (mount.mountpoint, mount.fstype) == (point, fstype), path
        assert netpath.mount_host(mount) == host, path


def test_findings_network_mountinfo_of_this_machine(tmp_path: Path) -> None:
    """The real /proc/self/mountinfo: / and /proc are where findmnt says, and local."""
    root = mounts.mount_of("/")
    assert root is not None and root.mountpoint == "/"
    proc = mounts.mount_of("/proc/self/status")
    assert proc is not None and (proc.mountpoint, proc.fstype) == ("/proc", "proc")
    here = mounts.mount_of(str(tmp_path))
    assert here is not None
    if here.fstype not in (*netpath.NETWORK_FS, "fuse.ceph-fuse"):  # a local file system
        assert netpath.endpoint_of(Target("file", str(tmp_path / "data.bin"))) is None


def _point(target: Target) -> Point:
    p = load_plan("quick", targets=["/tmp/storbench-net.dat"]).expand()[0]
    return dataclasses.replace(p, target=target, params={"rw": "read"}, extra={})


def test_findings_network_endpoints_of_s3_and_ceph_targets(tmp_path: Path) -> None:
    s3 = Target("s3", "bench", endpoint="http://10.77.1.2:7070")
    assert netpath.endpoint_of(s3) == netpath.Endpoint(
        "10.77.1.2", "the S3 endpoint of s3://bench/"
    )
    conf = tmp_path / "ceph.conf"
    conf.write_text("[global]\nfsid = x\nmon host = [v2:10.0.0.5:3300/0,v1:10.0.0.5:6789/0]\n")
    rbd = netpath.endpoint_of(Target("rbd", "pool/img", conf=str(conf)))
    assert rbd is not None and rbd.host == "10.0.0.5" and "OSDs" in rbd.note
    conf.write_text("[global]\nmon_host = mon1.example:6789, 10.0.0.6\n")
    assert netpath.mon_host(str(conf)) == "mon1.example"
    assert netpath.mon_host(str(tmp_path / "missing.conf")) is None
    # loopback endpoints (a gateway on this machine, the lab's cluster): no network
    local = Target("s3", "bench", endpoint="http://127.0.0.1:7070")
    assert netpath.endpoints([_point(local)]) == {}
    assert netpath.capacities([_point(local)]) == ({}, [])


def test_findings_network_capacity_from_the_baseline_else_the_link(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The run's iperf3 baseline toward the endpoint when there is one (to_host is what
    writes go out on, from_host what reads come back on), else the interface's link
    speed; neither: a note, and no figure."""
    target = Target("s3", "bench", endpoint="http://10.77.1.2:7070")
    monkeypatch.setattr(netpath, "route_device", lambda address: "eth9")
    monkeypatch.setattr(netpath, "link_bits", lambda dev: 1e9)
    base = {"kind": "endpoint", "address": "10.77.1.2", "host": "10.77.1.2"}
    base |= {"to_host_bits_per_s": 2e8, "from_host_bits_per_s": 3e8}
    hosts_own = {"host": "10.77.1.2:8765", "address": "10.77.1.2", "to_host_bits_per_s": 5e7}
    paths, notes = netpath.capacities([_point(target)], [hosts_own, base])
    path = paths[target.label]
    assert (path.source, path.to_client_bits_per_s, path.from_client_bits_per_s) == (
        "iperf3",
        3e8,
        2e8,
    )
    assert path.device == "eth9"
    assert notes == [
        "the network toward 10.77.1.2 (the S3 endpoint of s3://bench/): 200.0 Mbit/s toward "
        "it, 300.0 Mbit/s back (iperf3 at the run's start)"
    ]
    paths, notes = netpath.capacities([_point(target)], [hosts_own])  # a host's, not the storage's
    assert paths[target.label].source == "link" and paths[target.label].to_client_bits_per_s == 1e9
    assert "1.00 Gbit/s each way, the link speed of eth9" in notes[0]
    monkeypatch.setattr(netpath, "link_bits", lambda dev: None)
    paths, notes = netpath.capacities([_point(target)])
    assert paths == {} and "no iperf3 server answered at 10.77.1.2:5201" in notes[0]


def test_findings_network_no_baseline_where_no_iperf3_answers() -> None:
    """Nothing listens at the endpoint's port 5201 (loopback, refused at once): no entry,
    no note, no time spent."""
    if netbaseline._answers("127.0.0.1", netbaseline.ENDPOINT_PORT):
        pytest.skip("an iperf3 server (or something else) listens on 127.0.0.1:5201")
    found = netbaseline.measure_endpoints({"127.0.0.1": ("127.0.0.1", ["s3://b/"])})
    assert found == ([], [])
