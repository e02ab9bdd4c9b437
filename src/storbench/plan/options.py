"""The workload options of a plan: each value checked and read (sizes, times, numbers, lists
that make axes)."""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from typing import Any

import storbench.plan.enginekeys as enginekeys
from storbench import hooks
from storbench.model.errors import PlanError, suggestion
from storbench.model.units import UnitError, parse_size, parse_time
from storbench.plan.checks import (
    fix_for,
    job_value_problem,
    path_problem,
)
from storbench.plan.model import _flag_set, fmt_count, mmap_file
from storbench.plan.reading import Reading
from storbench.plan.rules import (
    _EXAMPLE,
    _NEGATIVE,
    FILE_OPTIONS,
    INT_OPTIONS,
    INT_RANGES,
    MAX_INT,
    MAX_SIZE,
    NEEDS_VALUE,
    NEGATIVE_OK,
    RANGE_WHY,
    RW_VALUES,
    SIZE_OPTIONS,
    TIME_OPTIONS,
    Scalar,
)
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
            out[opt_s] = self.option_value(opt_s, value, node, opt, where)
        return out

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

    def option_value(self, opt: str, value: Any, node: Any, key: Any, where: str) -> Any:
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
                v = self.scalar(opt, v, at[0], at[1], where)
                if any(str(v) == str(prev) for prev in out):
                    raise self.reading.err(
                        f"{where}: `{opt}` lists {v!r} twice",
                        *at,
                        fix="list each value once (`repeat: N` runs every point N times)",
                        origin_key=opt,
                    )
                out.append(v)
            return out
        return self.scalar(opt, value, node, key, where)

    def scalar(self, opt: str, value: Any, node: Any, key: Any, where: str) -> Scalar:
        """One value of option ``opt`` checked and read; each check in the order its
        messages must come (the shape, then what fio could not read, then the number)."""

        def fail(msg: str, fix: str) -> PlanError:
            return self.reading.err(f"{where}: `{opt}` {msg}", node, key, fix=fix, origin_key=opt)

        _check_shape(opt, value, fail)
        if isinstance(value, bool):
            value = int(value)
        if value is None and opt == "ioengine":
            value = "null"  # YAML reads fio's `null` engine as a null value
        if value is None:
            _check_bare(opt, fail)
            return None  # a flag such as `group_reporting:` is written as a bare option
        if isinstance(value, float) and not math.isfinite(value):
            raise fail(f"must be a finite number, not {value}", "give a number")
        if isinstance(value, str):
            problem = job_value_problem(value)
            if problem:
                raise fail(problem, fix_for(problem))
        self.check_value(opt, value, fail)
        _check_size_or_time(opt, value, fail)
        value = _check_whole(opt, value, fail)
        _check_sign(opt, value, fail)
        _check_choice(opt, value, fail)
        if isinstance(value, str | int | float):
            return value
        return str(value)

    def check_value(self, opt: str, value: Any, fail: Fail) -> None:
        """Values that run a command, let fio write a mounted device or name a file badly."""
        text = str(value).strip()
        if opt == "ioengine" and text == "exec":
            raise fail(
                "`exec` runs a command: storbench does not run commands from a plan",
                "run the command yourself, before or beside `storbench run`",
            )
        if opt == "allow_mounted_write" and _flag_set(value):
            raise fail(
                "lets fio write to a mounted device: storbench never does",
                "remove it (unmount the device to benchmark it)",
            )
        path: str | None = None
        if opt in FILE_OPTIONS:
            path = str(value)
        elif opt in ("mem", "iomem"):
            path = mmap_file({opt: value})
        if path is not None:
            problem = path_problem(path) if path else None
            if problem:
                raise fail(f"names a file that {problem}", fix_for(problem))
            if not os.path.isabs(path):
                example = "/var/tmp/storbench/" + ("w.iolog" if opt == "write_iolog" else "w")
                if opt in ("mem", "iomem"):
                    example = f"{text.partition(':')[0].strip()}:/var/tmp/storbench.mmap"
                raise fail(
                    f"must name an absolute path, not {path!r} (fio runs in a temporary "
                    "directory storbench removes after the run)",
                    f"e.g. `{opt}: {example}`",
                )
        if opt == "donorname":
            problem = path_problem(str(value))
            if problem:
                raise fail(problem, fix_for(problem))
            if "/" in str(value) or str(value) in (".", ".."):
                raise fail(
                    "must be a file name: fio puts e4defrag's donor file in the target "
                    "directory (or in its own temporary one)",
                    "e.g. `donorname: storbench.donor`",
                )


def _check_shape(opt: str, value: Any, fail: Fail) -> None:
    """One value, not a mapping or a nested list."""
    if isinstance(value, dict | list):
        kind = "a mapping (key: value lines)" if isinstance(value, dict) else "a nested list"
        fix = f"write `{opt}: VALUE` or `{opt}: [VALUE, VALUE]` on one line"
        if isinstance(value, dict):
            fix += " (a `key: value` indented under it reads as a mapping)"
        raise fail(f"must be a value or a list of values, not {kind}", fix)


def _check_bare(opt: str, fail: Fail) -> None:
    """An option left without a value: a flag, unless it needs one."""
    if opt in FILE_OPTIONS:
        raise fail(
            "needs an absolute path (without one, fio writes into its working directory, "
            "a temporary one storbench removes after the run)",
            f"e.g. `{opt}: /var/tmp/storbench/{'w' if opt != 'write_iolog' else 'w.iolog'}`",
        )
    if opt in NEEDS_VALUE:
        raise fail("has no value", f"give it one, e.g. `{opt}: {_EXAMPLE.get(opt, 1)}`")


def _check_size_or_time(opt: str, value: Any, fail: Fail) -> None:
    """A size fio can count (more than 0), a time fio can count (0 or more)."""
    try:
        if opt in SIZE_OPTIONS and not _compound(value):
            size = parse_size(value)
            if size <= 0:
                raise fail(
                    f"must be more than 0, not {value}",
                    "omit `size` to use the whole file or device (fio's default; a file "
                    "storbench creates needs one), or give e.g. `size: 10g`"
                    if opt == "size"
                    else f"omit it for fio's default, or give e.g. "
                    f"`{opt}: {_EXAMPLE.get(opt, '4k')}`",
                )
            if size > MAX_SIZE:
                raise fail(f"is larger than fio can count: {value}", f"at most {MAX_SIZE}")
        elif opt in TIME_OPTIONS:
            secs = parse_time(value)
            if not math.isfinite(secs):
                raise fail(f"must be a finite time, not {value}", f"e.g. `{opt}: 60`")
            if secs < 0:
                raise fail(
                    f"must be 0 or more, not {value}",
                    f"e.g. `{opt}: {_EXAMPLE.get(opt, 0)}` (seconds)"
                    + ("; 0: no time limit" if opt == "runtime" else ""),
                )
            if secs * 1e6 >= 2**63:
                raise fail(f"is longer than fio can count: {value}", f"e.g. `{opt}: 60`")
    except UnitError:
        if opt in SIZE_OPTIONS:
            raise fail(
                f"is not a size: {value!r}",
                f"use fio's size syntax, e.g. `{opt}: {_EXAMPLE.get(opt, '4k')}` "
                "(k, m, g, t are powers of 1024; a plain number is bytes)",
            ) from None
        raise fail(
            f"is not a time: {value!r}",
            f"use fio's time syntax, e.g. `{opt}: 60` (seconds) or 60s, 2m, 500ms",
        ) from None


def _check_whole(opt: str, value: Any, fail: Fail) -> Any:
    """A whole-number option's value in its range (a float such as 2.0 read as 2)."""
    if opt not in INT_OPTIONS:
        return value
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not (isinstance(value, int) or (isinstance(value, str) and value.isdigit())):
        raise fail(
            f"must be a whole number, not {_describe(value)}",
            f"e.g. `{opt}: {_EXAMPLE.get(opt, 1)}`, or a list for an axis: `{opt}: [1, 32]`"
            if opt in ("iodepth", "numjobs")
            else f"e.g. `{opt}: {_EXAMPLE.get(opt, 1)}`",
        )
    lo, hi = INT_RANGES.get(opt, (0, MAX_INT))
    n = int(value)
    if n < lo or n > hi:
        span = f"{lo} or more" if n < lo and hi > 1000 else f"{lo} to {hi}"
        raise fail(
            f"must be {span}, not {fmt_count(n)}"
            + (f" ({RANGE_WHY[opt]})" if opt in RANGE_WHY and n > hi else ""),
            f"e.g. `{opt}: {_EXAMPLE.get(opt, lo)}`",
        )
    return value


def _check_sign(opt: str, value: Any, fail: Fail) -> None:
    """No negative numbers: fio reads them as huge ones (``nice`` alone takes them)."""
    negative = value < 0 if isinstance(value, int | float) else bool(_NEGATIVE.match(str(value)))
    if negative and opt not in NEGATIVE_OK:
        raise fail(
            f"must be 0 or more, not {value} (fio reads a negative number as a huge one)",
            f"give `{opt}` a value of 0 or more",
        )


def _check_choice(opt: str, value: Any, fail: Fail) -> None:
    """The options that take one of a list of values: engine, an engine's choices (rados
    bench's mode), rw."""
    if opt == "engine" and value not in hooks.engine_names():
        names = hooks.engine_names()
        raise fail(
            f"cannot be {value!r}",
            suggestion(str(value), names, f"one of: {', '.join(names)}") or "",
        )
    for decl in enginekeys.every_engine():
        key = next((k for k in decl.keys if k.name == opt and k.choices()), None)
        if key is not None and value not in key.choices():
            raise fail(
                f"cannot be {value!r}",
                suggestion(str(value), key.choices(), "")
                or f"one of: {', '.join(key.choices())} ({decl.label}'s)",
            )
    if opt in ("rw", "readwrite") and str(value).split(":")[0] not in RW_VALUES:
        raise fail(
            f"cannot be {value!r}",
            suggestion(str(value).split(":")[0], RW_VALUES, f"one of: {', '.join(RW_VALUES)}")
            or "",
        )
