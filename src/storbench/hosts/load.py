"""What the machine running the load did in each interval of a point: CPU, memory, network
and disks, from the kernel's own counters (this machine's, and the remote hosts' through their
agents: storbench.hosts.counters).

A sample is the difference of two readings of ``/proc`` over the time between them
(monotonic clock), so every figure is a rate or a share of that interval:

- CPU (``/proc/stat``'s first line, proc(5), in USER_HZ ticks): ``user`` = user + nice,
  ``system`` = system + irq + softirq, ``iowait``, ``idle``, ``steal``, each as % of all ticks
  of the interval (guest time is counted inside user by the kernel, so it is not added);
- memory (``/proc/meminfo``): used = MemTotal - MemAvailable, bytes, at the interval's end;
- network (``/proc/net/dev``): received and sent bytes/s per interface;
- disks (``/proc/diskstats``, Documentation/admin-guide/iostats.rst): per device, I/Os
  completed/s (reads + writes), read and written bytes/s (sectors are 512 bytes whatever the
  device's own sector size), utilisation = time the device had I/O in flight (field 10,
  io_ticks, ms) as % of the interval, and queue = the weighted time in queue (field 11, ms)
  over the interval, which is iostat's ``aqu-sz`` (average queue size).

Only devices and interfaces that moved something in the interval are kept: a sample stays
small on a machine with dozens of idle loop devices. A counter that went down (a 32-bit
counter wrapped, a device or interface came back) leaves that device out of that one
interval rather than report a figure made of a guess.
"""

from __future__ import annotations

import _thread
import contextlib
import dataclasses
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from storbench.hosts.power import PowerMeter

SECTOR = 512
#: Samples written to the database at once (a crash loses at most these).
BATCH = 5


@dataclass
class Reading:
    """One look at the counters: at ``t`` (monotonic s)."""

    t: float
    cpu: list[int]  # user nice system idle iowait irq softirq steal
    mem_total: int  # bytes
    mem_available: int
    net: dict[str, tuple[int, int]]  # interface -> (rx bytes, tx bytes)
    disks: dict[str, tuple[int, ...]]  # device -> (reads, sectors read, writes, sectors
    #   written, io_ticks ms, weighted ms)


@dataclass
class HostSample:
    """What the host did in one interval of a point (rates over its length)."""

    seq: int
    t_ms: int  # the end of the interval, ms after the point's load began
    dur_ms: int
    cpu_user_pct: float
    cpu_system_pct: float
    cpu_iowait_pct: float
    cpu_idle_pct: float
    cpu_steal_pct: float
    mem_used_bytes: int
    mem_total_bytes: int
    net: dict[str, tuple[float, float]] = field(default_factory=dict)  # rx, tx bytes/s
    #: device -> (util %, queue, read bytes/s, write bytes/s, I/Os per s)
    disks: dict[str, tuple[float, float, float, float, float]] = field(default_factory=dict)
    host: str = ""  # '' for this machine
    #: this machine's power over the interval (W, storbench.hosts.power); None: no sensor
    watts: float | None = None

    @property
    def cpu_busy_pct(self) -> float:
        return self.cpu_user_pct + self.cpu_system_pct


def read_counters(root: Path = Path("/proc")) -> Reading:
    """The counters now (``root``: /proc, or a copy of its files)."""
    t = time.monotonic()
    cpu = [int(x) for x in (root / "stat").read_text().split("\n", 1)[0].split()[1:9]]
    mem: dict[str, int] = {}
    for line in (root / "meminfo").read_text().splitlines():
        key, _, rest = line.partition(":")
        if key in ("MemTotal", "MemAvailable"):
            mem[key] = int(rest.split()[0]) * 1024
    net = {}
    for line in (root / "net" / "dev").read_text().splitlines()[2:]:
        name, _, rest = line.partition(":")
        f = rest.split()
        if len(f) >= 9:
            net[name.strip()] = (int(f[0]), int(f[8]))
    disks = {}
    for line in (root / "diskstats").read_text().splitlines():
        f = line.split()
        if len(f) >= 14:
            disks[f[2]] = (int(f[3]), int(f[5]), int(f[7]), int(f[9]), int(f[12]), int(f[13]))
    return Reading(t, cpu, mem.get("MemTotal", 0), mem.get("MemAvailable", 0), net, disks)


def sample(a: Reading, b: Reading, seq: int, t_ms: int) -> HostSample:
    """What happened between readings ``a`` and ``b`` (module doc)."""
    secs = max(b.t - a.t, 1e-9)
    d = [y - x for x, y in zip(a.cpu, b.cpu, strict=True)]
    ticks = sum(d) or 1
    user, nice, system, idle, iowait, irq, softirq, steal = d

    def pct(n: int) -> float:
        return 100.0 * n / ticks

    net = {}
    for name, (rx, tx) in b.net.items():
        rx0, tx0 = a.net.get(name, (rx, tx))
        if rx < rx0 or tx < tx0:  # reset (the interface came back): nothing to tell
            continue
        if rx != rx0 or tx != tx0:
            net[name] = ((rx - rx0) / secs, (tx - tx0) / secs)
    disks = {}
    ms = secs * 1000
    for name, now in b.disks.items():
        was = a.disks.get(name, now)
        delta = [y - x for x, y in zip(was, now, strict=True)]
        if min(delta) < 0:  # a counter wrapped (32-bit io_ticks) or the device came back
            continue
        r, sr, w, sw, ticks_ms, weighted = delta
        if r or w or ticks_ms:
            disks[name] = (
                min(100.0, 100.0 * ticks_ms / ms),
                weighted / ms,
                sr * SECTOR / secs,
                sw * SECTOR / secs,
                (r + w) / secs,
            )
    return HostSample(
        seq=seq,
        t_ms=t_ms,
        dur_ms=round(secs * 1000),
        cpu_user_pct=pct(user + nice),
        cpu_system_pct=pct(system + irq + softirq),
        cpu_iowait_pct=pct(iowait),
        cpu_idle_pct=pct(idle),
        cpu_steal_pct=pct(steal),
        mem_used_bytes=b.mem_total - b.mem_available,
        mem_total_bytes=b.mem_total,
        net=net,
        disks=disks,
    )


#: A host to sample: its label ('' for this machine) and what reads its counters.
Source = tuple[str, Callable[[], Reading]]


class Sampler:
    """Samples hosts every ``interval_ms`` in a thread while a point's load runs -- this
    machine, or the ``sources`` given (the hosts of a point, through their agents:
    storbench.hosts.counters) -- handing each batch of samples to ``sink`` (the store);
    :meth:`__exit__` gives the rest and a last sample of the time since the one before
    (:meth:`stop` reads it at the load's end, :meth:`finish` gives it later). A host
    whose counters cannot be read is left out from then on, its reason in ``errors``; the
    samples of all hosts are on this machine's clock (``t_ms``), their rates on each host's
    own (the time between its two readings)."""

    def __init__(
        self,
        interval_ms: int,
        sink: Callable[[list[HostSample]], None],
        sources: list[Source] | None = None,
        power: PowerMeter | None = None,
    ) -> None:
        self.interval = interval_ms / 1000
        self.power = power  # this machine's ('' host's) watts per interval
        self.sink = sink
        self.sources = dict(sources or [("", read_counters)])
        self.done = threading.Event()
        #: held by whichever of the thread and :meth:`__exit__` reads and hands samples on
        self.lock = threading.Lock()
        self.batch: list[HostSample] = []  # read by the thread, not yet given to sink
        self.errors: dict[str, str] = {}  # host -> why it is not sampled
        self.last: dict[str, Reading] = {}
        self.seq: dict[str, int] = {}
        self.power_samples: list[HostSample] = []  # this machine's that have watts
        self.started = self.stopped = False
        #: what the last readings (:meth:`stop`) make, until :meth:`finish`
        self.ending: list[tuple[str, Reading, Reading, int, float | None]] = []

    def __enter__(self) -> Sampler:
        self.start()
        return self

    def start(self) -> None:
        """The first readings, and the thread that samples from then on; once (nothing
        after :meth:`stop`)."""
        if self.started or self.stopped:
            return
        self.started = True
        self.began = time.monotonic()
        if self.power is not None:
            self.power.read(self.began)
        for host in list(self.sources):
            now = self._read(host)
            if now is not None:
                self.last[host] = now
        # a bare thread: threading.Thread.start() waits until the new thread runs (4 ms
        # median on 2 busy cores), every point, just before the load starts
        _thread.start_new_thread(self._loop, ())

    def __exit__(self, *exc: object) -> None:
        """The last sample, read here and given to ``sink`` with what the thread had not
        given yet; the thread reads nothing more (it may still wake, and then it ends)."""
        self.stop()
        self.finish()

    def stop(self) -> None:
        """The last readings, taken now (the load's end); the thread reads nothing more.
        What they make, and what the thread had not given ``sink`` yet, :meth:`finish`
        gives it (bookkeeping, which may wait while the next point's load starts)."""
        with self.lock:
            if self.started and not self.stopped:
                self.ending = self._take()
            self.stopped = True
            self.done.set()  # last: the thread woken now has nothing to wait for

    def finish(self) -> None:
        """Hand ``sink`` what :meth:`stop` left (once)."""
        with self.lock:
            batch = self.batch + self._samples(self.ending)
            self.batch, self.ending = [], []
        if batch:
            with contextlib.suppress(Exception):  # the point goes on without them
                self.sink(batch)

    def _read(self, host: str) -> Reading | None:
        try:
            return self.sources[host]()
        except (OSError, ValueError) as e:  # unreadable: no samples of it, no failure
            self.errors.setdefault(host, str(e) or type(e).__name__)
            del self.sources[host]
            return None

    def _take(self) -> list[tuple[str, Reading, Reading, int, float | None]]:
        """Each host's counters now, with its reading before, the time (ms after the load
        began) and this machine's watts: what a sample is made of (:meth:`_samples`)."""
        out = []
        for host in list(self.sources):
            now = self._read(host)
            if now is None:
                continue
            was = self.last[host]
            self.last[host] = now
            if now.t - was.t < 0.05:  # not a sliver at the end
                continue
            t_ms = round((time.monotonic() - self.began) * 1000)
            watts = self.power.read(now.t) if self.power is not None and host == "" else None
            out.append((host, was, now, t_ms, watts))
        return out

    def _samples(
        self, taken: list[tuple[str, Reading, Reading, int, float | None]]
    ) -> list[HostSample]:
        out = []
        for host, was, now, t_ms, watts in taken:
            seq = self.seq.get(host, 0)
            out.append(dataclasses.replace(sample(was, now, seq, t_ms), host=host, watts=watts))
            if watts is not None:
                self.power_samples.append(out[-1])
            self.seq[host] = seq + 1
        return out

    def _tick(self) -> list[HostSample]:
        return self._samples(self._take())

    def _loop(self) -> None:
        while not self.done.wait(self.interval):
            with self.lock:
                if self.done.is_set():
                    return  # stop() took the last readings
                self.batch += self._tick()
                full = len(self.batch) >= BATCH * max(len(self.sources), 1)
                if self.batch and (full or not self.sources):
                    with contextlib.suppress(Exception):  # the point goes on without them
                        self.sink(self.batch)
                    self.batch = []
                if not self.sources:
                    return  # no host left to read


def summary(samples: list[HostSample]) -> dict[str, Any]:
    """Mean and max of the CPU shares, the busiest device's utilisation and the busiest
    interface's traffic over the samples (what a soak's or drill's report states)."""
    if not samples:
        return {}
    busy = [s.cpu_busy_pct for s in samples]
    io = [s.cpu_iowait_pct for s in samples]
    out: dict[str, Any] = {
        "cpu_busy_pct_mean": sum(busy) / len(busy),
        "cpu_busy_pct_max": max(busy),
        "cpu_iowait_pct_mean": sum(io) / len(io),
        "mem_used_bytes_max": max(s.mem_used_bytes for s in samples),
    }
    util: dict[str, list[float]] = {}
    net: dict[str, list[float]] = {}
    for s in samples:
        for dev, d in s.disks.items():
            util.setdefault(dev, []).append(d[0])
        for iface, (rx, tx) in s.net.items():
            net.setdefault(iface, []).append(rx + tx)
    if util:
        dev = max(util, key=lambda k: sum(util[k]))
        out.update(disk=dev, disk_util_pct_mean=sum(util[dev]) / len(samples))
        out["disk_util_pct_max"] = max(util[dev])
    if net:
        iface = max(net, key=lambda k: sum(net[k]))
        out.update(net=iface, net_bytes_per_s_mean=sum(net[iface]) / len(samples))
    watts = watts_mean(samples)
    if watts is not None:
        out["watts_mean"] = watts
    return out


def watts_mean(samples: list[HostSample]) -> float | None:
    """The mean power over the samples that have it, weighted by their length (W), or None
    when none has (no sensor: never a zero)."""
    pairs = [(s.watts, s.dur_ms) for s in samples if s.watts is not None and s.dur_ms > 0]
    span = sum(d for _, d in pairs)
    return sum(w * d for w, d in pairs) / span if span else None
