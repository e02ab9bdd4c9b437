"""The built-in suites: one plan file each (NAME.yaml), read by plan/sources.py."""

from __future__ import annotations

import os


def names() -> tuple[str, ...]:
    """The suites' names, sorted (light: the command line's help lists them)."""
    files = os.listdir(os.path.dirname(__file__))
    return tuple(sorted(f[:-5] for f in files if f.endswith(".yaml")))
