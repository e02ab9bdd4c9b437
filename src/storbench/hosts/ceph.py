"""The Ceph clusters storbench measures, through their command-line tools (ceph, rados,
rbd): how the tools reach a cluster (its ceph.conf and client name), short ``rados``
commands on a pool, and objects written before a read and removed at the end (fio's rados
engine names its objects after the run). Shared by preflight, the engines, drills and the
runner; it imports none of them."""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass

from storbench.hosts import procguard

#: the rados tool ($STORBENCH_RADOS: another build)
RADOS = os.environ.get("STORBENCH_RADOS", "rados")


@dataclass(frozen=True)
class CephClient:
    """How the ceph tools reach a cluster: its ceph.conf and the client name (``--id``;
    None: the tools' default, ``client.admin``)."""

    conf: str | None = None
    client: str | None = None

    def __fspath__(self) -> str:  # where only a path is expected: the conf
        return self.conf or ""


CephConf = str | os.PathLike[str] | CephClient | None


def ceph_args(conf: CephConf) -> list[str]:
    """``-c CONF`` (and ``--id NAME``) for ceph, rados and rbd: ``conf`` a ceph.conf path or a
    :class:`CephClient`; None: the tools' own default ($CEPH_CONF, /etc/ceph/ceph.conf)."""
    if isinstance(conf, CephClient):
        return (["-c", conf.conf] if conf.conf else []) + (
            ["--id", conf.client] if conf.client else []
        )
    return ["-c", os.fspath(conf)] if conf else []


def pool_command(pool: str, conf: CephConf, *args: str) -> list[str]:
    """``rados [-c CONF] [--id NAME] -p POOL ARGS``."""
    return [RADOS, *ceph_args(conf), "-p", pool, *args]


def run_tool(cmd: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
    """A short rados command (not a benchmark): output captured, no stdin."""
    return subprocess.run(
        cmd,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        env=procguard.environment(),
    )


def object_size(pool: str, name: str, conf: CephConf, timeout: float) -> int | None:
    """The size of an object in bytes (``rados stat``), None when it does not exist."""
    out = run_tool(pool_command(pool, conf, "stat", name), timeout)
    m = re.search(r" size (\d+)", out.stdout)
    return int(m.group(1)) if out.returncode == 0 and m else None


def error_message(stderr: str) -> str | None:
    """The last lines a ceph tool printed on stderr, joined (None when it printed none)."""
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    return "; ".join(lines[-3:]) or None


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
            out = run_tool(pool_command(pool, conf, "rm", *batch), timeout)
            if out.returncode == 0:
                break
            # rados stops at the first object it cannot remove: "error removing POOL>NAME:
            # (2) No such file or directory"; go on after it
            m = re.search(r"error removing [^>]*>(.*): \((\d+)\) (.*)", out.stderr)
            if not m or m.group(1) not in batch:
                failed += [f"{n} ({error_message(out.stderr)})" for n in batch]
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
        have = object_size(pool, name, conf, timeout)
        if have is not None and have >= size:
            continue
        if size not in sources:
            path = os.path.join(workdir, f"object-{size}.data")
            with open(path, "wb") as f:
                block = os.urandom(1 << 20)
                for off in range(0, size, len(block)):
                    f.write(block[: min(len(block), size - off)])
            sources[size] = path
        put = run_tool(pool_command(pool, conf, "put", name, sources[size]), timeout)
        if put.returncode != 0:
            raise RuntimeError(
                f"rados put {name} to pool {pool} failed: {error_message(put.stderr)}"
            )
        written.append(name)
    for path in sources.values():
        os.unlink(path)
    return written


#: compression modes that compress data written without a hint (BlueStore: ``passive``
#: compresses only data its client hints compressible, fio and rados bench give none)
COMPRESSING_MODES = ("aggressive", "force")


def pool_compression(pool: str, conf: CephConf, timeout: float = 30.0) -> str | None:
    """A pool's BlueStore compression mode: the pool's own ``compression_mode``, else the
    OSDs' ``bluestore_compression_mode``; None when the cluster does not say."""
    base = ["ceph", *ceph_args(conf)]
    try:
        own = run_tool([*base, "osd", "pool", "get", pool, "compression_mode"], timeout)
        m = re.search(r"compression_mode:\s*(\S+)", own.stdout)
        if own.returncode == 0 and m:
            return m.group(1)
        osd = run_tool([*base, "config", "get", "osd", "bluestore_compression_mode"], timeout)
        return osd.stdout.strip() or None if osd.returncode == 0 else None
    except (OSError, subprocess.TimeoutExpired):
        return None
