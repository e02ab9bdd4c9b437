"""The shape of the source tree (issue 11): no import cycle anywhere (function-level imports
included), and modules and functions a reader can hold in mind. The lists of what is still
too long are explicit, so that they only shrink."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "storbench"

#: lines a module may have
MAX_LINES = 620
#: modules still over it, with their size when this test was written: split them, then
#: remove them from here (the test fails when one grows, or shrinks under the limit)
TOO_LONG: dict[str, int] = {}


#: import cycles still there, each as its sorted modules: none (report/'s ceph <-> markdown
#: and hosts -> terminal -> ceph are gone; the formatting they shared is report/fmt.py)
KNOWN_CYCLES: list[list[str]] = []

#: lines a function may have, without a reason written beside it
MAX_FUNCTION_LINES = 80
#: functions still over it (module, function: lines when this test was written): none left;
#: the test fails when one grows or a new one appears
LONG_FUNCTIONS: dict[tuple[str, str], int] = {}


def _modules() -> dict[str, Path]:
    out = {}
    for p in SRC.rglob("*.py"):
        parts = p.relative_to(SRC.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = p
    return out


def _imports(path: Path, known: dict[str, Path]) -> set[str]:
    """The storbench modules ``path`` imports, function-level imports included."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        found |= {n for n in names if n in known}
    return found


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in graph:
        if v not in index:
            visit(v)
    return out


def test_structure_no_import_cycles() -> None:
    mods = _modules()
    graph = {m: _imports(p, mods) - {m} for m, p in mods.items()}
    assert _cycles(graph) == KNOWN_CYCLES


def test_structure_import_finder_sees_function_level_imports(tmp_path: Path) -> None:
    """A cycle hidden in a function (as report/ceph.py's import of markdown.py was) counts."""
    src = tmp_path / "m.py"
    src.write_text(
        "import os\n\n\ndef f():\n    from storbench.report import terminal\n"
        "    import storbench.report.fmt\n    return terminal\n"
    )
    found = _imports(src, _modules())
    assert found >= {"storbench.report.terminal", "storbench.report.fmt"}


def _long_functions() -> dict[tuple[str, str], int]:
    out = {}
    for path in SRC.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = (node.end_lineno or node.lineno) - node.lineno + 1
                if n > MAX_FUNCTION_LINES:
                    out[(str(path.relative_to(SRC)), node.name)] = n
    return out


def test_structure_functions_a_reader_can_hold_in_mind() -> None:
    grown = {
        where: n
        for where, n in _long_functions().items()
        if n > LONG_FUNCTIONS.get(where, MAX_FUNCTION_LINES)
    }
    assert grown == {}, f"functions over {MAX_FUNCTION_LINES} lines: split them"


def test_structure_cycle_finder_finds_a_cycle() -> None:
    """The finder itself: a cycle of three, and a tail that is in none."""
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]


def test_structure_modules_a_reader_can_hold_in_mind() -> None:
    sizes = {str(p.relative_to(SRC)): len(p.read_text().splitlines()) for p in _modules().values()}
    over = {name: n for name, n in sizes.items() if n > MAX_LINES}
    grown = {name: n for name, n in over.items() if n > TOO_LONG.get(name, MAX_LINES)}
    assert grown == {}, f"modules over {MAX_LINES} lines: split them"
    fixed = [name for name in TOO_LONG if sizes.get(name, 0) <= MAX_LINES]
    assert fixed == [], "these are short enough now: remove them from TOO_LONG"


#: the report model's loaders: the only modules of report/ and web/ that read the store (or
#: ask an engine); every other module there is a presenter and draws what they return
LOADERS = {
    "storbench.report.model": "loads a run or a comparison: the report model",
    "storbench.report.livemodel": "keeps a running run's summaries (the live page)",
    "storbench.report.pointmodel": "loads one point alone (show RUN --point N)",
    "storbench.report.historymodel": "selects and loads the runs a history follows",
    "storbench.report.export": "CSV/JSON rows of the store's measurement rows, base units",
    "storbench.report.ceph": "takes the store's run and event rows (types only)",
    "storbench.report.charts.timechart": "takes the store's event rows (a type only)",
    "storbench.web.app": "opens the store the web view serves",
    "storbench.web.views": "the web view's one module that reads the store",
}
#: the presenters: every other module of report/ and web/ (a new one is checked at once)
PRESENTERS = tuple(
    sorted(
        name
        for name in _modules()
        if name.startswith(("storbench.report.", "storbench.web.")) and name not in LOADERS
    )
)
#: what a presenter never imports: the store (the model's loader reads it), an engine
NOT_FOR_PRESENTERS = ("storbench.store", "storbench.engines")


def test_structure_presenters_draw_the_report_model_only() -> None:
    known = _modules()
    assert set(LOADERS) <= set(known), "a loader named here no longer exists"
    assert {"storbench.report.markdown", "storbench.report.until", "storbench.web.pages"} <= set(
        PRESENTERS
    )
    for name in PRESENTERS:
        for imported in _imports(known[name], known):
            for banned in NOT_FOR_PRESENTERS:
                if imported == banned or imported.startswith(banned + "."):
                    raise AssertionError(f"{name} imports {imported}: a presenter reads the model")
    # the suite's answer is dispatched in one place: no presenter picks an answer function
    for name in PRESENTERS:
        text = known[name].read_text()
        assert "suite_answer" not in text and "isinstance(answer" not in text, name
        assert "compare(" not in text.replace("def compare(", ""), name  # the model compares


def test_structure_suite_answers_are_dispatched_once() -> None:
    """Every module that maps a report kind to its answer does it through storbench.hooks."""
    users = [
        name
        for name, path in _modules().items()
        if "hooks.ANSWERS" in path.read_text() and name != "storbench.hooks"
    ]
    assert users == ["storbench.report.model"]


#: the stages in the order they may import one another: a module imports only its own stage
#: and those before it. model (measurements, units, errors) is what every stage speaks; the
#: suites are plan files; the plan becomes points; hosts is what storbench reaches beyond its
#: process (ssh agents, the hosts' counters and inventory, Ceph's tools, S3 endpoints, the
#: process guard); engines run a point; preflight checks before any I/O; the store records;
#: analysis is pure functions over what is recorded; execute runs a plan (it records into the
#: store and judges steady state as it goes); report draws the report model; web and cli
#: call everything before them.
STAGES = (
    "model",
    "suites",
    "plan",
    "hosts",
    "engines",
    "preflight",
    "store",
    "analysis",
    "execute",
    "report",
    "web",
    "cli",
)
#: what may sit at the package's root beside the stages: the package, its entry point, the
#: extension points (hooks.py) and the collector pause any stage may take (nogc.py)
ROOT_MODULES = {"storbench", "storbench.__main__", "storbench.hooks", "storbench.nogc"}


def _stage(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in STAGES else None


def _backward(known: dict[str, Path]) -> list[str]:
    """Every import of a later stage's module (function-level imports included)."""
    rank = {s: i for i, s in enumerate(STAGES)}
    back = []
    for name, path in sorted(known.items()):
        mine = _stage(name)
        for imported in sorted(_imports(path, known)):
            theirs = _stage(imported)
            if mine is not None and theirs is not None and rank[theirs] > rank[mine]:
                back.append(f"{name} ({mine}) imports {imported} ({theirs})")
    return back


def test_structure_the_tree_shows_the_stages() -> None:
    """Every module lives in its stage's package but the few named root modules."""
    loose = sorted(m for m in _modules() if _stage(m) is None and m not in ROOT_MODULES)
    assert loose == [], "put these in the package of their stage"
    assert len(ROOT_MODULES) <= 8


def test_structure_imports_follow_the_stages() -> None:
    assert _backward(_modules()) == [], "a stage imports only itself and the stages before it"


def test_structure_stage_order_finds_a_backward_import(tmp_path: Path) -> None:
    """The check itself: a plan module that imports the store is caught, the store
    importing the plan is not."""
    plan = tmp_path / "plan.py"
    plan.write_text("from storbench.store.db import Store\n")
    store = tmp_path / "store.py"
    store.write_text("def f():\n    from storbench.plan.model import Point\n")
    known = {"storbench.plan.model": plan, "storbench.store.db": store}
    assert _backward(known) == ["storbench.plan.model (plan) imports storbench.store.db (store)"]


def test_structure_test_modules_have_names_of_their_own() -> None:
    """pytest imports test modules by their basename (no packages under tests/): two of
    one name in different directories stop the collection of the whole suite."""
    tests = Path(__file__).resolve().parents[1]
    names: dict[str, list[str]] = {}
    for path in tests.rglob("test_*.py"):
        names.setdefault(path.name, []).append(str(path.relative_to(tests)))
    assert {n: p for n, p in names.items() if len(p) > 1} == {}
