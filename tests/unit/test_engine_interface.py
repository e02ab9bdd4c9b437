"""The engine interface (engines/base.py): every registered engine has every operation, with
the interface's parameters, and the stages around the engines reach them only through the
registry -- adding an engine is its own package plus one registry line."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

from storbench import engines
from storbench.engines.base import Engine
from storbench.model.errors import UserError

SRC = Path(__file__).resolve().parents[2] / "src" / "storbench"

#: modules of engines/ that are not engines: the interface, the registry, shared process helpers
SHARED = {"storbench.engines", "storbench.engines.base", "storbench.engines.process"}


def _operations() -> dict[str, inspect.Signature]:
    return {
        name: inspect.signature(member)
        for name, member in vars(Engine).items()
        if callable(member) and not name.startswith("_")
    }


def test_engine_registry_every_engine_has_every_operation() -> None:
    ops = _operations()
    assert {"check", "open", "cleanup", "describe", "version", "validate"} <= set(ops)
    for name in engines.names():
        engine = engines.get(name)
        assert engine.name == name
        assert isinstance(engine.label, str) and engine.label
        assert isinstance(engine.runs_hosts, bool)
        for op, want in ops.items():
            have = getattr(engine, op, None)
            assert callable(have), f"engine {name} has no {op}()"
            got = inspect.signature(have)
            assert list(got.parameters) == [p for p in want.parameters if p != "self"], (
                f"engine {name}: {op}{got} is not the interface's {op}{want}"
            )


def test_engine_registry_unknown_name_says_which_plugin_is_missing() -> None:
    """A stored run of a plugin's engine, read without the plugin: a clear error, and no
    advice (the engine that would give it is not here)."""
    with pytest.raises(UserError) as e:
        engines.get("no-such-engine")
    assert "no engine 'no-such-engine'" in str(e.value) and "STORBENCH_PLUGINS" in e.value.fix


def _imports(path: Path) -> list[tuple[int, str]]:
    """Every module ``path`` imports (function-level imports included), with its line."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
            found += [(node.lineno, f"{node.module}.{a.name}") for a in node.names]
    return found


def _core_modules() -> list[Path]:
    """Everything outside engines/: the plan, preflight, the runner, the store, analysis,
    the presenters and the CLI."""
    return [p for p in sorted(SRC.rglob("*.py")) if "engines" not in p.relative_to(SRC).parts]


def test_engine_core_modules_import_no_concrete_engine() -> None:
    engine_modules = {
        f"storbench.engines.{p.stem}" for p in (SRC / "engines").iterdir() if p.stem != "__init__"
    } - SHARED
    offenders = []
    for path in _core_modules():
        for line, name in _imports(path):
            if any(name == m or name.startswith(m + ".") for m in engine_modules):
                offenders.append(f"{path.relative_to(SRC)}:{line} imports {name}")
    assert offenders == []
