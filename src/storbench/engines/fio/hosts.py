"""fio's client/server mode: the command for several hosts, what each host's server printed, and
one measurement over the window in which all hosts ran.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from storbench.engines.fio.check import DocumentError, check_document
from storbench.engines.fio.intervals import host_intervals, merged_intervals, runtime_ms
from storbench.engines.fio.jobfile import ceph_env, host_job_file, job_file
from storbench.engines.fio.parse import _aggregate_jobs, _combine, _error_message, split_documents
from storbench.engines.fio.spawn import FioRun, _run_fio, read_only
from storbench.engines.fio.tool import FIO, fio_path, fio_version
from storbench.engines.fio.watchdog import Watchdog, bound_s
from storbench.model.metrics import (
    DIRECTIONS,
    HostSeries,
    Measurement,
    overlap,
    window_totals,
)
from storbench.model.series import Interval
from storbench.plan import (
    Point,
    PointHost,
)


@dataclass
class HostContext:
    """What the runner knows about the hosts of a run: where the ``local`` host's private
    fio server and run service listen, the hosts without a run service, and each host's
    own name (fio prefixes the servers' messages with
    it: ``<vm01> fio: ...``)."""

    local_port: int | None = None
    names: dict[str, str] = field(default_factory=dict)  # host label -> server host name
    #: where the ``local`` host's run service listens (livehosts.py)
    runs_port: int | None = None
    #: the hosts whose run service could not be reached: their points go through fio's
    #: client (livehosts.py)
    no_runs: set[str] = field(default_factory=set)


#: The most status reports storbench lets fio's client hold for one point, all hosts
#: together: the client keeps every host's reports in memory and prints them only when the
#: point ends (fio's client.c gathers its JSON output until then), about 10 KB each.
MAX_REPORTS = 4000


def status_interval_ms(point: Point) -> int:
    """How often each host reports during a point: at the point's ``interval:`` while its
    hosts' reports stay within :data:`MAX_REPORTS`; for a longer point, evenly spread over
    its planned duration (whole 100 ms). The point's interval when its duration is unknown."""
    est = point.est_seconds
    want = point.interval_ms
    if est is None:
        return want
    per_host = MAX_REPORTS // max(len(point.hosts), 1)
    spread = -(-est * 1000 // per_host)  # ceil: the reports of one host fit in per_host
    return int(max(want, -(-spread // 100) * 100))


def client_address(h: PointHost, local_port: int | None) -> tuple[str, int]:
    """The address fio's client connects to for host ``h``."""
    if h.local:
        if local_port is None:
            raise ValueError("the local host's fio server is not running")
        return "127.0.0.1", local_port
    return h.address, h.port


def hosts_command(
    job_paths: list[str],
    addresses: list[tuple[str, int]],
    interval_ms: int,
    read_only: list[bool] | None = None,
) -> list[str]:
    """fio's client command line. ``--status-interval`` (and ``--readonly`` for the hosts in
    ``read_only``) follows each job file: fio sends the options after a ``--client`` to that
    server, while one before the first ``--client`` stays with the local client process (and
    no server sees it)."""
    cmd = [fio_path() or FIO, "--output-format=json+"]
    ro = read_only or [False] * len(job_paths)
    for (addr, port), path, r in zip(addresses, job_paths, ro, strict=True):
        cmd += [f"--client={addr},{port}", path, f"--status-interval={interval_ms}ms"]
        cmd += ["--readonly"] if r else []
    return cmd


def run_hosts_point(
    point: Point,
    workdir: str,
    *,
    run_id: int | None = None,
    total: int | None = None,
    should_stop: Callable[[], bool] = lambda: False,
    context: HostContext | None = None,
    on_intervals: Callable[[list[Interval]], None] | None = None,
    tag: str | None = None,
) -> FioRun:
    """Run one point on all its hosts at once (one fio client process) and aggregate; each
    host's time series goes to ``on_intervals`` when the point ends (fio's client prints
    the hosts' reports in one document at the end)."""
    ctx = context or HostContext()
    paths = []
    for i in range(len(point.hosts)):
        path = os.path.join(workdir, f"point-{point.index:05d}.host{i + 1}.fio")
        with open(path, "w") as f:
            f.write(host_job_file(point, i, run_id=run_id, total=total, tag=tag))
        paths.append(path)
    addresses = [client_address(h, ctx.local_port) for h in point.hosts]
    interval = status_interval_ms(point)
    cmd = hosts_command(
        paths, addresses, interval, [read_only(point, h.target) for h in point.hosts]
    )
    stem = os.path.join(workdir, f"point-{point.index:05d}")
    # fio's client expands ${VAR} of the job files before it sends them: an s3 target's keys
    # go from this environment to the servers (in fio's protocol; never into a file)
    s3 = [h.target for h in point.hosts if h.target.kind == "s3"]
    env = ceph_env(s3) if s3 else None
    # fio's client shows no progress until the point ends: an s3 point is bounded by the
    # time its whole load may take from its start (watchdog.bound_s)
    endpoints = ", ".join(dict.fromkeys(str(t.endpoint) for t in s3))
    where = f"the S3 service at {endpoints}"
    watch = Watchdog(bound_s(point.params), where) if s3 else None
    # should storbench be killed, fio's client is interrupted, not killed: it then tells
    # every host's server to stop the job (a killed client's jobs run on to their end)
    rc, interrupted, started, ended, raw, stderr = _run_fio(
        cmd, workdir, stem, should_stop, env=env, stalled=watch, death="INT"
    )
    meas, warnings, intervals = read_hosts_output(
        raw,
        stderr,
        rc,
        point.hosts,
        interval_ms=interval,
        local_port=ctx.local_port,
        names=ctx.names,
    )
    meas.engine_version = meas.engine_version or fio_version()
    if watch is not None and watch.fired:
        meas.status, meas.error = "failed", watch.fired
    if on_intervals is not None and intervals:
        on_intervals(intervals)
    return FioRun(
        measurement=meas,
        command=cmd,
        job_text=job_file(point, run_id=run_id, total=total, tag=tag),
        raw_output=raw,
        stderr=stderr,
        exit_code=rc,
        started_at=started,
        ended_at=ended,
        interrupted=interrupted,
        warnings=warnings,
        intervals=intervals,
    )


_DISCONNECTED = re.compile(r"client: host=(\S+) disconnected")
_CONNECT_REASON = re.compile(r"fio: connect: (.+)")
_CONNECT_FAILED = re.compile(r"fio: failed to connect to (\S+):(\d+)")
_EXITED = re.compile(r"client <([^>]+)>: exited with error (\d+)")
_SERVER_TEXT = re.compile(r"^<([^>]+)>(?: (.*))?$")
_MISMATCH = re.compile(r"client/server version mismatch \((\d+) != (\d+)\)")
#: What a server says that matters (not its job banners, "Starting 1 process", blank lines).
_SERVER_MESSAGE = re.compile(r"fio[:\s]|error|err=|abort|warning|note:|fail", re.IGNORECASE)


def _ios(entry: dict[str, Any], ddir: str) -> tuple[int, int]:
    d = entry.get(ddir)
    if not isinstance(d, dict):
        return 0, 0
    return int(d.get("total_ios", 0)), int(d.get("io_bytes", d.get("io_kbytes", 0) * 1024))


def _start_bound(
    reports: list[dict[str, Any]], interval_ms: int, final_ms: int | None
) -> int | None:
    """The host's measurement start in ms after its server began the run (module comment):
    the largest k * interval - rt_k over reports taken while it ran."""
    bounds = [
        k * interval_ms - rt
        for k, e in enumerate(reports, 1)
        if (rt := runtime_ms(e)) > 0 and (final_ms is None or rt < final_ms)
    ]
    return max(bounds) if bounds else None


def host_series(
    reports: list[dict[str, Any]], final: dict[str, Any], interval_ms: int
) -> tuple[HostSeries | None, str | None]:
    """A completed host's timing from its status reports and final entry, or why unknown."""
    total_ms = runtime_ms(final)
    if total_ms <= 0:
        return None, "it reported no runtime"
    start = _start_bound(reports, interval_ms, total_ms)
    if start is None:
        return None, (
            f"no status report came while it ran ({total_ms} ms; a report every {interval_ms} ms)"
        )
    knots: dict[str, list[tuple[float, int, int]]] = {}
    for ddir in DIRECTIONS:
        pts: list[tuple[float, int, int]] = [(start / 1000, 0, 0)]
        for k, e in enumerate(reports, 1):
            rt = runtime_ms(e)
            if k * interval_ms > start and 0 < rt < total_ms:  # taken after the start
                pts.append(((start + rt) / 1000, *_ios(e, ddir)))
        pts.append(((start + total_ms) / 1000, *_ios(final, ddir)))
        knots[ddir] = pts
    return HostSeries(start_s=start / 1000, end_s=(start + total_ms) / 1000, knots=knots), None


@dataclass
class _HostOutput:
    entries: list[dict[str, Any]] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)  # fio's messages attributed to the host
    connect_error: str | None = None
    dead: bool = False
    server: str = "its fio server"  # what ran its fio, as a failure names it


def hosts_measurement(
    text: str,
    stderr: str,
    exit_code: int | None,
    hosts: list[PointHost],
    *,
    interval_ms: int,
    local_port: int | None = None,
    names: dict[str, str] | None = None,
) -> tuple[Measurement, list[str]]:
    """The measurement of a multi-host point and fio's warnings (:func:`read_hosts_output`
    without the hosts' time series)."""
    meas, warnings, _ = read_hosts_output(
        text,
        stderr,
        exit_code,
        hosts,
        interval_ms=interval_ms,
        local_port=local_port,
        names=names,
    )
    return meas, warnings


def read_hosts_output(
    text: str,
    stderr: str,
    exit_code: int | None,
    hosts: list[PointHost],
    *,
    interval_ms: int,
    local_port: int | None = None,
    names: dict[str, str] | None = None,
) -> tuple[Measurement, list[str], list[Interval]]:
    """The measurement of a multi-host point from fio's client output (module comment),
    fio's warnings and each host's time series (:meth:`_ClientOutput.intervals`).

    Per host: its final entry (or, for a host whose server went away mid-point, its last
    status report, kept as a failed host's partial figures). Aggregate over the hosts that
    completed: I/Os and bytes summed; IOPS and bandwidth over the window in which all of them
    were running (each host's I/O in the window from its status reports, linear between
    them), or the sum of the hosts' own rates when a host's start is unknown; latency from
    merged histograms. A host that failed leaves the point ``partial`` (``failed`` when none
    completed), its name and reason in ``error``.
    """
    docs, warnings = split_documents(text)
    doc = docs[-1] if docs else {}
    if doc.get("client_stats"):
        try:
            check_document(doc)
        except DocumentError as e:  # a server sent what no fio writes: nothing of it counts
            bad = Measurement(status="failed", error_code=-1, error=f"not a fio result: {e}")
            return bad, warnings, []
    out = _ClientOutput.read(doc, hosts, local_port, names or {})
    out.read_messages([*warnings, *stderr.splitlines()])
    out.mark_dead(interval_ms)
    version = doc.get("fio version")
    failed_words = _error_message(stderr, text)
    agg = measure_hosts(out, interval_ms, version, failed_words, exit_code)
    return agg, warnings, out.intervals(interval_ms)


def measure_hosts(
    out: _ClientOutput,
    interval_ms: int,
    version: str | None,
    failed_words: str | None,
    exit_code: int | None,
) -> Measurement:
    """The point's measurement from each host's entries (:func:`read_hosts_output`; the
    live hosts' too: livehosts.py). ``failed_words``: fio's words, when no host did I/O."""
    hosts = out.hosts
    per_host: dict[str, Measurement] = {}
    series: dict[str, HostSeries] = {}
    unknown: dict[str, str] = {}
    failed: dict[str, str] = {}
    for h in hosts:
        m, ser, why_unknown = out.host_measurement(h, interval_ms)
        per_host[h.label] = m
        if m.status != "ok":
            failed[h.label] = m.error or "failed"
        elif ser is None:
            unknown[h.label] = why_unknown or "unknown"
        else:
            series[h.label] = ser

    ok = {lab: m for lab, m in per_host.items() if m.status == "ok"}
    agg = _aggregate_over(ok, series, unknown)
    agg.hosts = per_host
    agg.jobs = sum(m.jobs for m in per_host.values())
    agg.engine_version = version
    agg.extra.update(
        {
            "hosts": [h.label for h in hosts],
            "status_interval_s": interval_ms / 1000,
            **({"failed_hosts": list(failed)} if failed else {}),
        }
    )
    if failed:
        agg.status = "partial" if ok else "failed"
        agg.error_code = agg.error_code or -1
        agg.error = "; ".join(f"host {lab}: {why}" for lab, why in failed.items())
    elif not ok:
        agg.status, agg.error_code = "failed", -1
        agg.error = failed_words or f"fio exited with status {exit_code}"
    notes = out.notes
    if exit_code not in (0, None) and not failed:
        notes.append(f"fio exited with status {exit_code}")
    notes += out.general
    if notes:
        agg.extra["notes"] = list(dict.fromkeys(notes))
    return agg


@dataclass
class _ClientOutput:
    """What fio's client printed for a point, sorted by host: each host's entries and
    messages, and the messages no host can be named for."""

    hosts: list[PointHost]
    where: dict[str, tuple[str, int]]  # host label -> the address fio's client used
    out: dict[str, _HostOutput]
    names: dict[str, str]  # host label -> its server's host name
    disk_util: list[dict[str, Any]]
    notes: list[str] = field(default_factory=list)
    general: list[str] = field(default_factory=list)
    disconnected: dict[str, int] = field(default_factory=dict)  # address -> how many times
    mismatch: str | None = None  # the protocols of client and server differ

    @classmethod
    def read(
        cls,
        doc: dict[str, Any],
        hosts: list[PointHost],
        local_port: int | None,
        names: dict[str, str],
    ) -> _ClientOutput:
        """Each entry of ``client_stats`` given to the host whose address it names."""
        where: dict[str, tuple[str, int]] = {}
        for h in hosts:
            try:
                where[h.label] = client_address(h, local_port)
            except ValueError:  # the local server was not running: nothing can match it
                where[h.label] = (h.address, h.port)
        co = cls(hosts, where, {h.label: _HostOutput() for h in hosts}, names, [])
        co.disk_util = list(doc.get("disk_util") or [])
        ident = co.by_address()
        for e in doc.get("client_stats") or []:
            if e.get("jobname") == "All clients":
                continue  # unreliable (FIELD-NOTES); aggregated here instead
            h = ident.get((str(e.get("hostname")), int(e.get("port") or 0)))
            if h is None:
                co.notes.append(f"ignored a result from {e.get('hostname')}:{e.get('port')}")
                continue
            co.out[h.label].entries.append(e)
        return co

    def by_address(self) -> dict[tuple[str, int], PointHost]:
        return {self.where[h.label]: h for h in self.hosts}

    def on_address(self, addr: str) -> list[PointHost]:
        """The hosts whose fio server listens on ``addr`` (any port)."""
        return [h for h in self.hosts if self.where[h.label][0] == addr]

    def intervals(self, interval_ms: int) -> list[Interval]:
        """Each host's time series from its reports (a host that went away: up to its last
        report), and the point's own: the hosts' reports merged on the servers' common
        clock (intervals.merged_intervals)."""
        entries = [self.out[h.label].entries for h in self.hosts]
        own = merged_intervals(entries, interval_ms)
        return own + [
            i
            for h in self.hosts
            for i in host_intervals(self.out[h.label].entries, interval_ms, h.label)
        ]

    def read_messages(self, lines: list[str]) -> None:
        """fio's messages: connection failures, disconnections, the servers' own lines."""
        ident = self.by_address()
        by_name: dict[str, list[str]] = {}
        for label, name in self.names.items():
            by_name.setdefault(name, []).append(label)
        reason = None
        for line in lines:
            line = line.strip()
            if not line:
                continue
            if m := _CONNECT_REASON.match(line):
                reason = m.group(1)
            elif m := _CONNECT_FAILED.search(line):
                h = ident.get((m.group(1), int(m.group(2))))
                if h is not None:
                    self.out[h.label].connect_error = (
                        f"cannot connect to its fio server at {m.group(1)}:{m.group(2)}"
                        f" ({reason or 'connection failed'})"
                    )
                reason = None
            elif m := _DISCONNECTED.search(line):
                self.disconnected[m.group(1)] = self.disconnected.get(m.group(1), 0) + 1
            elif m := _MISMATCH.search(line):
                self.mismatch = (
                    f"fio's client/server protocol differs (server {m.group(1)}, this fio "
                    f"{m.group(2)}): run the same fio version as the controller"
                )
            elif m := _EXITED.match(line):
                for h in self.on_address(m.group(1)):
                    self.out[h.label].texts.append(f"fio exited with error {m.group(2)}")
            elif m := _SERVER_TEXT.match(line):
                said = (m.group(2) or "").strip()
                if not _SERVER_MESSAGE.search(said) or "(g=" in said:
                    continue
                labels = by_name.get(m.group(1), [])
                if len(labels) == 1 and labels[0] in self.out:
                    self.out[labels[0]].texts.append(said)
                else:
                    self.general.append(line)
            elif not line.startswith("fio: bad server cmd version"):
                self.general.append(line)

    def mark_dead(self, interval_ms: int) -> None:
        """The hosts whose server went away: fio names only the address, so when several
        hosts share it, the ones whose reports stop earliest are taken (they died; the
        others ran on)."""
        out = self.out
        for addr, count in self.disconnected.items():
            cands = [h for h in self.on_address(addr) if out[h.label].connect_error is None]
            silent = [h for h in cands if not out[h.label].entries]
            count -= len(silent)
            live = [h for h in cands if out[h.label].entries]

            def stop(h: PointHost) -> float:
                es = out[h.label].entries
                return (_start_bound(es[:-1], interval_ms, None) or 0) + runtime_ms(es[-1])

            for h in sorted(live, key=stop)[: max(count, 0)]:
                out[h.label].dead = True

    def host_measurement(
        self, h: PointHost, interval_ms: int
    ) -> tuple[Measurement, HostSeries | None, str | None]:
        """Host ``h``'s own measurement, its timing (or why it is unknown)."""
        o = self.out[h.label]
        said = "; ".join(dict.fromkeys(o.texts))
        if not o.entries:
            why = o.connect_error or (self.mismatch if self.mismatch else None)
            if why is None and self.where[h.label][0] in self.disconnected:
                why = "its fio server went away before its first report"
            if why is None:
                why = "its fio server sent no result" + (f" (fio: {said})" if said else "")
            return Measurement(status="failed", error=why, error_code=-1), None, None
        if o.dead:
            return _dead_host(o.entries, interval_ms, o.server), None, None
        final = o.entries[-1]
        m = _aggregate_jobs([final])
        addr = self.where[h.label]
        m.disk_util = [d for d in self.disk_util if (d.get("hostname"), d.get("port")) == addr]
        if m.status == "ok" and not any(m.direction(d) for d in DIRECTIONS):
            # e.g. fio's own refusal to write to a mounted device (allow_mounted_write)
            m.status, m.error_code = "failed", -1
            printed = said or "; ".join(dict.fromkeys(self.general))
            m.error = "it did no I/O" + (f" (fio: {printed})" if printed else "")
        elif m.status != "ok" and said:
            m.error = f"{m.error} (fio: {said})"
        ser, why_unknown = host_series(o.entries[:-1], final, interval_ms)
        m.extra["reports"] = len(o.entries) - 1
        if ser is not None:
            m.extra.update({"start_s": ser.start_s, "end_s": ser.end_s})
        return m, ser, why_unknown


def _dead_host(
    entries: list[dict[str, Any]], interval_ms: int, server: str = "its fio server"
) -> Measurement:
    """A host whose server went away mid-point: its last report, kept as partial figures."""
    last = entries[-1]
    m = _aggregate_jobs([last])
    start = _start_bound(entries, interval_ms, None)
    at = (start or 0) + runtime_ms(last)
    why = (
        f"{server} went away during the point (last report {at / 1000:.1f} s "
        "into the run; its figures up to then are kept, not counted in the aggregate)"
    )
    m.status, m.error, m.error_code = "failed", why, m.error_code or -1
    m.extra.update({"partial": True, "last_report_s": at / 1000, "reports": len(entries)})
    if start is not None:
        m.extra["start_s"] = start / 1000
    return m


def _aggregate_over(
    ok: dict[str, Measurement], series: dict[str, HostSeries], unknown: dict[str, str]
) -> Measurement:
    """Aggregate of the hosts that completed (see :func:`hosts_measurement`)."""
    meas = Measurement()
    if not ok:
        return meas
    if len(ok) == 1:
        only = next(iter(ok.values()))
        meas.directions = dict(only.directions)
        meas.usr_cpu, meas.sys_cpu = only.usr_cpu, only.sys_cpu
        meas.extra["aggregate"] = "single host"
        return meas
    win = overlap(series.values()) if not unknown and len(series) == len(ok) else None
    for ddir in DIRECTIONS:
        parts = [m.directions[ddir] for m in ok.values() if m.direction(ddir)]
        if not parts:
            continue
        summed = _combine(parts, window_ms=None)
        meas.extra.setdefault("sum_of_host_rates", {})[ddir] = {
            "iops": summed.iops,
            "bw_bytes": summed.bw_bytes,
        }
        if win is not None and win.window_s > 0:
            ios, nbytes = window_totals(series.values(), ddir, win.window_start_s, win.window_end_s)
            summed.iops = ios / win.window_s
            summed.bw_bytes = nbytes / win.window_s
            summed.runtime_s = win.window_s
        meas.directions[ddir] = summed
    cpus = [(m.usr_cpu, m.sys_cpu) for m in ok.values() if m.usr_cpu is not None]
    if cpus:
        meas.usr_cpu = sum(u or 0.0 for u, _ in cpus) / len(cpus)
        meas.sys_cpu = sum(s or 0.0 for _, s in cpus) / len(cpus)
    if win is not None and win.window_s > 0:
        meas.extra["aggregate"] = "window"
    else:
        meas.extra["aggregate"] = "sum of host rates"
        meas.extra["aggregate_why"] = (
            "; ".join(f"start of {lab} unknown: {why}" for lab, why in unknown.items())
            if unknown
            else "the hosts never all ran at once"
        )
    if win is not None:
        meas.extra.update(
            {
                "start_spread_s": win.start_spread_s,
                "end_spread_s": win.end_spread_s,
                "span_s": win.span_s,
                "window_s": win.window_s,
                "overlap": win.fraction,
                "low_overlap": win.low,
            }
        )
    return meas


# ---------------------------------------------------------------------------- fio servers
