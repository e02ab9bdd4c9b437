"""Which hosts are sampled while a point's load runs (storbench.hosts.load) and what the run
records of a host that could not be: this machine always; each remote host of the point
(``hosts:``) through its agent's counters (storbench.hosts.counters), when it has an agent.
And what the point's measurement keeps of this machine's power (storbench.hosts.power) and
of each host's CPU (how busy it was: the findings' ``client-cpu-bound``)."""

from __future__ import annotations

import functools
from collections.abc import Callable

from storbench.engines.base import PointResult, RunEvents
from storbench.hosts import power
from storbench.hosts.counters import counters_port, fetch
from storbench.hosts.load import HostSample, Source, read_counters, watts_mean
from storbench.plan import Point


def sample_sources(point: Point) -> list[Source]:
    """The hosts sampled while a point's load runs: this machine, and each remote host of
    the point through its agent's counters (storbench.hosts.counters)."""
    sources: list[Source] = [("", read_counters)]
    for h in point.hosts:
        port = counters_port(h.port)
        if not h.local and port is not None and h.label not in dict(sources):
            sources.append((h.label, functools.partial(fetch, h.address, port)))
    return sources


def note_unsampled(events: RunEvents, point: Point, errors: dict[str, str]) -> None:
    """An event, once per host and run, for a host whose counters could not be read."""
    if not errors:
        return  # every host sampled: nothing to look up in the run's events
    told = {e.get("host") for e in events.of("host-samples")}
    for host, why in errors.items():
        if host in told:
            continue
        h = next((h for h in point.hosts if h.label == host), None)
        where = f"{h.address}:{counters_port(h.port)}" if h is not None else "this machine"
        fix = " (start `storbench agent` there)" if h is not None else ""
        events.add(
            "host-samples",
            f"host {host or 'this machine'}: no utilisation samples: nothing readable "
            f"at {where}{fix}: {why}",
            {"host": host, "point": point.index, "where": where, "error": why},
        )


def note_power(result: PointResult, samples: list[HostSample]) -> None:
    """This machine's mean power over the point's load (its samples with watts, ramp
    included) in the measurement's ``power``: the sensor, the watts and how many samples;
    nothing where no sensor answered (never a zero). IOPS per watt is the point's IOPS over
    it (presenters divide)."""
    meas = result.measurement
    watts = watts_mean(samples)
    if meas is None or meas.status != "ok" or watts is None or watts <= 0:
        return
    meas.extra["power"] = {
        "source": power.source().kind,
        "watts_mean": round(watts, 2),
        "samples": len(samples),
    }


class CpuTally:
    """Each host's CPU busy shares (user + system, % of all its CPUs) as a point's samples
    pass on to ``sink`` (the store)."""

    def __init__(self, sink: Callable[[list[HostSample]], None]) -> None:
        self.sink = sink
        self.busy: dict[str, list[float]] = {}

    def __call__(self, samples: list[HostSample]) -> None:
        for s in samples:
            self.busy.setdefault(s.host, []).append(s.cpu_busy_pct)
        self.sink(samples)


def note_host_cpu(result: PointResult, tally: CpuTally) -> None:
    """Each sampled host's mean CPU busy share over the point's load in the measurement's
    ``host_cpu`` ({host: {busy_pct_mean, samples}}; "" is this machine)."""
    meas = result.measurement
    if meas is None or not tally.busy:
        return
    meas.extra["host_cpu"] = {
        host: {"busy_pct_mean": round(sum(b) / len(b), 1), "samples": len(b)}
        for host, b in tally.busy.items()
        if b
    }
