"""A many-host point read while it runs: each host's agent runs fio there and streams its
output (runservice.py); the controller reads each host's status reports as they come, so its
series, the point's own series (the hosts' reports taken together) and the metrics get them
while the point runs.

When every host of a point has a run service (the agent's, on its fio port + 3000; the
``local`` host's, the controller's own), the point runs this way; otherwise through fio's
client (hosts.py), whose series come at the point's end. An S3 point always goes through
fio's client: its keys reach the hosts only in fio's protocol.

The clock is the one fio's client mode has (hosts.py): every host is let go at the same
moment, once all of them are ready (fio started there, held at its gate), and each host's
reports are timed on its own clock from that moment. What the controller holds does not
grow with the point's documents: per host the last few documents (the series' state), and
per report seven numbers (the timing of the hosts' common window); fio's output goes to a
file per host, of which the database keeps what fio printed besides its reports and the
result, as for a local point.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import selectors
import socket
import time
from array import array
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import IO, Any

from storbench.engines.fio.hosts import (
    _SERVER_MESSAGE,
    HostContext,
    _ClientOutput,
    _HostOutput,
    _ios,
    measure_hosts,
)
from storbench.engines.fio.intervals import StatusStream, runtime_ms
from storbench.engines.fio.jobfile import host_job_file, job_file
from storbench.engines.fio.parse import _error_message, split_documents
from storbench.engines.fio.runservice import fio_command, runs_port
from storbench.engines.fio.spawn import FioRun, read_only
from storbench.engines.fio.tool import fio_version
from storbench.engines.process import started as started_hook
from storbench.model.metrics import DIRECTIONS
from storbench.model.series import Interval
from storbench.plan import Point, PointHost

#: Seconds to reach a host's run service (preflight reached its fio server already).
CONNECT_TIMEOUT_S = 5.0
#: Seconds a host's run service has to start fio and hold it at its gate.
READY_TIMEOUT_S = 30.0


def service_address(h: PointHost, ctx: HostContext) -> tuple[str, int] | None:
    """Where host ``h``'s run service listens, or None when it has none."""
    if h.local:
        return ("127.0.0.1", ctx.runs_port) if ctx.runs_port else None
    port = runs_port(h.port)
    return (h.address, port) if port else None


class _HostStream(StatusStream):
    """A host's status stream that also tells each document to ``on_doc``."""

    def __init__(
        self,
        started: float,
        interval_ms: int,
        sink: Callable[[list[Interval]], None],
        on_doc: Callable[[dict[str, Any], int], None],
    ) -> None:
        super().__init__(started, interval_ms, sink, keep=False)
        self.on_doc = on_doc

    def add(self, doc: dict[str, Any], t_ms: int | None = None) -> None:
        if t_ms is None:
            t_ms = int(doc.get("timestamp_ms", 0)) - round(self.started_ms)
        super().add(doc, t_ms)
        self.on_doc(doc, t_ms)


@dataclass
class _Host:
    """One host's connection, what it sent and what is kept of it."""

    host: PointHost
    sock: socket.socket
    out_file: IO[str]
    buf: bytes = b""
    stream: _HostStream | None = None
    err: str = ""
    exit: int | None = None
    closed: bool = False
    error: str | None = None  # the service refused the point
    #: per report: runtime ms, then I/Os and bytes per direction (the window's timing)
    knots: array[int] = field(default_factory=lambda: array("q"))
    last: dict[str, Any] | None = None  # the last job entry, whole
    version: str | None = None
    disk_util: list[dict[str, Any]] = field(default_factory=list)

    def send(self, **message: Any) -> None:
        with contextlib.suppress(OSError):
            self.sock.sendall((json.dumps(message) + "\n").encode())

    def entries(self) -> list[dict[str, Any]]:
        """The host's reports as hosts.host_series reads them (runtime, I/Os, bytes), then
        its last entry whole."""
        if self.last is None:
            return []
        k = 1 + 2 * len(DIRECTIONS)
        reports = []
        for i in range(0, len(self.knots) - k, k):  # the last document is ``last``
            rt, rest = self.knots[i], self.knots[i + 1 : i + k]
            reports.append(
                {
                    d: {"runtime": rt, "total_ios": rest[2 * j], "io_bytes": rest[2 * j + 1]}
                    for j, d in enumerate(DIRECTIONS)
                }
            )
        return [*reports, self.last]


class _Merged:
    """The point's own series: the hosts' k-th documents taken together, once every host
    still running has sent its k-th (intervals.merged_intervals, read as they come)."""

    def __init__(self, labels: list[str], interval_ms: int, sink: Callable[[list[Interval]], None]):
        self.stream = StatusStream(0.0, interval_ms, sink, keep=False)
        self.queues: dict[str, deque[tuple[dict[str, Any], int]]] = {lab: deque() for lab in labels}
        self.last: dict[str, tuple[dict[str, Any], int]] = {}
        self.ended: set[str] = set()

    def add(self, label: str, entry: dict[str, Any], t_ms: int) -> None:
        self.queues[label].append((entry, t_ms))
        self._drain()

    def end(self, label: str) -> None:
        self.ended.add(label)
        self._drain()

    def _drain(self) -> None:
        qs = self.queues
        while any(qs.values()) and all(q or lab in self.ended for lab, q in qs.items()):
            for lab, q in qs.items():
                if q:
                    self.last[lab] = q.popleft()
            entries = [e for e, _ in self.last.values()]
            self.stream.add({"jobs": entries}, t_ms=max(t for _, t in self.last.values()))


def run_live_point(
    point: Point,
    workdir: str,
    *,
    context: HostContext,
    run_id: int | None = None,
    total: int | None = None,
    should_stop: Callable[[], bool] = lambda: False,
    on_intervals: Callable[[list[Interval]], None] | None = None,
    tag: str | None = None,
) -> FioRun | None:
    """Run a many-host point through the hosts' run services; None (nothing started) when a
    host has none, or its service does not answer: fio's client runs the point then. Its
    intervals go to ``on_intervals`` as they come, and are not kept (the run's
    ``intervals`` are empty then: a long point's are many)."""
    if any(h.target.kind == "s3" for h in point.hosts):
        return None
    where = [service_address(h, context) for h in point.hosts]
    if any(w is None for w in where) or context.no_runs & {h.label for h in point.hosts}:
        return None
    interval = point.interval_ms
    stem = os.path.join(workdir, f"point-{point.index:05d}")
    addrs = [w for w in where if w]
    conns = _connect(point, addrs, stem, interval, run_id, total, tag)
    if isinstance(conns, str):  # that host has none: fio's client for its points
        context.no_runs.add(conns)
        return None
    try:
        return _run(
            point, conns, where, context, interval, should_stop, on_intervals, (run_id, total, tag)
        )
    finally:
        for c in conns:
            c.sock.close()
            c.out_file.close()


def _connect(
    point: Point,
    where: list[tuple[str, int]],
    stem: str,
    interval: int,
    run_id: int | None,
    total: int | None,
    tag: str | None,
) -> list[_Host] | str:
    """A connection to each host's service with its job sent; the label of a host whose
    service cannot be reached (nothing runs then: those connected withdraw their fio)."""
    conns: list[_Host] = []
    h = point.hosts[0]
    try:
        for i, (h, addr) in enumerate(zip(point.hosts, where, strict=True)):
            job = host_job_file(point, i, run_id=run_id, total=total, tag=tag)
            with open(f"{stem}.host{i + 1}.fio", "w") as f:
                f.write(job)
            sock = socket.create_connection(addr, timeout=CONNECT_TIMEOUT_S)
            sock.settimeout(READY_TIMEOUT_S)
            # closed with the connection (run_live_point)
            c = _Host(h, sock, open(f"{stem}.host{i + 1}.out", "w"))  # noqa: SIM115
            conns.append(c)
            c.send(job=job, interval_ms=interval, readonly=read_only(point, h.target))
    except OSError:
        for c in conns:
            c.sock.close()
            c.out_file.close()
        return h.label
    return conns


def _readline(c: _Host) -> dict[str, Any] | None:
    """The next message of ``c`` (blocking), None at the connection's end."""
    while b"\n" not in c.buf:
        data = c.sock.recv(1 << 16)
        if not data:
            return None
        c.buf += data
    line, c.buf = c.buf.split(b"\n", 1)
    try:
        msg = json.loads(line)
    except ValueError:
        return None
    return msg if isinstance(msg, dict) else None


def _run(
    point: Point,
    conns: list[_Host],
    where: list[tuple[str, int] | None],
    ctx: HostContext,
    interval: int,
    should_stop: Callable[[], bool],
    on_intervals: Callable[[list[Interval]], None] | None,
    job: tuple[int | None, int | None, str | None],
) -> FioRun:
    """Every host ready, all let go at once, their messages read to the end."""
    rows: list[Interval] = []  # kept only for a caller that takes none while it runs

    def sink(new: list[Interval]) -> None:
        if on_intervals is not None:
            on_intervals(new)
        else:
            rows.extend(new)

    for c in conns:  # every host's fio started and held at its gate
        try:
            msg = _readline(c)
        except OSError as e:
            msg = {"error": str(e)}
        if not msg or not msg.get("ready"):
            c.error = str((msg or {}).get("error") or "its agent closed the connection")
            c.closed = True
    merged = _Merged([c.host.label for c in conns if not c.closed], interval, sink)
    started = time.time()
    for c in conns:
        if not c.closed:
            c.send(go=True)
    started_hook()  # the runner's bookkeeping of the point before (as spawn._run_fio)
    interrupted = _pump(conns, merged, interval, sink, should_stop)
    merged.stream.close()
    ended = time.time()
    meas_run = _result(point, conns, where, ctx, interval, interrupted, job)
    meas_run.started_at, meas_run.ended_at, meas_run.intervals = started, ended, rows
    return meas_run


def _pump(
    conns: list[_Host],
    merged: _Merged,
    interval: int,
    sink: Callable[[list[Interval]], None],
    should_stop: Callable[[], bool],
) -> bool:
    """Read every host's messages until all connections end; a stop sent to every host
    when ``should_stop`` turns true (then True)."""
    sel = selectors.DefaultSelector()
    for c in conns:
        if not c.closed:
            sel.register(c.sock, selectors.EVENT_READ, c)
    stopped = False
    while sel.get_map():
        for key, _ in sel.select(0.05):
            c = key.data
            try:
                data = c.sock.recv(1 << 16)
            except OSError:
                data = b""
            if not data:
                sel.unregister(c.sock)
                _ended(c, merged)
                continue
            c.buf += data
            while b"\n" in c.buf:
                line, c.buf = c.buf.split(b"\n", 1)
                _message(c, line, merged, interval, sink)
        if not stopped and should_stop():
            stopped = True
            for c in conns:
                c.send(stop=True)
    sel.close()
    return stopped


def _message(
    c: _Host, line: bytes, merged: _Merged, interval: int, sink: Callable[[list[Interval]], None]
) -> None:
    """One message of host ``c``'s service (runservice.py)."""
    try:
        msg = json.loads(line)
    except ValueError:
        return
    if not isinstance(msg, dict):
        return
    label = c.host.label
    if "started" in msg and c.stream is None:

        def host_rows(new: list[Interval]) -> None:
            sink([dataclasses.replace(i, host=label) for i in new])

        def on_doc(doc: dict[str, Any], t_ms: int) -> None:
            jobs = doc.get("jobs") or []
            if len(jobs) != 1 or not isinstance(jobs[0], dict):
                return  # group_reporting: one entry per document
            entry = c.last = jobs[0]
            c.version = doc.get("fio version") or c.version
            c.disk_util = list(doc.get("disk_util") or [])
            c.knots.append(runtime_ms(entry))
            for d in DIRECTIONS:
                c.knots.extend(_ios(entry, d))
            merged.add(label, entry, t_ms)

        c.stream = _HostStream(float(msg["started"]), interval, host_rows, on_doc)
    elif "out" in msg:
        text = str(msg["out"])
        c.out_file.write(text)
        if c.stream is not None:
            c.stream.feed(text)
    elif "err" in msg:
        c.err += str(msg["err"])
    elif "exit" in msg and isinstance(msg["exit"], int):
        c.exit = msg["exit"]


def _ended(c: _Host, merged: _Merged) -> None:
    """Host ``c``'s connection ended: its held-back interval, and the point's series go on
    without it."""
    c.closed = True
    if c.stream is not None:
        c.stream.close()
    merged.end(c.host.label)


def _result(
    point: Point,
    conns: list[_Host],
    where: list[tuple[str, int] | None],
    ctx: HostContext,
    interval: int,
    interrupted: bool,
    job: tuple[int | None, int | None, str | None],
) -> FioRun:
    """The point's run: each host's measurement and the aggregate (hosts.measure_hosts)."""
    outs: dict[str, _HostOutput] = {}
    addresses: dict[str, tuple[str, int]] = {}
    disk_util: list[dict[str, Any]] = []
    raw, warnings, errs, reports = [], [], [], 0
    for c, w in zip(conns, where, strict=True):
        label, o = c.host.label, _HostOutput()
        addresses[label] = w or (c.host.address, c.host.port)
        o.entries = c.entries()
        said = [ln.strip() for ln in c.err.splitlines() if _SERVER_MESSAGE.search(ln)]
        o.texts = said + ([f"fio exited with error {c.exit}"] if c.exit and not interrupted else [])
        if c.error:
            o.connect_error = f"its agent did not run the point ({c.error})"
        elif c.exit is None and not o.entries:
            o.connect_error = "its agent's connection ended before fio's first report"
        elif c.exit is None:
            o.dead, o.server = True, "its agent"  # gone mid-point: its reports until then
        outs[label] = o
        host, port = addresses[label]
        disk_util += [{**d, "hostname": host, "port": port} for d in c.disk_util]
        if c.stream is not None:
            text, n = c.stream.kept()
            reports += n
            raw.append(f"<{label}>\n{text}")
            warnings += [f"<{label}> {w}" for w in split_documents(text)[1]]
        errs += [f"<{label}> {ln}" for ln in c.err.splitlines() if ln.strip()]
    out = _ClientOutput(point.hosts, addresses, outs, ctx.names, disk_util)
    version = next((c.version for c in conns if c.version), None)
    stderr = "\n".join(errs)
    codes = [c.exit for c in conns if c.exit]
    code = 0 if all(c.exit == 0 for c in conns) else (codes[0] if codes else None)
    meas = measure_hosts(
        out, interval, version, _error_message(stderr, ""), 0 if interrupted else code
    )
    meas.engine_version = meas.engine_version or fio_version()
    meas.extra.update({"live_hosts": True, "status_reports": reports})
    run_id, total, tag = job
    cmd = []
    for i, h in enumerate(point.hosts):
        path = f"point-{point.index:05d}.host{i + 1}.fio"
        cmd += [f"<{h.label}>", *fio_command(path, interval, read_only(point, h.target))]
    return FioRun(
        measurement=meas,
        command=cmd,
        job_text=job_file(point, run_id=run_id, total=total, tag=tag),
        raw_output="\n".join(raw),
        stderr=stderr,
        exit_code=code,
        started_at=0.0,
        ended_at=0.0,
        interrupted=interrupted,
        warnings=warnings,
    )
