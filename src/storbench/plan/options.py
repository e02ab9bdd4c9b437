"""The workload options of a plan: each value checked and read (sizes, times, numbers, lists
that make axes) as the workload's engine declares it (enginekeys.Value): the checks are
generic, what kind of value each name takes is the engine's."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from typing import Any

import storbench.plan.enginekeys as enginekeys
from storbench import hooks
from storbench.model.errors import PlanError, suggestion
from storbench.model.units import UnitError, parse_size, parse_time
from storbench.plan.checks import fix_for, job_value_problem
from storbench.plan.model import fmt_count
from storbench.plan.reading import Reading
from storbench.plan.rules import MAX_SIZE, Scalar
from storbench.plan.yamlpos import _compound, _describe, _position

#: Makes the error of a refused value from its message and fix.
Fail = Callable[[str, str], PlanError]


class OptionReader:
    """The options of workloads and of ``global:``: each name taken by the engine, each
    value checked and read, errors through the plan's :class:`Reading`."""

    def __init__(self, reading: Reading) -> None:
        self.reading = reading

    def read(
        self, node: Any, parent: Any, key: Any, where: str, engine: str | None = None
    ) -> dict[str, Any]:
        """The options of a workload (only what its ``engine`` takes: see enginekeys.py) or
        of ``global:`` (``engine`` None: the keys of any engine)."""
        if not isinstance(node, dict):
            raise self.reading.err(
                f"`{where}` must be a mapping of fio options, not {_describe(node)}",
                parent,
                key,
                fix=f"{where}:\n  ioengine: libaio\n  direct: 1",
            )
        out: dict[str, Any] = {}
        decls = enginekeys.every_engine()
        for opt, value in node.items():
            opt_s = str(opt)
            if engine is None:  # `global:` a key of the default engine, else of any other
                decl = next(
                    (d for d in [enginekeys.default(), *decls] if d.accepts(opt_s)),
                    enginekeys.default(),
                )
            else:
                decl = enginekeys.engine_keys(engine)
            refused = decl.refuse(opt_s)
            if refused is not None:
                why, fix = refused
                raise self.reading.err(f"{where}: {why}", node, opt, fix=fix, origin_key=opt_s)
            if not decl.accepts(opt_s):
                why, fix = self.not_taken(decl, opt_s, where)
                raise self.reading.err(why, node, opt, fix=fix, origin_key=opt_s)
            # a key of `global:` goes to the workloads of every engine that takes it: its
            # value must be one each of them takes
            takers = [decl] if engine is not None else [decl, *self.takers(decls, decl, opt_s)]
            out[opt_s] = self.option_value(opt_s, value, node, opt, where, takers)
        return out

    @staticmethod
    def takers(
        decls: list[enginekeys.EngineKeys], decl: enginekeys.EngineKeys, opt: str
    ) -> list[enginekeys.EngineKeys]:
        """The engines besides ``decl`` that take ``opt``."""
        return [d for d in decls if d is not decl and d.accepts(opt)]

    @staticmethod
    def not_taken(decl: enginekeys.EngineKeys, opt: str, where: str) -> tuple[str, str]:
        """Why a workload of ``decl``'s engine cannot hold ``opt`` (another engine's key, or
        no engine's), and the fix."""
        other = next((d for d in enginekeys.every_engine() if d.accepts(opt)), None)
        if other is None:
            known = decl.names() + tuple(decl.options())
            listed = decl.options_listed or f"a {decl.name} workload has: {', '.join(known)}"
            return (
                f"{where}: unknown {decl.option_word} {opt!r}",
                decl.hints.get(opt) or suggestion(opt, known, listed),
            )
        return (
            f"{where}: `{opt}` is a {other.option_word}, not one of {decl.label}'s",
            decl.hints.get(opt)
            or f"add `engine: {other.name}` to the workload to run {other.label}",
        )

    def option_value(
        self,
        opt: str,
        value: Any,
        node: Any,
        key: Any,
        where: str,
        decls: Sequence[enginekeys.EngineKeys],
    ) -> Any:
        if isinstance(value, list):
            if not value:
                raise self.reading.err(
                    f"{where}: `{opt}` is an empty list",
                    node,
                    key,
                    fix=f"give at least one value (`{opt}: [a, b]`), or a single value",
                    origin_key=opt,
                )
            out = []
            for i, v in enumerate(value):
                # point at the list item when it sits on a line of its own
                at = (
                    (value, i)
                    if _position(value, i)[0] not in (None, _position(node, key)[0])
                    else (node, key)
                )
                v = self.scalar(opt, v, at[0], at[1], where, decls)
                if any(str(v) == str(prev) for prev in out):
                    raise self.reading.err(
                        f"{where}: `{opt}` lists {v!r} twice",
                        *at,
                        fix="list each value once (`repeat: N` runs every point N times)",
                        origin_key=opt,
                    )
                out.append(v)
            return out
        return self.scalar(opt, value, node, key, where, decls)

    def scalar(
        self,
        opt: str,
        value: Any,
        node: Any,
        key: Any,
        where: str,
        decls: Sequence[enginekeys.EngineKeys] = (),
    ) -> Scalar:
        """One value of option ``opt`` checked and read as the engines ``decls`` declare it
        (``engine``: as the registered engines' names); each check in the order its messages
        must come (the shape, then what the engine could not read, then the number)."""

        def fail(msg: str, fix: str) -> PlanError:
            return self.reading.err(f"{where}: `{opt}` {msg}", node, key, fix=fix, origin_key=opt)

        _check_shape(opt, value, fail)
        if isinstance(value, bool):
            value = int(value)
        kinds = [_engine_value()] if opt == "engine" else [d.value(opt) for d in decls]
        if value is None:  # a bare key: what it stands for, if anything (fio's `null` engine)
            value = next((v.null for v in kinds if v.null is not None), None)
        if value is None:
            _check_bare(opt, decls, kinds, fail)
            return None  # a flag such as `group_reporting:` is written as a bare option
        if isinstance(value, float) and not math.isfinite(value):
            raise fail(f"must be a finite number, not {value}", "give a number")
        if isinstance(value, str):
            problem = job_value_problem(value)
            if problem:
                raise fail(problem, fix_for(problem))
        for decl in decls:
            refused = decl.check_value(opt, value)
            if refused is not None:
                raise fail(*refused)
        for kind in kinds:
            _check_size_or_time(opt, value, kind, fail)
            value = _check_whole(opt, value, kind, fail)
            _check_sign(opt, value, kind, fail)
            _check_choice(opt, value, kind, fail)
        if isinstance(value, str | int | float):
            return value
        return str(value)


def _engine_value() -> enginekeys.Value:
    """What ``engine`` takes: the name of a registered engine (a fix shows one that is not
    the default)."""
    names = hooks.engine_names()
    other = next((n for n in names if n != hooks.DEFAULT_ENGINE), hooks.DEFAULT_ENGINE)
    return enginekeys.Value("choice", needs_value=True, example=other, choices=names)


def _example(kind: enginekeys.Value, otherwise: str | int) -> str | int:
    return kind.example if kind.example is not None else otherwise


def _check_shape(opt: str, value: Any, fail: Fail) -> None:
    """One value, not a mapping or a nested list."""
    if isinstance(value, dict | list):
        kind = "a mapping (key: value lines)" if isinstance(value, dict) else "a nested list"
        fix = f"write `{opt}: VALUE` or `{opt}: [VALUE, VALUE]` on one line"
        if isinstance(value, dict):
            fix += " (a `key: value` indented under it reads as a mapping)"
        raise fail(f"must be a value or a list of values, not {kind}", fix)


def _check_bare(
    opt: str,
    decls: Sequence[enginekeys.EngineKeys],
    kinds: list[enginekeys.Value],
    fail: Fail,
) -> None:
    """An option left without a value: a flag, unless its engine refuses it bare or it
    needs one."""
    for decl in decls:
        refused = decl.check_value(opt, None)
        if refused is not None:
            raise fail(*refused)
    need = next((k for k in kinds if k.needs_value), None)
    if need is not None:
        raise fail("has no value", f"give it one, e.g. `{opt}: {_example(need, 1)}`")


def _check_size_or_time(opt: str, value: Any, kind: enginekeys.Value, fail: Fail) -> None:
    """A size fio can count (more than 0), a time fio can count (0 or more)."""
    try:
        if kind.kind == "size" and not (kind.compound and _compound(value)):
            size = parse_size(value)
            if size <= 0:
                omit = kind.omit or "omit it for fio's default"
                raise fail(
                    f"must be more than 0, not {value}",
                    f"{omit}, or give e.g. `{opt}: {_example(kind, '4k')}`",
                )
            if size > MAX_SIZE:
                raise fail(f"is larger than fio can count: {value}", f"at most {MAX_SIZE}")
        elif kind.kind == "time":
            secs = parse_time(value)
            if not math.isfinite(secs):
                raise fail(f"must be a finite time, not {value}", f"e.g. `{opt}: 60`")
            if secs < 0:
                raise fail(
                    f"must be 0 or more, not {value}",
                    f"e.g. `{opt}: {_example(kind, 0)}` (seconds){kind.zero}",
                )
            if secs * 1e6 >= 2**63:
                raise fail(f"is longer than fio can count: {value}", f"e.g. `{opt}: 60`")
    except UnitError:
        if kind.kind == "size":
            raise fail(
                f"is not a size: {value!r}",
                f"use fio's size syntax, e.g. `{opt}: {_example(kind, '4k')}` "
                "(k, m, g, t are powers of 1024; a plain number is bytes)",
            ) from None
        raise fail(
            f"is not a time: {value!r}",
            f"use fio's time syntax, e.g. `{opt}: 60` (seconds) or 60s, 2m, 500ms",
        ) from None


def _check_whole(opt: str, value: Any, kind: enginekeys.Value, fail: Fail) -> Any:
    """A whole-number option's value in its range (a float such as 2.0 read as 2)."""
    if kind.kind != "int":
        return value
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not (isinstance(value, int) or (isinstance(value, str) and value.isdigit())):
        example = f"e.g. `{opt}: {_example(kind, 1)}`"
        raise fail(
            f"must be a whole number, not {_describe(value)}",
            example + (f", or a list for an axis: `{opt}: [1, 32]`" if kind.axis else ""),
        )
    lo, hi = kind.lo, kind.hi
    n = int(value)
    if n < lo or n > hi:
        span = f"{lo} or more" if n < lo and hi > 1000 else f"{lo} to {hi}"
        raise fail(
            f"must be {span}, not {fmt_count(n)}"
            + (f" ({kind.why})" if kind.why and n > hi else ""),
            f"e.g. `{opt}: {_example(kind, lo)}`",
        )
    return value


#: A value that reads as a negative number.
_NEGATIVE = re.compile(r"\s*-\s*\d")


def _check_sign(opt: str, value: Any, kind: enginekeys.Value, fail: Fail) -> None:
    """No negative numbers, unless the declaration allows them (fio reads them as huge
    ones)."""
    negative = value < 0 if isinstance(value, int | float) else bool(_NEGATIVE.match(str(value)))
    if negative and not kind.negative:
        raise fail(
            f"must be 0 or more, not {value} (fio reads a negative number as a huge one)",
            f"give `{opt}` a value of 0 or more",
        )


def _check_choice(opt: str, value: Any, kind: enginekeys.Value, fail: Fail) -> None:
    """One of the declared values (the part before ``sep``, when the choice may go on)."""
    if kind.kind != "choice":
        return
    base = str(value).split(kind.sep)[0] if kind.sep else str(value)
    if base not in kind.choices:
        listed = f"one of: {', '.join(kind.choices)}" + (f" ({kind.whose})" if kind.whose else "")
        raise fail(f"cannot be {value!r}", suggestion(base, kind.choices, listed) or "")
