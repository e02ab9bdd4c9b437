"""Health of a Ceph cluster while a run executes: sampled in a background thread, every
change reported (the runner records each as an event on the run's timeline).

A sample is ``ceph status`` (health and the cluster's PG states), plus the PG states of
each benchmarked pool when some PG of the cluster is not active: Ceph 16.2 says only
HEALTH_WARN when an OSD under a size 2 / min_size 2 pool stops, and reports the pool's
inactive PGs (``PG_AVAILABILITY``) only 60 s later, though no I/O to the pool completes from
the first second (preflight/ceph/cluster_health.py). The PG states show that at once.

A *change* is a sample whose (status, check codes, inactive PG states per pool) differ from
the previous sample's; the messages and counts inside the checks may change without one
(``PG_DEGRADED``'s object counts move with every write). A query that fails makes the
sample ``UNREACHABLE`` (the error in its detail); nothing raises in the monitor's thread.

Each sample costs 1 + len(pools) ``ceph`` commands, run in parallel; each is ~0.3 s of CPU
on the client (the CLI's start-up; measured on 2 cores: 0.6 s of CPU and 0.6-1.2 s of wall
time per sample with one pool). At the default interval of 10 s that is a steady ~6 % of
one core with one pool: keep the interval well above the sample's duration.
"""

from __future__ import annotations

import dataclasses
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from storbench.preflight.ceph import (
    CephCommandError,
    ceph_json,
    inactive_pgs,
    pool_pg_states,
)

__all__ = ["UNREACHABLE", "HealthMonitor", "HealthSample", "sample_health"]

#: ``ceph status``'s pgmap figures of the cluster's throughput a sample keeps (bytes/s).
IO_KEYS = ("read_bytes_sec", "write_bytes_sec", "recovering_bytes_per_sec")
#: The status of a sample whose query failed (the cluster could not be asked).
UNREACHABLE = "UNREACHABLE"
#: status, check codes, (pool, ((PG state, count), ...)) per pool with inactive PGs
_Key = tuple[str, tuple[str, ...], tuple[tuple[str, tuple[tuple[str, int], ...]], ...], bool | None]
#: Seconds stop() waits for the thread to end (a ceph command in flight ends within
#: ceph_json's timeout; the thread is a daemon thread, and reports nothing after stop()).
STOP_TIMEOUT = 5.0


@dataclass(frozen=True)
class HealthSample:
    """One look at a cluster's health.

    - ``at``: unix time (s) the sample was taken (when its queries started)
    - ``status``: ``HEALTH_OK`` | ``HEALTH_WARN`` | ``HEALTH_ERR`` | ``UNREACHABLE``
    - ``checks``: the health check codes, sorted (``OSD_DOWN``, ``PG_DEGRADED``, ...)
    - ``inactive``: pool -> {PG state: count} of its PGs that serve no I/O (see
      :func:`storbench.preflight.ceph.inactive_pgs`); a pool with all PGs active is left out
    - ``detail``: the checks as ``ceph status`` gives them (code -> severity, summary),
      or ``{"error": text}`` when the cluster could not be asked; a pool
      whose PG states could not be read adds ``{"pg_errors": {pool: text}}``
    - ``clean``: whether every PG of the cluster is active+clean: HEALTH_OK alone is not
      healed (it shows for a second after an OSD restarts while no PG of a size-2 pool is
      active)
    - ``io``: ``read_bytes_sec``, ``write_bytes_sec`` (client I/O) and
      ``recovering_bytes_per_sec`` of the cluster (``ceph status``'s pgmap; 0 when absent)
    """

    at: float
    status: str
    checks: tuple[str, ...] = ()
    inactive: dict[str, dict[str, int]] = field(default_factory=dict)
    detail: dict[str, Any] = field(default_factory=dict)
    #: every PG of the cluster active+clean (None: not known, e.g. what preflight saw)
    clean: bool | None = None
    #: the cluster's client and recovery throughput as ``ceph status`` gives it (bytes/s)
    io: dict[str, float] = field(default_factory=dict)

    @classmethod
    def of(
        cls,
        status: str,
        checks: dict[str, Any],
        pg_states: dict[str, dict[str, int]] | None = None,
        *,
        at: float | None = None,
        pg_errors: dict[str, str] | None = None,
    ) -> HealthSample:
        """A sample from what :func:`~storbench.preflight.ceph.health` and
        :func:`~storbench.preflight.ceph.pool_pg_states` (per pool) returned -- e.g. what
        preflight saw, as the monitor's ``initial`` baseline. ``pg_errors``: pool -> why its
        PG states could not be read."""
        inactive = {}
        for pool, states in (pg_states or {}).items():
            bad = inactive_pgs(states)
            if bad:
                inactive[pool] = dict(sorted(bad.items()))
        return cls(
            at=time.time() if at is None else at,
            status=status,
            checks=tuple(sorted(checks)),
            inactive=dict(sorted(inactive.items())),
            detail={**checks, **({"pg_errors": dict(pg_errors)} if pg_errors else {})},
        )

    @classmethod
    def unreachable(cls, error: str, *, at: float | None = None) -> HealthSample:
        return cls(
            at=time.time() if at is None else at, status=UNREACHABLE, detail={"error": error}
        )

    def key(self) -> _Key:
        """What a change is a change of: status, check codes, inactive PG states per pool,
        all PGs active+clean or not."""
        return (
            self.status,
            self.checks,
            tuple((p, tuple(sorted(s.items()))) for p, s in sorted(self.inactive.items())),
            self.clean,
        )

    def differs(self, other: HealthSample) -> bool:
        """Whether this is a change from ``other``: their keys differ (the PGs' cleanness
        only where both know it: preflight's baseline does not)."""
        a, b = self.key(), other.key()
        if self.clean is None or other.clean is None:
            a, b = a[:3], b[:3]
        return a != b

    def message(self) -> str:
        """One line: ``HEALTH_WARN: OSD_DOWN (1 osds down); PG_DEGRADED (...); pool deg: 8
        PGs inactive (8 undersized+degraded+peered)``."""
        if self.status == UNREACHABLE:
            return f"{UNREACHABLE}: {self.detail.get('error') or 'the cluster did not answer'}"
        parts = []
        for code in self.checks:
            check = self.detail.get(code)
            summary = (check.get("summary") or {}) if isinstance(check, dict) else {}
            text = summary.get("message") if isinstance(summary, dict) else None
            parts.append(f"{code} ({text})" if text else code)
        for pool, states in self.inactive.items():
            n = sum(states.values())
            listed = ", ".join(f"{c} {s}" for s, c in states.items())
            parts.append(f"pool {pool}: {n} PG{'s' if n != 1 else ''} inactive ({listed})")
        for pool, error in (self.detail.get("pg_errors") or {}).items():
            parts.append(f"pool {pool}: PG states unknown ({error})")
        if self.clean is False and not self.inactive:
            parts.append("not every PG active+clean")
        return self.status + (": " + "; ".join(parts) if parts else "")

    def to_dict(self) -> dict[str, Any]:
        return {
            "at": self.at,
            "status": self.status,
            "checks": list(self.checks),
            "inactive": {p: dict(s) for p, s in self.inactive.items()},
            "detail": self.detail,
            **({"clean": self.clean} if self.clean is not None else {}),
            **({"io": self.io} if self.io else {}),
        }


def sample_health(
    conf: str | os.PathLike[str] | None,
    pools: list[str],
    *,
    executor: ThreadPoolExecutor | None = None,
) -> HealthSample:
    """Ask the cluster once: ``ceph status`` (the health and the cluster's PG states); only
    when some PG of the cluster is not active, each pool's PG states too (in parallel). One
    ``ceph`` process per sample while all is well: each costs ~0.3 s of CPU on the client
    (measured, bench/rados), which a benchmark on a small client feels. Never raises for a
    failing query: the status query failing gives ``UNREACHABLE``, a pool's PG query
    failing leaves that pool's states unknown (``detail["pg_errors"]``)."""
    at = time.time()
    try:
        doc = ceph_json(conf, "status")
        h = doc.get("health") or {}
        status, checks = str(h.get("status")), dict(h.get("checks") or {})
        pgmap = doc.get("pgmap") or {}
        by_state = {str(s["state_name"]): int(s["count"]) for s in pgmap.get("pgs_by_state") or []}
        num_pgs = int(pgmap.get("num_pgs") or 0)
    except CephCommandError as e:
        return HealthSample.unreachable(str(e), at=at)
    except Exception as e:  # a reply of an unexpected shape: still no exception
        return HealthSample.unreachable(f"unexpected reply to `ceph status`: {e!r}", at=at)
    more = {
        "clean": num_pgs > 0 and by_state.get("active+clean", 0) == num_pgs,
        "io": {k: float(pgmap.get(k) or 0) for k in IO_KEYS},
    }
    if not pools or (not inactive_pgs(by_state) and sum(by_state.values()) == num_pgs):
        return dataclasses.replace(HealthSample.of(status, checks, {}, at=at), **more)
    own = executor is None
    ex = executor or ThreadPoolExecutor(max_workers=len(pools))
    try:
        pgs = {pool: ex.submit(pool_pg_states, conf, pool) for pool in pools}
        states: dict[str, dict[str, int]] = {}
        errors: dict[str, str] = {}
        for pool, fut in pgs.items():
            try:
                states[pool] = fut.result()
            except CephCommandError as e:
                errors[pool] = str(e)
            except Exception as e:  # a reply of an unexpected shape: still no exception
                errors[pool] = f"unexpected reply to `ceph pg ls-by-pool {pool}`: {e!r}"
    finally:
        if own:
            ex.shutdown(wait=True)
    sample = HealthSample.of(status, checks, states, at=at, pg_errors=errors)
    return dataclasses.replace(sample, **more)


class HealthMonitor:
    """Samples a Ceph cluster's health in a background thread while a run executes and
    reports every change.

    ``on_change(sample, previous)`` is called from the monitor's thread, in order, for every
    sample whose :meth:`HealthSample.key` differs from the previous sample's; ``previous`` is
    the sample of the change before (``previous.at`` is when that state was first seen), or
    ``initial`` (what preflight saw); without ``initial`` the first sample is a change with
    ``previous`` None; :attr:`last` is the latest change. The first sample is taken at
    :meth:`start` (one ``interval`` later with ``initial``: not as the first point starts),
    then one every ``interval`` seconds (counted from the start of the
    previous one; back to back when a sample takes longer: ~0.3 s of CPU per ceph command).
    An exception from ``on_change`` is kept in :attr:`callback_errors` and sampling goes on.
    After :meth:`stop` returns, ``on_change`` is not called again.

    A :class:`storbench.store.Store` may be written from ``on_change`` directly
    (``store.events.add``): it is safe to use from several threads.

    ``conf`` is what the ceph CLI is given (preflight/ceph/commands.py): a ceph.conf path, anything
    path-like, or None for ceph's default.
    """

    def __init__(
        self,
        conf: str | os.PathLike[str] | None,
        pools: list[str],
        on_change: Callable[[HealthSample, HealthSample | None], None],
        *,
        interval: float = 10.0,
        initial: HealthSample | None = None,
        on_sample: Callable[[HealthSample], None] | None = None,
    ) -> None:
        if interval <= 0:
            raise ValueError(f"interval must be > 0 s, not {interval!r}")
        self.conf = conf
        self.pools = list(pools)
        self.on_change = on_change
        self.interval = float(interval)
        self.last: HealthSample | None = initial
        self.on_sample = on_sample  # every sample (its throughput), from the thread
        self.callback_errors: list[BaseException] = []
        self._count = 0
        self._stop = threading.Event()
        self._emit = threading.Lock()  # held while on_change runs; stop() waits for it
        self._closed = False
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self._thread is not None:
            raise RuntimeError("HealthMonitor.start() called twice")
        self._thread = threading.Thread(
            target=self._loop, name="storbench-health-monitor", daemon=True
        )
        self._thread.start()

    def stop(self, timeout: float = STOP_TIMEOUT) -> None:
        """End sampling: wakes the thread at once and joins it (at most ``timeout`` s: a
        ceph command in flight is not waited for longer; its result is dropped). Idempotent."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
        with self._emit:  # an on_change in progress finishes; none starts after this
            self._closed = True

    def samples(self) -> int:
        """How many samples were taken so far."""
        return self._count

    def __enter__(self) -> HealthMonitor:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _loop(self) -> None:
        if self.last is not None:
            # a baseline from preflight: the first sample one interval later, not as the
            # first point starts (a sample costs the benchmark client CPU: bench/rados)
            self._stop.wait(self.interval)
        with ThreadPoolExecutor(max_workers=max(1, len(self.pools))) as ex:
            while not self._stop.is_set():
                started = time.monotonic()
                sample = sample_health(self.conf, self.pools, executor=ex)
                self._count += 1
                if self._stop.is_set():
                    break
                if self.on_sample is not None:
                    try:
                        self.on_sample(sample)
                    except Exception as e:
                        self.callback_errors.append(e)
                previous = self.last
                if previous is None or sample.differs(previous):
                    self.last = sample
                    with self._emit:
                        if self._closed:
                            break
                        try:
                            self.on_change(sample, previous)
                        except Exception as e:
                            self.callback_errors.append(e)
                self._stop.wait(max(0.0, self.interval - (time.monotonic() - started)))
