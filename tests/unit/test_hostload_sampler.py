"""The host sampler's start and end around a point's load (storbench.hosts.load.Sampler,
issue 26's gap between two points): it may start as the engine's process starts
(engines.process.when_started, before the bookkeeping waiting there), takes its last
readings the moment the load ends (stop) and hands the last sample to the store later
(finish), with the same figures as reading and sampling at once. Counters are the recorded
/proc copies of tests/data/proc."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from storbench.engines import process
from storbench.hosts import load as hostload
from storbench.hosts.load import HostSample, Reading

PROC = Path(__file__).resolve().parents[1] / "data" / "proc"


class _Counters:
    """The recorded readings a, then b, 1.5 s apart on the monotonic clock."""

    def __init__(self) -> None:
        a, b = hostload.read_counters(PROC / "a"), hostload.read_counters(PROC / "b")
        self.readings = [dataclasses.replace(a, t=100.0), dataclasses.replace(b, t=101.5)]
        self.reads = 0

    def __call__(self) -> Reading:
        self.reads += 1
        return self.readings[min(self.reads, 2) - 1]


def _sampler(counters: _Counters) -> tuple[hostload.Sampler, list[list[HostSample]]]:
    given: list[list[HostSample]] = []
    return hostload.Sampler(60_000, given.append, [("", counters)]), given


def test_hostload_sampler_reads_at_stop_and_gives_at_finish() -> None:
    counters = _Counters()
    sampler, given = _sampler(counters)
    sampler.start()
    assert counters.reads == 1  # the first reading, at the start
    sampler.stop()
    assert counters.reads == 2  # the last, at the load's end
    assert given == []  # nothing written yet: that waits for finish
    sampler.finish()
    sampler.finish()  # once
    assert len(given) == 1 and len(given[0]) == 1
    want = hostload.sample(*counters.readings, seq=0, t_ms=given[0][0].t_ms)
    assert given[0][0] == want  # what reading and sampling at once gave
    assert counters.reads == 2


def test_hostload_sampler_as_a_context_reads_and_gives_at_exit() -> None:
    counters = _Counters()
    sampler, given = _sampler(counters)
    with sampler:
        assert counters.reads == 1
    assert counters.reads == 2 and len(given) == 1 and given[0][0].cpu_busy_pct > 0


def test_hostload_sampler_not_started_before_its_stop_never_starts() -> None:
    """A sampler waiting for an engine process that never started (the point failed before
    it): stopped, it reads nothing, then or later."""
    counters = _Counters()
    sampler, given = _sampler(counters)
    sampler.stop()
    sampler.start()  # a start hook that comes after all
    sampler.finish()
    assert counters.reads == 0 and given == []


def test_hostload_sampler_starts_with_the_process_before_what_waited() -> None:
    said: list[str] = []
    counters = _Counters()
    sampler, _ = _sampler(counters)
    process.when_started(lambda: said.append("the point before recorded"))
    process.when_started(lambda: said.append(f"sampler reads {counters.reads}"), first=True)
    process.when_started(sampler.start, first=True)
    assert counters.reads == 0  # not before the engine's process starts
    process.started()
    assert said == ["sampler reads 1", "the point before recorded"]
    sampler.stop()
    sampler.finish()
