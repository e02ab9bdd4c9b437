"""The network between this machine and the storage a target lives on, for the
``network-bound`` finding (model/findings.py): which host a target's data crosses the
network to, and what the network toward it carries.

- The endpoint: an S3 target's endpoint host; a Ceph target's monitors (``mon_host`` of its
  ceph.conf: a client moves its data to and from the OSDs, which are normally on the
  monitors' public network); a file, device or directory target on a network file system
  (nfs, cifs, a kernel ceph mount, glusterfs, sshfs; ceph-fuse: the default ceph.conf's
  monitors): the server in the mount's source (``/proc/self/mountinfo``); a block device
  reached over the network (a krbd ``/dev/rbdN``: the first monitor it was mapped with; an
  iSCSI disk: its session's portal; hosts/netblock.py). Local disks, and
  endpoints on this machine (loopback, or one of its own addresses: the route to them is
  ``lo``), have no network.
- The capacity: the iperf3 baseline measured toward the endpoint at the run's start
  (netbaseline.measure_endpoints, kept in the run's inventory ``network`` with kind
  ``endpoint``); else the link speed of the interface the route to it leaves through
  (``ip -j route get ADDR``, ``/sys/class/net/DEV/speed`` in Mb/s: -1, unreadable or
  loopback is unknown).

Points on ``hosts:`` (:func:`host_capacities`): a host whose target is storage reached
over the network (an S3 endpoint, a Ceph pool or image) has the baseline the run measured
from this controller to it (iperf3 to its agent, hosts/netbaseline.py) as the figure of
what its network carries: its own path to the storage is not measured, and a host's
files, directories and devices are not judged (their storage may be local). Nothing here
raises: what cannot be told is unknown (no finding), never a figure.
"""

from __future__ import annotations

import configparser
import ipaddress
import json
import os
import re
import socket
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from storbench.hosts.mounts import Mount, mount_of
from storbench.hosts.netbaseline import fmt_bits
from storbench.hosts.netblock import block_endpoint
from storbench.model.findings import NetworkPath
from storbench.plan.model import Point, Target

#: file systems whose data crosses the network to the server their mount's source names
NETWORK_FS = frozenset(
    ("nfs", "nfs4", "cifs", "smb3", "ceph", "glusterfs", "fuse.glusterfs", "fuse.sshfs")
)
#: the ceph.conf the Ceph tools read when a target names none
DEFAULT_CEPH_CONF = "/etc/ceph/ceph.conf"


@dataclass(frozen=True)
class Endpoint:
    """The host a target's data crosses the network to."""

    host: str
    #: what it is to the target, in words
    what: str
    note: str = ""


def _host_of(spec: str) -> str | None:
    """HOST of ``HOST``, ``HOST:PORT``, ``[V6]:PORT``, ``v2:HOST:PORT/NONCE`` (a Ceph
    address), or ``USER@HOST``."""
    spec = re.sub(r"^v[12]:", "", spec.strip().split("@")[-1]).split("/")[0]
    if spec.startswith("["):
        return spec[1:].split("]")[0] or None
    if spec.count(":") > 1:  # a bare IPv6 address
        return spec
    return spec.split(":")[0] or None


def mount_host(mount: Mount) -> str | None:
    """The server of a network file system's mount (None: a local one, or no host in it)."""
    if mount.fstype not in NETWORK_FS:
        return None
    source = mount.source
    if mount.fstype in ("cifs", "smb3"):  # //server/share
        return _host_of(source.lstrip("/").split("/")[0])
    if mount.fstype == "ceph" and "=" in source:  # the new syntax: NAME@FSID.FS=/PATH
        found = re.search(r"(?:^|,)mon_addr=([^,]+)", mount.options)
        return _host_of(found.group(1)) if found else mon_host(None)
    if source.startswith("["):  # [v6]:/export
        return source[1:].split("]")[0] or None
    return _host_of(source.split(",")[0].rsplit(":/", 1)[0] if ":/" in source else source)


def mon_host(conf: str | None) -> str | None:
    """The first monitor of a ceph.conf's ``mon_host`` (``mon host``, ``mon-host``)."""
    path = conf or os.environ.get("CEPH_CONF") or DEFAULT_CEPH_CONF
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    try:
        parser.read_string(Path(path).read_text())
    except (OSError, configparser.Error, UnicodeDecodeError):
        return None
    for section in ("global", "client", *parser.sections()):
        if not parser.has_section(section):
            continue
        for key, value in parser.items(section):
            if re.sub(r"[ _-]+", "_", key) == "mon_host" and value.strip():
                first = re.split(r"[,;\s]+", value.strip().strip("[]"))[0]
                return _host_of(first)
    return None


_CEPH_NOTE = "the OSDs that hold its data are normally on the monitors' public network"


def endpoint_of(target: Target) -> Endpoint | None:
    """The host ``target``'s data crosses the network to (None: none, or not known)."""
    if target.kind == "s3":
        host = urlsplit(target.endpoint or "").hostname
        return Endpoint(host, f"the S3 endpoint of {target.label}") if host else None
    if target.ceph:
        host = mon_host(target.conf)
        if host is None:
            return None
        return Endpoint(host, f"the Ceph monitor of {target.label}", _CEPH_NOTE)
    if target.kind not in ("file", "device", "directory"):
        return None
    if target.kind == "device":
        found = block_endpoint(target.path)
        host = _host_of(found[0]) if found else None
        if found is not None and host:
            if found[1] == "rbd":
                return Endpoint(
                    host, f"the Ceph monitor of the RBD device {target.path}", _CEPH_NOTE
                )
            return Endpoint(host, f"the iSCSI target portal of {target.path}")
    mount = mount_of(target.path)
    if mount is None:
        return None
    if mount.fstype == "fuse.ceph-fuse":
        host = mon_host(None)
        what = f"the Ceph monitor of the ceph-fuse mount {mount.mountpoint}"
        return Endpoint(host, what, _CEPH_NOTE) if host else None
    host = mount_host(mount)
    if host is None:
        return None
    return Endpoint(host, f"the {mount.fstype} server of {mount.mountpoint}")


def address_of(host: str) -> str | None:
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        pass
    try:
        found = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return None
    return str(found[0][4][0]) if found else None


def route_device(address: str) -> str | None:
    """The interface the route to ``address`` leaves through (``lo`` for this machine's
    own addresses), from ``ip -j route get``."""
    try:
        if ipaddress.ip_address(address).is_loopback:
            return "lo"
        out = subprocess.run(
            ["ip", "-j", "route", "get", address],
            capture_output=True,
            text=True,
            timeout=5,
            stdin=subprocess.DEVNULL,
        )
        routes = json.loads(out.stdout or "[]")
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return None
    if not routes or not isinstance(routes[0], dict):
        return None
    route = routes[0]
    return "lo" if route.get("type") == "local" else route.get("dev") or None


def link_bits(device: str, sys_net: str = "/sys/class/net") -> float | None:
    """The link speed of ``device`` in bits/s (sysfs gives Mb/s); None for loopback, a
    device that reports none (-1, unreadable) or is not there."""
    if not device or device == "lo" or "/" in device:
        return None
    try:
        mbits = int((Path(sys_net) / device / "speed").read_text().strip())
    except (OSError, ValueError):
        return None
    return mbits * 1e6 if mbits > 0 else None


def endpoints(points: Sequence[Point]) -> dict[str, tuple[Endpoint, str, list[str]]]:
    """The network endpoints of the points' targets (those without ``hosts:``), by address,
    with the interface the route to each leaves through and the labels of the targets
    behind it; loopback and this machine's own addresses left out."""
    out: dict[str, tuple[Endpoint, str, list[str]]] = {}
    for t in dict.fromkeys(p.target for p in points if not p.hosts):
        found = endpoint_of(t)
        address = address_of(found.host) if found else None
        if found is None or address is None:
            continue
        if address not in out:
            device = route_device(address)
            if device in (None, "lo"):
                continue
            out[address] = (found, str(device), [])
        out[address][2].append(t.label)
    return out


def capacities(
    points: Sequence[Point], baselines: Iterable[Mapping[str, Any]] = ()
) -> tuple[dict[str, NetworkPath], list[str]]:
    """What the network toward each target of ``points`` carries, by target label, from
    the run's ``baselines`` (its inventory's ``network``: entries of kind ``endpoint``) or
    the link speed of the route's interface; and a note on each endpoint (for the run's
    events): the figure and where it comes from, or why there is none."""
    measured = {
        str(b.get("address")): b
        for b in baselines
        if b.get("kind") == "endpoint" and b.get("to_host_bits_per_s")
    }
    paths: dict[str, NetworkPath] = {}
    notes: list[str] = []
    for address, (end, device, labels) in endpoints(points).items():
        toward = f"the network toward {end.host} ({end.what})"
        base = measured.get(address)
        speed = link_bits(device)
        if base is not None:
            back = float(base.get("from_host_bits_per_s") or 0)  # what reads come back on
            out = float(base.get("to_host_bits_per_s") or 0)  # what writes go out on
            source = "iperf3"
            notes.append(
                f"{toward}: {fmt_bits(out)} toward it, {fmt_bits(back)} back (iperf3 at "
                "the run's start)"
            )
        elif speed is not None:
            back = out = speed
            source = "link"
            notes.append(
                f"{toward}: {fmt_bits(speed)} each way, the link speed of {device} (no iperf3 "
                f"server answered at {address}:5201)"
            )
        else:
            notes.append(
                f"{toward} is not known: no iperf3 server answered at {address}:5201 and "
                f"{device} reports no link speed, so no point of it can be found network-bound"
            )
            continue
        path = NetworkPath(end.host, address, back, out, source, device, end.what, end.note)
        paths.update(dict.fromkeys(labels, path))
    return paths, notes


@dataclass(frozen=True)
class Paths:
    """What the network toward a run's storage carries: by target label (this machine's
    points) and by host label (the remote hosts of ``hosts:`` points)."""

    targets: Mapping[str, NetworkPath]
    hosts: Mapping[str, NetworkPath]


def networked(target: Target) -> bool:
    """Whether a host reaches ``target``'s storage over the network whatever the host (an
    S3 endpoint, a Ceph pool or image)."""
    return target.kind == "s3" or target.ceph


def host_capacities(
    points: Sequence[Point], baselines: Iterable[Mapping[str, Any]] = ()
) -> dict[str, NetworkPath]:
    """What the network of each remote host of ``points`` that reaches its storage over
    the network carries, by host label: the baseline the run measured from this controller
    to that host (the run's inventory's ``network``: entries without a kind), source
    ``controller``."""
    measured = {
        str(b.get("host")): b
        for b in baselines
        if not b.get("kind") and b.get("to_host_bits_per_s") and b.get("from_host_bits_per_s")
    }
    out: dict[str, NetworkPath] = {}
    for point in points:
        for h in point.hosts:
            base = measured.get(h.label)
            if base is None or h.label in out or not networked(h.target):
                continue
            out[h.label] = NetworkPath(
                h.label,
                str(base.get("address") or h.address),
                float(base["to_host_bits_per_s"]),  # what the host's reads come in on
                float(base["from_host_bits_per_s"]),  # what its writes go out on
                "controller",
                what=f"the network of host {h.label}, as measured from this controller",
                note="the host's own path to the storage was not measured",
            )
    return out
