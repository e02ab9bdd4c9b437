"""Where in the plan's YAML a value is (line, column) and how a message describes it; a cheap
look at nesting before the parser sees the text."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # ruamel.yaml is imported where a YAML node is handled: a command that
    # reads no plan (show, compare) imports the plan's model (Point), not the YAML parser
    from ruamel.yaml.comments import CommentedMap
    from ruamel.yaml.error import MarkedYAMLError

#: How deep a plan's YAML may nest (ruamel's scanner slows down with the square of the depth).
MAX_DEPTH = 64


def _too_deep(text: str, limit: int = MAX_DEPTH) -> int | None:
    """The line on which YAML flow collections (``[...]``, ``{...}``) in ``text`` nest more
    than ``limit`` deep, or None: a cheap look before the YAML parser, whose scanner slows
    down with the square of the depth (100,000 ``[`` took seconds before failing).

    It skips quoted strings and comments, and outside brackets counts only a bracket that
    starts a value; so it may miss some nesting (the parser's own limit catches that), but
    it does not count brackets inside plain text."""
    depth = 0
    line = 1
    quote = ""
    prev = "\n"  # the last character on this line that is not a blank
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            prev = "\n"
        elif quote:
            if quote == '"' and c == "\\":
                i += 1  # the escaped character
            elif c == quote:
                if quote == "'" and text.startswith("'", i + 1):
                    i += 1  # '' inside a single-quoted string
                else:
                    quote = ""
        elif c == "#" and (i == 0 or text[i - 1] in " \t\n"):
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        else:
            starts_value = depth > 0 or (prev in "\n:-?" and (i == 0 or text[i - 1] in " \t\n"))
            if c in "[{" and starts_value:
                depth += 1
                if depth > limit:
                    return line
            elif c in "]}" and depth > 0:
                depth -= 1
            elif c in "'\"" and (prev in "[{,:" if depth else starts_value):
                quote = c
            if c not in " \t":
                prev = c
        i += 1
    return None


def _line(e: MarkedYAMLError) -> int | None:
    return e.problem_mark.line + 1 if e.problem_mark else None


def _describe(value: Any) -> str:
    """A wrong value as a user wrote it: a mapping or list by kind, a scalar as itself."""
    if isinstance(value, dict):
        return "a mapping (key: value lines)"
    if isinstance(value, list):
        return "a list"
    if value is None:
        return "empty"
    return repr(value)


def _compound(value: Any) -> bool:
    """fio values such as bs=4k,8k (read,write), bssplit or percentages: not checked here
    (a leading minus is a negative number, not a range)."""
    return (
        isinstance(value, str)
        and not value.strip().startswith("-")
        and any(c in value for c in ",:%/-")
    )


def _submap(node: CommentedMap | dict[str, Any], keys: dict[str, Any]) -> Any:
    from ruamel.yaml.comments import CommentedMap

    if isinstance(node, CommentedMap):
        sub = CommentedMap()
        for k in keys:
            sub[k] = node[k]
            pos = node.lc.key(k) if k in node.lc.data else None
            if pos:
                sub.lc.add_kv_line_col(k, list(node.lc.data[k]))
        return sub
    return keys


def _position(node: Any, key: Any = None) -> tuple[int | None, int | None]:
    """1-based (line, column) of a key in a mapping / index in a sequence, or of the node."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    try:
        if key is not None and isinstance(node, CommentedMap) and key in node.lc.data:
            line, col = node.lc.key(key)
            return line + 1, col + 1
        if key is not None and isinstance(node, CommentedSeq) and isinstance(key, int):
            line, col = node.lc.item(key)
            return line + 1, col + 1
        if isinstance(node, CommentedMap | CommentedSeq):
            return node.lc.line + 1, node.lc.col + 1
    except (AttributeError, KeyError, IndexError, TypeError):
        pass
    return None, None
