"""What storbench learns by running a program that cannot change until the program does,
kept between runs: fio's version and ioengines (``fio --version``, ``--enghelp``) and the
job files fio accepted (``fio --parse-only``). Each answer takes fio 0.1 to 0.4 s, so
without this every run pays them again before its first point.

An entry is found only under the key of everything its answer depends on: the machine
(host name, CPU count), the program's file (its real path, device, inode, size, and
modification and change times in ns: any replacement or upgrade changes them) and, for a
job file, its exact text. Only answers that say "yes" are kept (a job fio accepted, the
engines of a fio that answered): a refusal is always fio's own, of the moment.

The entries are small JSON files in ``$XDG_CACHE_HOME/storbench`` (``~/.cache/storbench``),
written whole and renamed into place (two runs at once read either nothing or a whole
entry); one owned by another user is ignored. Removing the directory, or
``STORBENCH_NO_CACHE=1``, makes storbench ask fio again. Any failure to read or write an
entry only means asking fio again: nothing here raises.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import tempfile
from pathlib import Path
from typing import Any

#: Entries of another layout are not read (a new storbench starts afresh).
LAYOUT = 1
#: Set (to anything but empty or 0) to neither read nor write the cache.
DISABLE_VAR = "STORBENCH_NO_CACHE"


def enabled() -> bool:
    return os.environ.get(DISABLE_VAR, "") in ("", "0")


def cache_dir() -> Path:
    """``$XDG_CACHE_HOME/storbench``, else ``~/.cache/storbench``."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "storbench"


def program_identity(path: str | None) -> list[Any] | None:
    """What identifies a program's file on this machine, or None when it cannot be read."""
    if path is None:
        return None
    try:
        real = os.path.realpath(path)
        st = os.stat(real)
    except OSError:
        return None
    return [
        socket.gethostname(),
        os.cpu_count(),
        real,
        st.st_dev,
        st.st_ino,
        st.st_size,
        st.st_mtime_ns,
        st.st_ctime_ns,
    ]


def key(*parts: Any) -> str:
    """The name of the entry for ``parts`` (anything JSON can write)."""
    text = json.dumps([LAYOUT, *parts], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:40]


def load(kind: str, name: str) -> Any | None:
    """The entry ``kind``/``name``, or None (absent, unreadable, another user's, damaged)."""
    if not enabled():
        return None
    path = cache_dir() / kind / f"{name}.json"
    try:
        with open(path, encoding="utf-8") as f:
            if os.fstat(f.fileno()).st_uid != os.geteuid():
                return None
            doc = json.load(f)
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict) or doc.get("key") != name:
        return None
    return doc.get("value")


def save(kind: str, name: str, value: Any) -> None:
    """Keep ``value`` as the entry ``kind``/``name`` (silently not, when it cannot)."""
    if not enabled():
        return
    folder = cache_dir() / kind
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, tmp = tempfile.mkstemp(prefix=".new-", dir=folder)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump({"key": name, "value": value}, f)
            os.replace(tmp, folder / f"{name}.json")
        except BaseException:
            os.unlink(tmp)
            raise
    except (OSError, TypeError, ValueError):
        return
