"""Reading fio's output: the JSON documents among its text, the final result, and one measurement
from several jobs (sums, pooled moments, percentiles from merged bins).
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

import storbench.engines.fio.versions as versions
from storbench.engines.fio.check import DocumentError, check_document
from storbench.engines.fio.tool import FioOutputError
from storbench.model.metrics import (
    DIRECTIONS,
    PERCENTILES,
    DirectionResult,
    LatencyStats,
    Measurement,
    pct_key,
    percentiles_from_bins,
)


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
#: A document already decoded and checked (its exact text, what it decodes to): the last
#: one fio's status stream read (intervals.StatusStream.last_document).
Known = tuple[str, dict[str, Any]]
_FIO_MSG = re.compile(r"^(fio[:\s]|Bad option|Did you mean|\s*(ioengine|file:|\w+: \(g=))")


def split_documents(
    text: str, known: Known | None = None
) -> tuple[list[dict[str, Any]], list[str]]:
    """Every fio result document in ``text`` and the non-JSON text found around them.

    fio may print warnings before, between, or (as whole lines) inside its JSON; lines that
    break a document are taken out and reported as warnings, then decoding is retried.
    A document that still does not decode (cut short: fio killed while printing a
    --status-interval stream) is skipped whole, up to the next ``{`` that opens a line (fio
    starts each document in column 0 and indents everything nested), and reported as one
    warning; its fragments are neither decoded as documents nor reported line by line
    (only lines in it that cannot be JSON, fio's messages, are). Warnings keep their order.
    ``known``: a document decoded before, not decoded again (:func:`_decode`).
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
            obj, end = _decode(text, start, known)
            removed: list[str] = []
        except json.JSONDecodeError:
            obj, end, removed = _decode_with_junk_lines(text, start)
        except RecursionError:  # nested deeper than any fio document: not one
            obj, end, removed = None, start + 1, []
        if (
            isinstance(obj, dict)
            and ("jobs" in obj or "client_stats" in obj)
            and not _inside_json(text, start)
        ):
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


def _decode(text: str, start: int, known: Known | None) -> tuple[Any, int]:
    """The JSON value at ``start`` and where it ends; ``known`` (a document decoded before:
    its text, its object) where ``text`` holds that text there, not decoded again (a JSON
    value decodes from its own text alone)."""
    if known is not None and text.startswith(known[0], start):
        return known[1], start + len(known[0])
    return _decoder.raw_decode(text, start)


def _junk_line(ln: str) -> bool:
    """A line that cannot belong to fio's JSON (a message fio printed into it)."""
    stripped = ln.strip()
    return bool(stripped) and bool(_FIO_MSG.match(ln) or not _jsonish(stripped))


def _inside_json(text: str, i: int) -> bool:
    """Whether the ``{`` at ``i`` continues JSON on its line (``[{``, ``, {``, ``: {``): an
    object nested in something else, which fio never prints as its result."""
    j = text.rfind("\n", 0, i) + 1
    before = text[j:i].rstrip()
    return bool(before) and before[-1] in "[,:"


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
    except (json.JSONDecodeError, RecursionError):
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


def parse_output(text: str, known: Known | None = None) -> tuple[Measurement, list[str]]:
    """Measurement from fio's stdout (json or json+, local or client/server, one document or
    a --status-interval stream) and the warnings fio printed around it (``known``: a
    document of it decoded and checked before, see :func:`final_document`)."""
    doc, warnings = final_document(text, known)
    return measurement_from_document(doc), warnings


def final_document(text: str, known: Known | None = None) -> tuple[dict[str, Any], list[str]]:
    """fio's final result document (the last of a --status-interval stream) and warnings.
    ``known``: a document decoded and checked (check_document) before, its text and object:
    found in ``text``, it is neither decoded nor checked again."""
    docs, warnings = split_documents(text, known)
    if not docs:
        raise FioOutputError("no fio JSON result found in the output")
    if known is not None and docs[-1] is known[1]:
        return docs[-1], warnings
    try:
        check_document(docs[-1])
    except DocumentError as e:
        raise FioOutputError(f"not a fio result: {e}") from None
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
        options = doc.get("global options")
        bs = options.get("bs") if isinstance(options, dict) else None
        agg = _aggregate_jobs(doc.get("jobs") or [], bs)
    agg.disk_util = list(doc.get("disk_util") or [])
    agg.engine_version = version
    return agg


def _latency(d: dict[str, Any], kind: str, ios: int) -> LatencyStats | None:
    """The direction ``d``'s ``kind`` latency (slat, clat, lat) in ns, whatever fio version
    wrote it (versions.py); None when it has no samples."""
    obj, scale = versions.latency_object(d, kind)
    if obj is None:
        return None
    n = versions.samples(obj, ios)
    if not n:
        return None
    bins = versions.bins_ns(obj.get("bins"), scale)
    # From the bins when there are some (identical to fio's own figures, see
    # percentiles_from_bins), but fio's own figures win where it printed them: they are the
    # reference (and fio may have run on a platform with another long double). When fio
    # printed them all (its default list has them) the bins would give nothing that stays,
    # and the keys come in the same order (PERCENTILES' is that of their ranks).
    fio_pcts = {float(k): float(v) * scale for k, v in (obj.get("percentile") or {}).items()}
    every = all(p in fio_pcts for p in PERCENTILES)
    pcts = percentiles_from_bins(bins) if bins and not every else {}
    pcts.update({pct_key(p): fio_pcts[p] for p in PERCENTILES if p in fio_pcts})
    return LatencyStats(
        samples=n,
        mean=float(obj.get("mean", 0.0)) * scale,
        stddev=float(obj.get("stddev", 0.0)) * scale,
        min=float(obj.get("min", 0)) * scale,
        max=float(obj.get("max", 0)) * scale,
        percentiles=pcts,
        bins=bins,
    )


def _direction(d: dict[str, Any], bs: Any = None) -> DirectionResult:
    """One direction of a job entry, in bytes, ns and s whatever the fio version (``bs``:
    the job's block size, for fio 2.0/2.1 which print no I/O count)."""
    ios, _ = versions.total_ios(d, bs)
    return DirectionResult(
        iops=float(d.get("iops", 0.0)),
        bw_bytes=versions.bw_bytes(d),
        io_bytes=versions.io_bytes(d),
        total_ios=ios,
        runtime_s=float(d.get("runtime", 0)) / 1000.0,
        slat=_latency(d, "slat", ios),
        clat=_latency(d, "clat", ios),
        lat=_latency(d, "lat", ios),
    )


def _aggregate_jobs(jobs: list[dict[str, Any]], bs: Any = None) -> Measurement:
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
    # with continue_on_error, the errors fio went on after (it prints total_err then)
    io_errors = sum(int(j.get("total_err") or 0) for j in jobs)
    if io_errors:
        meas.extra["io_errors"] = io_errors
        if meas.error:
            meas.error += f"; {io_errors:,} I/O errors in all"
    for ddir in DIRECTIONS:
        parts = [
            (j.get("groupid", 0), _direction(j[ddir], _bs(j, bs)))
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


def _bs(job: dict[str, Any], default: Any) -> Any:
    options = job.get("job options")
    return options.get("bs", default) if isinstance(options, dict) else default


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


def reporting_groups(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The document once per reporting group of its jobs (``groupid``: jobs after a
    ``stonewall`` or ``new_group`` are a group of their own, reported on their own by fio),
    in the order the groups appear; the document itself when it has one group (or is
    client/server output, whose hosts storbench aggregates)."""
    jobs = doc.get("jobs") or []
    ids = list(dict.fromkeys(j.get("groupid", 0) for j in jobs if isinstance(j, dict)))
    if len(ids) < 2:
        return [doc]
    return [{**doc, "jobs": [j for j in jobs if j.get("groupid", 0) == g]} for g in ids]


def job_params(doc: dict[str, Any]) -> dict[str, Any]:
    """The workload options of an imported document: global options, then the first job's."""
    params: dict[str, Any] = dict(doc.get("global options") or {})
    entries = doc.get("jobs") or [
        e for e in doc.get("client_stats") or [] if e.get("jobname") != "All clients"
    ]
    if entries:
        params.update(entries[0].get("job options") or {})
    return params


# ---------------------------------------------------------------------------- many hosts
#
# A point with hosts runs as ONE fio client process:
#
#   fio --output-format=json+ --status-interval=500ms \
#       --client=A,PORT host1.fio --client=B,PORT host2.fio ...
#
# Each host gets its own job file (fio runs a job file only on the --client it follows).
# fio's client connects to every server first, then sends each its job and starts them all
# at once, so every server begins its run within milliseconds of the others: that instant
# is the common time origin of a point. The client prints one JSON document at the end,
# whose client_stats holds, per host (hostname, port), one entry per status report (every
# --status-interval, cumulative since the host's measurement began, timed from the server's
# start of the run) and the final result last. fio's own "All clients" entry is ignored.
#
# Timing (measured on fio 3.33; README "Many hosts"): status report k of a host is taken
# k * interval after its server began the run, or a little later (the helper thread may
# wake late, never more than 1 ms early), and carries the host's measured runtime rt_k so
# far. So the host's measurement started at s = t_k - rt_k >= k * interval - rt_k for every
# report taken while it ran (0 < rt_k < final runtime); s is the largest of these bounds
# (reports during ramp_time carry the time since the job began, which gives smaller
# bounds). The host ended at s + its final runtime. Checked against per-I/O logs on one
# clock with 8 servers: starts and ends within +-25 ms.
