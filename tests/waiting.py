"""Waiting for what a test expects to happen, not for a fixed time: a busy machine (``make
test-busy``) runs threads and processes late, and a test that sleeps 0.3 s and then asserts
what happened in them fails there. :func:`wait_until` polls, bounded by a generous deadline."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

#: The bound of every wait, s: far above what the event takes on an idle machine.
DEADLINE_S = 60.0


def wait_until(what: str, cond: Callable[[], T], timeout: float = DEADLINE_S) -> T:
    """``cond()`` once it is true (polled every 10 ms); AssertionError naming ``what`` when
    it is still false after ``timeout`` s."""
    end = time.monotonic() + timeout
    while not (value := cond()):
        if time.monotonic() > end:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(0.01)
    return value


def sigint_when(
    proc: subprocess.Popen[str], what: str, cond: Callable[[], object], timeout: float = 300
) -> str:
    """Ctrl-C (SIGINT) to ``proc`` once ``cond()`` holds (:func:`wait_until`), then what it
    printed (its stdout, stderr joined to it) once it exits; killed if anything fails."""
    try:
        wait_until(what, cond, timeout)
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    return out


def files_now(base: Path, read: Callable[[Path], T]) -> Iterator[tuple[Path, T]]:
    """Every file under ``base`` with ``read(file)`` (its bytes, its size), read while
    something else writes and removes them: a file or a directory gone between being listed
    and being read is left out (``Path.rglob`` raises when a directory it listed is removed
    before it is scanned, as versitygw does with a directory it emptied)."""
    for where, _, names in os.walk(base):  # os.walk skips a directory gone meanwhile
        for name in names:
            f = Path(where) / name
            if not f.is_file():  # a socket or a fifo (reading one would block), or gone
                continue
            try:
                yield f, read(f)
            except (FileNotFoundError, NotADirectoryError):
                continue


def size_of(f: Path) -> int:
    """A file's size in bytes (a ``read`` for :func:`files_now`)."""
    return f.stat().st_size
