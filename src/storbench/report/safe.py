"""User text as text, in every output: the one place that escapes it.

Names, paths, option values, error messages and fio's own output reach storbench's output
from plans, imported files anyone can write, Ceph and databases of older versions: any of
them may hold terminal control sequences, Rich markup, Markdown or spreadsheet formulas.
Each presenter passes such text through one of these functions on its way out:

- the terminal: :func:`console` (a Rich console that prints every string as text: no markup,
  no emoji codes, control characters shown as ``\\x1b``), or :func:`visible` for text
  written without Rich;
- Markdown: :func:`md_text` and :func:`md_code`;
- CSV: :func:`csv_cell` (OWASP's rule against formula injection).

The HTML report escapes with Jinja2's autoescape and passes every value through
:func:`visible` (report/html.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from rich.console import Console
from rich.text import Text


def _escape_of(char: str) -> str:
    named = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}
    cp = ord(char)
    return named.get(char) or (f"\\x{cp:02x}" if cp <= 0xFF else f"\\u{cp:04x}")


#: What a terminal (or a reader) would not show as itself: C0 controls, DEL and C1 controls
#: (ESC, CSI, OSC: colours, clear screen, window title, links), the bidirectional overrides
#: that reorder what is shown (U+202A..U+202E, U+2066..U+2069, marks), the line and paragraph
#: separators, and lone surrogates (from JSON ``\\ud800``; they cannot even be encoded).
_OTHERS = r"\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029\ud800-\udfff"
_LINE = re.compile(rf"[\x00-\x1f{_OTHERS}]")
_BLOCK = re.compile(rf"[\x00-\x08\x0b-\x1f{_OTHERS}]")  # all but tab and line feed


def visible(text: str) -> str:
    """``text`` with every control character written out (ESC as ``\\x1b``, a lone CR as
    ``\\r``); line feeds and tabs stay (job files, fio's output), CRLF becomes LF."""
    if not _BLOCK.search(text):  # the usual case, fast on fio's megabytes of output
        return text
    return _BLOCK.sub(lambda m: _escape_of(m.group()), text.replace("\r\n", "\n"))


def one_line(text: str) -> str:
    """:func:`visible` for text that must stay on one line: line feeds and tabs written out
    too (``\\n``, ``\\t``)."""
    return _LINE.sub(lambda m: _escape_of(m.group()), text)


class SafeConsole(Console):
    """A Rich console that prints every string as text, wherever Rich renders one (print,
    table cells and titles): markup and emoji codes off whatever a caller asks, control
    characters made visible. (A :class:`rich.text.Text` is printed as built: make its text
    with :func:`visible` or :func:`styled`.)"""

    def render_str(self, text: str, **kwargs: Any) -> Text:
        kwargs.update(markup=False, emoji=False)
        return super().render_str(visible(text), **kwargs)


def console(stderr: bool = False, **kwargs: Any) -> SafeConsole:
    """The console storbench prints on (highlighting off: numbers keep the plain colour)."""
    return SafeConsole(stderr=stderr, highlight=False, markup=False, emoji=False, **kwargs)


def styled(*parts: str | tuple[str, str]) -> Text:
    """A line of plain and styled parts (``("name", "bold")``), each part's text made
    :func:`visible`."""
    text = Text()
    for part in parts:
        if isinstance(part, tuple):
            text.append(visible(part[0]), style=part[1])
        else:
            text.append(visible(part))
    return text


# ---------------------------------------------------------------------------- Markdown

#: ASCII punctuation that changes what GitHub renders: emphasis (* ~, and _ but inside a
#: word: HEALTH_OK stays as it is), code (`), links and images ([ ]), raw HTML and autolinks
#: (< >), entities (&), tables (|), math ($), and a backslash that would escape what follows
#: (before punctuation or at the end; elsewhere it shows as itself: bs \ iodepth). Escaped
#: with a backslash, they show as themselves.
_MD_SPECIAL = re.compile(r"[`*\[\]<>&|~$]|(?<!\w)_|_(?!\w)|\\(?=[!-/:-@\[-`{-~]|$)")


def md_text(value: Any) -> str:
    """Any value as Markdown inline text that shows as itself: on one line (line breaks and
    tabs become spaces), control characters visible, Markdown and HTML punctuation escaped."""
    text = re.sub(r"[\r\n\t]+", " ", str(value))
    return _MD_SPECIAL.sub(lambda m: "\\" + m.group(0), one_line(text))


def md_code(value: Any) -> str:
    """A Markdown code span of ``value`` (outside tables: a pipe would split a cell), fenced
    with more backticks than it holds in a row, on one line, control characters visible."""
    text = one_line(re.sub(r"[\r\n\t]+", " ", str(value)))
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


# ---------------------------------------------------------------------------- CSV

#: A text cell starting with one of these is a formula to a spreadsheet (OWASP, "CSV
#: Injection"): = + - @, and tab or carriage return.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


def csv_cell(value: Any) -> Any:
    """A CSV cell as spreadsheet-safe CSV writers make it: a text cell that a spreadsheet
    would read as a formula gets a leading ``'`` (shown, not evaluated); numbers (also
    numbers written as text: ``-1.5``) and empty cells stay as they are. Control characters
    are made :func:`visible` (line feeds stay: the csv module quotes them)."""
    if value is None or isinstance(value, (bool, int, float)):
        return value
    text = visible(str(value))
    if text.startswith(_FORMULA_START) and not _NUMBER.fullmatch(text):
        return "'" + text
    return text


def md_cell(v: Any) -> str:
    """A table cell: text that shows as itself (md_text escapes pipes, HTML, emphasis,
    links and line breaks of names that came from plans, files or fio)."""
    return md_text(v)


def md_table(headers: list[str], rows: Iterable[list[Any]], right: set[int] | None = None) -> str:
    """A GitHub table; columns in ``right`` (default: all but the first) align right."""
    right = right if right is not None else set(range(1, len(headers)))
    lines = [
        "| " + " | ".join(md_cell(h) for h in headers) + " |",
        "|" + "|".join("---:" if i in right else "---" for i in range(len(headers))) + "|",
    ]
    lines += ["| " + " | ".join(md_cell(c) for c in r) + " |" for r in rows]
    return "\n".join(lines) + "\n"
