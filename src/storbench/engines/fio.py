"""fio adapter: point -> job file -> fio process -> measurement.

fio runs with ``--output-format=json+`` so every direction carries its latency histogram
(``bins``); the parser tolerates text before, between and inside the JSON documents, reads
``--status-interval`` streams (back-to-back documents, the last one is final) and
client/server output (``client_stats``), and aggregates several jobs or hosts itself:
sums of I/O, pooled latency moments, percentiles from merged bins.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import select
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from storbench import __version__, procguard
from storbench.engines.fio_check import DocumentError, check_document
from storbench.engines.process import pdeathsig_prefix, tool_version
from storbench.errors import PlanError
from storbench.metrics import (
    DIRECTIONS,
    PERCENTILES,
    DirectionResult,
    HostSeries,
    LatencyStats,
    Measurement,
    overlap,
    pct_key,
    percentiles_from_bins,
    window_totals,
)
from storbench.plan import (
    PATH_OPTIONS,
    Point,
    PointHost,
    Target,
    job_section_name,
    job_value_problem,
    name_problem,
    path_problem,
)
from storbench.units import UnitError, parse_size

FIO = os.environ.get("STORBENCH_FIO", "fio")


class FioOutputError(ValueError):
    """fio's output holds no result document."""


# ---------------------------------------------------------------------------- discovery


def fio_path() -> str | None:
    return shutil.which(FIO)


@cache
def fio_version() -> str | None:
    """``fio-3.33`` or None when fio is not installed."""
    return tool_version(fio_path())


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


def target_options(point: Point, run_id: int | None = None) -> dict[str, Any]:
    return _target_opts(point.target, run_id)


def rados_object_prefix(run_id: int | None, host: int | None = None) -> str:
    """The name prefix of the objects fio's rados engine writes for a run (one object per
    fio file; fio leaves them behind, the runner removes them at the end). On several hosts
    each host has objects of its own (``h<i>.``, i the host's index in the point), as each
    VM of seed 003 has its own image: otherwise all of them would write the same objects."""
    run = f"storbench-r{run_id}." if run_id is not None else "storbench."
    return run + (f"h{host}." if host is not None else "")


def _target_opts(t: Target, run_id: int | None = None, host: int | None = None) -> dict[str, Any]:
    if t.kind in ("file", "device"):
        return {"filename": t.path}
    if t.kind == "directory":
        # a name prefix of storbench's own: preflight refuses when such files exist already
        return {"directory": t.path, "filename_format": "storbench.$jobname.$jobnum.$filenum"}
    client = {"clientname": t.client} if t.client else {}
    if t.kind == "rbd":
        # librbd reads the ceph.conf of $CEPH_CONF (the rbd engine has no conf option):
        # see ceph_env()
        return {"pool": t.pool, "rbdname": t.image, **client}
    if t.kind == "rados":
        # the rados engine needs conf= (fio 3.33 crashes without it); each fio file is an
        # object named by filename_format
        return {
            "pool": t.pool,
            "conf": t.conf,
            **client,
            "filename_format": rados_object_prefix(run_id, host) + "$jobname.$jobnum.$filenum",
        }
    raise ValueError(f"fio cannot drive a {t.kind} target")


READ_RW = ("read", "randread", "rw", "readwrite", "randrw")


def reads(point: Point) -> bool:
    """Whether a fio point reads (rw read, randread or a mix)."""
    return str(point.params.get("rw", point.params.get("readwrite", "read"))).split(":")[0] in (
        READ_RW
    )


def rados_object_size(point: Point) -> int:
    """The size of each object fio's rados engine writes for a point (one object per fio
    file): ``filesize`` (its upper bound), else ``size`` / ``nrfiles``; 0 when unsaid."""
    try:
        if "filesize" in point.params:
            return parse_size(str(point.params["filesize"]).split("-")[-1])
        size = parse_size(point.params.get("size", 0) or 0)
    except UnitError:
        return 0
    return size // max(1, int(point.params.get("nrfiles", 1)))


def rados_objects(
    point: Point, run_id: int | None, host: int | None = None
) -> list[tuple[str, int]]:
    """The objects (name, bytes) fio's rados engine uses for a point, as fio names them (one
    per job and file, see :func:`_target_opts`); empty for other points. Before fio reads
    them they must hold data: fio creates them empty and "reads" zero bytes at full speed
    from an empty object."""
    if point.target.kind != "rados" or point.engine != "fio":
        return []
    size = rados_object_size(point)
    if not size:
        return []
    files = int(point.params.get("nrfiles", 1))
    name = rados_object_prefix(run_id, host) + job_section_name(point.workload)
    jobs = int(point.params.get("numjobs", 1))
    return [(f"{name}.{j}.{f}", size) for j in range(jobs) for f in range(files)]


def ceph_env(targets: list[Target]) -> dict[str, str] | None:
    """The environment fio runs in for these targets: ``CEPH_CONF`` set to the rbd
    target's ceph.conf (librbd reads no other), or None (fio's own environment)."""
    confs = {t.conf for t in targets if t.kind == "rbd" and t.conf}
    if not confs:
        return None
    if len(confs) > 1:
        raise ValueError(f"one fio process cannot use two ceph.conf files: {sorted(confs)}")
    return {**os.environ, "CEPH_CONF": confs.pop()}


def job_file(point: Point, *, run_id: int | None = None, total: int | None = None) -> str:
    """The exact fio job file of a point (what `storbench plan show` prints and fio runs).

    A point on several hosts has one job file per host (fio runs a job file only on the
    ``--client`` it follows); this returns them one after the other, each opening with its
    comment line naming the host — what is stored as the point's job file.
    """
    if point.hosts:
        return "\n".join(
            host_job_file(point, i, run_id=run_id, total=total) for i in range(len(point.hosts))
        )
    return _job_text(point, point.target, _job_head(point, run_id, total), run_id=run_id)


def host_job_file(
    point: Point, i: int, *, run_id: int | None = None, total: int | None = None
) -> str:
    """The job file that host ``i`` of a multi-host point runs: the same workload on that
    host's own target."""
    h = point.hosts[i]
    head = _job_head(point, run_id, total) + f", host {h.label} ({i + 1}/{len(point.hosts)})"
    # one entry per host per status report: group_reporting whatever the plan says
    return _job_text(point, h.target, head, force={"group_reporting": None}, run_id=run_id, host=i)


def _job_head(point: Point, run_id: int | None, total: int | None) -> str:
    head = f"; storbench {__version__}"
    if run_id is not None:
        head += f" run {run_id}"
    where = f"{point.index + 1}/{total}" if total else f"{point.index + 1}"
    return head + f", point {where}, key {point.key}, repetition {point.repetition + 1}"


#: What fio's option names look like (``read-req-num-512-blocks`` has dashes).
_OPTION_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_-]*")
#: Options whose value fio splits at `:` into several paths (``\:`` keeps one): escaped.
_COLON_LISTS = ("filename", "directory")
#: Options whose value is a path fio opens: no `$` and no blanks at the ends either.
_PATHS = (*_COLON_LISTS, "conf", *PATH_OPTIONS)


def _job_line(key: str, value: Any) -> str:
    """One ``key=value`` line of a job file, or an error: the loader refuses such values with
    the plan's line (plan.py); this is the last line of defence for a point that did not
    come through it, so that nothing a value holds becomes a line or an option of its own."""
    if not _OPTION_NAME.fullmatch(key):
        raise PlanError(
            f"refusing to write fio job option {key!r}: not an option name",
            fix="name fio options as `fio --cmdhelp=all` lists them",
        )
    if value is None:
        return key
    text = _fmt_value(value)
    problem = path_problem(text) if key in _PATHS else job_value_problem(text)
    if problem:
        raise PlanError(
            f"refusing to write `{key}` into a fio job file: its value {problem}",
            fix="correct the plan (`storbench plan check PLAN` names the line)",
        )
    if key in _COLON_LISTS:
        text = text.replace(":", "\\:")
    return f"{key}={text}"


def _comment_line(text: str) -> str:
    """A comment line of a job file: one line, well below fio's 8191 bytes."""
    problem = name_problem(text)
    if problem or len(text.encode()) > 1024:
        raise PlanError(
            f"refusing to write a fio job-file comment that {problem or 'is too long'}",
            fix="give hosts and targets short names on one line",
        )
    return text


def _job_text(
    point: Point,
    target: Target,
    head: str,
    force: dict[str, Any] | None = None,
    *,
    run_id: int | None = None,
    host: int | None = None,
) -> str:
    lines = [_comment_line(head), f"[{job_section_name(point.workload)}]"]
    opts: dict[str, Any] = {**_target_opts(target, run_id, host), **point.params, **point.extra}
    opts.setdefault("group_reporting", None)
    opts.update(force or {})
    lines += [_job_line(str(k), v) for k, v in opts.items()]
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


def read_only(point: Point, target: Target | None = None) -> bool:
    """Whether fio runs the point with ``--readonly``: a point that writes nothing on a file
    or device (``target``, default the point's). fio then refuses any write, trim or layout
    of it (fio 3.33 init.c, filesetup.c extend_file): a second line of defence behind
    preflight, for files storbench did not create. Not for directories, where fio lays out
    files of its own before reading them."""
    t = target or point.target
    return not point.writes and t.kind in ("file", "device")


def _command(job_path: str, point: Point) -> list[str]:
    ro = ["--readonly"] if read_only(point) else []
    return [fio_path() or FIO, "--output-format=json+", *ro, job_path]


def run_point(
    point: Point,
    workdir: str,
    *,
    run_id: int | None = None,
    total: int | None = None,
    should_stop: Callable[[], bool] = lambda: False,
    hosts: HostContext | None = None,
) -> FioRun:
    """Run fio for one point; parse its output into a measurement.

    ``should_stop`` is polled while fio runs; when it turns true fio gets SIGINT (it stops
    its jobs cleanly) and the run is flagged interrupted. A point with hosts runs through
    fio's client/server mode (see :func:`run_hosts_point`); ``hosts`` says where the
    ``local`` host's fio server listens and the servers' own host names.
    """
    if point.hosts:
        return run_hosts_point(
            point,
            workdir,
            run_id=run_id,
            total=total,
            should_stop=should_stop,
            context=hosts or HostContext(),
        )
    job_text = job_file(point, run_id=run_id, total=total)
    job_path = os.path.join(workdir, f"point-{point.index:05d}.fio")
    with open(job_path, "w") as f:
        f.write(job_text)
    cmd = _command(job_path, point)
    rc, interrupted, started, ended, raw, stderr = _run_fio(
        cmd, workdir, job_path[:-4], should_stop, env=ceph_env([point.target])
    )
    meas: Measurement | None
    warnings: list[str] = []
    try:
        meas, warnings = parse_output(raw)
    except FioOutputError:
        meas = None
    if meas is None:
        meas = Measurement(
            status="failed",
            error_code=rc or -1,
            error=_error_message(stderr, raw)
            or f"fio exited with status {rc} and printed no result",
        )
    elif rc != 0 and meas.status == "ok":
        meas.status = "failed"
        meas.error_code = meas.error_code or rc or -1
        meas.error = _error_message(stderr, raw) or f"fio exited with status {rc}"
    elif meas.status != "ok" and not meas.error:
        meas.error = _error_message(stderr, raw)
    meas.engine_version = meas.engine_version or fio_version()
    return FioRun(
        measurement=meas,
        command=cmd,
        job_text=job_text,
        raw_output=raw,
        stderr=stderr,
        exit_code=rc,
        started_at=started,
        ended_at=ended,
        interrupted=interrupted,
        warnings=warnings,
    )


def _run_fio(
    cmd: list[str],
    workdir: str,
    stem: str,
    should_stop: Callable[[], bool],
    env: dict[str, str] | None = None,
) -> tuple[int | None, bool, float, float, str, str]:
    """Run fio, stdout and stderr to ``stem``.out/.err; (exit status, interrupted, start,
    end, stdout, stderr). SIGINT when ``should_stop`` turns true, SIGKILL 15 s later."""
    out_path = stem + ".out"
    err_path = stem + ".err"
    started = time.time()
    interrupted = False
    with open(out_path, "w") as out, open(err_path, "w") as err:
        proc = subprocess.Popen(
            pdeathsig_prefix() + cmd,
            stdout=out,
            stderr=err,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            cwd=workdir,
            env=procguard.environment(env),
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
    return proc.returncode, interrupted, started, ended, raw, stderr


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


@dataclass
class HostContext:
    """What the runner knows about the hosts of a run: where the ``local`` host's private
    fio server listens, and each host's own name (fio prefixes the servers' messages with
    it: ``<vm01> fio: ...``)."""

    local_port: int | None = None
    names: dict[str, str] = field(default_factory=dict)  # host label -> server host name


def status_interval_ms(point: Point) -> int:
    """How often each host reports during a point: about 20 reports per planned duration,
    at least every 30 s, at most every 0.5 s (1 s when the duration is unknown)."""
    est = point.est_seconds
    if est is None:
        return 1000
    ms = round(est * 1000 / 20 / 100) * 100
    return min(max(ms, 500), 30_000)


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
) -> FioRun:
    """Run one point on all its hosts at once (one fio client process) and aggregate."""
    ctx = context or HostContext()
    paths = []
    for i in range(len(point.hosts)):
        path = os.path.join(workdir, f"point-{point.index:05d}.host{i + 1}.fio")
        with open(path, "w") as f:
            f.write(host_job_file(point, i, run_id=run_id, total=total))
        paths.append(path)
    addresses = [client_address(h, ctx.local_port) for h in point.hosts]
    interval = status_interval_ms(point)
    cmd = hosts_command(
        paths, addresses, interval, [read_only(point, h.target) for h in point.hosts]
    )
    stem = os.path.join(workdir, f"point-{point.index:05d}")
    rc, interrupted, started, ended, raw, stderr = _run_fio(cmd, workdir, stem, should_stop)
    meas, warnings = hosts_measurement(
        raw,
        stderr,
        rc,
        point.hosts,
        interval_ms=interval,
        local_port=ctx.local_port,
        names=ctx.names,
    )
    meas.engine_version = meas.engine_version or fio_version()
    return FioRun(
        measurement=meas,
        command=cmd,
        job_text=job_file(point, run_id=run_id, total=total),
        raw_output=raw,
        stderr=stderr,
        exit_code=rc,
        started_at=started,
        ended_at=ended,
        interrupted=interrupted,
        warnings=warnings,
    )


_DISCONNECTED = re.compile(r"client: host=(\S+) disconnected")
_CONNECT_REASON = re.compile(r"fio: connect: (.+)")
_CONNECT_FAILED = re.compile(r"fio: failed to connect to (\S+):(\d+)")
_EXITED = re.compile(r"client <([^>]+)>: exited with error (\d+)")
_SERVER_TEXT = re.compile(r"^<([^>]+)>(?: (.*))?$")
_MISMATCH = re.compile(r"client/server version mismatch \((\d+) != (\d+)\)")
#: What a server says that matters (not its job banners, "Starting 1 process", blank lines).
_SERVER_MESSAGE = re.compile(r"fio[:\s]|error|err=|abort|warning|note:|fail", re.IGNORECASE)


def _runtime_ms(entry: dict[str, Any]) -> int:
    return max(
        (int(entry[d].get("runtime", 0)) for d in DIRECTIONS if isinstance(entry.get(d), dict)),
        default=0,
    )


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
        if (rt := _runtime_ms(e)) > 0 and (final_ms is None or rt < final_ms)
    ]
    return max(bounds) if bounds else None


def host_series(
    reports: list[dict[str, Any]], final: dict[str, Any], interval_ms: int
) -> tuple[HostSeries | None, str | None]:
    """A completed host's timing from its status reports and final entry, or why unknown."""
    total_ms = _runtime_ms(final)
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
            rt = _runtime_ms(e)
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
    """The measurement of a multi-host point from fio's client output (module comment).

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
            return bad, warnings
    where: dict[str, tuple[str, int]] = {}  # label -> the address fio's client used
    for h in hosts:
        try:
            where[h.label] = client_address(h, local_port)
        except ValueError:  # the local server was not running: nothing can match it
            where[h.label] = (h.address, h.port)
    ident = {where[h.label]: h for h in hosts}
    out = {h.label: _HostOutput() for h in hosts}
    notes: list[str] = []
    for e in doc.get("client_stats") or []:
        if e.get("jobname") == "All clients":
            continue  # unreliable (FIELD-NOTES); aggregated here instead
        h = ident.get((str(e.get("hostname")), int(e.get("port") or 0)))
        if h is None:
            notes.append(f"ignored a result from {e.get('hostname')}:{e.get('port')}")
            continue
        out[h.label].entries.append(e)

    # fio's messages: connection failures, disconnections, the servers' own lines
    by_addr: dict[str, list[PointHost]] = {}
    for h in hosts:
        by_addr.setdefault(where[h.label][0], []).append(h)
    by_name: dict[str, list[str]] = {}
    for label, name in (names or {}).items():
        by_name.setdefault(name, []).append(label)
    disconnected: dict[str, int] = {}
    reason = None
    mismatch: str | None = None
    general: list[str] = []
    for line in [*warnings, *stderr.splitlines()]:
        line = line.strip()
        if not line:
            continue
        if m := _CONNECT_REASON.match(line):
            reason = m.group(1)
        elif m := _CONNECT_FAILED.search(line):
            h = ident.get((m.group(1), int(m.group(2))))
            if h is not None:
                out[h.label].connect_error = (
                    f"cannot connect to its fio server at {m.group(1)}:{m.group(2)}"
                    f" ({reason or 'connection failed'})"
                )
            reason = None
        elif m := _DISCONNECTED.search(line):
            disconnected[m.group(1)] = disconnected.get(m.group(1), 0) + 1
        elif m := _MISMATCH.search(line):
            mismatch = (
                f"fio's client/server protocol differs (server {m.group(1)}, this fio "
                f"{m.group(2)}): run the same fio version as the controller"
            )
        elif m := _EXITED.match(line):
            for h in by_addr.get(m.group(1), []):
                out[h.label].texts.append(f"fio exited with error {m.group(2)}")
        elif m := _SERVER_TEXT.match(line):
            said = (m.group(2) or "").strip()
            if not _SERVER_MESSAGE.search(said) or "(g=" in said:
                continue
            labels = by_name.get(m.group(1), [])
            if len(labels) == 1 and labels[0] in out:
                out[labels[0]].texts.append(said)
            else:
                general.append(line)
        elif not line.startswith("fio: bad server cmd version"):
            general.append(line)

    # hosts whose server went away: fio names only the address, so when several hosts
    # share it, the ones whose reports stop earliest are taken (they died; the others ran on)
    for addr, count in disconnected.items():
        cands = [h for h in by_addr.get(addr, []) if out[h.label].connect_error is None]
        silent = [h for h in cands if not out[h.label].entries]
        count -= len(silent)
        live = [h for h in cands if out[h.label].entries]

        def stop(h: PointHost) -> float:
            es = out[h.label].entries
            return (_start_bound(es[:-1], interval_ms, None) or 0) + _runtime_ms(es[-1])

        for h in sorted(live, key=stop)[: max(count, 0)]:
            out[h.label].dead = True

    per_host: dict[str, Measurement] = {}
    series: dict[str, HostSeries] = {}
    unknown: dict[str, str] = {}
    failed: dict[str, str] = {}
    du = list(doc.get("disk_util") or [])
    for h in hosts:
        o = out[h.label]
        addr = where[h.label]
        said = "; ".join(dict.fromkeys(o.texts))
        if not o.entries:
            why = o.connect_error or (mismatch if mismatch else None)
            if why is None and where[h.label][0] in disconnected:
                why = "its fio server went away before its first report"
            if why is None:
                why = "its fio server sent no result" + (f" (fio: {said})" if said else "")
            per_host[h.label] = Measurement(status="failed", error=why, error_code=-1)
            failed[h.label] = why
            continue
        if o.dead:
            last = o.entries[-1]
            m = _aggregate_jobs([last])
            start = _start_bound(o.entries, interval_ms, None)
            at = (start or 0) + _runtime_ms(last)
            why = (
                f"its fio server went away during the point (last report {at / 1000:.1f} s "
                "into the run; its figures up to then are kept, not counted in the aggregate)"
            )
            m.status, m.error, m.error_code = "failed", why, m.error_code or -1
            m.extra.update({"partial": True, "last_report_s": at / 1000, "reports": len(o.entries)})
            if start is not None:
                m.extra["start_s"] = start / 1000
            per_host[h.label] = m
            failed[h.label] = why
            continue
        final = o.entries[-1]
        m = _aggregate_jobs([final])
        m.disk_util = [d for d in du if (d.get("hostname"), d.get("port")) == addr]
        if m.status == "ok" and not any(m.direction(d) for d in DIRECTIONS):
            # e.g. fio's own refusal to write to a mounted device (allow_mounted_write)
            m.status, m.error_code = "failed", -1
            printed = said or "; ".join(dict.fromkeys(general))
            m.error = "it did no I/O" + (f" (fio: {printed})" if printed else "")
        elif m.status != "ok" and said:
            m.error = f"{m.error} (fio: {said})"
        ser, why_unknown = host_series(o.entries[:-1], final, interval_ms)
        m.extra["reports"] = len(o.entries) - 1
        if ser is not None:
            m.extra.update({"start_s": ser.start_s, "end_s": ser.end_s})
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
    agg.engine_version = doc.get("fio version")
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
        agg.error = _error_message(stderr, text) or f"fio exited with status {exit_code}"
    if exit_code not in (0, None) and not failed:
        notes.append(f"fio exited with status {exit_code}")
    notes += general
    if notes:
        agg.extra["notes"] = list(dict.fromkeys(notes))
    return agg, warnings


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


def server_listening(address: str, port: int, timeout: float = 0.5) -> bool:
    """Whether something accepts TCP connections at ``address``:``port``."""
    try:
        with socket.create_connection((address, port), timeout=timeout):
            return True
    except OSError:
        return False


def free_port(address: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((address, 0))
        return int(s.getsockname()[1])


class FioServer:
    """A fio server storbench runs itself: the ``local`` host of a plan (on loopback, for
    the duration of a run). It leads its own process group (the server, the process it
    forks per connection and the job process share it), so :meth:`stop` ends all three."""

    def __init__(
        self,
        address: str = "127.0.0.1",
        port: int | None = None,
        cwd: str = "/",
        env: dict[str, str] | None = None,
    ):
        self.address = address
        self.port = port
        self.cwd = cwd
        self.env = env
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 10.0) -> None:
        port = self.port or free_port(self.address)
        if server_listening(self.address, port):
            raise OSError(f"something already listens on {self.address}:{port}")
        self.port = port
        self.proc = subprocess.Popen(
            [*pdeathsig_prefix(), fio_path() or FIO, f"--server={self.address},{port}"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
            cwd=self.cwd,
            env=procguard.environment(self.env),
        )
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                err = (self.proc.stderr.read() if self.proc.stderr else b"").decode().strip()
                raise OSError(f"fio --server={self.address},{port} exited: {err or 'no message'}")
            if server_listening(self.address, port, timeout=0.2):
                return
            time.sleep(0.05)
        self.stop()
        raise OSError(f"fio --server={self.address},{port} did not listen within {timeout:.0f} s")

    def stop(self) -> None:
        """SIGKILL to the group: a private server holds nothing worth a graceful exit (fio's
        server takes a second or more to act on SIGTERM)."""
        if self.proc is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        if self.proc.stderr:
            self.proc.stderr.close()
        self.proc = None


@dataclass
class ServerProbe:
    """What a fio server said to storbench's preflight probe (see :func:`probe_servers`)."""

    address: str
    port: int
    error: str | None = None  # no answer, refused, protocol mismatch, fio failed
    hostname: str | None = None  # the server's own host name (fio's probe reply)
    os: str | None = None
    arch: str | None = None
    fio_version: str | None = None
    missing_engines: list[str] = field(default_factory=list)
    output: str = ""


_PROBE_REPLY = re.compile(
    r"^hostname=(?P<host>.*), be=\d+, (?P<bits>\d+)-bit, os=(?P<os>\S+), arch=(?P<arch>\S+), "
    r"fio=(?P<fio>\S+), flags=",
    re.MULTILINE,
)
_NOT_LOADABLE = re.compile(r"engine (\S+) not loadable")


def probe_job(engines: list[str]) -> str:
    """A job file that loads every engine in ``engines`` on a server and does no I/O:
    one section per engine, ``create_only=1`` (setup only) on /dev/zero, read-only. fio
    loads an engine when it parses the job, so a missing one is named ("engine X not
    loadable") before anything runs; an engine that needs more (rbd: a pool) fails its
    setup, which proves it is there."""
    sections = []
    for e in engines or ["null"]:
        sections.append(
            f"[probe-{job_section_name(e)}]\n{_job_line('ioengine', e)}\nfilename=/dev/zero\n"
            "rw=read\nbs=4k\nsize=4k\ncreate_only=1\n"
        )
    return "".join(sections)


def probe_servers(
    servers: list[tuple[str, int]], engines: list[str], *, timeout: float = 15.0
) -> list[ServerProbe]:
    """Ask every fio server at once (one fio client each, in parallel): does it answer,
    which fio it runs (its probe reply), on which host and OS, and does it have ``engines``.

    One fio client per server so that each answer is that server's alone (fio prefixes a
    server's messages with its host name, which several VMs may share). A server that has
    not answered within ``timeout`` seconds is reported as not answering."""
    path = fio_path() or FIO
    results: list[ServerProbe] = []
    with tempfile.TemporaryDirectory(prefix="storbench-probe-") as tmp:
        job = os.path.join(tmp, "probe.fio")
        with open(job, "w") as f:
            f.write(probe_job(engines))
        procs = []
        for i, (addr, port) in enumerate(servers):
            out = open(os.path.join(tmp, f"{i}.out"), "w+")  # noqa: SIM115 - closed below
            err = open(os.path.join(tmp, f"{i}.err"), "w+")  # noqa: SIM115
            p = subprocess.Popen(
                [
                    *pdeathsig_prefix(),
                    path,
                    "--output-format=normal",
                    f"--client={addr},{port}",
                    job,
                ],
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                cwd=tmp,
                start_new_session=True,
            )
            procs.append((addr, port, p, out, err))
        deadline = time.monotonic() + timeout
        for addr, port, p, out, err in procs:
            timed_out = False
            try:
                p.wait(timeout=max(deadline - time.monotonic(), 0.01))
            except subprocess.TimeoutExpired:
                timed_out = True
                p.kill()
                p.wait()
            out.seek(0)
            err.seek(0)
            text, stderr = out.read(), err.read()
            out.close()
            err.close()
            results.append(
                _probe_result(addr, port, text, stderr, p.returncode, timed_out, timeout)
            )
    return results


def _probe_result(
    addr: str,
    port: int,
    text: str,
    stderr: str,
    rc: int | None,
    timed_out: bool,
    timeout: float,
) -> ServerProbe:
    r = ServerProbe(address=addr, port=port, output=text + stderr)
    m = _PROBE_REPLY.search(text)
    if m:
        r.hostname, r.os, r.arch, r.fio_version = m["host"], m["os"], m["arch"], m["fio"]
    r.missing_engines = list(dict.fromkeys(_NOT_LOADABLE.findall(text + stderr)))
    reason = next((x.group(1) for x in map(_CONNECT_REASON.search, stderr.splitlines()) if x), None)
    if mm := _MISMATCH.search(stderr):
        r.error = (
            f"fio's client/server protocol differs (server {mm.group(1)}, this fio "
            f"{mm.group(2)}): it runs another fio version than this controller"
        )
    elif "failed to connect" in stderr or reason:
        r.error = f"cannot connect to {addr}:{port} ({reason or 'connection failed'})"
    elif timed_out and m is None:
        r.error = f"no answer from {addr}:{port} within {timeout:.0f} s"
    elif m is None:
        lines = [ln.strip() for ln in (stderr + text).splitlines() if ln.strip()]
        r.error = (
            f"fio's client got no answer from {addr}:{port} (exit status {rc}"
            + (f": {'; '.join(lines[-3:])}" if lines else "")
            + ")"
        )
    return r


# ---------------------------------------------------------------------------- agent


def fio_server_pid(pid_file: str) -> int | None:
    """The pid in ``pid_file`` when it is a running fio server, else None."""
    try:
        with open(pid_file) as f:
            pid = int(f.read().split()[0])
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            argv = f.read().split(b"\0")
    except (OSError, ValueError, IndexError):
        return None
    name = os.path.basename(argv[0].decode(errors="replace")) if argv else ""
    if "fio" in name and any(a.startswith(b"--server") for a in argv):
        return pid
    return None


def start_agent(address: str, port: int, pid_file: str, *, timeout: float = 10.0) -> int:
    """Start ``fio --server=ADDRESS,PORT`` in the background (fio's own --daemonize, which
    writes ``pid_file``); wait until it listens. Returns its pid. The caller has checked
    that nothing listens there yet: fio 3.33 sets SO_REUSEPORT, so a second server on the
    same address and port starts without complaint and takes half the connections."""
    os.makedirs(os.path.dirname(os.path.abspath(pid_file)), exist_ok=True)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(pid_file)
    subprocess.run(
        [fio_path() or FIO, f"--server={address},{port}", f"--daemonize={pid_file}"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=os.path.dirname(os.path.abspath(pid_file)),
        timeout=timeout,
        check=False,
    )
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        pid = fio_server_pid(pid_file)
        if pid is not None and server_listening(address, port, timeout=0.2):
            return pid
        time.sleep(0.05)
    pid = fio_server_pid(pid_file)
    if pid is not None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    raise OSError(f"fio --server={address},{port} did not start listening")


def stop_agent(pid_file: str, *, timeout: float = 10.0) -> int | None:
    """Stop the fio server of ``pid_file`` (SIGTERM, then SIGKILL) and remove the file;
    returns its pid, or None when none was running (a stale file is removed too)."""
    pid = fio_server_pid(pid_file)
    if pid is None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(pid_file)
        return None

    def signal_all(sig: int) -> None:
        # fio's --daemonize makes the server a session leader; the processes it forks per
        # connection (and their jobs) share its group and keep the listening socket open
        with contextlib.suppress(ProcessLookupError):
            if os.getpgid(pid) == pid:
                os.killpg(pid, sig)
            else:
                os.kill(pid, sig)

    signal_all(signal.SIGTERM)
    end = time.monotonic() + timeout
    while time.monotonic() < end and fio_server_pid(pid_file) == pid:
        time.sleep(0.05)
    if fio_server_pid(pid_file) == pid:
        signal_all(signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)  # a connection process left behind
    with contextlib.suppress(FileNotFoundError):
        os.unlink(pid_file)
    return pid
