"""Where a results database is: a file path (SQLite) or a URL (PostgreSQL), and that location
as storbench shows and keeps it -- a URL's password never (this module imports nothing heavy:
the command line's last error net uses it too).
"""

from __future__ import annotations

import re
import urllib.parse

#: ``scheme://`` at the start: a URL, not a file path
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
#: the schemes a PostgreSQL database is given with (psycopg 3 is the driver either way)
POSTGRES_SCHEMES = ("postgresql", "postgresql+psycopg", "postgres")
#: ``user:password@`` of a URL inside any text
_USERINFO = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)(?P<user>[^:/@\s]*):[^@\s]*@")
#: ``password=...`` of a URL's query or a libpq connection string
_PASSWORD_PARAM = re.compile(r"(?i)\b(password=)[^&\s]*")
HIDDEN = "***"


def is_url(text: str) -> bool:
    return bool(_URL.match(text))


def is_postgres(text: str) -> bool:
    return is_url(text) and text.split("://", 1)[0].lower() in POSTGRES_SCHEMES


def hide_passwords(text: str) -> str:
    """``text`` with the password of every URL in it (``user:PASSWORD@``, ``password=``)
    replaced by ``***``."""
    text = _USERINFO.sub(lambda m: f"{m['scheme']}{m['user']}:{HIDDEN}@", text)
    return _PASSWORD_PARAM.sub(lambda m: m[1] + HIDDEN, text)


def password(url: str) -> str | None:
    """The password a URL holds (in its user part or its query), if any."""
    parts = urllib.parse.urlsplit(url)
    if parts.password:
        return urllib.parse.unquote(parts.password)
    found = urllib.parse.parse_qs(parts.query).get("password")
    return found[0] if found else None
