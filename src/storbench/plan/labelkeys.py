"""Run labels: the plan's ``labels:`` and ``run --label KEY=VALUE``, what a run is
selected and grouped by in ``history`` (``--label ceph=19.2.1``) and what a comparison
lists beside the test bed's settings::

    labels:
      ceph: "19.2.1"     # quote a version: YAML reads 19.10 as the number 19.1
      pool: ssd-3x

Keys are words (letters, digits, ``_ . -``, from a letter); values text of one line. A
``--label`` given to ``run`` wins over the plan's label of the same key.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from storbench.model.errors import UserError, clipped
from storbench.plan.yamlpos import _describe

__all__ = ["DOC", "FIX", "MAX_LABELS", "TAKES", "merged", "parse_label", "problem"]

TAKES = "mapping of names to text"
DOC = (
    'Labels of the run (`ceph: "19.2.1"`, `pool: ssd`): `history --label` selects runs by '
    "them and the reports list their changes with the test bed's; `run --label KEY=VALUE` "
    "adds one or wins over the plan's."
)
FIX = 'e.g. `labels: {ceph: "19.2.1", pool: ssd}` or `--label ceph=19.2.1`'
MAX_LABELS = 32
MAX_KEY = 64
MAX_VALUE = 200
_KEY = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]*$")


def _key_problem(key: Any) -> str | None:
    if not isinstance(key, str) or not _KEY.match(key) or len(key) > MAX_KEY:
        return (
            f"label key {clipped(str(key))!r} is not a word (letters, digits, _ . -, "
            f"from a letter, at most {MAX_KEY})"
        )
    return None


def _value_problem(key: str, value: Any) -> str | None:
    if isinstance(value, float):
        return (
            f"label {key!r}: {value!r} is a number YAML may have rounded (19.10 reads as "
            "19.1); quote it"
        )
    if isinstance(value, bool) or not isinstance(value, str | int):
        return f"label {key!r} must be text, not {_describe(value)}"
    text = str(value)
    if not text.strip() or len(text) > MAX_VALUE or not text.isprintable():
        return f"label {key!r}: the value must be one line of 1 to {MAX_VALUE} characters"
    return None


def problem(value: Any, _: Mapping[Any, Any]) -> tuple[str, str] | None:
    """Why ``labels:`` is refused: (message, fix), or None."""
    if value is None:
        return None
    if not isinstance(value, Mapping):
        return f"`labels` must be a mapping of names to values, not {_describe(value)}", FIX
    if len(value) > MAX_LABELS:
        return f"`labels` has {len(value)} labels; at most {MAX_LABELS}", FIX
    for k, v in value.items():
        why = _key_problem(k) or _value_problem(str(k), v)
        if why:
            return why, FIX
    return None


def parse_label(text: str) -> tuple[str, str]:
    """``KEY=VALUE`` of ``--label`` as (key, value); a UserError naming the fix."""
    key, sep, value = text.partition("=")
    key = key.strip()
    why = (None if sep else f"--label {clipped(text)!r}: no '=' (KEY=VALUE)") or _key_problem(key)
    why = why or _value_problem(key, value.strip())
    if why:
        raise UserError(why if why.startswith("--label") else f"--label: {why}", fix=FIX)
    return key, value.strip()


def merged(plan: Mapping[str, Any] | None, given: list[str]) -> dict[str, str]:
    """The run's labels: the plan's, then each ``--label`` (which wins)."""
    labels = {str(k): str(v) for k, v in (plan or {}).items()}
    for text in given:
        key, value = parse_label(text)
        labels[key] = value
    if len(labels) > MAX_LABELS:
        raise UserError(f"{len(labels)} labels; at most {MAX_LABELS}", fix=FIX)
    return labels
