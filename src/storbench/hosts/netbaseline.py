"""The network baseline of a run on remote hosts (seed 003 §3.6.7 measured it before its
storage figures): before any point, iperf3 from this controller to each remote host and
back, one host at a time, so that a result bound by the network is recognisable.

Each host's ``storbench agent`` serves iperf3 (when iperf3 is installed there) on the fio
port + 2000, bound to the agent's address. The figures are what arrived at the receiving
end (iperf3's ``sum_received``), in bits/s, as network people quote them. A host without an
iperf3 server, or a controller without iperf3, gets a note instead, never a zero.
"""

from __future__ import annotations

import json
import shutil
import subprocess
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


def _one(address: str, port: int, reverse: bool, seconds: int) -> tuple[float | None, str]:
    """Bits/s received in one direction (``reverse``: host to controller), or the error."""
    cmd = ["iperf3", "-c", address, "-p", str(port), "-t", str(seconds), "-J"]
    try:
        out = subprocess.run(
            [*cmd, *(["-R"] if reverse else [])],
            capture_output=True,
            text=True,
            timeout=seconds + 15,
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


def fmt_bits(bits_per_s: float | None) -> str:
    if bits_per_s is None:
        return "-"
    if bits_per_s >= 1e9:
        return f"{bits_per_s / 1e9:,.2f} Gbit/s"
    return f"{bits_per_s / 1e6:,.1f} Mbit/s"
