"""Secrets this process knows (an S3 target's keys, storbench.hosts.s3creds) taken out of any text
before storbench stores or prints it: the results database (job files, raw outputs, stderr,
commands, errors, events, inventory), reports, exports and error messages.

A secret is registered once it is read; :func:`clean` replaces every occurrence of every
registered secret with :data:`MARK`, in every form it takes in what storbench keeps: as it
is, and as JSON writes it (fio's JSON echoes the keys in ``"job options"``: a quote or
backslash of a key is escaped there, and escaped again when that text is stored inside
JSON). Secrets shorter than :data:`MIN_CHARS` are not registered (replacing a 2-character
string everywhere would garble the text and hide nothing worth hiding; no real access key is
that short).
"""

from __future__ import annotations

import json
import re
import threading
from typing import Any

MARK = "[redacted]"
MIN_CHARS = 4
_secrets: set[str] = set()
_lock = threading.Lock()


def _forms(secret: str) -> set[str]:
    """``secret`` as it is and JSON-escaped once and twice (ASCII-only or not)."""
    forms = {secret}
    for ascii_only in (True, False):
        s = secret
        for _ in range(2):
            s = json.dumps(s, ensure_ascii=ascii_only)[1:-1]
            forms.add(s)
    return forms


def register(secret: str) -> None:
    if len(secret) >= MIN_CHARS:
        with _lock:
            _secrets.update(_forms(secret))


#: ``scheme://user:PASSWORD@`` in any text (a URL given where it should hold none)
_USERINFO = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)(?P<user>[^:/@\s]*):[^@\s]*@")


def hide_url_passwords(text: str) -> str:
    """``text`` with the password of every ``scheme://user:PASSWORD@`` in it replaced by
    ``***``, even in a URL that does not parse (a bad port, an unclosed ``[``)."""
    return _USERINFO.sub(lambda m: f"{m['scheme']}{m['user']}:***@", text)


def active() -> bool:
    """Whether any secret is registered (nothing to clean otherwise)."""
    return bool(_secrets)


def clean(text: str) -> str:
    """``text`` without any registered secret (longest first: one inside another)."""
    if not _secrets or not text:
        return text
    with _lock:
        known = sorted(_secrets, key=len, reverse=True)
    for s in known:
        if s in text:
            text = text.replace(s, MARK)
    return text


def clean_any(value: Any) -> Any:
    """A JSON-like value with every string cleaned."""
    if not _secrets:
        return value
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, list | tuple):
        return type(value)(clean_any(v) for v in value)
    if isinstance(value, dict):
        return {clean_any(k): clean_any(v) for k, v in value.items()}
    return value


def forget() -> None:
    """Drop every registered secret (tests)."""
    with _lock:
        _secrets.clear()
