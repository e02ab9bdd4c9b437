"""fio behind the engine interface (engines/base.py): on this machine, and on many hosts
through fio's client/server mode (a private fio server on loopback is the ``local`` host).

Before a point reads through fio's ``rados`` engine, the objects it reads are written with
data (fio would create them empty and "read" nothing at full speed); at the end of the run
they, and the objects fio's writes made, are removed by name (their names follow from the
points, so the pool is never listed).
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import tempfile
from collections.abc import Callable, Sequence
from typing import Any

from storbench.engines import fio
from storbench.engines.base import (
    CheckOptions,
    CheckResult,
    Imported,
    PointResult,
    RunContext,
)
from storbench.engines.fio import ceiling, remote, runservice, s3answers, s3objects, versions
from storbench.engines.fio import findings as fio_findings
from storbench.engines.fio.files import (
    UNLINK_OPTIONS,
    WRITING_ENGINES,
    flag_set,
    workload_writes,
)
from storbench.hosts import netbaseline, s3bucket
from storbench.hosts.ceph import CephClient, put_objects, remove_objects
from storbench.model import redact
from storbench.model.errors import PreflightError, UserError
from storbench.model.findings import Facts, Finding
from storbench.model.metrics import Measurement
from storbench.plan import Point, Target, local_points

#: The random seed of a steady-state round's point that has none of its own, before the
#: round's offset (as plan/model.py seeds repetitions).
ROUND_SEED = 0x5B00


#: The options of a point its sequential preconditioning keeps: what and where it writes.
PRECONDITION_KEEPS = frozenset(
    ("ioengine", "direct", "size", "offset", "filesize", "nrfiles", "file_service_type")
)


class FioEngine:
    name = "fio"
    label = "fio"
    runs_hosts = True  # checks --destroy-data HOST:PATH, even when no point has fio

    def version(self) -> str | None:
        return fio.fio_version()

    def about(self) -> dict[str, Any]:
        return fio.about()

    def advice(self, points: list[Point]) -> list[str]:
        return fio.advice(points) + fio_findings.cache_advice(points)

    def findings(self, point: Point, measurement: Measurement, facts: Facts) -> list[Finding]:
        return fio_findings.findings(point, measurement, facts)

    def run_findings(
        self, points: Sequence[Point], measured: Callable[[int], Measurement | None]
    ) -> dict[int, list[Finding]]:
        return ceiling.beyond_direct(points, measured)

    def describe(self, point: Point, total: int) -> str:
        return fio.job_file(point, total=total)

    def round_point(self, point: Point, seconds: float, n: int) -> Point:
        """The point for exactly ``seconds`` (``time_based``: it loops over its ``size``), a
        seed of its own per round unless the plan sets ``randseed``/``randrepeat``."""
        params = {k: v for k, v in point.params.items() if k != "timeout"}  # runtime's alias
        params.update(runtime=int(seconds), time_based=1)
        extra = dict(point.extra)
        if n > 1 and not {"randseed", "randrepeat"} & params.keys():
            base = int(extra.get("randseed", ROUND_SEED + point.repetition))
            extra["randseed"] = base + 0x10000 * (n - 1)
        return dataclasses.replace(point, params=params, extra=extra)

    def precondition_point(self, point: Point) -> Point:
        """The point's target, its region (size, offset, files) and engine kept; the load
        replaced by 2 passes of 128 KiB sequential writes (libaio/io_uring at queue depth 32)."""
        params = {k: v for k, v in point.params.items() if k in PRECONDITION_KEEPS}
        engine = str(params.get("ioengine", ""))
        params.update(rw="write", bs="128k", loops=2, numjobs=1)
        params["iodepth"] = 32 if engine in ("libaio", "io_uring", "rbd") else 1
        return dataclasses.replace(point, params=params, extra={}, steady=None, actions=[])

    def import_output(self, text: str) -> list[Imported]:
        """fio's JSON or json+ output: one or several jobs, client/server output (hosts are
        aggregated), or a --status-interval stream (its last document is the result); one
        result per reporting group (fio reports each group on its own)."""
        try:
            doc, warnings = fio.final_document(text)
        except fio.FioOutputError as e:
            raise UserError(
                str(e),
                fix="give fio's own output, made with --output-format=json or json+ "
                "(nothing of this import was stored)",
            ) from None
        out = []
        if versions.estimated_counts(doc):
            warnings = [
                *warnings,
                f"{doc.get('fio version')} prints no I/O count and the block size does not "
                "give it: total_ios is iops x runtime, rounded (the other figures are fio's)",
            ]
        groups = fio.reporting_groups(doc)
        ended = _written_at(doc)
        for group in groups:
            params = fio.job_params(group)
            target = str(params.pop("filename", "") or params.pop("directory", "") or "?")
            first = (group.get("jobs") or group.get("client_stats") or [{}])[0]
            out.append(
                Imported(
                    measurement=fio.measurement_from_document(group),
                    target=target,
                    workload=first.get("jobname") or None,
                    params=params,
                    warnings=warnings if not out else [],
                    group=first.get("groupid", 0) if len(groups) > 1 else None,
                    started_at=_started_at(group, ended),
                    ended_at=ended,
                )
            )
        return out

    def object_bytes(self, point: Point) -> int:
        return fio.rados_object_size(point)

    def validate(self, points: list[Point]) -> str:
        if fio.fio_path() is None:
            return "fio is not installed, so job options were checked by name only"
        _check_fio(points)
        _check_jobs(points)
        return f"fio ({fio.fio_version()}) accepts every job"

    def check(self, points: list[Point], options: CheckOptions) -> CheckResult:
        """fio is here and has the ioengines the points use, it accepts every job, and every
        remote host's fio server answers (remote.py)."""
        created: list[str] = []
        if points:
            _check_fio(points)
            _check_jobs(points)
            created = _check_buckets(points)
        advice = self.advice(points) + _unchecked_gets(points)
        timeout = options.host_timeout or remote.PROBE_TIMEOUT
        hosts = remote.check_hosts(points, options.remote_destroy_data, timeout=timeout)
        out = CheckResult(host_names=hosts.names, warnings=advice)
        if created:
            out.warnings += created
            out.inventory["s3_buckets_created"] = created
        if any(p.hosts for p in points):
            out.inventory["hosts"] = hosts.inventory
            remote_ones = [(h["label"], h["address"], h["port"]) for h in hosts.inventory]
            network, notes = netbaseline.measure(remote_ones)
            out.warnings += notes
            if network:
                out.inventory["network"] = network
        return out

    def open(self, run: RunContext, points: list[Point]) -> _Session:
        return _Session(run, points)

    def cleanup(self, run: RunContext, points: list[Point], *, keep_recorded: bool) -> list[str]:
        """Remove the objects fio's rados and http (s3) engines used (by name: they follow
        from the points)."""
        left = _remove_s3_objects(run, points)
        objects: dict[Target, list[str]] = {}
        for p in points:
            for t, host in _rados_slots(p):
                one = dataclasses.replace(p, target=t, hosts=[])
                objects.setdefault(t, []).extend(
                    n for n, _ in fio.rados_objects(one, run.run_id, host)
                )
        prefix = fio.rados_object_prefix(run.run_id)
        for t, names in objects.items():
            names = list(dict.fromkeys(names))
            try:
                rest = remove_objects(t.pool, names, CephClient(t.conf, t.client))
            except (OSError, RuntimeError, ValueError, subprocess.TimeoutExpired) as e:
                rest = [f"(cleanup failed: {e})"]
            left += rest
            run.events.add(
                "rados-cleanup",
                f"removed fio's rados objects {prefix}* ({len(names)}) from pool {t.pool}"
                + (f"; {len(rest)} not removed" if rest else ""),
                {"pool": t.pool, "prefix": prefix, "objects": len(names), "left": rest[:100]},
            )
        return left


class _Session:
    """One session's fio: the ``local`` host's private fio server when a point has it."""

    def __init__(self, run: RunContext, points: list[Point]) -> None:
        self.ctx = run
        self.hosts = fio.HostContext(names=dict(run.host_names))
        self.server: fio.FioServer | None = None
        self.runs: runservice.RunService | None = None
        self.prefilled: set[tuple[object, ...]] = set()  # s3 shapes written this session
        #: the next point's fio, started ahead (prepare), and the point at whose end it goes
        self.next: fio.Prepared | None = None
        self.after: Point | None = None
        self.ready: Callable[[], bool] = lambda: False
        local = [h.target for p in points for h in p.hosts if h.local]
        if local:
            self.server = fio.FioServer(cwd=run.workdir, env=fio.ceph_env(local))
            try:
                self.server.start()
            except OSError as e:
                raise UserError(
                    f"cannot start the fio server of the `local` host: {e}",
                    fix="check that fio runs here (`fio --server=127.0.0.1,PORT`)",
                ) from None
            self.hosts.local_port = self.server.port
            # its fio run by the controller itself, read while it runs (livehosts.py)
            self.runs = runservice.serve_in_thread("127.0.0.1", 0, fio.ceph_env(local))
            self.hosts.runs_port = self.runs.server_address[1]

    def prepare(self, point: Point, *, after: Point, ready: Callable[[], bool]) -> bool:
        """Start ``point``'s fio ahead, held at its gate, and release it the moment the fio
        of ``after`` (the point running now) exits with status 0, unless the run is asked
        to stop or ``ready()`` says no; else :meth:`run` of ``point`` releases it. Only a
        local point on a file or device whose fio needs nothing done before it, after one
        that does not delete or reshape the file (files.py): False, nothing started,
        otherwise."""
        self.withdraw()
        if not (_hands_off(after) and _hands_off(point)) or redact.active():
            return False
        ctx, tag = self.ctx, fio.s3_run_tag(self.ctx.token)
        try:
            self.next = fio.prepare_point(
                point, ctx.workdir, run_id=ctx.run_id, total=ctx.total, tag=tag
            )
        except OSError:
            return False
        self.after, self.ready = after, ready
        return True

    def withdraw(self) -> None:
        """Stop the fio started ahead (:meth:`prepare`) that no point ran, released or not."""
        nxt, self.next, self.after = self.next, None, None
        if nxt is not None:
            nxt.gated.withdraw()

    def _released(self, ended: Point, status: int | None) -> None:
        """``ended``'s fio exited with ``status``: let the next point's go (prepare)."""
        nxt = self.next
        if nxt is None or self.after is not ended or nxt.gated.released_at is not None:
            return
        if status == 0 and not self.ctx.should_stop() and self.ready():
            nxt.gated.release()

    def _prepared(self, point: Point) -> fio.Prepared | None:
        """``point``'s fio started ahead (:func:`fio.run_point` releases it if it still
        waits), or None; what waits for another point (the one after the point before,
        or its preconditioning, or a round of it) goes on waiting."""
        nxt = self.next
        if nxt is None or nxt.point is not point:
            return None
        self.next = self.after = None
        return nxt

    def run(self, point: Point) -> PointResult:
        ctx = self.ctx
        prepared = self._prepared(point)
        handed_off = prepared is not None and prepared.gated.released_at is not None
        self._layout_objects(point)
        refused = self._prefill_s3(point)
        if refused is not None:
            return refused
        fr = fio.run_point(
            point,
            ctx.workdir,
            run_id=ctx.run_id,
            total=ctx.total,
            should_stop=ctx.should_stop,
            hosts=self.hosts,
            on_intervals=lambda rows: ctx.series(point, rows),
            tag=fio.s3_run_tag(ctx.token),
            prepared=prepared,
            on_exit=lambda status: self._released(point, status),
        )
        if handed_off and fr.measurement is not None:
            # started as the point before ended, before storbench read that one's output
            fr.measurement.extra["handed_off"] = True
        m = fr.measurement
        if s3objects.s3_targets(point):  # what the service answered, counted
            m = s3answers.checked(m, fr.stderr)
        early = fio.ended_early(point, m)
        if early is not None:
            m.extra["ended_early"] = early
            ctx.events.add(
                "ended-early", f"point {point.index + 1}: {early}", {"point": point.index}
            )
        if s3objects.s3_targets(point) and (
            s3objects.deletes(point) or workload_writes(point.params)
        ):
            # its objects are gone (or written again without the verify header a GET checks),
            # and so are those of any shape that shares their names
            gone = s3objects.shape_key(point)[:2]
            self.prefilled = {k for k in self.prefilled if k[:2] != gone}
        return PointResult(
            measurement=m,
            command=fr.command,
            job_text=fr.job_text,
            raw_output=fr.raw_output,
            stderr=s3answers.condensed(fr.stderr),
            started_at=fr.started_at,
            ended_at=fr.ended_at,
            interrupted=fr.interrupted,
        )

    def _layout_objects(self, point: Point) -> None:
        """Before fio's rados engine reads: the objects it reads hold data (fio's own layout
        would leave them empty, and reading an empty object measures nothing)."""
        if not fio.reads(point):
            return
        for t, host in _rados_slots(point):
            one = dataclasses.replace(point, target=t, hosts=[])
            objects = fio.rados_objects(one, self.ctx.run_id, host)
            if objects:
                put_objects(t.pool, objects, CephClient(t.conf, t.client), self.ctx.workdir)

    def _prefill_s3(self, point: Point) -> PointResult | None:
        """Before a point reads or deletes on an s3 target: the objects it reads written
        (once per shape and session: s3objects.py); a failed prefill fails the point (None:
        it may run)."""
        if not s3objects.s3_targets(point):
            return None
        if not (fio.reads(point) or s3objects.deletes(point)):
            return None
        key = s3objects.shape_key(point)
        if key in self.prefilled:
            return None
        ctx = self.ctx
        fill = s3objects.shape_point(point, "write")
        tag = fio.s3_run_tag(ctx.token)
        fr = fio.run_point(fill, ctx.workdir, run_id=ctx.run_id, hosts=self.hosts, tag=tag)
        m = fr.measurement
        wrote = m.direction("write")
        ok = m.status == "ok" and not fr.interrupted and wrote is not None
        what = f"{wrote.total_ios:,} objects, {wrote.io_bytes:,} bytes" if wrote else "nothing"
        ctx.events.add(
            "s3-prefill",
            f"point {point.index + 1}: wrote the objects it reads ({what}) in "
            f"{fr.ended_at - fr.started_at:.1f} s" + ("" if ok else f": failed: {m.error}"),
            {
                "point": point.index,
                "objects": wrote.total_ios if wrote else 0,
                "bytes": wrote.io_bytes if wrote else 0,
                "seconds": fr.ended_at - fr.started_at,
                "status": m.status,
                "error": m.error,
                "job_file": fr.job_text,
            },
        )
        if ok:
            self.prefilled.add(key)
            return None
        why = s3answers.explain(m.error or "no result", fr.stderr)
        failed = Measurement(status="failed", error=f"writing the objects it reads: {why}")
        return PointResult(
            measurement=failed,
            command=fr.command,
            job_text=fr.job_text,
            raw_output=fr.raw_output,
            stderr=fr.stderr,
            started_at=fr.started_at,
            ended_at=fr.ended_at,
            interrupted=fr.interrupted,
        )

    def close(self) -> None:
        self.withdraw()
        if self.server is not None:
            self.server.stop()
        if self.runs is not None:
            self.runs.shutdown()
            self.runs.server_close()


def _hands_off(point: Point) -> bool:
    """Whether a point's fio may start the moment the one before exits, or be that one
    (Session.prepare): local, on a file or device, no objects to write before it, and an
    ioengine that neither deletes nor reshapes its file (files.py)."""
    if point.hosts or point.target.kind not in ("file", "device"):
        return False
    p = point.params
    return str(p.get("ioengine", "")).strip() not in WRITING_ENGINES and not any(
        k in p and flag_set(p[k]) for k in UNLINK_OPTIONS
    )


def _remove_s3_objects(run: RunContext, points: list[Point]) -> list[str]:
    """Delete the objects of the run's s3 points (s3objects.remove), an event saying so."""
    if not any(s3objects.s3_targets(p) for p in points):
        return []
    kept = list(
        dict.fromkeys(t.label for p in points for t in s3objects.s3_targets(p) if t.keep_objects)
    )
    if kept:
        run.events.add(
            "s3-cleanup",
            f"kept the run's objects in {', '.join(kept)} (keep_objects)",
            {"kept": kept},
        )
    with tempfile.TemporaryDirectory(prefix="storbench-s3-") as workdir:
        sent, failed = s3objects.remove(points, run.run_id, workdir, fio.s3_run_tag(run.token))
    run.events.add(
        "s3-cleanup",
        f"removed the run's objects: {sent:,} DELETE requests"
        + (f"; failed: {'; '.join(failed)}" if failed else ""),
        {"requests": sent, "failed": failed},
    )
    return failed


def _rados_slots(point: Point) -> list[tuple[Target, int | None]]:
    """The rados targets of a fio point, each with its host's index (None without hosts)."""
    if point.hosts:
        return [(h.target, i) for i, h in enumerate(point.hosts) if h.target.kind == "rados"]
    return [(point.target, None)] if point.target.kind == "rados" else []


def _check_fio(points: list[Point]) -> None:
    if fio.fio_path() is None:
        if os.environ.get("STORBENCH_FIO", "fio") != "fio":
            raise PreflightError(
                f"STORBENCH_FIO={fio.FIO} is not an executable fio",
                fix="point STORBENCH_FIO at a fio binary, or unset it to use storbench's own "
                f"build ({fio.OWN_BUILD}) or else fio from PATH",
            )
        raise PreflightError(
            "fio is not installed (no `fio` on PATH)",
            fix="install it: apt-get install fio (or run `make setup`)",
        )
    engines = fio.available_engines()
    for p in local_points(points):
        eng = str(p.params.get("ioengine", "psync"))
        if eng.startswith("external:"):
            continue
        if eng == "http" and engines and eng not in engines:
            raise PreflightError(
                f"fio at {fio.fio_path()} ({fio.fio_version()}) has no http engine, which s3 "
                "targets need (Debian's fio package is built without it)",
                fix="run `make setup` (or `bash scripts/build-fio-http.sh` as root: Debian's "
                "own fio source built with it into /usr/local/lib/storbench/fio, a few "
                "minutes), or point STORBENCH_FIO at a fio that has it",
            )
        if engines and eng not in engines:
            raise PreflightError(
                f"workload {p.workload!r} needs fio's {eng!r} engine, which this fio "
                f"({fio.fio_version()}) does not have",
                fix=f"choose one of: {', '.join(sorted(engines))}",
            )


def _check_buckets(points: list[Point]) -> list[str]:
    """Every s3 bucket takes this run's objects, before any load (s3objects.probe): the
    keys, the bucket and the service, each refused with what is wrong and its fix. A
    missing bucket is created where the target says ``create_bucket: true``; what was
    created is returned, in words."""
    targets = list(dict.fromkeys(t for p in points for t in s3objects.s3_targets(p)))
    created: list[str] = []
    with tempfile.TemporaryDirectory(prefix="storbench-s3-") as tmp:
        for t in targets:
            refused = s3objects.probe(t, tmp)
            if refused is not None and refused[2] == "404" and t.create_bucket:
                s3bucket.create(t)
                created.append(f"created bucket {t.path!r} at {t.endpoint} (create_bucket)")
                refused = s3objects.probe(t, tmp)
            if refused is not None:
                raise PreflightError(refused[0], fix=refused[1] or None)
    return created


def _unchecked_gets(points: list[Point]) -> list[str]:
    """A warning for each s3 target with mixed points (GETs and PUTs) whose fio keeps quiet
    about a GET that finds no object (s3objects.missing_gets_unseen): fio checks no read of
    a mixed job, so those GETs would count as successes."""
    mixed: dict[Target, list[str]] = {}
    for p in points:
        if fio.reads(p) and workload_writes(p.params):
            for t in s3objects.s3_targets(p):
                mixed.setdefault(t, []).append(p.workload)
    if not mixed:
        return []
    out = []
    with tempfile.TemporaryDirectory(prefix="storbench-s3-") as tmp:
        for t, names in mixed.items():
            if s3objects.missing_gets_unseen(t, tmp):
                out.append(
                    f"{t.label}: this fio ({fio.fio_path()}) keeps quiet about a GET that "
                    "finds no object (HTTP 404: its http engine reads it as zeroes and counts "
                    f"a success, and checks no read of a mixed job), so a failed GET of "
                    f"{', '.join(dict.fromkeys(names))} would count as a success; storbench's "
                    "own build of fio says so (`make setup`)"
                )
    return out


def _check_jobs(points: list[Point]) -> None:
    """Let fio parse every job of the plan in one call (values fio would reject)."""
    if fio.fio_path() is None or not points:
        return
    seen: dict[str, Point] = {}
    sections = []
    engines = fio.available_engines()
    for p in points:
        if p.hosts and engines and str(p.params.get("ioengine", "psync")) not in engines:
            continue  # an engine only the remote hosts have: their probe checks it
        text = fio.host_job_file(p, 0) if p.hosts else fio.job_file(p)
        body = text.split("\n", 2)[2]  # drop the comment and section header
        if body in seen:
            continue
        seen[body] = p
        sections.append(f"[p{p.index}]\n{body}")
    with tempfile.TemporaryDirectory(prefix="storbench-check-") as tmp:
        complaint = fio.parse_only("\n".join(sections), tmp)
    if complaint:
        raise PreflightError(
            f"fio rejects the plan's job options: {complaint}",
            fix="correct the option named above (`fio --cmdhelp=OPTION` shows what it accepts)",
        )


def _written_at(doc: dict[str, Any]) -> float | None:
    """When fio wrote the document (the end of its run): ``timestamp_ms``, else ``timestamp``
    (s). Of the versions in tests/data/fio-versions, 2.2.10 has only ``timestamp``, 2.12
    and later both, 2.1.11 and older neither (None)."""
    for key, scale in (("timestamp_ms", 1000), ("timestamp", 1)):
        v = doc.get(key)
        if isinstance(v, int | float) and not isinstance(v, bool) and v > 0:
            return v / scale
    return None


def _started_at(group: dict[str, Any], ended: float | None) -> float | None:
    """When the group's jobs started: the end less the longest job's ``elapsed`` (whole
    seconds of wall time; fio 2.2.10 and later), else None."""
    jobs = group.get("jobs") or group.get("client_stats") or []
    elapsed = [j.get("elapsed") for j in jobs if isinstance(j, dict)]
    secs = [e for e in elapsed if isinstance(e, int | float) and not isinstance(e, bool)]
    if ended is None or not secs:
        return None
    return ended - max(secs)
