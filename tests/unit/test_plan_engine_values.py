"""An engine declares what its names' values are (enginekeys.Value) and refuses values of its
own (``check_value``); the plan loader applies them with its generic checks and names no
engine. A toy engine registered here, in the process, shows it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from storbench import hooks
from storbench.model.errors import PlanError
from storbench.plan import parse_plan
from storbench.plan.enginekeys import EngineKeys, Value
from storbench.plan.schema import Key, Problem


def _no_magic(opt: str, value: Any) -> Problem | None:
    if opt == "dial" and value == 13:
        return "is 13: the dial engine will not turn to it", "e.g. `dial: 12`"
    return None


DIAL = EngineKeys(
    name="dial",
    label="the dial engine",
    title="An `engine: dial` workload (a test's)",
    doc="Turns a dial.",
    keys=(
        Key("engine", "`dial`", "Run the dial engine."),
        Key("dial", "whole number", "Where it turns to."),
        Key("bs", "size", "How much per turn."),
        Key("wait", "time", "How long between turns."),
        Key("hand", "choice", "Which hand turns it."),
        Key("offset", "number", "Where it starts."),
        Key("note", "text", "Anything."),
    ),
    values={
        "dial": Value("int", needs_value=True, lo=1, hi=12, why="a dial has 12 marks"),
        "bs": Value("size", needs_value=True, example="1m"),
        "wait": Value("time", needs_value=True, zero="; 0: no wait"),
        "hand": Value("choice", choices=("left", "right"), sep="/", whose="the dial's"),
        "offset": Value(negative=True),
    },
    check_value=_no_magic,
    option_word="dial key",
    sizes=False,
)


@pytest.fixture(autouse=True)
def dial_engine(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setitem(hooks.ENGINES, "dial", hooks.EngineHook("dial", "dial:Engine", DIAL))
    yield


def _plan(line: str, glob: str = "") -> str:
    return (
        "name: d\ntargets:\n  - file: /tmp/sb-dial.dat\n"
        + (f"global:\n  {glob}\n" if glob else "")
        + f"workloads:\n  - name: w\n    engine: dial\n    {line}\n"
    )


def _refusal(text: str) -> PlanError:
    with pytest.raises(PlanError) as e:
        parse_plan(text, "d.yaml")
    return e.value


@pytest.mark.parametrize(
    ("line", "message", "fix"),
    [
        ("dial: 20", "`dial` must be 1 to 12, not 20 (a dial has 12 marks)", "e.g. `dial: 1`"),
        ("dial: 0", "`dial` must be 1 to 12, not 0", "e.g. `dial: 1`"),
        ("dial: two", "`dial` must be a whole number, not 'two'", "e.g. `dial: 1`"),
        ("dial: 13", "`dial` is 13: the dial engine will not turn to it", "e.g. `dial: 12`"),
        ("dial:", "`dial` has no value", "e.g. `dial: 1`"),
        ("bs: 0", "`bs` must be more than 0, not 0", "e.g. `bs: 1m`"),
        ("bs: 4q", "`bs` is not a size: '4q'", "e.g. `bs: 1m`"),
        ("wait: -1", "`wait` must be 0 or more, not -1", "(seconds); 0: no wait"),
        ("hand: lef", "`hand` cannot be 'lef'", 'did you mean "left"?'),
        ("hand: up", "`hand` cannot be 'up'", "one of: left, right (the dial's)"),
        ("note: -3", "`note` must be 0 or more, not -3", "give `note` a value of 0 or more"),
    ],
)
def test_plan_engine_values_are_applied_as_the_engine_declares(
    line: str, message: str, fix: str
) -> None:
    e = _refusal(_plan(line))
    assert f"workload 'w': {message}" in e.message, e.message
    assert e.fix is not None and fix in e.fix, e.fix
    assert "d.yaml:" in str(e)


def test_plan_engine_values_what_the_declaration_allows_passes() -> None:
    lines = "dial: [1, 12.0]\n    bs: 4k\n    wait: 2m\n    hand: right/slow\n    offset: -3\n"
    (wl,) = parse_plan(_plan(lines), "d.yaml").workloads
    assert wl.options["dial"] == [1, 12] and wl.options["offset"] == -3
    assert wl.options["hand"] == "right/slow"


def test_plan_engine_values_each_engine_has_its_own() -> None:
    """The same name in two engines' workloads: each checked as its engine declares it
    (fio's `bs` example is 4k, the dial's 1m; `dial` is no fio option)."""
    fio = "  - name: f\n    rw: read\n    size: 1m\n    bs: 0\n"
    e = _refusal(_plan("bs: 0").replace("workloads:\n", "workloads:\n" + fio))
    assert "workload 'f': `bs` must be more than 0" in e.message
    assert e.fix is not None and "`bs: 4k`" in e.fix
    e = _refusal(_plan("bs: 0"))
    assert e.fix is not None and "`bs: 1m`" in e.fix
    e = _refusal(_plan("dial: 3").replace("engine: dial\n    ", ""))
    assert "`dial` is a dial key, not one of fio's" in e.message


def test_plan_engine_values_global_keys_obey_every_engine_that_takes_them() -> None:
    """A `global:` key goes to each engine's workloads that take it: its value must be one
    that each takes (rados bench's `clients` bound holds though fio's is wider)."""
    plan = (
        "name: r\ntargets:\n  - rados: pool\nglobal:\n  clients: 2000\nworkloads:\n"
        "  - name: w\n    engine: rados-bench\n    mode: write\n    runtime: 5\n"
    )
    e = _refusal(plan)
    assert "global: `clients` must be 1 to 1024, not 2,000 (rados bench starts" in e.message


def test_plan_rados_bench_object_size_takes_no_fio_range() -> None:
    """fio reads `bs: 4k:8k` as a range; rados bench writes objects of one size: the plan
    refuses it at its line (it crashed the expansion with a traceback)."""
    with pytest.raises(PlanError) as info:
        parse_plan(
            "name: r\ntargets:\n  - rados: pool\nglobal:\n  bs: 4k:8k\nworkloads:\n"
            "  - name: w\n    engine: rados-bench\n    mode: write\n    runtime: 5\n",
            "p.yaml",
        )
    e = info.value
    assert e.line == 5 and "`bs` is not a size: '4k:8k'" in e.message


@pytest.mark.parametrize(
    ("body", "says", "line"),
    [
        ("    prefill: 3\n", "`prefill` must be true or false, not", 4),
        ("    prefill: true\n    precondition: workload\n", "but `precondition` says workload", 5),
    ],
)
def test_plan_prefill_is_a_flag_and_sequential(body: str, says: str, line: int) -> None:
    with pytest.raises(PlanError) as info:
        parse_plan(
            f"name: p\ntargets:\n  - file: /tmp/storbench-prefill.dat\n{body}"
            "workloads:\n  - name: r\n    rw: randread\n    size: 16m\n",
            "p.yaml",
        )
    assert says in info.value.message and info.value.line == line


def test_plan_prefill_is_sequential_preconditioning() -> None:
    plan = parse_plan(
        "name: p\nprefill: true\ntargets:\n  - file: /tmp/storbench-prefill.dat\n"
        "workloads:\n  - name: r\n    rw: randread\n    size: 16m\n",
        "p.yaml",
    )
    assert set(plan.preconditions.values()) == {"sequential"}
