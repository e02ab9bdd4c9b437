"""Reading the machine for the inventory: external commands (argument lists, never a shell,
each with a timeout) and small files under /proc and /sys. Each gives None instead of raising,
so that a missing tool or an unreadable file only leaves a field unknown.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from storbench.hosts import procguard

#: Timeout for each external command, in seconds.
COMMAND_TIMEOUT = 5.0

_EXTRA_PATH = ("/usr/sbin", "/sbin", "/usr/bin", "/bin")


def _which(cmd: str) -> str | None:
    path = os.environ.get("PATH", "")
    return shutil.which(cmd, path=os.pathsep.join([path, *_EXTRA_PATH]))


#: Within :func:`one_look`: each command's answer by its arguments.
_answers: dict[tuple[str, ...], str | None] | None = None


@contextlib.contextmanager
def one_look() -> Iterator[None]:
    """Within: a command asked again with the same arguments gives its first answer, so one
    inventory is one look at the machine (a file target's filesystem and its disk identity
    ask ``findmnt`` and ``lsblk`` the same questions). For the inventory only: safety checks
    ask the machine themselves, each time."""
    global _answers
    before, _answers = _answers, {}
    try:
        yield
    finally:
        _answers = before


def _run(args: list[str], ok_codes: tuple[int, ...] = (0,)) -> str | None:
    """stdout of a command (argument list, never a shell), or None when missing/failed/hung."""
    answers = _answers
    if answers is None:
        return _ask(args, ok_codes)
    asked = (*args, *map(str, ok_codes))
    if asked not in answers:
        answers[asked] = _ask(args, ok_codes)
    return answers[asked]


def _ask(args: list[str], ok_codes: tuple[int, ...]) -> str | None:
    exe = _which(args[0])
    if exe is None:
        return None
    try:
        proc = subprocess.run(
            [exe, *args[1:]],
            capture_output=True,
            text=True,
            timeout=COMMAND_TIMEOUT,
            env=procguard.environment({**os.environ, "LC_ALL": "C"}),
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    if proc.returncode not in ok_codes:
        return None
    return proc.stdout


def _run_json(args: list[str], ok_codes: tuple[int, ...] = (0,)) -> dict[str, Any] | None:
    out = _run(args, ok_codes)
    if not out:
        return None
    try:
        data = json.loads(out)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _read(path: Path | str) -> str | None:
    try:
        text = Path(path).read_text(errors="replace").strip()
    except OSError:
        return None
    return text or None


def _read_int(path: Path | str) -> int | None:
    text = _read(path)
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


def _clean(value: Any) -> str | None:
    if value is None:
        return None
    text = str(value).strip()
    return text or None


def _nearest_existing(path: str) -> str:
    current = os.path.abspath(path)
    while not os.path.exists(current):
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    return current


def _as_int(value: Any) -> int | None:
    if isinstance(value, bool):
        return int(value)
    try:
        return int(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def _as_bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if value in (0, 1, "0", "1"):
        return str(value) == "1"
    return None
