"""What an engine's workloads take in a plan: the plan loader's view of an engine.

Each engine declares its :class:`EngineKeys` in its own package (``engines/fio/keys.py``,
``engines/rados/keys.py``) and registers it with :func:`storbench.hooks.register_engine`;
the loader asks the declaration of a workload's engine what it takes, what it refuses, what
kind of value each of its names takes (:class:`Value`: a size, a time, a whole number in a
range, one of a list), which files a workload writes and how it expands into points, and
names no engine itself. ``docs/plan-keys.md`` shows every
registered engine's keys from these declarations.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from storbench import hooks
from storbench.plan.schema import Key, Problem, Section

if TYPE_CHECKING:
    from storbench.plan.model import Point, Target

#: What a point of the engine adds to its parameters as it is expanded: (target, the
#: point's parameters, changed in place, its repetition) -> the options storbench adds
#: (``Point.extra``).
PointExpander = Callable[["Target", dict[str, Any], int], dict[str, Any]]


#: The kinds of value the loader checks (plan/options.py): a size (``4k``, more than 0), a
#: time (``60``, ``2m``: 0 or more), a whole number in a range, one of a list; "any" is
#: checked only as every value is (one line of text, no negative number unless allowed).
ValueKind = Literal["any", "size", "time", "int", "choice"]
#: The largest whole number a value may be unless its declaration says less (a signed
#: 32-bit integer).
MAX_INT = 2**31 - 1


@dataclass(frozen=True)
class Value:
    """What the value of one of an engine's names is: the loader's typed checks read it
    (plan/options.py), the engine's own refusals are its :attr:`EngineKeys.check_value`."""

    kind: ValueKind = "any"
    #: whether the name means nothing without a value (others, such as flags, stand bare)
    needs_value: bool = False
    #: the value a fix shows (None: the check's own, e.g. ``4k`` for a size)
    example: str | int | None = None
    #: whether a negative number is allowed (a negative value is refused otherwise)
    negative: bool = False
    #: "int": the whole numbers allowed (inclusive), why the upper bound is what it is, and
    #: whether a fix suggests a list of them (an axis)
    lo: int = 0
    hi: int = MAX_INT
    why: str = ""
    axis: bool = False
    #: "choice": the values; the part of a value before ``sep`` is the choice (a value may
    #: go on: ``randread:8``); whose choices they are, shown after the list in a fix
    choices: tuple[str, ...] = ()
    sep: str = ""
    whose: str = ""
    #: "size": the fix of a size of 0 (what leaving the name out does), when not the
    #: generic one; whether fio's compound forms (``4k:8k``, ``4k-16k``, ``1/2``) stand
    omit: str = ""
    compound: bool = True
    #: "time": what a time of 0 means, added to the fix of a negative one
    zero: str = ""
    #: what the name left bare (YAML's null) stands for, when it is a value of its own
    null: str | None = None


#: The value of a name an engine declares nothing of.
ANY = Value()


@dataclass(frozen=True)
class OutputFile:
    """A file an engine writes for a point besides its target, named by one of its options:
    the file ``path``, or (``suffix`` not "") every file whose name is ``path``'s followed by
    what the regular expression ``suffix`` matches (a log prefix)."""

    option: str
    path: str
    suffix: str = ""


def _no_refusal(name: str) -> Problem | None:
    return None


def _any_value(name: str, value: Any) -> Problem | None:
    return None


def _no_file_options(options: Mapping[str, Any]) -> tuple[str, ...]:
    return ()


def _no_files(params: Mapping[str, Any], target: Target) -> list[OutputFile]:
    return []


def no_point_problem(point: Point) -> Problem | None:
    return None


def _any_target(target: Target) -> Problem | None:
    return None


def _always_writes(params: Mapping[str, Any]) -> bool:
    return True


def _nothing_added(targets: list[Target], repeat: int) -> PointExpander:
    return lambda target, params, rep: {}


@dataclass(frozen=True)
class EngineKeys:
    """An engine's plan vocabulary and rules (fio's ``struct fio_option`` table, for a plan)."""

    #: the plan's name for it (``engine: NAME``)
    name: str
    #: what messages call it ("rados bench")
    label: str
    #: the heading and paragraph of its part of docs/plan-keys.md
    title: str
    doc: str
    #: its own keys, each documented and checked by its ``check`` (with the global options)
    keys: tuple[Key, ...] = ()
    #: the other names a workload of it takes, checked by name only (fio: every fio option)
    options: Callable[[], frozenset[str]] = frozenset
    #: what the names in ``options`` are, for an unknown name's message ("fio option")
    option_word: str = "key"
    #: where the names in ``options`` are listed, for an unknown name's fix
    options_listed: str = ""
    #: keys whose check runs even when the workload leaves them out (required ones)
    required: tuple[str, ...] = ()
    #: options every workload of it starts from
    defaults: Mapping[str, Any] = field(default_factory=dict)
    #: a name it never takes from a workload though it knows it, why and the fix
    refuse: Callable[[str], Problem | None] = _no_refusal
    #: what kind of value each name takes (a name left out takes any value: :data:`ANY`)
    values: Mapping[str, Value] = field(default_factory=dict)
    #: its own refusal of a value of a name (``value`` None: the name left bare), checked
    #: before the typed checks of ``values``: (message after the name, fix), or None
    check_value: Callable[[str, Any], Problem | None] = _any_value
    #: options a workload may not set because its target sets them (fio's ``filename``)
    target_options: frozenset[str] = frozenset()
    #: the fix for a name of another engine it does not take (rados bench: iodepth -> threads)
    hints: Mapping[str, str] = field(default_factory=dict)
    #: why its points cannot run on ``hosts:`` (message, fix), or None: they run on the first
    #: ``clients`` hosts; otherwise ``clients`` is its own key
    no_hosts: Problem | None = None
    #: why failure drills (``actions:``) cannot run beside its load, or ""
    no_drills: str = ""
    #: why its workloads cannot run in steady-state rounds (message, fix), or None
    no_rounds: Problem | None = None
    #: why its targets cannot be preconditioned (it writes its own data), or ""
    no_precondition: str = ""
    #: whether its workloads size their data with ``size``/``filesize`` and ``bs`` (checked
    #: against each other, and required for the files it creates)
    sizes: bool = True
    #: what ``duration:`` sets besides ``runtime`` (fio: ``time_based``)
    duration: Mapping[str, Any] = field(default_factory=dict)
    #: why it cannot measure a target (a kind it does not know), or None
    target_problem: Callable[[Target], Problem | None] = _any_target
    #: whether a workload's options write its target
    writes: Callable[[Mapping[str, Any]], bool] = _always_writes
    #: the options of a workload (a value may be a list: an axis) that make it write files of
    #: its own besides the target (refused with ``hosts:``, where storbench cannot check them)
    file_options: Callable[[Mapping[str, Any]], tuple[str, ...]] = _no_file_options
    #: the files a point's options make it write besides its target (preflight checks that
    #: none exists yet)
    files: Callable[[Mapping[str, Any], Target], list[OutputFile]] = _no_files
    #: what each point of a plan's expansion adds: given the plan's targets and repeat count
    expander: Callable[[list[Target], int], PointExpander] = _nothing_added
    #: why an expanded point cannot run (a read that nothing wrote before it), or None
    point_problem: Callable[[Point], Problem | None] = no_point_problem

    def names(self) -> tuple[str, ...]:
        return tuple(k.name for k in self.keys)

    def accepts(self, name: str) -> bool:
        """Whether a workload of this engine may hold ``name`` (``engine`` is everyone's)."""
        return name == "engine" or name in self.names() or name in self.options()

    def value(self, name: str) -> Value:
        """What kind of value ``name`` takes."""
        return self.values.get(name, ANY)

    def section(self) -> Section:
        return Section(f"{self.name} workload", self.title, self.keys)


def engine_keys(name: str) -> EngineKeys:
    """The declaration of the engine ``name`` (the loader refuses other names first)."""
    keys: EngineKeys = hooks.engine_keys(name)
    return keys


def every_engine() -> list[EngineKeys]:
    return [engine_keys(n) for n in hooks.engine_names()]


def default() -> EngineKeys:
    """The engine of a workload that names none."""
    return engine_keys(hooks.DEFAULT_ENGINE)


def of(options: Mapping[str, Any]) -> EngineKeys:
    """The engine of a workload's (or a point's) options."""
    return engine_keys(str(options.get("engine", hooks.DEFAULT_ENGINE)))
