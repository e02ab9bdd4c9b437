"""Errors a user can act on. The CLI prints them as one message (no traceback), exit status 2."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class UserError(Exception):
    """Bad input or a refusal: says where (file:line), what, and how to fix it."""

    exit_status = 2

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        line: int | None = None,
        column: int | None = None,
        fix: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.file = file
        self.line = line  # 1-based
        self.column = column  # 1-based
        self.fix = fix
        #: the errors found beside this one (a plan's every error at once: plan/reading.py),
        #: each said after it
        self.others: list[UserError] = []

    @property
    def where(self) -> str | None:
        if self.file is None:
            return None
        out = self.file
        if self.line is not None:
            out += f":{self.line}"
            if self.column is not None:
                out += f":{self.column}"
        return out

    def __str__(self) -> str:
        text = f"{self.where}: {self.message}" if self.where else self.message
        if self.fix:
            # continuation lines of a multi-line fix (an example) line up under its first line
            text += "\n  fix: " + self.fix.replace("\n", "\n       ")
        return text


class PlanError(UserError):
    """The plan file (or a --set/--target override) is invalid."""


class PreflightError(UserError):
    """A check before any I/O refused to start: nothing was run or recorded."""


class NotFoundError(UserError):
    """A run, suite or file that does not exist."""


def did_you_mean(word: str, candidates: Iterable[str]) -> str | None:
    """The candidate closest to ``word`` (ignoring case), or None when none is close."""
    by_lower: dict[str, str] = {}
    for c in candidates:
        by_lower.setdefault(c.lower(), c)
    close = difflib.get_close_matches(word.lower(), list(by_lower), n=1, cutoff=0.6)
    return by_lower[close[0]] if close else None


def suggestion(word: str, candidates: Iterable[str], otherwise: str | None = None) -> str | None:
    """Fix text ``did you mean "iodepth"?``, else ``otherwise``."""
    near = did_you_mean(word, candidates)
    return f'did you mean "{near}"?' if near else otherwise


def clipped(text: str, limit: int = 40) -> str:
    """What a message shows of a value the user gave: the value, or its first ``limit``
    characters and how long it is (a 5,000-digit number is not echoed whole)."""
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text):,} characters)"
