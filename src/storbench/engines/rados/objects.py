"""Objects by name in a pool: written before a read (``rados put``) and removed at the end
(``rados rm``), for fio's rados engine, whose objects are named after the run.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence

from storbench.engines.process import (
    CephConf,
)
from storbench.engines.rados.command import _error_message, _object_size, _pool_cmd, _run


def remove_objects(
    pool: str, names: Sequence[str], conf: CephConf = None, *, timeout: float = 600.0
) -> list[str]:
    """Remove the named objects (fio's rados engine leaves its objects behind; their names
    are known from the plan), without listing the pool. A missing object is no error;
    returns the objects that could not be removed, with why."""
    failed: list[str] = []
    rest = list(names)
    while rest:
        batch, rest = rest[:256], rest[256:]
        while batch:
            out = _run(_pool_cmd(pool, conf, "rm", *batch), timeout)
            if out.returncode == 0:
                break
            # rados stops at the first object it cannot remove: "error removing POOL>NAME:
            # (2) No such file or directory"; go on after it
            m = re.search(r"error removing [^>]*>(.*): \((\d+)\) (.*)", out.stderr)
            if not m or m.group(1) not in batch:
                failed += [f"{n} ({_error_message(out.stderr)})" for n in batch]
                break
            if m.group(2) != "2":
                failed.append(f"{m.group(1)} ({m.group(3).strip()})")
            batch = batch[batch.index(m.group(1)) + 1 :]
    return failed


def put_objects(
    pool: str,
    objects: Sequence[tuple[str, int]],
    conf: CephConf,
    workdir: str,
    *,
    timeout: float = 600.0,
) -> list[str]:
    """Write each object ``(name, bytes)`` that is missing or smaller, with random data
    (``rados put``), so that a read measures reading data; returns the names written."""
    written = []
    sources: dict[int, str] = {}
    for name, size in objects:
        have = _object_size(pool, name, conf, timeout)
        if have is not None and have >= size:
            continue
        if size not in sources:
            path = os.path.join(workdir, f"object-{size}.data")
            with open(path, "wb") as f:
                block = os.urandom(1 << 20)
                for off in range(0, size, len(block)):
                    f.write(block[: min(len(block), size - off)])
            sources[size] = path
        put = _run(_pool_cmd(pool, conf, "put", name, sources[size]), timeout)
        if put.returncode != 0:
            raise RuntimeError(
                f"rados put {name} to pool {pool} failed: {_error_message(put.stderr)}"
            )
        written.append(name)
    for path in sources.values():
        os.unlink(path)
    return written
