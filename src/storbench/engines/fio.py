"""fio adapter: point -> job file -> fio process -> measurement.

fio runs with ``--output-format=json+`` so every direction carries its latency histogram
(``bins``); the parser tolerates text before, between and inside the JSON documents, reads
``--status-interval`` streams (back-to-back documents, the last one is final) and
client/server output (``client_stats``), and aggregates several jobs or hosts itself:
sums of I/O, pooled latency moments, percentiles from merged bins.
"""

from __future__ import annotations

import json
import os
import re
import select
import shutil
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from storbench import __version__
from storbench.metrics import (
    DIRECTIONS,
    PERCENTILES,
    DirectionResult,
    LatencyStats,
    Measurement,
    pct_key,
    percentiles_from_bins,
)
from storbench.plan import Point, job_section_name

FIO = os.environ.get("STORBENCH_FIO", "fio")


class FioOutputError(ValueError):
    """fio's output holds no result document."""


# ---------------------------------------------------------------------------- discovery


def fio_path() -> str | None:
    return shutil.which(FIO)


@cache
def fio_version() -> str | None:
    """``fio-3.33`` or None when fio is not installed."""
    path = fio_path()
    if path is None:
        return None
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() or None


@cache
def available_engines() -> frozenset[str]:
    path = fio_path()
    if path is None:
        return frozenset()
    out = subprocess.run([path, "--enghelp"], capture_output=True, text=True, timeout=10)
    return frozenset(ln.strip() for ln in out.stdout.splitlines()[1:] if ln.strip())


def parse_only(job_text: str, workdir: str) -> str | None:
    """Let fio parse a job file without running it; its complaint, or None when it is valid."""
    path = fio_path()
    if path is None:
        return None
    jf = os.path.join(workdir, "parse-check.fio")
    with open(jf, "w") as f:
        f.write(job_text)
    out = subprocess.run([path, "--parse-only", jf], capture_output=True, text=True, timeout=30)
    if out.returncode == 0:
        return None
    lines = [
        ln.strip()
        for ln in (out.stderr + out.stdout).splitlines()
        if ln.strip() and "job" not in ln.split(":")[-1].split()[:1]
    ]
    msg = "; ".join(ln for ln in lines if not ln.endswith("dropped")) or "fio rejected the job"
    return msg


# ---------------------------------------------------------------------------- job files


def _fmt_value(value: Any) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def target_options(point: Point) -> dict[str, Any]:
    t = point.target
    if t.kind in ("file", "device"):
        return {"filename": t.path}
    if t.kind == "directory":
        # a name prefix of storbench's own: preflight refuses when such files exist already
        return {"directory": t.path, "filename_format": "storbench.$jobname.$jobnum.$filenum"}
    raise ValueError(f"fio cannot drive a {t.kind} target")


def job_file(point: Point, *, run_id: int | None = None, total: int | None = None) -> str:
    """The exact fio job file of a point (what `storbench plan show` prints and fio runs)."""
    head = f"; storbench {__version__}"
    if run_id is not None:
        head += f" run {run_id}"
    where = f"{point.index + 1}/{total}" if total else f"{point.index + 1}"
    lines = [
        head + f", point {where}, key {point.key}, repetition {point.repetition + 1}",
        f"[{job_section_name(point.workload)}]",
    ]
    opts: dict[str, Any] = {**target_options(point), **point.params, **point.extra}
    opts.setdefault("group_reporting", None)
    for k, v in opts.items():
        lines.append(k if v is None else f"{k}={_fmt_value(v)}")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------- running


@dataclass
class FioRun:
    measurement: Measurement | None
    command: list[str]
    job_text: str
    raw_output: str
    stderr: str
    exit_code: int | None
    started_at: float
    ended_at: float
    interrupted: bool = False
    warnings: list[str] = field(default_factory=list)


def _command(job_path: str) -> list[str]:
    return [fio_path() or FIO, "--output-format=json+", job_path]


def _popen_prefix() -> list[str]:
    # setpriv --pdeathsig: fio dies with storbench even on SIGKILL (no orphan keeps writing).
    setpriv = shutil.which("setpriv")
    return [setpriv, "--pdeathsig", "KILL", "--"] if setpriv else []


def run_point(
    point: Point,
    workdir: str,
    *,
    run_id: int | None = None,
    total: int | None = None,
    should_stop: Callable[[], bool] = lambda: False,
) -> FioRun:
    """Run fio for one point; parse its output into a measurement.

    ``should_stop`` is polled while fio runs; when it turns true fio gets SIGINT (it stops
    its jobs cleanly) and the run is flagged interrupted.
    """
    job_text = job_file(point, run_id=run_id, total=total)
    job_path = os.path.join(workdir, f"point-{point.index:05d}.fio")
    with open(job_path, "w") as f:
        f.write(job_text)
    cmd = _command(job_path)
    out_path = job_path[:-4] + ".out"
    err_path = job_path[:-4] + ".err"
    started = time.time()
    interrupted = False
    with open(out_path, "w") as out, open(err_path, "w") as err:
        proc = subprocess.Popen(
            _popen_prefix() + cmd,
            stdout=out,
            stderr=err,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            cwd=workdir,
        )
        sigint_at: float | None = None
        # wake the moment fio exits (pidfd), yet look at should_stop every 50 ms
        waiter = _exit_waiter(proc)
        while True:
            if waiter(50):
                proc.wait()
                break
            if should_stop() and sigint_at is None:
                interrupted = True
                sigint_at = time.monotonic()
                proc.send_signal(signal.SIGINT)
            elif sigint_at is not None and time.monotonic() - sigint_at > 15:
                proc.kill()
    ended = time.time()
    with open(out_path, errors="replace") as f:
        raw = f.read()
    with open(err_path, errors="replace") as f:
        stderr = f.read()
    meas: Measurement | None
    warnings: list[str] = []
    try:
        meas, warnings = parse_output(raw)
    except FioOutputError:
        meas = None
    if meas is None:
        meas = Measurement(
            status="failed",
            error_code=proc.returncode or -1,
            error=_error_message(stderr, raw)
            or f"fio exited with status {proc.returncode} and printed no result",
        )
    elif proc.returncode != 0 and meas.status == "ok":
        meas.status = "failed"
        meas.error_code = meas.error_code or proc.returncode
        meas.error = _error_message(stderr, raw) or f"fio exited with status {proc.returncode}"
    elif meas.status != "ok" and not meas.error:
        meas.error = _error_message(stderr, raw)
    meas.engine_version = meas.engine_version or fio_version()
    return FioRun(
        measurement=meas,
        command=cmd,
        job_text=job_text,
        raw_output=raw,
        stderr=stderr,
        exit_code=proc.returncode,
        started_at=started,
        ended_at=ended,
        interrupted=interrupted,
        warnings=warnings,
    )


def _exit_waiter(proc: subprocess.Popen[str]) -> Callable[[int], bool]:
    """A function that waits up to N ms for ``proc`` to exit and says whether it did."""
    try:
        fd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):

        def poll_wait(ms: int) -> bool:
            try:
                proc.wait(timeout=ms / 1000)
                return True
            except subprocess.TimeoutExpired:
                return False

        return poll_wait
    poller = select.poll()
    poller.register(fd, select.POLLIN)

    def pidfd_wait(ms: int) -> bool:
        if poller.poll(ms):
            os.close(fd)
            return True
        return False

    return pidfd_wait


def _error_message(stderr: str, stdout: str) -> str | None:
    """fio's own error lines ("fio: ...", "... error=No space left on device")."""
    lines = []
    for ln in (stderr + "\n" + _non_json_text(stdout)).splitlines():
        ln = ln.strip()
        if not ln:
            continue
        if ln.startswith("fio:") or "error=" in ln or "err=" in ln or ln.startswith("Bad option"):
            lines.append(ln)
    if not lines:
        rest = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
        lines = rest[-3:]
    return "; ".join(dict.fromkeys(lines)) or None


def _non_json_text(text: str) -> str:
    i = text.find("{")
    return text if i < 0 else text[:i]


# ---------------------------------------------------------------------------- parsing

_decoder = json.JSONDecoder()
_FIO_MSG = re.compile(r"^(fio[:\s]|Bad option|Did you mean|\s*(ioengine|file:|\w+: \(g=))")


def split_documents(text: str) -> tuple[list[dict[str, Any]], list[str]]:
    """Every fio result document in ``text`` and the non-JSON text found around them.

    fio may print warnings before, between, or (as whole lines) inside its JSON; lines that
    break a document are taken out and reported as warnings, then decoding is retried.
    A document that still does not decode (cut short: fio killed while printing a
    --status-interval stream) is skipped whole, up to the next ``{`` that opens a line (fio
    starts each document in column 0 and indents everything nested), and reported as one
    warning; its fragments are neither decoded as documents nor reported line by line
    (only lines in it that cannot be JSON, fio's messages, are). Warnings keep their order.
    """
    docs: list[dict[str, Any]] = []
    found: list[tuple[int, str]] = []  # (offset, warning), sorted at the end
    pos = 0
    n = len(text)
    junk_from = 0  # start of the current run of non-document text

    def flush_junk(upto: int) -> None:
        off = junk_from
        for ln in text[junk_from:upto].splitlines(keepends=True):
            if ln.strip():
                found.append((off, ln.strip()))
            off += len(ln)

    while pos < n:
        start = text.find("{", pos)
        if start < 0:
            break
        try:
            obj, end = _decoder.raw_decode(text, start)
            removed: list[str] = []
        except json.JSONDecodeError:
            obj, end, removed = _decode_with_junk_lines(text, start)
        if isinstance(obj, dict) and ("jobs" in obj or "client_stats" in obj):
            flush_junk(start)
            docs.append(obj)
            found.extend((start, ln) for ln in removed)
            pos = junk_from = end
            continue
        if not _opens_line(text, start):
            # a brace inside a line of text: all of it, up to the next document, is junk
            nxt = _next_line_start_brace(text, start + 1)
            pos = n if nxt < 0 else nxt
            continue
        flush_junk(start)
        if obj is not None:
            stop = end
            found.append(
                (start, f"ignored a JSON document that holds no fio result (offset {start})")
            )
        else:
            # a document cut short: skip it whole, never decode its nested objects
            nxt = _next_line_start_brace(text, start + 1)
            stop = n if nxt < 0 else nxt
            found.append(
                (
                    start,
                    f"ignored an incomplete fio JSON document ({stop - start} characters"
                    f" at offset {start})",
                )
            )
            off = start
            for ln in text[start:stop].splitlines(keepends=True):
                if _junk_line(ln):
                    found.append((off, ln.strip()))
                off += len(ln)
        pos = junk_from = stop
    flush_junk(n)
    found.sort(key=lambda f: f[0])
    return docs, [w for _, w in found]


def _junk_line(ln: str) -> bool:
    """A line that cannot belong to fio's JSON (a message fio printed into it)."""
    stripped = ln.strip()
    return bool(stripped) and bool(_FIO_MSG.match(ln) or not _jsonish(stripped))


def _opens_line(text: str, i: int) -> bool:
    return i == 0 or text[i - 1] == "\n"


def _next_line_start_brace(text: str, pos: int) -> int:
    """Offset of the next ``{`` in column 0 at or after ``pos``, or -1."""
    if pos <= 0 and text.startswith("{"):
        return 0
    i = text.find("\n{", max(pos - 1, 0))
    return -1 if i < 0 else i + 1


def _decode_with_junk_lines(text: str, start: int) -> tuple[Any, int, list[str]]:
    """Retry decoding a document after removing the non-JSON lines that broke it."""
    lines = text[start:].splitlines(keepends=True)
    kept: list[str] = []
    removed: list[str] = []
    offsets: list[int] = []  # offset in text of each kept line
    off = start
    for ln in lines:
        if _junk_line(ln):
            removed.append(ln.strip())
        else:
            kept.append(ln)
            offsets.append(off)
        off += len(ln)
    cleaned = "".join(kept)
    try:
        obj, end = _decoder.raw_decode(cleaned, 0)
    except json.JSONDecodeError:
        return None, start + 1, []
    # map `end` in cleaned back to an offset in text
    acc = 0
    for ln, o in zip(kept, offsets, strict=True):
        if acc + len(ln) >= end:
            return obj, o + (end - acc), removed
        acc += len(ln)
    return obj, len(text), removed


def _jsonish(line: str) -> bool:
    return (
        line[0] in '{}[]"'
        or line[0].isdigit()
        or line[0] == "-"
        or line in ("true", "false", "null")
    )


def parse_output(text: str) -> tuple[Measurement, list[str]]:
    """Measurement from fio's stdout (json or json+, local or client/server, one document or
    a --status-interval stream) and the warnings fio printed around it."""
    doc, warnings = final_document(text)
    return measurement_from_document(doc), warnings


def final_document(text: str) -> tuple[dict[str, Any], list[str]]:
    """fio's final result document (the last of a --status-interval stream) and warnings."""
    docs, warnings = split_documents(text)
    if not docs:
        raise FioOutputError("no fio JSON result found in the output")
    return docs[-1], warnings


def measurement_from_document(doc: dict[str, Any]) -> Measurement:
    version = doc.get("fio version")
    if "client_stats" in doc:
        by_host: dict[str, list[dict[str, Any]]] = {}
        for entry in doc["client_stats"]:
            if entry.get("jobname") == "All clients":
                continue  # unreliable (see FIELD-NOTES); aggregated here instead
            host = str(entry.get("hostname", "?"))
            if entry.get("port"):
                host = f"{host}:{entry['port']}"
            by_host.setdefault(host, []).append(entry)
        hosts = {h: _aggregate_jobs(jobs) for h, jobs in by_host.items()}
        agg = _aggregate_hosts(hosts)
        agg.hosts = hosts
    else:
        agg = _aggregate_jobs(doc.get("jobs") or [])
    agg.disk_util = list(doc.get("disk_util") or [])
    agg.engine_version = version
    return agg


def _latency(d: dict[str, Any] | None) -> LatencyStats | None:
    if not d or not d.get("N"):
        return None
    bins = {int(k): int(v) for k, v in (d.get("bins") or {}).items()} or None
    # From the bins when there are some (identical to fio's own figures, see
    # percentiles_from_bins), but fio's own figures win where it printed them: they are the
    # reference (and fio may have run on a platform with another long double).
    pcts = percentiles_from_bins(bins) if bins else {}
    fio_pcts = {float(k): float(v) for k, v in (d.get("percentile") or {}).items()}
    pcts.update({pct_key(p): fio_pcts[p] for p in PERCENTILES if p in fio_pcts})
    return LatencyStats(
        samples=int(d["N"]),
        mean=float(d.get("mean", 0.0)),
        stddev=float(d.get("stddev", 0.0)),
        min=float(d.get("min", 0)),
        max=float(d.get("max", 0)),
        percentiles=pcts,
        bins=bins,
    )


def _direction(d: dict[str, Any]) -> DirectionResult:
    return DirectionResult(
        iops=float(d.get("iops", 0.0)),
        bw_bytes=float(d.get("bw_bytes", d.get("bw", 0) * 1024)),
        io_bytes=int(d.get("io_bytes", d.get("io_kbytes", 0) * 1024)),
        total_ios=int(d.get("total_ios", 0)),
        runtime_s=float(d.get("runtime", 0)) / 1000.0,
        slat=_latency(d.get("slat_ns")),
        clat=_latency(d.get("clat_ns")),
        lat=_latency(d.get("lat_ns")),
    )


def _aggregate_jobs(jobs: list[dict[str, Any]]) -> Measurement:
    """One measurement from fio job entries that ran together (numjobs without
    group_reporting, several sections), combined the way fio's group_reporting does.

    fio's stat.c sum_thread_stats() (3.33 and master) builds a group from its jobs: io_bytes
    and total_io_u are summed, runtime[ddir] is the *longest* job runtime, latency moments
    are pooled (__sum_stat) and histograms (io_u_plat) summed; add_ddir_status_json() then
    prints iops = 1000.0 * total_io_u / runtime_ms and bw_bytes = (1000 * io_bytes) /
    runtime_ms in integer arithmetic. So total_ios / max(runtime) *is* fio's group figure
    (checked on numjobs4-group-jsonplus: 8192 I/Os / 224 ms = 36571.428571 IOPS, bw_bytes
    149796571). CPU: usr_time and total_run_time are summed, so the group's usr_cpu is the
    job_runtime-weighted mean of the jobs' usr_cpu.

    fio never combines different reporting groups. Groups made by ``stonewall`` run one
    after the other, so across groups the windows add up: runtime is the sum over groups
    of each group's longest runtime (for jobs of ``new_group`` that overlap in time this
    understates the rate; fio's JSON has no start time to tell).
    """
    meas = Measurement(jobs=len(jobs))
    errors = [(int(j.get("error", 0)), j.get("jobname", "?")) for j in jobs if j.get("error")]
    if errors:
        meas.status = "failed"
        meas.error_code = errors[0][0]
        meas.error = (
            f"fio job {errors[0][1]!r} failed with error {errors[0][0]} "
            f"({os.strerror(errors[0][0])})"
        )
    for ddir in DIRECTIONS:
        parts = [
            (j.get("groupid", 0), _direction(j[ddir]))
            for j in jobs
            if isinstance(j.get(ddir), dict)
        ]
        parts = [(g, p) for g, p in parts if p.active]
        if not parts:
            continue
        if len(parts) == 1:
            meas.directions[ddir] = parts[0][1]
            continue
        longest: dict[Any, int] = {}
        for g, p in parts:
            longest[g] = max(longest.get(g, 0), _ms(p.runtime_s))
        meas.directions[ddir] = _combine([p for _, p in parts], window_ms=sum(longest.values()))
    cpu = [
        (float(j.get("usr_cpu", 0.0)), float(j.get("sys_cpu", 0.0)), float(j.get("job_runtime", 0)))
        for j in jobs
        if "usr_cpu" in j or "sys_cpu" in j
    ]
    if cpu:
        weight = sum(w for *_, w in cpu)
        if weight > 0:
            meas.usr_cpu = sum(u * w for u, _, w in cpu) / weight
            meas.sys_cpu = sum(s * w for _, s, w in cpu) / weight
        else:
            meas.usr_cpu = sum(u for u, _, _ in cpu) / len(cpu)
            meas.sys_cpu = sum(s for _, s, _ in cpu) / len(cpu)
    return meas


def _ms(seconds: float) -> int:
    return round(seconds * 1000)


def _combine(parts: list[DirectionResult], *, window_ms: int | None) -> DirectionResult:
    """Sum I/O and merge latency. With ``window_ms`` (jobs of one run: see _aggregate_jobs)
    the rates are fio's: I/O over that window; without (hosts, each with its own window) the
    hosts' rates are added."""
    io_bytes = sum(p.io_bytes for p in parts)
    total = sum(p.total_ios for p in parts)
    if window_ms is not None:
        runtime = window_ms / 1000.0
        iops = 1000.0 * total / window_ms if window_ms else 0.0
        bw = float((1000 * io_bytes) // window_ms) if window_ms else 0.0
    else:
        runtime = max(p.runtime_s for p in parts)
        iops, bw = sum(p.iops for p in parts), sum(p.bw_bytes for p in parts)
    return DirectionResult(
        iops=iops,
        bw_bytes=bw,
        io_bytes=io_bytes,
        total_ios=total,
        runtime_s=runtime,
        slat=LatencyStats.merge([p.slat for p in parts if p.slat]),
        clat=LatencyStats.merge([p.clat for p in parts if p.clat]),
        lat=LatencyStats.merge([p.lat for p in parts if p.lat]),
    )


def _aggregate_hosts(hosts: dict[str, Measurement]) -> Measurement:
    """Aggregate over hosts: rates summed (each host ran its own window), latency merged."""
    meas = Measurement(jobs=sum(m.jobs for m in hosts.values()))
    failed = [h for h, m in hosts.items() if m.status != "ok"]
    if failed:
        meas.status = "partial" if len(failed) < len(hosts) else "failed"
        first = hosts[failed[0]]
        meas.error_code = first.error_code
        meas.error = "; ".join(f"{h}: {hosts[h].error}" for h in failed)
    for ddir in DIRECTIONS:
        parts = [m.directions[ddir] for m in hosts.values() if ddir in m.directions]
        if parts:
            meas.directions[ddir] = parts[0] if len(parts) == 1 else _combine(parts, window_ms=None)
    cpus = [(m.usr_cpu, m.sys_cpu) for m in hosts.values() if m.usr_cpu is not None]
    if cpus:
        meas.usr_cpu = sum(u for u, _ in cpus) / len(cpus)
        meas.sys_cpu = sum(s or 0.0 for _, s in cpus) / len(cpus)
    return meas


def job_params(doc: dict[str, Any]) -> dict[str, Any]:
    """The workload options of an imported document: global options, then the first job's."""
    params: dict[str, Any] = dict(doc.get("global options") or {})
    entries = doc.get("jobs") or [
        e for e in doc.get("client_stats") or [] if e.get("jobname") != "All clients"
    ]
    if entries:
        params.update(entries[0].get("job options") or {})
    return params
