"""What an executing run writes to the store as it goes, beside its measurements: the
points' time series (as the engines report their intervals), the run's events (as the
engines see them) and its heartbeat (storbench.store.liveness)."""

from __future__ import annotations

import contextlib
import dataclasses
import threading
from collections.abc import Callable
from typing import Any, Protocol

from storbench.hosts.load import HostSample
from storbench.model.series import Interval
from storbench.plan import Point
from storbench.store import Store, StoreError, liveness


class Observer(Protocol):
    """What hears each batch of intervals (the runner's observer: progress shows the
    latest figures)."""

    def intervals(self, point: Point, rows: list[Interval]) -> None: ...


class StoreSeries:
    """Where the engines' intervals go while a point runs: into the database at once. A
    database that fails then (disk full) costs the series, not the point: the engine's
    process is not left running behind an exception."""

    def __init__(self, store: Store, run_id: int, observer: Observer | None = None) -> None:
        self.store, self.run_id = store, run_id
        self.observer = observer  # hears each batch too (progress shows the latest figures)
        self.failed: str | None = None
        self.shift: dict[int, tuple[int, int]] = {}  # point -> (ms, seq) added to its rows
        self.next_seq: dict[int, int] = {}

    def clear(self, point_idx: int) -> None:
        """The point starts (again): what an earlier, interrupted try of it left goes."""
        self.clear_stored(point_idx)
        self.forget(point_idx)

    def clear_stored(self, point_idx: int) -> None:
        """What the database holds of the point's series and host samples goes."""
        self.store.series.clear(self.run_id, point_idx)
        self.store.host_samples.clear(self.run_id, point_idx)

    def forget(self, point_idx: int) -> None:
        """Where the point's series continues (continue_at) is forgotten: it starts at 0."""
        self.shift.pop(point_idx, None)
        self.next_seq.pop(point_idx, None)

    def host_sink(self, point: Point) -> Callable[[list[HostSample]], None]:
        """Where the point's host samples go (storbench.hosts.load): into the store at once;
        a failing database costs the samples, not the point."""

        def sink(rows: list[HostSample]) -> None:
            with contextlib.suppress(StoreError):
                self.store.host_samples.add(self.run_id, point.index, rows)

        return sink

    def continue_at(self, point_idx: int, t_ms: int) -> None:
        """What comes next for the point (a steady-state round's own series, from 0)
        continues its series: ``t_ms`` after it began, numbered after what it has."""
        self.shift[point_idx] = (t_ms, self.next_seq.get(point_idx, 0))

    def __call__(self, point: Point, rows: list[Interval]) -> None:
        if self.failed is not None or not rows:
            return
        t, seq = self.shift.get(point.index, (0, 0))
        if t or seq:
            rows = [dataclasses.replace(r, t_ms=r.t_ms + t, seq=r.seq + seq) for r in rows]
        last = max(r.seq for r in rows) + 1
        self.next_seq[point.index] = max(self.next_seq.get(point.index, 0), last)
        if self.observer is not None:
            self.observer.intervals(point, rows)
        try:
            self.store.series.add(self.run_id, point.index, rows)
        except StoreError as e:
            self.failed = str(e)


class StoreEvents:
    """The run's events in the store, as engines see them (engines/base.RunEvents)."""

    def __init__(self, store: Store, run_id: int) -> None:
        self.store = store
        self.run_id = run_id

    def add(self, kind: str, message: str, data: dict[str, Any]) -> None:
        self.store.events.add(self.run_id, kind, message, data)

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [e.data for e in self.store.events.of_run(self.run_id, kind)]

    def recorded(self) -> set[int]:
        return {m.point_idx for m in self.store.measurements.of_run(self.run_id)}


class _Heartbeat:
    """Writes the run's heartbeat every liveness.HEARTBEAT_INTERVAL seconds from a thread
    of its own, for as long as the run executes."""

    def __init__(self, store: Store, run_id: int) -> None:
        self.store = store
        self.run_id = run_id
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._beat, name="heartbeat", daemon=True)

    def _beat(self) -> None:
        while not self.done.wait(liveness.HEARTBEAT_INTERVAL):
            with contextlib.suppress(Exception):  # a busy database: the next beat
                self.store.runs.beat(self.run_id)

    def __enter__(self) -> _Heartbeat:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.done.set()
        self.thread.join()
