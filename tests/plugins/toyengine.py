"""A toy engine, registered from the test directory alone (STORBENCH_PLUGINS=toyengine, this
folder on PYTHONPATH): what the README's "Extension points" says a newcomer writes to add an
engine, and nothing else.

``engine: toy`` sleeps for its ``runtime`` and reports, by construction, ``ops`` reads per
second of ``bs`` bytes each: every figure storbench then shows is known in advance, so a test
can check the whole way from the plan to the report. It reads a ``file:`` target (and never
opens it: it does no I/O at all)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from storbench import hooks
from storbench.engines.base import (
    CheckOptions,
    CheckResult,
    Imported,
    PointResult,
    RunContext,
)
from storbench.model.errors import UserError
from storbench.model.findings import Facts, Finding
from storbench.model.metrics import DirectionResult, LatencyStats, Measurement
from storbench.model.units import parse_size, parse_time
from storbench.plan import Point
from storbench.plan.enginekeys import EngineKeys, Value
from storbench.plan.model import Target
from storbench.plan.schema import Key, Problem

NAME = "toy"
VERSION = "toy-1.0"
#: The most reads per second it reports.
MAX_OPS = 1_000_000


def _ops(value: Any, _: Mapping[Any, Any]) -> Problem | None:
    """Required (its values are checked as ``VALUES`` says, with the other keys')."""
    for v in value if isinstance(value, list) else [value]:
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            return f"`ops` must be a whole number ≥ 1, not {v!r}", "e.g. `ops: 1000`"
    return None


def _file_only(target: Target) -> Problem | None:
    if target.kind == "file":
        return None
    return f"the toy engine reads files, not the {target.kind} {target.path}", "use `- file: PATH`"


KEYS = EngineKeys(
    name=NAME,
    label="the toy engine",
    title="An `engine: toy` workload (a test's toy engine)",
    doc="Sleeps for `runtime` and reports `ops` reads per second of `bs` bytes each.",
    keys=(
        Key("engine", "`toy`", "Run the toy engine."),
        Key("ops", "whole number, or a list (an axis)", "Reads per second it reports.", check=_ops),
        Key("bs", "size", "The size of each read.", default="4k"),
        Key("runtime", "time", "How long it sleeps.", default="1s"),
    ),
    # what its keys' values are: the plan loader's checks of sizes, times and whole numbers
    values={
        "ops": Value(
            "int",
            needs_value=True,
            example=1000,
            lo=1,
            hi=MAX_OPS,
            why="the toy engine reports at most a million reads a second",
        ),
        "bs": Value("size", needs_value=True, example="8k"),
        "runtime": Value("time", needs_value=True, example=1),
    },
    option_word="toy key",
    required=("ops",),
    defaults={"bs": "4k", "runtime": "1s"},
    no_hosts=("the toy engine runs on this machine, not on `hosts:`", "remove `hosts:`"),
    no_drills="the toy engine does no I/O a drill could disturb",
    no_rounds=("the toy engine has no rounds", "leave `steady_state` out"),
    no_precondition="the toy engine writes nothing",
    sizes=False,
    target_problem=_file_only,
    writes=lambda params: False,
)


def figures(params: Mapping[str, Any]) -> tuple[int, int, float]:
    """(reads per second, bytes per read, seconds) of a toy point."""
    return int(params["ops"]), parse_size(params["bs"]), parse_time(params["runtime"])


class _Session:
    def __init__(self, run: RunContext) -> None:
        self.run_ctx = run

    def run(self, point: Point) -> PointResult:
        ops, bs, seconds = figures(point.params)
        started = time.time()
        time.sleep(seconds)
        total = round(ops * seconds)
        lat = LatencyStats(samples=total, mean=1e9 / ops, min=1e9 / ops, max=1e9 / ops)
        read = DirectionResult(
            iops=float(ops),
            bw_bytes=float(ops * bs),
            io_bytes=total * bs,
            total_ios=total,
            runtime_s=seconds,
            lat=lat,
        )
        measurement = Measurement(directions={"read": read}, jobs=1, engine_version=VERSION)
        raw = json.dumps({"ops": ops, "bs": bs, "seconds": seconds, "total": total})
        return PointResult(
            measurement=measurement,
            command=["toy", f"ops={ops}", f"bs={bs}", f"runtime={seconds:g}"],
            job_text=None,
            raw_output=raw,
            stderr="",
            started_at=started,
            ended_at=time.time(),
        )

    def close(self) -> None:
        pass


class ToyEngine:
    name = NAME
    label = "toy"
    runs_hosts = False

    def version(self) -> str | None:
        return VERSION

    def about(self) -> dict[str, Any]:
        return {"path": __file__, "version": VERSION}

    def advice(self, points: list[Point]) -> list[str]:
        return []

    def findings(self, point: Point, measurement: Measurement, facts: Facts) -> list[Finding]:
        return []

    def run_findings(
        self, points: Sequence[Point], measured: Callable[[int], Measurement | None]
    ) -> dict[int, list[Finding]]:
        return {}

    def describe(self, point: Point, total: int) -> str:
        ops, bs, seconds = figures(point.params)
        return f"toy ops={ops} bs={bs} runtime={seconds:g}\n"

    def validate(self, points: list[Point]) -> str:
        return "the toy engine's keys were checked by the plan's rules"

    def check(self, points: list[Point], options: CheckOptions) -> CheckResult:
        return CheckResult()

    def object_bytes(self, point: Point) -> int:
        return 0

    def open(self, run: RunContext, points: list[Point]) -> _Session:
        return _Session(run)

    def round_point(self, point: Point, seconds: float, n: int) -> Point:
        raise UserError("the toy engine has no rounds")

    def precondition_point(self, point: Point) -> Point:
        raise UserError("the toy engine writes nothing")

    def import_output(self, text: str) -> list[Imported]:
        raise UserError("the toy engine has no output to import")

    def cleanup(self, run: RunContext, points: list[Point], *, keep_recorded: bool) -> list[str]:
        return []


hooks.register_engine(NAME, "toyengine:ToyEngine", "toyengine:KEYS")
