"""The checks every measurement gets after it runs, whatever its engine: whether the client's
CPU set the number (``client-cpu-bound``: a job's own CPU time) or had no CPU to spare
(``host-busy``: its host's CPUs busy while it ran), whether the network between the client
and the storage set it (``network-bound``: its bytes/s against what that network carries),
whether it did enough I/Os for the latency percentiles it shows (``short-run``), and
whether its time series is steady enough for its mean to stand for it (``unsteady``). The
engines check what only they know (fio: the page cache, holes read, compressible buffers, a
queue a synchronous engine ignores, a point that ended before its runtime:
engines/fio/findings.py); :func:`findings` puts both together, in the order of
:data:`storbench.model.findings.CODES`.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from storbench.analysis.soak import ticks
from storbench.hosts.netbaseline import fmt_bits
from storbench.model.findings import CODES, Finding, NetworkPath
from storbench.model.metrics import Measurement
from storbench.model.series import Interval
from storbench.model.units import UnitError, fmt_rate, parse_size

#: A job that used this share of one CPU (usr + sys, %) or more was held back by its CPU.
CPU_BOUND_PCT = 90.0
#: Fewer I/Os than this leave fewer than 10 above the p99 (its estimate rests on them).
ENOUGH_IOS = 1000


def cpu_bound(meas: Measurement) -> list[Finding]:
    """``client-cpu-bound``: a job (the mean of a host's jobs, weighted by their runtime:
    fio's ``usr_cpu`` and ``sys_cpu`` are percent of one CPU) at 90 % of a CPU or more."""
    hosts = meas.hosts.items() if meas.hosts else [("", meas)]
    out = []
    for host, m in hosts:
        if m.usr_cpu is None or m.sys_cpu is None:
            continue
        used = m.usr_cpu + m.sys_cpu
        if used < CPU_BOUND_PCT:
            continue
        where = f"on {host} " if host else ""
        out.append(
            Finding(
                "client-cpu-bound",
                f"each job {where}used {used:.0f} % of a CPU (usr {m.usr_cpu:.0f} %, sys "
                f"{m.sys_cpu:.0f} %): the client's CPU, not the storage, set this number",
                CODES["client-cpu-bound"].fix,
                {"usr_cpu_pct": round(m.usr_cpu, 2), "sys_cpu_pct": round(m.sys_cpu, 2)},
                host=host,
            )
        )
    return out


#: A rate-capped point that reached this share of the rate it asked for was set by its cap.
RATE_MET = 0.95


def held_to_its_rate(meas: Measurement, params: Mapping[str, Any]) -> bool:
    """Whether the point capped its own rate (fio ``rate_iops``, ``rate``: per job, per
    direction as ``read,write,trim``) and reached it: the cap, not the client's CPU, set
    its number, whatever CPU time fio reports (on a busy machine the kernel's sampled CPU
    accounting charges a job that wakes 2,000 times a second up to 95 % of a CPU: measured
    with `rate_iops: 2000` beside two busy loops)."""
    jobs = _whole(params.get("numjobs", 1)) * max(1, len(meas.hosts or {}))
    for key, achieved in (("rate_iops", "iops"), ("rate", "bw_bytes")):
        if params.get(key) in (None, "", 0, "0"):
            continue
        try:
            caps = [parse_size(v) if v.strip() else 0 for v in str(params[key]).split(",")]
        except UnitError:
            return False
        asked = got = 0.0
        for n, name in enumerate(("read", "write", "trim")):
            d = meas.direction(name)
            cap = caps[n] if n < len(caps) else caps[-1]
            if d is None or cap <= 0:
                continue
            asked += cap * jobs
            got += getattr(d, achieved)
        return asked > 0 and got >= RATE_MET * asked
    return False


def _whole(value: object) -> int:
    try:
        return max(1, int(str(value)))
    except ValueError:
        return 1


#: A point whose bytes/s reach this share of what the network carries was held back by it.
NETWORK_BOUND_SHARE = 0.9
#: Above this share the data did not all cross the network (a cache answered some of it):
#: the network did not set the number.
NETWORK_MOST_SHARE = 1.25


def _capacity_words(path: NetworkPath, toward_client: bool) -> str:
    bits = path.to_client_bits_per_s if toward_client else path.from_client_bits_per_s
    if path.source == "controller":
        way = "from the controller to " if toward_client else "from "
        back = "" if toward_client else " to the controller"
        return f"the {fmt_bits(bits)} iperf3 measured {way}{path.endpoint}{back} at the run's start"
    if path.source == "iperf3":
        way = "toward this client from " if toward_client else "from this client toward "
        return f"the {fmt_bits(bits)} iperf3 measured {way}{path.endpoint} at the run's start"
    return f"the {fmt_bits(bits)} link speed of {path.device}, the interface toward {path.endpoint}"


def network_bound(
    meas: Measurement, path: NetworkPath | None, hosts: Mapping[str, NetworkPath] | None = None
) -> list[Finding]:
    """``network-bound``: reads moving 90 % or more of what the network carries toward
    this client, or writes of what it carries away from it (full duplex: each direction
    against its own figure), on the network ``path`` between this machine and the point's
    storage (hosts/netpath.py; None: no network, or not known); on ``hosts:``, each host's
    own figures against its network (``hosts``, by label: netpath.host_capacities)."""
    if meas.hosts:
        return [
            found
            for label, m in meas.hosts.items()
            if label in (hosts or {})
            for found in _network_bound(m, (hosts or {})[label], label)
        ]
    return _network_bound(meas, path, "") if path is not None else []


def _network_bound(meas: Measurement, path: NetworkPath, host: str) -> list[Finding]:
    said, data = [], {}
    for name, toward in (("read", True), ("write", False)):
        d = meas.direction(name)
        capacity = path.to_client_bits_per_s if toward else path.from_client_bits_per_s
        if d is None or capacity <= 0:
            continue
        bits = d.bw_bytes * 8
        share = bits / capacity
        if not NETWORK_BOUND_SHARE <= share <= NETWORK_MOST_SHARE:
            continue
        moved = f"{fmt_rate(d.bw_bytes)} MiB/s = {fmt_bits(bits)}"
        said.append(
            f"{name}s moved {moved}, {share * 100:.0f} % of " + _capacity_words(path, toward)
        )
        data |= {
            f"{name}_bits_per_s": round(bits),
            f"{name}_capacity_bits_per_s": round(capacity),
            f"{name}_share_pct": round(share * 100, 1),
        }
    if not said:
        return []
    what = f" ({path.what}; {path.note})" if path.note else f" ({path.what})" if path.what else ""
    return [
        Finding(
            "network-bound",
            "; ".join(said) + f"{what}: the network, not the storage, set this number",
            CODES["network-bound"].fix,
            {**data, "endpoint": path.endpoint, "address": path.address, "source": path.source}
            | ({"device": path.device} if path.device else {}),
            host=host,
        )
    ]


def host_busy(meas: Measurement) -> list[Finding]:
    """``host-busy``: a host whose CPUs were 90 % busy or more (user + system, mean over
    the point's samples: the measurement's ``host_cpu``). Only a warning: an I/O-bound job
    beside a busy compiler still measured the storage; a job that is itself held back by
    its CPU is ``client-cpu-bound`` (its own CPU time says so)."""
    out = []
    for host, cpu in (meas.extra.get("host_cpu") or {}).items():
        busy = float(cpu.get("busy_pct_mean", 0.0))
        if busy < CPU_BOUND_PCT:
            continue
        where = host or "this host"
        out.append(
            Finding(
                "host-busy",
                f"the CPUs of {where} were {busy:.0f} % busy during the point (user + system, "
                f"mean of {cpu.get('samples')} samples): its jobs may have waited for a CPU",
                CODES["host-busy"].fix,
                {"host_cpu_busy_pct": busy},
                host=host,
            )
        )
    return out


def too_few_ios(meas: Measurement) -> list[Finding]:
    """``short-run``: a measurement with latency percentiles from fewer than 1,000 I/Os."""
    dirs = [d for d in meas.directions.values() if d.active]
    with_pct = [d for d in dirs if d.latency is not None and d.latency.percentiles]
    ios = sum(d.total_ios for d in dirs)
    if not with_pct or ios == 0 or ios >= ENOUGH_IOS:
        return []
    above = ios // 100
    return [
        Finding(
            "short-run",
            f"{ios:,} I/Os: its p99 rests on the {above} slowest of them"
            if above
            else f"{ios:,} I/Os: too few for a p99 (fewer than 100)",
            CODES["short-run"].fix,
            {"ios": ios},
        )
    ]


#: A series this long (measured intervals) or longer is judged for steadiness.
STEADY_MIN_INTERVALS = 5
#: IOPS per interval varying more than this (coefficient of variation, %) ...
UNSTEADY_CV_PCT = 25.0
#: ... or moving more than this over the measured time (least-squares line, % of the mean)
UNSTEADY_TREND_PCT = 20.0


def unsteady(intervals: Sequence[Interval]) -> list[Finding]:
    """``unsteady``: a point's IOPS per interval (its measured intervals, every direction
    together) that vary or drift so much that their mean is a poor summary of them."""
    ts = ticks(intervals)
    if len(ts) < STEADY_MIN_INTERVALS:
        return []
    iops = [t.iops for t in ts]
    mean = statistics.fmean(iops)
    if mean <= 0:
        return []
    cv = statistics.stdev(iops) / mean * 100
    secs = [t.t_s for t in ts]
    span = ts[-1].t_s - (ts[0].t_s - ts[0].dur_s)
    slope = statistics.linear_regression(secs, iops).slope if len(set(iops)) > 1 else 0.0
    trend = slope * span / mean * 100
    if cv <= UNSTEADY_CV_PCT and abs(trend) <= UNSTEADY_TREND_PCT:
        return []
    return [
        Finding(
            "unsteady",
            f"IOPS per interval vary by {cv:.0f} % (coefficient of variation of {len(ts)} "
            f"intervals) and move {trend:+.0f} % over the {span:.0f} s measured: the mean is "
            "a poor summary of them",
            CODES["unsteady"].fix,
            {"iops_cv_pct": round(cv, 1), "iops_trend_pct": round(trend, 1), "intervals": len(ts)},
        )
    ]


#: fio ioengines that do no I/O (the point measures the client itself: its CPU is the
#: figure, not a trap)
NO_STORAGE = ("null", "cpuio")


def findings(
    meas: Measurement,
    engine_findings: Iterable[Finding] = (),
    intervals: Sequence[Interval] = (),
    params: Mapping[str, Any] | None = None,
    network: NetworkPath | None = None,
    host_networks: Mapping[str, NetworkPath] | None = None,
) -> list[Finding]:
    """A measurement's findings: the engine's and the common checks' (``intervals``: its
    point's time series, every host's; ``params``: its options; ``network``: the network
    between this machine and its storage; ``host_networks``: on ``hosts:``, each host's),
    in CODES' order (a failed measurement has none:
    its error says what went wrong)."""
    if meas.status == "failed":
        return []
    cpu: list[Finding] = []
    if str((params or {}).get("ioengine", "")).strip() not in NO_STORAGE:
        bound = [] if held_to_its_rate(meas, params or {}) else cpu_bound(meas)
        cpu = [*bound, *network_bound(meas, network, host_networks)]
        jobs = {f.host for f in cpu if f.code == "client-cpu-bound"}  # its own figures first
        cpu += [f for f in host_busy(meas) if f.host not in jobs]
    # a point run in steady-state rounds has its own verdict on its series (analysis/steady)
    series = [] if "steady_state" in meas.extra else unsteady(intervals)
    found = [*engine_findings, *cpu, *too_few_ios(meas), *series]
    order = {code: n for n, code in enumerate(CODES)}
    return sorted(found, key=lambda f: order.get(f.code, len(order)))
