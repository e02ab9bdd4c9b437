"""The checks every measurement gets after it runs, whatever its engine: whether the client's
CPU set the number (``client-cpu-bound``: a job's own CPU time, or its host's CPUs busy
while it ran) and whether it did enough I/Os for the latency
percentiles it shows (``short-run``). The engines check what only they know (fio: buffered
I/O over data that fits in memory, a queue a synchronous engine ignores, a point that ended
before its runtime: engines/fio/findings.py); :func:`findings` puts both together, in the
order of :data:`storbench.model.findings.CODES`.
"""

from __future__ import annotations

from collections.abc import Iterable

from storbench.model.findings import CODES, Finding
from storbench.model.metrics import Measurement

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


def host_busy(meas: Measurement) -> list[Finding]:
    """``client-cpu-bound``: a host whose CPUs were 90 % busy or more (user + system, mean
    over the point's samples: the measurement's ``host_cpu``): its jobs waited for a CPU,
    whoever kept it busy."""
    out = []
    for host, cpu in (meas.extra.get("host_cpu") or {}).items():
        busy = float(cpu.get("busy_pct_mean", 0.0))
        if busy < CPU_BOUND_PCT:
            continue
        where = host or "this host"
        out.append(
            Finding(
                "client-cpu-bound",
                f"the CPUs of {where} were {busy:.0f} % busy during the point (user + system, "
                f"mean of {cpu.get('samples')} samples): its jobs waited for a CPU, so the "
                "client may have set this number",
                CODES["client-cpu-bound"].fix + "; or find what else keeps the host busy",
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


def findings(meas: Measurement, engine_findings: Iterable[Finding] = ()) -> list[Finding]:
    """A measurement's findings: the engine's and the common checks', in CODES' order (a
    failed measurement has none: its error says what went wrong)."""
    if meas.status == "failed":
        return []
    cpu = cpu_bound(meas)
    jobs = {f.host for f in cpu}  # a host said of once: its jobs' own figures first
    cpu += [f for f in host_busy(meas) if f.host not in jobs]
    found = [*engine_findings, *cpu, *too_few_ios(meas)]
    order = {code: n for n, code in enumerate(CODES)}
    return sorted(found, key=lambda f: order.get(f.code, len(order)))
