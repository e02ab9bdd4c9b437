"""The engines storbench runs, by the name a plan gives them (``engine:`` of a workload).

Everything outside ``engines/`` reaches an engine through this module and the interface in
``base.py``; it never imports one. To add an engine, write a package beside ``fio/`` and
``rados/`` with a ``keys.py`` (its plan keys: :class:`storbench.plan.enginekeys.EngineKeys`)
and an ``engine.py`` (a class with :class:`base.Engine`'s operations), and register both with
one call of :func:`storbench.hooks.register_engine` (a plugin does the same from its own
module; its own commands, if any, go to :data:`COMMANDS`). Engines are imported when first
asked for, so a run of fio alone never loads the others, and ``storbench --help`` loads none.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from storbench import hooks
from storbench.model.errors import UserError

if TYPE_CHECKING:
    from storbench.engines.base import Engine
    from storbench.plan import Point

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
    """The engine a plan calls ``name``; UserError for a name no engine registered here (a
    stored run of a plugin's engine, without the plugin; the plan loader refuses such plans
    first)."""
    if name not in _loaded:
        if name not in hooks.ENGINES:
            raise UserError(
                f"no engine {name!r} here (points of this run name it)",
                fix=f"load the plugin that registers it: {hooks.PLUGINS_ENV}=MODULE",
            )
        _loaded[name] = hooks.resolve(hooks.ENGINES[name].engine)()
    return _loaded[name]


def names() -> tuple[str, ...]:
    return hooks.engine_names()


def of_points(points: list[Point]) -> list[tuple[Engine, list[Point]]]:
    """The engines the points use, each with its points, in the order they first appear."""
    groups: dict[str, list[Point]] = {}
    for p in points:
        groups.setdefault(p.engine, []).append(p)
    return [(get(name), pts) for name, pts in groups.items()]


def advice(points: list[Point]) -> list[str]:
    """What a reviewer would warn of in these points, from every engine they use (each
    engine's :meth:`base.Engine.advice`: fio's iodepth with a synchronous ioengine)."""
    known = [p for p in points if p.engine in hooks.ENGINES]  # a stored plugin's: no advice
    return [line for engine, pts in of_points(known) for line in engine.advice(pts)]


def all_engines() -> list[Engine]:
    return [get(name) for name in names()]


def run_version(points: list[Point]) -> str | None:
    """The engine version a run records with itself: fio's when the run has fio points
    (every other engine records its version with each measurement)."""
    if any(p.engine == RUN_VERSION_ENGINE for p in points):
        return get(RUN_VERSION_ENGINE).version()
    return None


def importer() -> Engine:
    """The engine whose output ``storbench import`` reads."""
    return get(IMPORT_ENGINE)
