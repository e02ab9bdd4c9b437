"""Execute points in order, record each measurement at once, handle Ctrl-C and fail-fast.

The runner knows nothing about presentation: it reports progress to an observer the CLI
passes in. Ctrl-C (or SIGTERM) sends fio SIGINT so it stops cleanly; the point that was
cut short is not recorded, every finished one is, and the run is marked interrupted so
``storbench resume`` can finish it.

Points with hosts run through fio's client/server mode; when one of them includes the
``local`` host, the runner starts a private fio server on loopback for the run (and stops
it at the end). A host that fails during a point leaves that point ``partial`` (recorded,
with the other hosts' data); the run goes on unless ``fail_fast``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from types import FrameType
from typing import Protocol

from storbench.engines import fio
from storbench.errors import UserError
from storbench.metrics import Measurement
from storbench.plan import Point
from storbench.preflight import directory_files, local_points, safety
from storbench.store import Store


class Observer(Protocol):
    def point_started(self, point: Point, n: int, total: int) -> None: ...
    def point_finished(
        self, point: Point, meas: Measurement, n: int, total: int, seconds: float
    ) -> None: ...
    def point_interrupted(self, point: Point) -> None: ...


@dataclass
class Outcome:
    status: str  # completed | failed | interrupted
    ran: int = 0
    failed: int = 0
    failures: list[tuple[Point, str]] = field(default_factory=list)


class _Stop:
    def __init__(self) -> None:
        self.requested = False
        self.count = 0

    def __call__(self) -> bool:
        return self.requested


@contextlib.contextmanager
def _signals(stop: _Stop) -> Iterator[None]:
    def handler(signum: int, frame: FrameType | None) -> None:
        stop.requested = True
        stop.count += 1
        if stop.count > 1:
            raise KeyboardInterrupt

    old_int = signal.signal(signal.SIGINT, handler)
    old_term = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old_int)
        signal.signal(signal.SIGTERM, old_term)


def execute(
    store: Store,
    run_id: int,
    points: list[Point],
    observer: Observer,
    *,
    total: int,
    fail_fast: bool = False,
) -> Outcome:
    """Run ``points`` (all of a run, or the pending ones on resume) and record each."""
    stop = _Stop()
    outcome = Outcome(status="completed")
    workdir = tempfile.mkdtemp(prefix=f"storbench-run{run_id}-")
    hosts = fio.HostContext(names=_host_names(store, run_id))
    server: fio.FioServer | None = None
    if any(h.local for p in points for h in p.hosts):
        server = fio.FioServer(cwd=workdir)
        try:
            server.start()
        except OSError as e:
            store.set_status(run_id, "failed")
            shutil.rmtree(workdir, ignore_errors=True)
            raise UserError(
                f"cannot start the fio server of the `local` host: {e}",
                fix="check that fio runs here (`fio --server=127.0.0.1,PORT`)",
            ) from None
        hosts.local_port = server.port
    store.set_status(run_id, "running", ended=False)
    try:
        with _signals(stop):
            for n, point in enumerate(points, 1):
                if stop():
                    outcome.status = "interrupted"
                    break
                observer.point_started(point, n, len(points))
                try:
                    fr = fio.run_point(
                        point, workdir, run_id=run_id, total=total, should_stop=stop, hosts=hosts
                    )
                except KeyboardInterrupt:
                    outcome.status = "interrupted"
                    observer.point_interrupted(point)
                    break
                if fr.interrupted or stop():
                    outcome.status = "interrupted"
                    observer.point_interrupted(point)
                    break
                meas = fr.measurement or Measurement(status="failed", error="no result")
                store.record(
                    run_id,
                    point,
                    meas,
                    engine="fio",
                    command=fr.command,
                    job_file=fr.job_text,
                    raw_output=fr.raw_output,
                    stderr=fr.stderr,
                    started_at=fr.started_at,
                    ended_at=fr.ended_at,
                )
                outcome.ran += 1
                observer.point_finished(point, meas, n, len(points), fr.ended_at - fr.started_at)
                if meas.status != "ok":
                    outcome.failed += 1
                    outcome.failures.append((point, meas.error or meas.status))
                    if fail_fast:
                        outcome.status = "failed"
                        break
    finally:
        if server is not None:
            server.stop()
        store.set_status(run_id, outcome.status)
        shutil.rmtree(workdir, ignore_errors=True)
    return outcome


def _host_names(store: Store, run_id: int) -> dict[str, str]:
    """Each remote host's own name (its fio server's probe reply, from the run's inventory)."""
    hosts = store.run(run_id).inventory.get("hosts") or []
    return {h["label"]: h["hostname"] for h in hosts if h.get("label") and h.get("hostname")}


def cleanup_files(points: list[Point], created: list[str]) -> list[str]:
    """Remove the scratch files storbench created for this run (and fio's files in directory
    targets, which carry storbench's name prefix). Returns what was removed."""
    removed = []
    points = local_points(points)  # the `local` host's targets; remote files stay remote
    for path in created:
        if os.path.isfile(path) and safety.created_by_storbench(path):
            os.unlink(path)
            removed.append(path)
    for t in dict.fromkeys(p.target for p in points if p.target.kind == "directory"):
        for wl in {p.workload for p in points if p.target == t}:
            for path in directory_files(t.path, wl):
                os.unlink(path)
                removed.append(path)
    return removed
