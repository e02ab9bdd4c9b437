"""The network baseline of a run on remote hosts (seed 003 §3.6.7 measured it before its
storage figures): before any point, iperf3 from this controller to each remote host and
back, one host at a time, so that a result bound by the network is recognisable.

Each host's ``storbench agent`` serves iperf3 (when iperf3 is installed there) on the fio
port + 2000, bound to the agent's address. The figures are what arrived at the receiving
end (iperf3's ``sum_received``), in bits/s, as network people quote them. A host without an
iperf3 server, or a controller without iperf3, gets a note instead, never a zero.

The same toward the storage of a run's targets (:func:`measure_endpoints`): an S3
endpoint, a Ceph monitor or a network file system's server (hosts/netpath.py) with an
iperf3 server on iperf3's own port, 5201, for the ``network-bound`` finding.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
from collections.abc import Mapping
from typing import Any

from storbench.hosts import procguard

#: iperf3's port on a host: its fio port + this (the counters are at + 1000)
OFFSET = 2000
#: seconds of each direction's test
SECONDS = 1


def iperf_port(fio_port: int) -> int | None:
    port = fio_port + OFFSET
    return port if port <= 65535 else None


def server_command(address: str, port: int) -> list[str]:
    """The iperf3 server an agent runs beside its fio server."""
    return [shutil.which("iperf3") or "iperf3", "-s", "-B", address, "-p", str(port)]


def _one(
    address: str, port: int, reverse: bool, seconds: int, wait: float = 15
) -> tuple[float | None, str]:
    """Bits/s received in one direction (``reverse``: host to controller), or the error
    (``wait``: seconds allowed beyond the test's own)."""
    cmd = ["iperf3", "-c", address, "-p", str(port), "-t", str(seconds), "-J"]
    try:
        out = subprocess.run(
            [*cmd, *(["-R"] if reverse else [])],
            capture_output=True,
            text=True,
            timeout=seconds + wait,
            stdin=subprocess.DEVNULL,
            env=procguard.environment(),
        )
        doc = json.loads(out.stdout or "{}")
    except subprocess.TimeoutExpired:
        return None, "no answer within the time allowed"
    except (OSError, ValueError) as e:
        return None, str(e)
    if doc.get("error"):
        return None, str(doc["error"])
    received = ((doc.get("end") or {}).get("sum_received") or {}).get("bits_per_second")
    if not isinstance(received, int | float) or received <= 0:
        return None, "iperf3 measured nothing"
    return float(received), ""


def measure(
    hosts: list[tuple[str, str, int]], seconds: int = SECONDS
) -> tuple[list[dict[str, Any]], list[str]]:
    """(label, address, fio port) of each remote host -> (each host's baseline, notes on
    the hosts that have none)."""
    if not hosts:
        return [], []
    if shutil.which("iperf3") is None:
        return [], ["no network baseline: iperf3 is not installed here (apt-get install iperf3)"]
    found, notes = [], []
    for label, address, fio_port in hosts:
        port = iperf_port(fio_port)
        if port is None:
            notes.append(f"host {label}: no network baseline (fio port + {OFFSET} > 65535)")
            continue
        to_host, why = _one(address, port, False, seconds)
        from_host, why_back = _one(address, port, True, seconds) if not why else (None, "")
        if why or why_back:
            notes.append(
                f"host {label}: no network baseline: iperf3 at {address}:{port}: "
                f"{why or why_back} (start `storbench agent` there with iperf3 installed)"
            )
            continue
        found.append(
            {
                "host": label,
                "address": address,
                "port": port,
                "seconds": seconds,
                "to_host_bits_per_s": to_host,
                "from_host_bits_per_s": from_host,
            }
        )
    return found, notes


#: iperf3's own port: where a storage endpoint's iperf3 server answers, if one does
ENDPOINT_PORT = 5201
#: seconds a storage endpoint has to accept a connection to its iperf3 port
CONNECT_TIMEOUT = 2.0
#: storage endpoints measured at most (each takes 2 to 3 s when iperf3 answers there)
MAX_ENDPOINTS = 8


def _answers(address: str, port: int, timeout: float = CONNECT_TIMEOUT) -> bool:
    try:
        socket.create_connection((address, port), timeout).close()
    except OSError:
        return False
    return True


def measure_endpoints(
    endpoints: Mapping[str, tuple[str, list[str]]], seconds: int = SECONDS
) -> tuple[list[dict[str, Any]], list[str]]:
    """The baseline toward each storage endpoint (address -> (host as the targets name it,
    the targets' labels)) where an iperf3 server answers at its port 5201 within 2 s:
    iperf3 ``seconds`` each way, one endpoint at a time, before any point (preflight).
    An endpoint without one is left out silently (its interface's link speed stands in:
    hosts/netpath.py); one that answers and then fails gets a note."""
    if not endpoints or shutil.which("iperf3") is None:
        return [], []
    found, notes = [], []
    for address, (host, labels) in list(endpoints.items())[:MAX_ENDPOINTS]:
        if not _answers(address, ENDPOINT_PORT):
            continue
        to_host, why = _one(address, ENDPOINT_PORT, False, seconds, wait=5)
        from_host, back = (
            _one(address, ENDPOINT_PORT, True, seconds, wait=5) if not why else (None, "")
        )
        if why or back:
            notes.append(
                f"no network baseline toward {host}: iperf3 at {address}:{ENDPOINT_PORT}: "
                f"{why or back}"
            )
            continue
        found.append(
            {
                "kind": "endpoint",
                "host": host,
                "address": address,
                "port": ENDPOINT_PORT,
                "targets": labels,
                "seconds": seconds,
                "to_host_bits_per_s": to_host,
                "from_host_bits_per_s": from_host,
            }
        )
    return found, notes


def fmt_bits(bits_per_s: float | None) -> str:
    if bits_per_s is None:
        return "-"
    if bits_per_s >= 1e9:
        return f"{bits_per_s / 1e9:,.2f} Gbit/s"
    return f"{bits_per_s / 1e6:,.1f} Mbit/s"
