"""The watchdog of fio on an S3 target: fio's http engine (fio 3.33 engines/http.c) sets no
timeout on its requests, so one that a service accepted and never answered holds fio for
ever, and fio's SIGINT cannot end a job stuck in it (curl retries its wait). So while fio
runs an S3 load (a point, a prefill, the DELETEs of a cleanup) storbench watches the
requests it completes, as fio's status reports count them (``--status-interval``, every
direction's ``total_ios`` summed), and when none completed for longer than the load's
:func:`limit_s` it kills fio and its job processes: the load fails with that reason, and
the run goes on.

The limit is what a request may take on a service that answers: ``STORBENCH_S3_TIMEOUT``
seconds (default 10, what each request of preflight's checks may take), plus the point's
own ``runtime`` and ``ramp_time`` (no request of a working service takes longer than the
point itself) and the pauses it asks for (``startdelay``, ``thinktime``), plus the time its
objects in flight (``bs`` x ``numjobs`` x ``iodepth``) take at :data:`SLOWEST_BYTES_S`
(large objects over a slow link).
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from collections.abc import Callable, Mapping
from typing import Any

from storbench.model.units import UnitError, parse_size, parse_time

#: How long the service may take to answer one request (``STORBENCH_S3_TIMEOUT`` seconds):
#: each request of the checks before any load, and over the time of a load's own (above).
ANSWER_TIMEOUT = float(os.environ.get("STORBENCH_S3_TIMEOUT") or 10)

#: The slowest that a load's objects in flight may move, all of them together, bytes/s.
SLOWEST_BYTES_S = 10 * 2**20

#: The options of a load's own time, each with the unit of a bare number (fio's): its
#: runtime (``timeout`` is its alias) and ramp, its start's delay, its pause between I/Os.
_TIMES = {"runtime": 1.0, "timeout": 1.0, "ramp_time": 1.0, "startdelay": 1.0, "thinktime": 1e-6}
_SIZES = ("bs", "blocksize", "bsrange", "blocksize_range", "bssplit")
_SIZE_PARTS = re.compile(r"[,:\-/]")


def limit_s(params: Mapping[str, Any]) -> float:
    """How long fio may go without completing a request of the load ``params`` (fio's
    options) before it is taken for stuck (module docstring)."""
    seconds = ANSWER_TIMEOUT
    for key, unit in _TIMES.items():
        parts = [p.strip() for p in str(params.get(key, "")).split("-")]  # 5-10: a range
        values = [0.0]
        for part in parts:
            with contextlib.suppress(UnitError, ValueError):
                values.append(float(part) * unit if part.isdigit() else parse_time(part))
        seconds += max(values)
    size = max(n for key in _SIZES for n in _numbers(params, key, parse_size))
    jobs = max(_numbers(params, "numjobs", int))
    depth = max(_numbers(params, "iodepth", int))
    return seconds + size * jobs * depth / SLOWEST_BYTES_S


def bound_s(params: Mapping[str, Any]) -> float:
    """How long the whole load ``params`` may take where fio shows no progress until it ends
    (fio's client, for hosts): :func:`limit_s`, and for a load without a runtime (a size of
    objects to move: a prefill, a point that writes them once) the time its bytes take at
    :data:`SLOWEST_BYTES_S`."""
    seconds = limit_s(params)
    if any(k in params for k in ("runtime", "timeout")):
        return seconds
    size = max(_numbers(params, "io_size", parse_size) or [0])
    if "io_size" not in params:
        size = max(_numbers(params, "size", parse_size))
    jobs = max(_numbers(params, "numjobs", int))
    loops = max(_numbers(params, "loops", int))
    return seconds + size * jobs * loops / SLOWEST_BYTES_S


def _numbers(params: Mapping[str, Any], key: str, parse: Callable[[str], int]) -> list[int]:
    """Every number in the option ``key`` (``4k,64k``, ``4k-1m``, ``4k/50:64k/50``), or [1]."""
    out = []
    for part in _SIZE_PARTS.split(str(params.get(key, ""))):
        try:
            out.append(parse(part.strip()))
        except (UnitError, ValueError):
            continue
    return out or [1]


class Watchdog:
    """Whether an S3 load's fio has gone longer than ``limit`` seconds without completing a
    request: :meth:`progress` with the count of requests completed (each status report),
    called (``stalled()``) as fio runs; :attr:`fired` says why, once it is."""

    def __init__(
        self, limit: float, where: str, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.limit = limit
        self.where = where
        self.clock = clock
        self.fired: str | None = None
        self._count: int | None = None
        self._since = clock()

    @classmethod
    def of(cls, params: Mapping[str, Any], where: str) -> Watchdog:
        return cls(limit_s(params), where)

    def progress(self, completed: int) -> None:
        """fio reported ``completed`` requests (any change is progress: fio starts its
        counters again after ``ramp_time``)."""
        if completed != self._count:
            self._count = completed
            self._since = self.clock()

    def __call__(self) -> bool:
        if self.fired is None and self.clock() - self._since > self.limit:
            self.fired = (
                f"no S3 request completed for {self.limit:.0f} s: {self.where} stopped "
                "answering (fio's http engine sets no timeout), so storbench stopped fio; "
                "STORBENCH_S3_TIMEOUT=SECONDS allows each request longer"
            )
        return self.fired is not None
