"""Checks of single values: names, paths and job values that must reach fio's job file as
themselves, and how an error message shows them."""

from __future__ import annotations

import unicodedata

#: The longest value (UTF-8 bytes) storbench writes into a fio job file: fio reads job files in
#: lines of at most 8191 bytes and reads the rest of a longer line as a line of its own.
MAX_VALUE_BYTES = 4096
#: The longest name (plan, workload, target, host): names go into job-file comment lines.
MAX_NAME_CHARS = 256


def _char_name(c: str) -> str:
    names = {"\n": "a newline", "\r": "a carriage return", "\t": "a tab", "\0": "a NUL"}
    return names.get(c, f"U+{ord(c):04X}")


def control_char(text: str, allow: str = "") -> str | None:
    """The first control character of ``text`` (newlines and the Unicode line and paragraph
    separators included) that is not in ``allow``, named, or None."""
    for c in text:
        if c not in allow and unicodedata.category(c) in ("Cc", "Cs", "Zl", "Zp"):
            return _char_name(c)
    return None


def name_problem(text: str, allow: str = "") -> str | None:
    """Why ``text`` cannot be a name (of a plan, workload, target or host), or None."""
    c = control_char(text, allow)
    if c is not None:
        return f"holds a control character ({c})"
    if len(text) > MAX_NAME_CHARS:
        return f"is longer than {MAX_NAME_CHARS} characters"
    return None


def job_value_problem(value: str) -> str | None:
    """Why ``value`` cannot be written as a value in a fio job file, or None.

    fio 3.33 reads the file line by line (a newline or carriage return would start an option
    of its own), ends a line at its first ``;`` or ``#`` (the rest would be dropped
    silently), reads lines in pieces of 8191 bytes, and replaces ``${VAR}`` with the
    environment variable (always, even unset), so storbench's checks would see other text
    than fio."""
    c = control_char(value)
    if c is not None:
        return (
            f"holds a control character ({c}), which would end or change its line of fio's job file"
        )
    for ch in ";#":
        if ch in value:
            return f"holds `{ch}`: fio's job file ends a line there and drops the rest"
    if "${" in value:
        return "holds `${`: fio replaces ${VAR} with the environment variable VAR"
    if len(value.encode(errors="surrogatepass")) > MAX_VALUE_BYTES:
        return f"is longer than {MAX_VALUE_BYTES} bytes: fio reads job files in lines of 8191"
    return None


def path_problem(path: str) -> str | None:
    """Why ``path`` cannot name a file fio opens, or None: the job-file rule, and no ``$``
    (fio replaces $pagesize, $ncpus, ${VAR} ... in values) nor blanks at either end (fio strips
    them, so it would open another file than the one storbench checked)."""
    if not path:
        return "is empty"
    problem = job_value_problem(path)
    if problem:
        return problem
    if "$" in path:
        return "holds `$`: fio replaces $pagesize, $ncpus and ${VAR} in values"
    if path != path.strip():
        return "starts or ends with a blank, which fio strips"
    return None


def fix_for(problem: str) -> str:
    """The fix for a :func:`job_value_problem` / :func:`path_problem` / :func:`name_problem`."""
    if "control character" in problem:
        return "remove the control character: one value, on one line"
    if "`$`" in problem or "`${`" in problem:
        return "write the value itself, without `$` (fio would substitute it)"
    if "`;`" in problem or "`#`" in problem:
        return "remove the `;` and `#`: a value in fio's job file cannot hold them"
    if "longer than" in problem:
        return "shorten it"
    if "blank" in problem:
        return "remove the blanks at its ends"
    return "give a path"


def shown(text: str) -> str:
    """``text`` as an error message may show it: quoted and escaped when it holds a control
    character (a newline would forge a line of the message)."""
    return repr(text) if control_char(text) is not None else text


def percent(value: object) -> float:
    """A plan's percentage: ``20``, ``20%``, ``"20 %"``; ValueError when it is none."""
    return float(str(value).strip().removesuffix("%"))
