"""storbench's extension points, declared in one place (datasette's hookspecs are the model):
the engines that run a workload (and the plan keys each one takes), what a suite's report
answers, and the formats a report is written in. The built-in engines, suites and formats are
registered here exactly as a plugin registers its own.

Everything is named lazily, as ``"module:attribute"`` (or given as the object itself): this
module imports nothing of storbench, so the plan can ask which report kinds exist and
``--help`` stays light, and an answer's code is imported only when a run shows it.

A plugin is a module named in ``STORBENCH_PLUGINS`` (comma-separated, importable from
``sys.path`` / ``PYTHONPATH``) that calls :func:`register_engine`, :func:`register_answer` or
:func:`register_format` when imported; the command line imports the plugins
before it reads its arguments (:func:`load_plugins`).
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

#: a callable, or where to import it from: "package.module:attribute"
Ref = str | Callable[..., Any]


def resolve(ref: Ref) -> Any:
    """The object ``ref`` names ("module:attribute", attributes may be dotted), imported
    on first use; an object is itself."""
    if not isinstance(ref, str):
        return ref
    module, _, attr = ref.partition(":")
    obj: Any = importlib.import_module(module)
    for part in attr.split(".") if attr else ():
        obj = getattr(obj, part)
    return obj


def lazy_package(
    package: str, where: dict[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A package's ``__getattr__`` and ``__dir__`` (PEP 562): each name of ``where`` (name
    -> the module that has it) is imported when first asked for and looked up at each use
    (a test that replaces ``tool.fio_path`` replaces ``fio.fio_path`` too). The one way
    storbench's packages keep ``import`` cheap (``--help``, ``plan check``)."""

    def get(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return resolve(f"{module}:{name}")

    def names() -> list[str]:
        return sorted([*vars(importlib.import_module(package)), *where])

    return get, names


# --------------------------------------------------------------------------- engines


@dataclass(frozen=True)
class EngineHook:
    """An engine a workload names with ``engine: NAME``, in two parts imported apart:

    - ``keys``: its :class:`storbench.plan.enginekeys.EngineKeys`, what its workloads take in a
      plan, how they are checked and documented and how they expand into points. Light: the
      plan loader (``plan check``) imports it, never the engine.
    - ``engine``: the class with the operations of :class:`storbench.engines.base.Engine`
      (what runs a point), imported when a run or preflight first needs it.
    """

    name: str
    engine: Ref
    keys: Ref


ENGINES: dict[str, EngineHook] = {}
#: the engine of a workload that names none
DEFAULT_ENGINE = "fio"


def register_engine(name: str, engine: Ref, keys: Ref) -> None:
    """Make ``engine: NAME`` an engine a plan's workloads may name (see :class:`EngineHook`)."""
    ENGINES[name] = EngineHook(name, engine, keys)


def engine_names() -> tuple[str, ...]:
    return tuple(ENGINES)


def engine_keys(name: str) -> Any:
    """The plan keys of the engine ``name`` (KeyError for an engine nobody registered)."""
    return resolve(ENGINES[name].keys)


register_engine("fio", "storbench.engines.fio.engine:FioEngine", "storbench.engines.fio.keys:KEYS")
register_engine(
    "rados-bench",
    "storbench.engines.rados.engine:RadosBenchEngine",
    "storbench.engines.rados.keys:KEYS",
)


# --------------------------------------------------------------------------- suites' answers


@dataclass(frozen=True)
class AnswerHook:
    """What a suite's report (the plan's ``report: KIND``) answers, in three parts.

    - ``answer(summaries, inventory, series)``: the answer as data (analysis: figures in base
      units), or None when the run holds nothing to answer; its ``rows`` and ``kind`` go to
      the JSON export as they are (dataclasses become objects).
    - ``tables(answer)``: the answer as :class:`~storbench.report.fmt.AnswerTable` s (text
      cells, notes): what every presenter draws (terminal, Markdown, HTML, web view).
    - ``rest(summaries)``: the points the Markdown report lists in its point table after the
      answer's tables (None: none, the tables say everything: the seeds' own layouts).
    """

    kind: str
    answer: Ref
    tables: Ref
    rest: Ref | None = None
    doc: str = ""


ANSWERS: dict[str, AnswerHook] = {}


def register_answer(
    kind: str, answer: Ref, tables: Ref, *, rest: Ref | None = None, doc: str = ""
) -> None:
    """Make ``report: KIND`` a report kind a plan may ask for (see :class:`AnswerHook`)."""
    ANSWERS[kind] = AnswerHook(kind, answer, tables, rest, doc)


def answer_kinds() -> tuple[str, ...]:
    return tuple(ANSWERS)


_A = "storbench.analysis.answers"
_T = "storbench.report.suites"
for _kind, _doc, _rest in (
    ("qualify", "per target, the job count with the highest 4k sync-write IOPS", None),
    ("profiles", "per target, sequential and random bandwidth, IOPS and latency", None),
    ("matrix", "IOPS by block size x iodepth, the optimal iodepth and the knee", None),
    ("rados", "rados bench's figures, one column per client count", f"{_T}:not_rados_bench"),
    ("soak", "whether the figures held steady over the whole run", f"{_T}:every_point"),
    ("s3", "requests/s, bytes/s and latency per object size", f"{_T}:every_point"),
):
    register_answer(_kind, f"{_A}:{_kind}_answer", f"{_T}:{_kind}_tables", rest=_rest, doc=_doc)
register_answer(
    "capacity",
    "storbench.analysis.capacityanswer:capacity_answer",
    "storbench.report.capacity:capacity_tables",
    rest=f"{_T}:every_point",
    doc="the highest offered load whose latency meets `slo:`",
)
register_answer(
    "until",
    "storbench.analysis.untilanswer:until_answer",
    "storbench.report.until:until_tables",
    rest=f"{_T}:every_point",
    doc="B against A, each pair repeated until its verdict is known (`repeat: {until: ...}`)",
)


# --------------------------------------------------------------------------- report formats


@dataclass(frozen=True)
class FormatHook:
    """A format ``storbench report RUN... --format NAME`` writes: ``presenter`` names an
    object with ``run(report) -> str`` (one run: :class:`storbench.report.model.RunReport`)
    and ``comparison(report) -> str`` (several: :class:`storbench.report.model.Comparison
    Report`); see :class:`storbench.report.present.Presenter`."""

    name: str
    presenter: Ref
    doc: str = ""
    #: the file names it is written to by default (``report RUN -o FILE`` with no
    #: ``--format``: the first format whose suffix ``FILE`` has)
    suffixes: tuple[str, ...] = ()


FORMATS: dict[str, FormatHook] = {}


def register_format(
    name: str, presenter: Ref, *, doc: str = "", suffixes: tuple[str, ...] = ()
) -> None:
    FORMATS[name] = FormatHook(name, presenter, doc, suffixes)


def format_for(path: str | None, default: str = "html") -> str:
    """The format a report written to ``path`` is in when none is asked for: the one whose
    suffix the file name has (``cmp.md``: markdown), else ``default``."""
    name = (path or "").lower()
    return next((f.name for f in FORMATS.values() if name.endswith(f.suffixes)), default)


register_format(
    "html",
    "storbench.report.html:PRESENTER",
    doc="one self-contained page",
    suffixes=(".html", ".htm"),
)
register_format(
    "markdown",
    "storbench.report.markdown:PRESENTER",
    doc="the seeds' tables",
    suffixes=(".md", ".markdown"),
)
register_format(
    "json",
    "storbench.report.jsonout:PRESENTER",
    doc="the report model as JSON",
    suffixes=(".json",),
)
register_format(
    "terminal",
    "storbench.report.terminalview:PRESENTER",
    doc="what show prints",
    suffixes=(".txt",),
)


# --------------------------------------------------------------------------- plugins

PLUGINS_ENV = "STORBENCH_PLUGINS"
_loaded: list[str] = []


def load_plugins(env: dict[str, str] | None = None) -> list[str]:
    """Import the modules ``STORBENCH_PLUGINS`` names (once each); their names."""
    text = (os.environ if env is None else env).get(PLUGINS_ENV, "")
    for name in (n.strip() for n in text.split(",")):
        if name and name not in _loaded:
            importlib.import_module(name)
            _loaded.append(name)
    return list(_loaded)
