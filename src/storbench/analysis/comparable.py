"""Whether two matched points measured the same thing, so that one can be judged against the
other (storbench.analysis.compare): :func:`not_comparable` gives the reason they cannot.

Points whose settings change *what* is measured are not comparable, whatever their
figures say: one that bypasses the page cache against one that goes through it (``direct``,
``buffered``: the buffered one measured RAM), two I/O engines of fio (``ioengine``: libaio
against psync moves time between submission and completion, and psync ignores iodepth), two
tools (``engine``: fio against rados bench), synchronous writes or flushes against none
(``sync``, ``fsync``, ``fdatasync``), two requested rates (``rate``, ``rate_iops``: a
rate-capped point is judged by its latency, which depends on the load asked for). A
setting a point does not give counts as fio's default (``direct=0``, ``ioengine=psync``...).

So are points either side of which carries a finding that says its number is not the
storage's (model/findings.py: page-cache, unwritten-read, client-cpu-bound, ...).

This applies whether the setting differs point by point or is what the two runs were set
up to compare (the comparison's ``differs``): the figures of such pairs are shown, their
verdict is ``not comparable`` with the reason, and they are left out of every summary. (A
read against a write, or two block sizes, pair only when the sides are filtered to them
on purpose, ``12:rw=read 12:rw=write``: the label and ``differs`` say so.)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from storbench.analysis.summary import RATE_OPTIONS, PointSummary
from storbench.hooks import DEFAULT_ENGINE
from storbench.model.findings import unjudged

_TRUE = frozenset(("1", "true", "yes", "on"))
_FALSE = frozenset(("0", "false", "no", "off", ""))


def _text(v: Any) -> str:
    if isinstance(v, bool):
        return "1" if v else "0"
    return str(v).strip()


def _same(v: str) -> str:
    return v.lower()


def _sync(v: str) -> str:
    """fio's ``sync``: a boolean (1 = O_SYNC) or none/sync/dsync."""
    low = v.lower()
    if low in _TRUE:
        return "sync"
    return "none" if low in _FALSE else low


def _number(v: str) -> str:
    return "0" if v.lower() in _FALSE else v.lower()


#: option -> (fio's default, normalisation, why a difference changes what is measured)
OPTIONS: dict[str, tuple[str, Callable[[str], str], str]] = {
    "engine": (DEFAULT_ENGINE, _same, "different tools measure different things"),
    "ioengine": ("psync", _same, "different I/O paths (submission and completion differ)"),
    "sync": ("0", _sync, "synchronous writes against none"),
    "fsync": ("0", _number, "flushes to stable storage against none or others"),
    "fdatasync": ("0", _number, "flushes to stable storage against none or others"),
    **{k: ("0", _number, "the runs asked for different rates") for k in sorted(RATE_OPTIONS)},
}


#: fio's other names of an option
ALIASES: dict[str, tuple[str, ...]] = {}


def _setting(params: Mapping[str, Any], name: str) -> tuple[str, str]:
    """(normalised value, how to say it) of option ``name`` (or an alias) of a point."""
    default, norm, _ = OPTIONS[name]
    for key in (name, *ALIASES.get(name, ())):
        if key in params and params[key] is not None:
            raw = _text(params[key])
            return norm(raw), f"{key}={raw}"
    return norm(default), f"{name}={default} (default)"


def page_cache(params: Mapping[str, Any]) -> tuple[bool, str]:
    """Whether a point's I/O goes through the page cache (``direct=0``/``buffered=1``, fio's
    default), and how its options say so."""
    if "direct" in params and params["direct"] is not None:
        raw = _text(params["direct"])
        return raw.lower() not in _TRUE, f"direct={raw}"
    if "buffered" in params and params["buffered"] is not None:
        raw = _text(params["buffered"])
        return raw.lower() not in _FALSE, f"buffered={raw}"
    return True, "direct=0 (default)"


def setting_reasons(b: PointSummary, o: PointSummary, base_name: str, other_name: str) -> list[str]:
    """Each setting of the pair that changes what is measured, said with its values."""
    out = []
    cb, co = page_cache(b.params), page_cache(o.params)
    if cb[0] != co[0]:
        cached = other_name if co[0] else base_name
        out.append(f"{cb[1]} vs {co[1]}: {cached} measured through the page cache")
    for name, (_, _, why) in OPTIONS.items():
        vb, vo = _setting(b.params, name), _setting(o.params, name)
        if vb[0] != vo[0]:
            out.append(f"{vb[1]} vs {vo[1]}: {why}")
    return out


def side_reasons(s: PointSummary, name: str) -> list[str]:
    """What makes one side's point unfit to be judged at all, said of ``name``: its findings
    that say the number is not the storage's (page-cache, unwritten-read, client-cpu-bound,
    network-bound...: model/findings.py's ``judged`` False), each code once."""
    codes = dict.fromkeys(f.code for f in unjudged(s.findings))
    return [f"{code} in {name}" for code in codes]


def not_comparable(
    b: PointSummary, o: PointSummary, *, base_name: str = "baseline", other_name: str = "other"
) -> str | None:
    """Why ``o`` cannot be judged against ``b`` (module doc), or None when it can."""
    reasons = setting_reasons(b, o, base_name, other_name)
    reasons += side_reasons(b, base_name) + side_reasons(o, other_name)
    return "; ".join(reasons) or None
