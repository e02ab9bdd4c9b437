"""The preconditioning event says what happened: a workload phase that ran its rounds out
without reaching steady state must not say it ran "to steady state" (its own data, the
verdict, says it did not). The phase runs through the real round logic
(execute/rounds.py) and the fio engine's round points, its rounds measured by recorded real
fio outputs (a session that answers each round from tests/data/fio)."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Any

import pytest

from storbench.engines import get as engine_named
from storbench.engines.base import PointResult
from storbench.execute.precondition import Preconditioner
from storbench.plan import Point, Target
from storbench.plan.steadykeys import SteadyState

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the harness modules
from stored_runs import recorded


class Events:
    def __init__(self) -> None:
        self.added: list[tuple[str, str, dict[str, Any]]] = []

    def add(self, kind: str, message: str, data: dict[str, Any]) -> None:
        self.added.append((kind, message, data))

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [d for k, _, d in self.added if k == kind]

    def recorded(self) -> set[int]:
        return set()


class Clock:
    def continue_at(self, point_idx: int, t_ms: int) -> None:
        pass

    def clear(self, point_idx: int) -> None:
        pass


class RecordedSession:
    """Each round measured by the next recorded output (psync at ~15k IOPS, then the null
    engine at millions: rounds that never agree, or the same one again: rounds that do)."""

    def __init__(self, stems: list[str]) -> None:
        self.stems = stems
        self.n = 0

    def run(self, point: Point) -> PointResult:
        stem = self.stems[self.n % len(self.stems)]
        self.n += 1
        return PointResult(recorded(stem), ["fio"], "[r]\n", "", "", 0.0, 1.0)


@pytest.mark.parametrize(
    ("stems", "reached"),
    [(["psync-randread-json", "null-engine-jsonplus"], False), (["psync-randread-json"], True)],
)
def test_precondition_event_says_whether_steady_state_was_reached(
    stems: list[str], reached: bool
) -> None:
    steady = SteadyState(round_s=1, window=2, max_rounds=3)
    point = Point(0, "k", 0, Target("file", "/srv/x.dat"), "r", {"rw": "randread"}, {})
    point = dataclasses.replace(point, precondition="workload", steady=steady)
    events, said = Events(), []
    pre = Preconditioner(events, Clock(), lambda *a: None, lambda p, text: said.append(text))
    pre.run(engine_named("fio"), RecordedSession(stems), point)  # type: ignore[arg-type]
    ((kind, message, data),) = events.added
    assert kind == "precondition" and data["steady_state"]["reached"] is reached
    if reached:
        assert "ran its workload to steady state (rounds 1-2 of 2)" in message, message
    else:
        assert "steady state" not in message.replace("steady state NOT reached", ""), message
        assert "steady state NOT reached in 3 rounds" in message, message
        assert "range " in message and "limit 20 %" in message, message
    assert said[-1] == message.split(": ", 1)[1]
