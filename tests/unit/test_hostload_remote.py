"""A host's counters over the network (storbench.hosts.counters) and the sampler of several
hosts (storbench.hosts.load.Sampler): this machine's real /proc, served on loopback."""

from __future__ import annotations

import functools
import socket
import sys
from pathlib import Path

import pytest

from storbench.hosts import counters as hostcounters
from storbench.hosts import load as hostload
from storbench.hosts.load import HostSample

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the harness modules
from waiting import wait_until


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_hostload_counters_round_trip_a_reading_of_this_host() -> None:
    server = hostcounters.serve_in_thread("127.0.0.1", 0)
    try:
        port = server.server_address[1]
        here = hostload.read_counters()
        there = hostcounters.fetch("127.0.0.1", port)
        assert there.t >= here.t and len(there.cpu) == 8
        assert there.mem_total == here.mem_total
        assert set(there.net) == set(here.net) and set(there.disks) == set(here.disks)
        assert hostcounters.decode(hostcounters.encode(there)) == there
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize(
    "data", [b"", b"[]", b'{"t": 1}', b"not json", b'{"t":1,"cpu":[1],"mem_total":"x"}']
)
def test_hostload_counters_refuse_what_is_not_a_reading(data: bytes) -> None:
    with pytest.raises(ValueError, match="not a reading"):
        hostcounters.decode(data)


def test_hostload_counters_port_is_the_fio_port_plus_1000() -> None:
    assert hostcounters.counters_port(8765) == 9765
    assert hostcounters.counters_port(64535) == 65535
    assert hostcounters.counters_port(64536) is None


def test_hostload_sampler_reads_every_host_and_drops_one_it_cannot_reach() -> None:
    server = hostcounters.serve_in_thread("127.0.0.1", 0)
    got: list[HostSample] = []
    try:
        far = functools.partial(hostcounters.fetch, "127.0.0.1", server.server_address[1])
        gone = functools.partial(hostcounters.fetch, "127.0.0.1", _closed_port(), 0.5)
        sources = [("", hostload.read_counters), ("far", far), ("gone", gone)]
        with hostload.Sampler(100, got.extend, sources) as sampler:
            wait_until(
                "4 samples of each reachable host and the unreachable one's error",
                lambda: (
                    "gone" in sampler.errors
                    and all(len([s for s in got if s.host == h]) >= 4 for h in ("", "far"))
                ),
            )
    finally:
        server.shutdown()
        server.server_close()
    assert set(sampler.errors) == {"gone"} and "refused" in sampler.errors["gone"].lower()
    for host in ("", "far"):
        mine = [s for s in got if s.host == host]
        assert len(mine) >= 4, (host, len(mine))
        assert [s.seq for s in mine] == list(range(len(mine)))
        durations = sorted(s.dur_ms for s in mine[:-1])  # each about the 100 ms asked
        assert abs(durations[len(durations) // 2] - 100) < 90, durations
    assert not [s for s in got if s.host == "gone"]
