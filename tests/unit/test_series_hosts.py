"""Each host's time series in a point on several hosts (engines/fio/hosts.py,
read_hosts_output), on real fio client/server outputs recorded by
tests/data/fio/record-hosts.sh; expected values read here from each host's entries."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from storbench.engines.fio.hosts import read_hosts_output
from storbench.model.series import Interval, measured
from storbench.plan import PointHost, Target

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the harness modules
from recorded import client_entries

DATA = Path(__file__).resolve().parents[1] / "data" / "fio"


def entries(name: str) -> dict[int, list[dict[str, Any]]]:
    """Each server's (by port) entries of the client output, in order."""
    return client_entries(name)


def hosts_intervals(text: str, hs: list[PointHost]) -> list[Interval]:
    """The hosts' series storbench reads from a client output (reports every 500 ms)."""
    return read_hosts_output(text, "", 0, hs, interval_ms=500)[2]


def hosts(n: int) -> list[PointHost]:
    return [
        PointHost(f"host{i}", "127.0.0.1", 18769 + i, Target("file", f"/t{i}"))
        for i in range(1, n + 1)
    ]


@pytest.mark.parametrize(
    ("name", "n"), [("hosts3-status-jsonplus", 3), ("hosts2-ramp-jsonplus", 2)]
)
def test_series_hosts_each_hosts_intervals_sum_to_its_final_entry(name: str, n: int) -> None:
    text = (DATA / f"{name}.stdout").read_text()
    got = hosts_intervals(text, hosts(n))
    by_port = entries(name)
    for h in hosts(n):
        mine = [i for i in got if i.host == h.label and i.direction == "read"]
        final = by_port[h.port][-1]["read"]
        assert sum(i.ios for i in measured(mine)) == final["total_ios"] > 0
        assert sum(i.bytes for i in measured(mine)) == final["io_bytes"]
        assert sum(i.dur_ms for i in measured(mine)) == final["runtime"]
        assert [i.seq for i in mine] == list(range(len(mine)))
        assert all(i.p99_ns is not None for i in measured(mine))
        if "ramp" in name:
            assert any(i.ramp for i in mine)


def test_series_hosts_a_host_that_went_away_keeps_its_series_to_its_last_report() -> None:
    name = "hosts3-killed-jsonplus"
    got = hosts_intervals((DATA / f"{name}.stdout").read_text(), hosts(3))
    by_port = entries(name)
    lengths = {h.label: len(by_port[h.port]) for h in hosts(3)}
    dead = min(lengths, key=lambda k: lengths[k])
    assert lengths[dead] < max(lengths.values())
    mine = [i for i in got if i.host == dead]
    assert mine and max(i.t_ms for i in mine) < max(i.t_ms for i in got)


@pytest.mark.parametrize(
    ("name", "n"), [("hosts3-status-jsonplus", 3), ("hosts2-ramp-jsonplus", 2)]
)
def test_series_hosts_the_points_own_series_merges_its_hosts(name: str, n: int) -> None:
    """The point's own series (host ''): per interval, the hosts' I/Os summed and the p99 of
    their summed histograms; over the run, the sum of every host's final entry."""
    from storbench.model.metrics import percentiles_from_bins

    text = (DATA / f"{name}.stdout").read_text()
    got = hosts_intervals(text, hosts(n))
    own = [i for i in got if i.host == "" and i.direction == "read"]
    assert own and [i.seq for i in own] == list(range(len(own)))
    by_port = entries(name)
    finals = [by_port[h.port][-1]["read"] for h in hosts(n)]
    assert sum(i.ios for i in measured(own)) == sum(f["total_ios"] for f in finals)
    assert sum(i.bytes for i in measured(own)) == sum(f["io_bytes"] for f in finals)
    # the second measured interval again, from the hosts' reports alone
    reports = [by_port[h.port] for h in hosts(n)]
    k = next(j for j, i in enumerate(own) if not i.ramp) + 1  # its report, 0-based

    def summed(j: int) -> dict[int, int]:
        out: dict[int, int] = {}
        for r in reports:
            for v, c in r[min(j, len(r) - 1)]["read"]["clat_ns"].get("bins", {}).items():
                out[int(v)] = out.get(int(v), 0) + int(c)
        return out

    now, before = summed(k), summed(k - 1)
    diff = {v: c - before.get(v, 0) for v, c in now.items() if c - before.get(v, 0) > 0}
    want = percentiles_from_bins(diff, (99.0,))["99"]
    assert own[k].p99_ns == want
    ios = sum(
        r[min(k, len(r) - 1)]["read"]["total_ios"] - r[k - 1]["read"]["total_ios"] for r in reports
    )
    assert own[k].ios == ios
