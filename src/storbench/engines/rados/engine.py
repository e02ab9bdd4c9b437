"""rados bench behind the engine interface (engines/base.py).

Its writes leave objects in the pool on purpose (``--no-cleanup``: the seq and rand points
after them read them). Each write's run name and object prefix is an event of the run the
moment the point ends, so :meth:`RadosBenchEngine.cleanup` removes exactly those objects,
also after the process was killed and the run resumed.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
from collections.abc import Callable, Sequence
from typing import Any

from storbench.engines.base import (
    CheckOptions,
    CheckResult,
    Imported,
    PointResult,
    RunContext,
)
from storbench.engines.rados.command import cleanup, rados_version
from storbench.engines.rados.run import point_commands, run_point
from storbench.hosts.ceph import CephClient
from storbench.model.errors import UserError
from storbench.model.findings import Facts, Finding
from storbench.model.metrics import Measurement
from storbench.model.units import UnitError, parse_size
from storbench.plan import Point


class RadosBenchEngine:
    name = "rados-bench"
    label = "rados bench"
    runs_hosts = False

    def version(self) -> str | None:
        return rados_version()

    def about(self) -> dict[str, Any]:
        return {"path": shutil.which("rados"), "version": rados_version()}

    def advice(self, points: list[Point]) -> list[str]:
        return []

    def findings(self, point: Point, measurement: Measurement, facts: Facts) -> list[Finding]:
        return []  # rados bench reads only objects it wrote; the common checks apply

    def run_findings(
        self, points: Sequence[Point], measured: Callable[[int], Measurement | None]
    ) -> dict[int, list[Finding]]:
        return {}

    def describe(self, point: Point, total: int) -> str:
        return "".join(shlex.join(cmd) + "\n" for cmd in point_commands(point))

    def validate(self, points: list[Point]) -> str:
        return "rados bench's options were checked by the plan's rules"

    def check(self, points: list[Point], options: CheckOptions) -> CheckResult:
        return CheckResult()  # the rados tool and the cluster: preflight's Ceph checks

    def round_point(self, point: Point, seconds: float, n: int) -> Point:
        raise UserError(
            "rados bench runs no steady-state rounds: each run writes or reads its own "
            "named objects",
            fix="measure the pool through fio's rados engine, or leave `steady_state` out",
        )

    def precondition_point(self, point: Point) -> Point:
        raise UserError(
            "rados bench preconditions nothing: a pool has no capacity to fill",
            fix="leave `precondition` out for rados bench workloads",
        )

    def import_output(self, text: str) -> list[Imported]:
        raise UserError(
            "rados bench's output cannot be imported yet",
            fix="run the benchmark from a plan (engine: rados-bench)",
        )

    def object_bytes(self, point: Point) -> int:
        """Each object a write point stores is one op of ``bs`` bytes."""
        try:
            return parse_size(point.params.get("bs", 0) or 0)
        except UnitError:
            return 0

    def open(self, run: RunContext, points: list[Point]) -> _Session:
        return _Session(run)

    def cleanup(self, run: RunContext, points: list[Point], *, keep_recorded: bool) -> list[str]:
        """Remove the objects of the run's writes (those of recorded points stay with
        ``keep_recorded``: a resumed run's seq and rand points read them)."""
        left: list[str] = []
        recorded = run.events.recorded() if keep_recorded else set()
        groups: dict[tuple[str, str | None, str | None], list[tuple[str, str | None]]] = {}
        kept = 0
        for d in run.events.of("rados-objects"):
            if d.get("removed"):
                continue
            if keep_recorded and d.get("point") in recorded:
                kept += 1
                continue
            groups.setdefault((d["pool"], d.get("conf"), d.get("client")), []).append(
                (d["run_name"], d.get("prefix"))
            )
        for (pool, conf, client), runs in groups.items():
            runs = list(dict.fromkeys(runs))
            try:
                rest = cleanup(pool, runs, CephClient(conf, client), verify="stat")
            except (OSError, RuntimeError, ValueError, subprocess.TimeoutExpired) as e:
                rest = [f"(cleanup failed: {e})"]
            left += rest
            run.events.add(
                "rados-cleanup",
                f"removed the objects of {len(runs)} rados bench run(s) from pool {pool}"
                + (f"; {len(rest)} left" if rest else ""),
                {"pool": pool, "run_names": [r for r, _ in runs], "left": rest[:100]},
            )
        if kept:
            run.events.add(
                "rados-objects",
                f"kept the objects of {kept} finished rados bench write(s) for `storbench "
                f"resume {run.run_id}`, which removes them at its end",
                {"kept": kept, "removed": True},
            )
        return left


class _Session:
    def __init__(self, run: RunContext) -> None:
        self.run_ctx = run

    def run(self, point: Point) -> PointResult:
        ctx = self.run_ctx
        pr = run_point(point, ctx.workdir, run_id=ctx.run_id, should_stop=ctx.should_stop)
        ctx.series(point, pr.intervals)  # rados bench's table, read when the point ends
        for run_name, prefix in pr.writes:
            ctx.events.add(
                "rados-objects",
                f"rados bench {run_name} wrote objects {prefix or '?'}_object* to pool "
                f"{point.target.pool}",
                {
                    "pool": point.target.pool,
                    "conf": point.target.conf,
                    "client": point.target.client,
                    "run_name": run_name,
                    "prefix": prefix,
                    "point": point.index,
                },
            )
        return PointResult(
            measurement=pr.measurement,
            command=pr.command,
            job_text=None,
            raw_output=pr.raw_output,
            stderr=pr.stderr,
            started_at=pr.started_at,
            ended_at=pr.ended_at,
            interrupted=pr.interrupted,
        )

    def prepare(self, point: Point, *, after: Point, ready: Callable[[], bool]) -> bool:
        return False  # rados bench points are not started ahead

    def withdraw(self) -> None:
        pass

    def close(self) -> None:
        pass
