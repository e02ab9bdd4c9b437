"""What an ``engine: rados-bench`` workload takes in a plan (rados bench's own vocabulary,
mapped to its options: mode, ``-b``, ``-t``, seconds; ``clients`` processes at once), how the
plan loader checks it and how it expands into points. Light: ``plan check`` imports it, never
the engine."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from storbench.model.units import fmt_size_short, parse_size, parse_time
from storbench.plan.enginekeys import MAX_INT, EngineKeys, PointExpander, Value
from storbench.plan.model import Point, Target
from storbench.plan.schema import Key, Problem

NAME = "rados-bench"
#: rados bench's own object size of a write (4 MiB)
WRITE_BS = "4m"
#: What a workload does: write objects, read them in order or at random.
MODES = ("write", "seq", "rand")
#: rados bench processes storbench starts at once on this machine for one point.
MAX_RADOS_CLIENTS = 1024
#: What its keys' values are (the generic checks of the plan loader apply them).
VALUES = {
    "mode": Value(
        "choice", needs_value=True, example="write", choices=MODES, whose="rados bench's"
    ),
    "bs": Value("size", needs_value=True, example="4k", compound=False),  # one object size
    "runtime": Value("time", needs_value=True, example=60),
    "threads": Value("int", needs_value=True, example=16, lo=1, hi=MAX_INT),
    "clients": Value(
        "int",
        needs_value=True,
        example="[1, 2, 3]",
        lo=1,
        hi=MAX_RADOS_CLIENTS,
        why="rados bench starts a process on this machine for each",
    ),
}


def _mode(value: Any, _: Mapping[Any, Any]) -> Problem | None:
    """Required (its values are checked with the other options')."""
    if value is None:
        return (
            "a rados-bench workload needs `mode`",
            "add `mode: write` (then `seq` or `rand` workloads read what it wrote)",
        )
    return None


def _runtime(value: Any, _: Mapping[Any, Any]) -> Problem | None:
    """Required, in whole seconds: rados bench takes no other."""
    if value is None:
        return (
            "a rados-bench workload needs `runtime` (rados bench's seconds)",
            "add e.g. `runtime: 60` (or --set runtime=60)",
        )
    for t in value if isinstance(value, list) else [value]:
        secs = parse_time(t)
        if secs < 1 or not float(secs).is_integer():
            return f"rados bench runs whole seconds (≥ 1), not `runtime: {t}`", "e.g. `runtime: 60`"
    return None


_KEYS = (
    Key("engine", "`rados-bench`", "Run `rados bench` on a `rados:` target."),
    Key(
        "mode",
        "choice",
        "Write objects, then read them in order or at random (the "
        "reads read what a write before them left).",
        values=MODES,
        default="(required)",
        check=_mode,
    ),
    Key("bs", "size", "The object size of a write (`-b`).", default="4m"),
    Key("threads", "whole number", "Concurrent operations (`-t`).", default="16"),
    Key(
        "runtime",
        "time, whole seconds",
        "How long it runs (rados bench's seconds).",
        default="(required)",
        check=_runtime,
    ),
    Key(
        "clients",
        "whole number, or a list (an axis)",
        "rados bench processes at once, their figures summed over the time all ran.",
        default="1",
    ),
)


def _target(t: Target) -> Problem | None:
    if t.kind == "rados":
        return None
    return (
        f"rados bench measures a pool, not the {t.kind} {t.path}",
        "give it a `- rados: POOL` target (or --target rados:POOL); put file "
        "and rbd targets in a plan of their own",
    )


class _Datasets:
    """The objects a rados bench ``write`` leaves for the ``seq``/``rand`` points after it.

    A write's dataset is named after its target, object size, client count and repetition;
    a read point uses the dataset of the last write before it with the same target, client
    count and repetition (and object size, when the read names one: without, it takes the
    write's, which is the size it reads). The runner prefixes the run: the rados bench run
    name of client c is ``storbench-r<RUN>-<dataset>[-c<c>]``.
    """

    def __init__(self, targets: list[Target]) -> None:
        self.targets = targets
        self.written: dict[tuple[Target, int, int], list[tuple[int, str]]] = {}

    def name(self, target: Target, params: dict[str, Any], rep: int) -> str | None:
        clients = int(params["clients"])
        key = (target, clients, rep)
        if params.get("mode") == "write":
            params.setdefault("bs", WRITE_BS)
            size = parse_size(params["bs"])
            t = self.targets.index(target) if target in self.targets else 0
            name = f"t{t}-{size}b-{clients}c-rep{rep}"
            self.written.setdefault(key, []).append((size, name))
            return name
        writes = self.written.get(key, [])
        if "bs" in params:
            size = parse_size(params["bs"])
            writes = [w for w in writes if w[0] == size]
        if not writes:
            return None
        size, name = writes[-1]
        params.setdefault("bs", fmt_size_short(size))
        return name


def _expander(targets: list[Target], repeat: int) -> PointExpander:
    datasets = _Datasets(targets)

    def point(target: Target, params: dict[str, Any], rep: int) -> dict[str, Any]:
        params["clients"] = int(params.get("clients", 1))  # processes on this machine
        return {"dataset": datasets.name(target, params, rep)}

    return point


def _unread(p: Point) -> Problem | None:
    """Every seq/rand point reads objects a write before it left."""
    if p.extra.get("dataset") is not None:
        return None
    size = f", bs {p.params['bs']}" if "bs" in p.params else ""
    return (
        f"rados bench {p.params['mode']} reads the objects a write left, and no `mode: write` "
        f"point runs before it on {p.target.label} with clients {p.params['clients']}{size}",
        "put a workload with `mode: write` (same clients and bs) before it",
    )


KEYS = EngineKeys(
    name=NAME,
    title="An `engine: rados-bench` workload (rados bench's own options; nothing else)",
    doc="`rados bench` on a `rados:` pool, from this machine: `clients` processes at once.",
    keys=_KEYS,
    values=VALUES,
    option_word="rados bench key",
    required=("mode", "runtime"),
    defaults={"threads": 16},  # rados bench's own default: 16 concurrent operations
    hints={
        "iodepth": "use `threads` for concurrent operations (rados bench -t)",
        "numjobs": "use `threads` for concurrent operations (rados bench -t)",
        "rw": "use `mode` (write, seq, rand)",
        "readwrite": "use `mode` (write, seq, rand)",
    },
    label="rados bench",
    no_hosts=(
        "rados bench runs on this machine, not on `hosts:`",
        "remove `hosts:` and use `clients: N` (N rados bench processes at once), or drop "
        "`engine: rados-bench` to use fio's rados engine on the hosts",
    ),
    no_drills="rados bench runs its own processes, which no drill follows",
    no_rounds=(
        "rados bench writes and reads its own named objects per run",
        "measure the pool through fio's rados engine (a fio workload on the `rados:` target), "
        "or leave `steady_state` out",
    ),
    no_precondition="rados bench writes its own objects",
    sizes=False,
    target_problem=_target,
    writes=lambda params: params.get("mode") == "write",
    expander=_expander,
    point_problem=_unread,
)
