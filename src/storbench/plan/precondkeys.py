"""The plan's ``precondition:`` key (top level, and per target): read and checked (what
it does: storbench.execute.precondition, and storbench.execute.purge for the purge).

A word names the mode; a mapping may add a purge of the device first::

    precondition: sequential
    precondition: {mode: sequential, purge: discard}   # blkdiscard the device, then WIPC
    precondition: {purge: secure}                      # blkdiscard --secure, no other mode

A purge erases a whole block device: only a ``device:`` target of this machine, and only
when the command line names it with ``--destroy-data`` (preflight refuses it otherwise).

``prefill: true`` (top level, and per target) asks that the target be written whole
before its first point, so that no read reads a region nothing wrote (the finding
``unwritten-read``): it is ``precondition: sequential`` where no other precondition is
given, and is refused beside another mode.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from storbench.model.errors import suggestion
from storbench.plan.yamlpos import _describe

#: What runs before a point is measured (``mode``).
MODES = ("none", "sequential", "workload")
#: How a device is purged first: ``blkdiscard`` (the whole device), or ``blkdiscard --secure``
#: (the device must support secure erase).
PURGES = ("discard", "secure")
#: The keys of a ``precondition:`` mapping.
KEYS = ("mode", "purge")
FIX = "e.g. `precondition: sequential`, or `precondition: {mode: sequential, purge: discard}`"


@dataclass(frozen=True)
class Precondition:
    """A target's preconditioning: its mode, and the purge before it (or None)."""

    mode: str = "none"
    purge: str | None = None


def precondition(value: Any) -> Precondition:
    """The ``precondition:`` value (checked by :func:`problem` first); None: none."""
    if value is None:
        return Precondition()
    if isinstance(value, Mapping):
        purge = value.get("purge")
        return Precondition(str(value.get("mode") or "none"), str(purge) if purge else None)
    return Precondition(str(value))


def problem(value: Any, _: Mapping[Any, Any]) -> tuple[str, str] | None:
    """Why ``precondition:`` is refused: (message, fix), or None."""
    if value is None:
        return None
    if isinstance(value, Mapping):
        return _mapping_problem(value)
    if value not in MODES:
        fix = suggestion(str(value), MODES, FIX) or FIX
        if isinstance(value, str) and value in PURGES:
            fix = f"a purge goes in a mapping: `precondition: {{purge: {value}}}`"
        modes = ", ".join(MODES)
        return f"`precondition` must be one of {modes} or a mapping, not {_describe(value)}", fix
    return None


def _mapping_problem(value: Mapping[Any, Any]) -> tuple[str, str] | None:
    for k in value:
        if k not in KEYS:
            return (
                f"`precondition` has no key {str(k)!r}",
                suggestion(str(k), KEYS, f"its keys: {', '.join(KEYS)}") or FIX,
            )
    mode = value.get("mode")
    if mode is not None and mode not in MODES:
        fix = suggestion(str(mode), MODES, f"one of: {', '.join(MODES)}")
        return f"`precondition.mode` must be one of {', '.join(MODES)}, not {mode!r}", fix or FIX
    purge = value.get("purge")
    if purge is not None and purge not in PURGES:
        fix = suggestion(str(purge), PURGES, "")
        return (
            f"`precondition.purge` must be discard (blkdiscard: the whole device) or secure "
            f"(blkdiscard --secure, where the device supports it), not {_describe(purge)}",
            fix or "e.g. `precondition: {mode: sequential, purge: discard}`, or leave `purge` out",
        )
    return None


#: What ``prefill: true`` means, for docs/plan-keys.md.
PREFILL_DOC = (
    "`true`: write the target whole before its first point, so that no read reads a region "
    "nothing wrote (the finding `unwritten-read`): `precondition: sequential` where no other "
    "`precondition` is given (refused beside `workload` or `none`). It writes: a target "
    "storbench may write."
)


def prefill_problem(value: Any, _: Mapping[Any, Any]) -> tuple[str, str] | None:
    """Why ``prefill:`` is refused: (message, fix), or None."""
    if value is None or isinstance(value, bool):
        return None
    return f"`prefill` must be true or false, not {_describe(value)}", "e.g. `prefill: true`"


def with_prefill(pre: Precondition | None, prefill: Any) -> tuple[Precondition | None, str]:
    """The preconditioning a ``prefill`` asks for: ``pre`` as it is without one, else
    ``sequential`` (its purge kept); "" or why the two disagree."""
    if prefill is not True:
        return pre, ""
    if pre is None or pre.mode == "sequential" or (pre.mode == "none" and pre.purge):
        return Precondition("sequential", pre.purge if pre is not None else None), ""
    return pre, (
        f"`prefill: true` writes the target sequentially before its first point, but "
        f"`precondition` says {pre.mode}"
    )
