"""The live many-host path's own reading (engines/fio/livehosts.py) against the one fio's
client output gets (hosts.py, intervals.py), on the real client/server outputs recorded by
tests/data/fio/record-hosts.sh; and the run service's refusals (runservice.py)."""

from __future__ import annotations

import json
import socket
import sys
from array import array
from pathlib import Path
from typing import Any

import pytest

from storbench.engines.fio import runservice
from storbench.engines.fio.hosts import _ios, host_series
from storbench.engines.fio.intervals import merged_intervals, runtime_ms
from storbench.engines.fio.livehosts import _Host, _Merged
from storbench.model.metrics import DIRECTIONS
from storbench.model.series import Interval
from storbench.plan import PointHost, Target

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the harness modules
from recorded import client_entries


def entries(name: str) -> list[list[dict[str, Any]]]:
    """Each server's entries of a recorded client output, in order (reports, then final)."""
    return [es for _, es in sorted(client_entries(name).items())]


def _final_t(es: list[dict[str, Any]], interval: int) -> int:
    before = runtime_ms(es[-2]) if len(es) > 1 else 0
    return (len(es) - 1) * interval + max(runtime_ms(es[-1]) - before, 0)


@pytest.mark.parametrize("name", ["hosts2-ramp-jsonplus", "hosts2-lowoverlap-jsonplus"])
def test_hosts_live_merged_series_as_the_clients_read_as_they_come(name: str) -> None:
    """The point's own series, read one document at a time as hosts send them (in any
    interleaving), is the one read from the whole client output."""
    hosts = entries(name)
    want = merged_intervals(hosts, 500)
    got: list[Interval] = []
    merged = _Merged([f"h{i}" for i in range(len(hosts))], 500, got.extend)
    # the first host runs ahead of the second by two reports, then the second catches up
    order = [(i, k) for k in range(max(map(len, hosts))) for i in range(len(hosts))]
    order.sort(key=lambda ik: ik[1] + (2 if ik[0] else 0))
    for i, k in order:
        es = hosts[i]
        if k < len(es):
            t = (k + 1) * 500 if k < len(es) - 1 else _final_t(es, 500)
            merged.add(f"h{i}", es[k], t)
            if k == len(es) - 1:
                merged.end(f"h{i}")
    merged.stream.close()
    stored: dict[tuple[str, int], Interval] = {}  # as the store's upsert keeps them
    for iv in got:
        stored[(iv.direction, iv.seq)] = iv
    assert list(stored.values()) == want and len(want) >= 4


@pytest.mark.parametrize("name", ["hosts2-ramp-jsonplus", "hosts2-lowoverlap-jsonplus"])
def test_hosts_live_seven_numbers_per_report_time_the_window_as_whole_reports(name: str) -> None:
    """What a live host keeps per report (runtime, I/Os and bytes per direction) gives the
    timing of the hosts' common window that the whole entries give."""
    for es in entries(name):
        h = _Host(PointHost("h", "127.0.0.1", 1, Target("file", "/t")), None, None)  # type: ignore[arg-type]
        for e in es:
            h.knots.append(runtime_ms(e))
            for d in DIRECTIONS:
                h.knots.extend(_ios(e, d))
            h.last = e
        kept = h.entries()
        assert len(h.knots) == len(es) * (1 + 2 * len(DIRECTIONS))
        assert isinstance(h.knots, array) and kept[-1] is es[-1]
        assert host_series(kept[:-1], kept[-1], 500) == host_series(es[:-1], es[-1], 500)
        assert host_series(es[:-1], es[-1], 500)[0] is not None


def _ask(port: int, line: bytes) -> dict[str, Any]:
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(line)
        return json.loads(s.makefile("rb").readline())


@pytest.mark.parametrize(
    ("line", "says"),
    [
        (b"hello\n", "not a run request"),
        (b'{"job": "[x]\\n", "interval_ms": "500"}\n', "not a run request"),
        (b'{"job": 1, "interval_ms": 500}\n', "not a run request"),
        (b'{"job": "[x]\\n", "interval_ms": 5}\n', "outside 10 ms"),
        (b'{"job": "[x]\\n", "interval_ms": 500, "readonly": "no"}\n', "not a run request"),
        (b'{"interval_ms": 500}\n', "not a run request"),
    ],
)
def test_hosts_live_run_service_refuses_what_is_no_run_request(line: bytes, says: str) -> None:
    server = runservice.serve_in_thread("127.0.0.1", 0)
    try:
        answer = _ask(server.server_address[1], line)
    finally:
        server.shutdown()
        server.server_close()
    assert says in answer["error"] and set(answer) == {"error"}


def test_hosts_live_run_service_port_is_the_fio_port_plus_3000() -> None:
    assert runservice.runs_port(8765) == 11765
    assert runservice.runs_port(62536) is None
    assert runservice.fio_command("/p.fio", 500, True)[1:] == [
        "--output-format=json+",
        "--status-interval=500ms",
        "--readonly",
        "/p.fio",
    ]
