"""What the parts of the plan loader share while they read one plan: where it comes from,
what ``--set`` gave, and the two ways a part reads the YAML (its declared keys, its errors)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import storbench.plan.schema as schema
from storbench.model.errors import PlanError
from storbench.plan.checks import shown
from storbench.plan.yamlpos import _position

_T = TypeVar("_T")


class Reading:
    """One plan being read, as :class:`~storbench.plan.load.Loader` and its parts (options,
    workloads, targets) share it: ``source`` (its file, or ``suite:NAME``), which errors
    name with the line and column of the node they point at, and ``set_keys`` (each key a
    ``--set`` argument gave -> that argument), whose errors name the argument instead.

    Every error of a plan is reported at once, as far as they can be found independently:
    a part that can be skipped (a top-level key, a workload, a target, ``hosts:``) is read
    through :meth:`kept`, which keeps its error and lets the loader go on with the next
    part; :meth:`raise_kept` then raises the first, carrying the others (``others``)."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.set_keys: dict[str, str] = {}  # key -> the --set argument that set it
        self.errors: list[PlanError] = []  # the errors kept so far, in the plan's order
        self._set_said: set[str] = set()  # the --set arguments an error was kept of

    def kept(self, read: Callable[[], _T], otherwise: _T) -> _T:
        """What ``read`` returns; when it fails, its error is kept and ``otherwise`` is
        returned, for the loader to go on with the next part."""
        try:
            return read()
        except PlanError as e:
            self.keep(e)
            return otherwise

    def keep(self, error: PlanError) -> None:
        """Keep ``error`` (with those it carries) to be raised with the others."""
        others, error.others = error.others, []
        for e in [error, *(o for o in others if isinstance(o, PlanError))]:
            # one --set argument, one error (it sets the key of every workload alike)
            arg = e.file if e.file is not None and e.file.startswith("--set ") else None
            if arg is not None and arg in self._set_said:
                continue
            if arg is not None:
                self._set_said.add(arg)
            self.errors.append(e)

    def raise_kept(self) -> None:
        """Raise the first error kept, carrying the others; nothing when none was."""
        if self.errors:
            first, *rest = self.errors
            self.errors = []
            first.others = list(rest)
            raise first

    def read_keys(
        self,
        section: schema.Section,
        item: Any,
        parent: Any,
        index: Any,
        origin: bool = False,
        unset: dict[str, Any] | None = None,
        only: tuple[str, ...] = (),
        values: Mapping[str, Any] | None = None,
        where: str = "",
        keep: bool = False,
    ) -> dict[str, Any]:
        """The value of each of ``section``'s keys in mapping ``item`` (``Key.absent`` when
        left out, ``unset``'s when None), refused by its declared check, in the section's
        order. An error points at the key, or at ``parent[index]`` when the key is left out;
        ``origin``: the keys may come from ``--set`` (top level); ``only``: these keys, in
        this order; ``values``: read the values there (a workload's options with the global
        ones), point at ``item``; ``where``: what the message begins with; ``keep``: each
        key's error is kept (:meth:`kept`) and the key reads as left out."""
        out: dict[str, Any] = {}
        source = item if values is None else values
        for k in [section.key(n) for n in only] if only else section.keys:
            value = source.get(k.name, k.absent)
            if value is None and unset and k.name in unset:
                value = unset[k.name]
            problem = k.check(value, source) if k.check is not None else None
            if problem is not None:
                at = (item, k.name) if k.name in item else (parent, index)
                msg, fix = problem
                msg = f"{where}: {msg}" if where else msg
                error = self.err(msg, *at, fix=fix, origin_key=k.name if origin else None)
                if not keep:
                    raise error
                self.keep(error)
                value = (unset or {}).get(k.name, k.absent)
            out[k.name] = value
        return out

    def err(
        self,
        msg: str,
        node: Any = None,
        key: Any = None,
        fix: str | None = None,
        origin_key: str | None = None,
    ) -> PlanError:
        """The error ``msg`` at ``node[key]`` of the plan, or at the ``--set`` argument that
        gave ``origin_key`` (its ``fix`` then shows examples as ``--set KEY=VALUE``)."""
        if origin_key is not None and origin_key in self.set_keys:
            if fix:  # show examples in the form they were given: `--set bs=4k`, not `bs: 4k`
                fix = fix.replace(f"`{origin_key}: ", f"`--set {origin_key}=")
            return PlanError(msg, file=f"--set {shown(self.set_keys[origin_key])}", fix=fix)
        line, col = _position(node, key)
        return PlanError(msg, file=self.source, line=line, column=col, fix=fix)
