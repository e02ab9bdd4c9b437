"""A host's kernel counters over the network: what lets the controller sample the hosts that
run a point's load (``hosts:``) the way it samples its own machine (storbench.hosts.load).

``storbench agent`` serves them beside its fio server, on the fio server's port + 1000
(:func:`counters_port`): a controller connects, the agent writes one JSON line -- a
:class:`~storbench.hosts.load.Reading` of its ``/proc`` (``t`` on its own monotonic clock, so
rates come from the host's own time between two readings) -- and closes. The agent reads
nothing from the connection and runs nothing: the endpoint only tells the host's CPU,
memory, network and disk counters (what ``/proc`` tells any local user) to whoever reaches
the benchmark network.
"""

from __future__ import annotations

import contextlib
import json
import socket
import socketserver
import threading
from dataclasses import asdict
from typing import Any

from storbench.hosts.load import Reading, read_counters

#: The counters listen this far above the agent's fio port.
OFFSET = 1000
#: The most bytes one reading may take on the wire (a host with thousands of devices).
MAX_BYTES = 4 << 20


def counters_port(fio_port: int) -> int | None:
    """Where the agent of a fio server on ``fio_port`` serves its counters (None: above
    65535, so it serves none)."""
    port = fio_port + OFFSET
    return port if port <= 65535 else None


def encode(r: Reading) -> bytes:
    return (json.dumps(asdict(r), separators=(",", ":")) + "\n").encode()


def decode(data: bytes) -> Reading:
    """A reading from its JSON line; ValueError when it is not one."""
    try:
        d: Any = json.loads(data)
        return Reading(
            t=float(d["t"]),
            cpu=[int(x) for x in d["cpu"]][:8],
            mem_total=int(d["mem_total"]),
            mem_available=int(d["mem_available"]),
            net={str(k): (int(v[0]), int(v[1])) for k, v in d["net"].items()},
            disks={str(k): tuple(int(x) for x in v[:6]) for k, v in d["disks"].items()},
        )
    except (KeyError, TypeError, IndexError, AttributeError, ValueError) as e:
        raise ValueError(f"not a reading of a host's counters ({e})") from None


class _Handler(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        # /proc unreadable or the controller went away: it hears nothing
        with contextlib.suppress(OSError):
            self.request.sendall(encode(read_counters()))


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


def serve(address: str, port: int) -> _Server:
    """A counters endpoint listening on ``address``:``port`` (call ``serve_forever``)."""
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    _Server.address_family = family
    return _Server((address, port), _Handler)


def serve_in_thread(address: str, port: int) -> _Server:
    """The endpoint serving in a daemon thread (tests, the foreground agent)."""
    server = serve(address, port)
    threading.Thread(target=server.serve_forever, name="storbench-counters", daemon=True).start()
    return server


def fetch(address: str, port: int, timeout: float = 1.0) -> Reading:
    """One reading of the host at ``address``:``port``; OSError when none comes in time,
    ValueError when what came is not a reading."""
    chunks: list[bytes] = []
    size = 0
    with socket.create_connection((address, port), timeout=timeout) as s:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if size > MAX_BYTES:
                raise ValueError(f"{address}:{port} sent more than {MAX_BYTES} bytes")
    return decode(b"".join(chunks))


def main(argv: list[str] | None = None) -> None:
    """``python -m storbench.hosts.counters ADDRESS PORT``: the agent's background endpoint."""
    import sys

    args = sys.argv[1:] if argv is None else argv
    server = serve(args[0], int(args[1]))
    server.serve_forever()


if __name__ == "__main__":
    main()
