"""The engines storbench runs, by the name a plan gives them (``engine:`` of a workload).

Everything outside ``engines/`` reaches an engine through this registry and the interface
in ``base.py``; it never imports one. To add an engine, write a package beside ``fio/``
and ``rados/`` whose ``engine.py`` has a class with :class:`base.Engine`'s operations,
and add one line to :data:`REGISTRY` (and its own commands, if any, to :data:`COMMANDS`).
Engines are imported when first asked for, so a run of fio alone never loads the others,
and ``storbench --help`` loads none.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from storbench.engines.base import Engine
    from storbench.plan import Point

#: plan name -> "module:class" of the engine
REGISTRY: dict[str, str] = {
    "rados-bench": "storbench.engines.rados.engine:RadosBenchEngine",
    "fio": "storbench.engines.fio.engine:FioEngine",
}

#: the engines' own commands the CLI offers (fio: ``storbench agent``), like datasette's
#: ``register_commands`` hook: name -> "module:attribute" of a click command. The CLI adds
#: them without knowing what they do, and imports one only when it is asked for (a module
#: of its own, light at import: ``storbench --help`` lists it).
COMMANDS: dict[str, str] = {
    "agent": "storbench.engines.fio.agent:agent",
}

#: the engine whose version a run records with itself (the runs table's ``fio_version``)
RUN_VERSION_ENGINE = "fio"

#: the engine whose output ``storbench import`` reads
IMPORT_ENGINE = "fio"

_loaded: dict[str, Engine] = {}


def get(name: str) -> Engine:
    """The engine a plan calls ``name``; KeyError for a name no engine has (the plan
    loader refuses those first)."""
    if name not in _loaded:
        module, _, cls = REGISTRY[name].partition(":")
        _loaded[name] = getattr(importlib.import_module(module), cls)()
    return _loaded[name]


def names() -> tuple[str, ...]:
    return tuple(REGISTRY)


def of_points(points: list[Point]) -> list[tuple[Engine, list[Point]]]:
    """The engines the points use, each with its points, in the order they first appear."""
    groups: dict[str, list[Point]] = {}
    for p in points:
        groups.setdefault(p.engine, []).append(p)
    return [(get(name), pts) for name, pts in groups.items()]


def advice(points: list[Point]) -> list[str]:
    """What a reviewer would warn of in these points, from every engine they use (each
    engine's :meth:`base.Engine.advice`: fio's iodepth with a synchronous ioengine)."""
    return [line for engine, pts in of_points(points) for line in engine.advice(pts)]


def all_engines() -> list[Engine]:
    return [get(name) for name in REGISTRY]


def run_version(points: list[Point]) -> str | None:
    """The engine version a run records with itself: fio's when the run has fio points
    (every other engine records its version with each measurement)."""
    if any(p.engine == RUN_VERSION_ENGINE for p in points):
        return get(RUN_VERSION_ENGINE).version()
    return None


def importer() -> Engine:
    """The engine whose output ``storbench import`` reads."""
    return get(IMPORT_ENGINE)
