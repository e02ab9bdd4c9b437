"""The one interface every engine sits behind, and what passes through it.

An engine is a small table of operations, like fio's own ``struct ioengine_ops``: the
runner, the CLI and preflight call these and nothing else, so they never name fio or
rados bench. Adding an engine is one package under ``engines/`` with a class that has
these operations, and one line in ``engines/__init__.py``'s registry.

The life of a run, as the engines see it::

    validate(points)             no I/O: the options the engine would reject
    check(points, options)       before anything is created: tools, job options, hosts
    open(run, points) -> Session at the start of each session of the run (servers, ...)
      session.run(point)         per point: prepare what it reads, run, parse, validate
      session.close()            at the end of the session, whatever happened
    cleanup(run, points)         what the run left outside its files (Ceph objects)

Engines report what they leave behind (objects in a pool) as events of the run through
:class:`RunEvents`, so that a later ``storbench resume`` or ``cleanup`` finds it even when
this process was killed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from storbench.model.findings import Facts, Finding
from storbench.model.metrics import Measurement
from storbench.model.series import Interval
from storbench.plan import Point


@dataclass
class PointResult:
    """What an engine made of one point: the measurement and everything needed to trace it
    back to the engine (the exact command, job file and raw output)."""

    measurement: Measurement | None
    command: list[str] | list[list[str]]  # the argv, or one per process (several clients)
    job_text: str | None  # the exact job file, when the engine has one
    raw_output: str
    stderr: str
    started_at: float
    ended_at: float
    interrupted: bool = False


@dataclass
class Imported:
    """One result document an engine ran elsewhere (``storbench import``): what it measured,
    on what, with which options -- as read from the document itself."""

    measurement: Measurement
    target: str  # the file or device it names ("?" when it names none)
    workload: str | None  # its job's name, when it has one
    params: dict[str, Any]  # the workload's options, as the document gives them
    warnings: list[str] = field(default_factory=list)  # what the engine printed beside it
    group: int | None = None  # its reporting group, when the document holds several
    #: when it ran, on the clock of the machine that ran it, as the document says (epoch
    #: seconds; None when it does not say)
    started_at: float | None = None
    ended_at: float | None = None


class RunEvents(Protocol):
    """The run's event log as engines see it (the store behind it is the runner's)."""

    def add(self, kind: str, message: str, data: dict[str, Any]) -> None: ...

    def of(self, kind: str) -> list[dict[str, Any]]:
        """The data of every event of ``kind`` the run recorded, oldest first."""
        ...

    def recorded(self) -> set[int]:
        """The indices of the points the run has a measurement of."""
        ...


@dataclass
class RunContext:
    """One session of a run, as an engine sees it."""

    run_id: int
    workdir: str  # private to the session, removed at its end
    total: int  # points in the whole run (for the job files' comments)
    events: RunEvents
    should_stop: Callable[[], bool] = lambda: False
    #: each remote host's own name by label (what preflight's probes found)
    host_names: dict[str, str] = field(default_factory=dict)
    #: where a point's intervals go while it runs (its time series; the runner stores them
    #: at once, so a crash keeps what was measured)
    series: Callable[[Point, list[Interval]], None] = lambda point, rows: None
    #: the run's random token (store/runs.py): what names the objects it writes in a
    #: shared namespace (S3), which the run's id, 1 in every new database, cannot
    token: str | None = None


@dataclass
class CheckOptions:
    """What the user allowed and how long remote probes may take (``storbench run``'s flags)."""

    #: ``--destroy-data HOST:PATH`` values: (host, path) of remote targets the user vouches for
    remote_destroy_data: list[tuple[str, str]] = field(default_factory=list)
    host_timeout: float | None = None  # None: the engine's own default


@dataclass
class CheckResult:
    """What an engine's checks found: warnings to show, inventory to record (merged into
    the run's inventory by key) and the names of remote hosts by label."""

    warnings: list[str] = field(default_factory=list)
    inventory: dict[str, Any] = field(default_factory=dict)
    host_names: dict[str, str] = field(default_factory=dict)


class Session(Protocol):
    """An engine's part of one session of a run (see :meth:`Engine.open`)."""

    def run(self, point: Point) -> PointResult:
        """Run one point: prepare what it needs, run the engine, parse and validate.
        Raises UserError for a fault of the setup (the run stops), KeyboardInterrupt when
        interrupted twice; a failed measurement is a result with a failed status."""
        ...

    def prepare(self, point: Point, *, after: Point, ready: Callable[[], bool]) -> bool:
        """Optionally start ``point``'s engine ahead, while ``after`` (the point running
        now) runs, and let it go the moment ``after``'s load ends well, unless the run is
        asked to stop or ``ready()`` says no: the gap between two points is then only the
        process's own start, the point before's output read while the next one runs.
        :meth:`run` of ``point`` runs what was started (releasing it if it still waits).
        False: nothing was started (the engine cannot, or not for these points).
        Optional, with :meth:`withdraw`: a session without them is never asked."""
        ...

    def withdraw(self) -> None:
        """Stop what :meth:`prepare` started that no point has run (the run stopped)."""
        ...

    def close(self) -> None: ...


class Engine(Protocol):
    """One engine: the operations the runner, preflight and the CLI call."""

    #: the plan's name for it (``engine:`` of a workload); the registry's key
    name: str
    #: what the database records as the engine of each measurement
    label: str
    #: whether its points run on remote hosts (``hosts:``): then its :meth:`check` also
    #: vouches for ``--destroy-data HOST:PATH``, even when the plan has none of its points
    runs_hosts: bool

    def version(self) -> str | None:
        """The version of the engine that would run here (for the run's record)."""
        ...

    def about(self) -> dict[str, Any]:
        """The tool that would run here, for the inventory: ``path`` and ``version`` at
        least, and what it can do where that varies between builds (fio's ``ioengines``)."""
        ...

    def advice(self, points: list[Point]) -> list[str]:
        """What a reviewer would warn of in these points before they run: options the
        engine ignores as given (fio: ``iodepth`` above 1 with a synchronous ioengine).
        Printed by ``plan check`` and ``run``, and kept with the run."""
        ...

    def findings(self, point: Point, measurement: Measurement, facts: Facts) -> list[Finding]:
        """What only this engine can tell of a measurement of ``point`` once it ran: traps
        its options set (fio: buffered I/O over data that fits in memory, a queue a
        synchronous engine ignores); the checks every engine gets are analysis/findings.py's.
        Codes from model/findings.py; ``[]`` when there is nothing to say."""
        ...

    def run_findings(
        self, points: Sequence[Point], measured: Callable[[int], Measurement | None]
    ) -> dict[int, list[Finding]]:
        """What only the whole run shows of some of its measurements, once its points ran
        (``points``: this engine's points of the run; ``measured``: a point index's
        recorded measurement, None without one, read from the store when asked: ask only
        for those the check needs; fio: buffered reads beyond what the device gave with
        direct=1 in the same run), by point index; ``{}`` when there is nothing to say."""
        ...

    def describe(self, point: Point, total: int) -> str:
        """What would run for ``point``: its command lines or job file, as text ending in a
        newline (``storbench plan show`` prints it)."""
        ...

    def validate(self, points: list[Point]) -> str:
        """Refuse (PreflightError) options the engine rejects, without touching a target or
        a host (``storbench plan check``); returns a line saying what was checked."""
        ...

    def check(self, points: list[Point], options: CheckOptions) -> CheckResult:
        """Refuse (PreflightError) what cannot run: the engine missing here or on a host,
        options it rejects. ``points`` are the run's points of this engine."""
        ...

    def object_bytes(self, point: Point) -> int:
        """The size of each object ``point`` writes to a Ceph pool (preflight compares it
        with the pool's ``osd_max_object_size``); 0 when it writes none or it is unsaid."""
        ...

    def open(self, run: RunContext, points: list[Point]) -> Session:
        """Start what the session's points need (a server, ...); UserError when it cannot."""
        ...

    def round_point(self, point: Point, seconds: float, n: int) -> Point:
        """Round ``n`` (1-based) of ``point`` in steady-state rounds (storbench/execute/rounds.py):
        the point's workload for exactly ``seconds`` after its ramp, on its own random
        offsets. UserError when the engine cannot run rounds (the plan loader refuses such
        plans first)."""
        ...

    def precondition_point(self, point: Point) -> Point:
        """What writes ``point``'s whole target twice with 128 KiB sequential writes (SNIA's
        workload-independent preconditioning), as a point the session runs like any other.
        UserError when the engine cannot (the plan loader refuses such plans first)."""
        ...

    def import_output(self, text: str) -> list[Imported]:
        """Read a result the engine printed elsewhere (``storbench import``): one per result
        the document holds (fio: per reporting group); UserError when ``text`` is not one
        (or the engine has no output storbench can import)."""
        ...

    def cleanup(self, run: RunContext, points: list[Point], *, keep_recorded: bool) -> list[str]:
        """Remove what the run left outside its files (objects in a pool), recording each
        removal as an event; with ``keep_recorded`` what recorded points wrote stays (a
        resume reads it). Returns what could not be removed."""
        ...
