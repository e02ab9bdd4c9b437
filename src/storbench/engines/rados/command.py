"""rados bench's command lines and run names, where it is, and removing what its writes left
(``rados cleanup`` by run name and object prefix).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
from collections.abc import Iterable, Sequence
from functools import cache

from storbench.engines.process import tool_version
from storbench.hosts.ceph import (
    RADOS,
    CephConf,
    object_size,
    pool_command,
    run_tool,
)

MiB = 1 << 20  # rados bench's "MB"
NS_PER_S = 1e9
MODES = ("write", "seq", "rand")
FORMATS = ("plain", "json")
BENCH_PREFIX = "benchmark_data"  # every object rados bench writes starts with this
DEFAULT_RUN_NAME = "benchmark_last_metadata"  # the metadata object without --run-name
RUN_NAME_PREFIX = "storbench-"  # run names storbench makes (and metadata objects so named)
#: the host name in object names is cut to this many characters (obj_bencher.cc)
HOSTNAME_CHARS = 29

PERCENTILES_NOTE = (
    "rados bench reports only the latency average, stddev (write only), min and max: "
    "percentiles cannot be derived from its output (fio's rados engine reports them)"
)

_RUN_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
_TS_RE = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+[+-]\d{4}) ")
_ROW_RE = re.compile(r"^\s*(\d+)" + r"\s+(\S+)" * 7 + r"\s*$")
_MAINTAINING_RE = re.compile(
    r"^Maintaining (\d+) concurrent writes of (\d+) bytes to objects of size (\d+) "
    r"for up to (\d+) seconds or (\d+) objects$"
)
_INT_RE = re.compile(r"^[+-]?\d+$")


class RadosOutputError(ValueError):
    """rados bench's output holds no result (no summary, or JSON cut short)."""


# ---------------------------------------------------------------------------- discovery


def rados_path() -> str | None:
    return shutil.which(RADOS)


@cache
def rados_version() -> str | None:
    """``ceph version 16.2.15 (...) pacific (stable)`` or None when rados is not installed."""
    return tool_version(rados_path())


# ---------------------------------------------------------------------------- commands


def check_run_name(run_name: str) -> str:
    """A run name is also an object name: letters, digits, ``.``, ``_``, ``-`` (128 at most)."""
    if not _RUN_NAME_RE.match(run_name):
        raise ValueError(
            f"run name {run_name!r}: use letters, digits, '.', '_' and '-' (at most 128)"
        )
    return run_name


def bench_command(
    pool: str,
    mode: str,
    seconds: int,
    object_size: int | None,
    threads: int,
    run_name: str,
    conf: str | os.PathLike[str] | None = None,
    no_cleanup: bool = True,
    *,
    fmt: str = "plain",
    show_time: bool = True,
) -> list[str]:
    """The ``rados bench`` argument list (never a shell string).

    ``object_size`` (bytes, ``-b``) applies to ``write`` only: ``seq`` and ``rand`` read the
    objects the write of the same ``run_name`` left, with that write's sizes (and stop early
    when ``seq`` has read them all). ``no_cleanup`` keeps the written objects for them.
    ``fmt`` ``plain`` adds ``--show-time`` (per-row wall clock, see the module docstring)
    unless ``show_time`` is false; ``json`` is ``-f json``.
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
    if fmt not in FORMATS:
        raise ValueError(f"fmt must be one of {', '.join(FORMATS)}, not {fmt!r}")
    if not isinstance(seconds, int) or seconds < 1:
        raise ValueError(f"seconds must be a whole number >= 1, not {seconds!r}")
    if not isinstance(threads, int) or threads < 1:
        raise ValueError(f"threads must be a whole number >= 1, not {threads!r}")
    check_run_name(run_name)
    cmd = pool_command(pool, conf, "bench", str(seconds), mode, "-t", str(threads))
    if mode == "write":
        if not isinstance(object_size, int) or object_size < 1:
            raise ValueError(f"object_size must be a whole number of bytes, not {object_size!r}")
        cmd += ["-b", str(object_size)]
        if no_cleanup:
            cmd.append("--no-cleanup")
    cmd += ["--run-name", run_name]
    if fmt == "json":
        cmd += ["-f", "json"]
    elif show_time:
        cmd.append("--show-time")
    return cmd


def client_run_name(run_name: str, client: int, clients: int) -> str:
    """The run name of client ``client`` (1-based) of ``clients`` running at once."""
    return run_name if clients == 1 else f"{run_name}-c{client}"


def object_prefix_for(pid: int, hostname: str | None = None) -> str:
    """The object name prefix of the rados bench process ``pid`` on this host (what it
    prints as "Object prefix"): ``benchmark_data_<hostname[:29]>_<pid>``."""
    host = (hostname if hostname is not None else socket.gethostname())[:HOSTNAME_CHARS]
    return f"{BENCH_PREFIX}_{host}_{pid}"


def cleanup_command(
    pool: str,
    run_name: str,
    conf: str | os.PathLike[str] | None = None,
    prefix: str | None = None,
) -> list[str]:
    """``rados cleanup`` for one write run.

    Give ``prefix`` (the run's object prefix): rados then removes the run's objects through
    its metadata object when there is one, or, when the metadata is missing (the write was
    killed before storing it), every object whose name starts with ``PREFIX_object``. Without
    a prefix and without metadata, rados removes every benchmark object of this host,
    other runs' included.
    """
    check_run_name(run_name)
    cmd = pool_command(pool, conf, "cleanup", "--run-name", run_name)
    if prefix:
        if not prefix.startswith(BENCH_PREFIX):
            raise ValueError(f"prefix must start with {BENCH_PREFIX}, not {prefix!r}")
        cmd += ["--prefix", prefix if prefix.endswith("_object") else prefix + "_object"]
    return cmd


def list_objects_command(pool: str, conf: str | os.PathLike[str] | None = None) -> list[str]:
    """Every object of the pool, in all namespaces, as JSON."""
    return pool_command(pool, conf, "ls", "--all", "-f", "json")


def is_benchmark_object(name: str, run_names: Iterable[str] = ()) -> bool:
    """An object rados bench made: data (``benchmark_data...``), the default metadata object,
    or the metadata object of a storbench run name (or one of ``run_names``)."""
    return (
        name.startswith(BENCH_PREFIX)
        or name == DEFAULT_RUN_NAME
        or name.startswith(RUN_NAME_PREFIX)
        or name in set(run_names)
    )


def leftover_objects(
    pool: str,
    conf: str | os.PathLike[str] | None = None,
    *,
    run_names: Iterable[str] = (),
    prefixes: Sequence[str] | None = None,
    timeout: float = 120.0,
) -> list[str]:
    """Benchmark objects still in ``pool`` (``rados ls``, all namespaces), sorted.

    By default every object :func:`is_benchmark_object` says rados bench made; with
    ``prefixes``, only objects starting with one of them or named in ``run_names``.
    Names in a namespace other than the default one are given as ``namespace/name``.
    """
    out = run_tool(list_objects_command(pool, conf), timeout)
    if out.returncode != 0:
        raise RuntimeError(f"rados ls on pool {pool} failed: {out.stderr.strip()}")
    names = set(run_names)
    found = []
    for obj in json.loads(out.stdout or "[]"):
        name = obj["name"] if isinstance(obj, dict) else str(obj)
        ns = obj.get("namespace", "") if isinstance(obj, dict) else ""
        if prefixes is None:
            hit = is_benchmark_object(name, names)
        else:
            hit = name in names or name.startswith(tuple(prefixes))
        if hit:
            found.append(f"{ns}/{name}" if ns else name)
    return sorted(found)


def cleanup(
    pool: str,
    runs: Iterable[tuple[str, str | None]],
    conf: str | os.PathLike[str] | None = None,
    *,
    timeout: float = 600.0,
    verify: str = "list",
) -> list[str]:
    """Remove the objects of write runs ``(run_name, object_prefix)``; return what is left.

    ``verify`` ``list`` lists the pool afterwards (exact, but it reads the name of every
    object in the pool: slow on a production pool of millions); ``stat`` only asks whether
    each run's metadata object and first data object are gone (one ``rados stat`` each).

    For each run: ``rados cleanup`` with the run's prefix (see :func:`cleanup_command`);
    without a known prefix, only when the run's metadata object exists (never the host-wide
    fallback). Then the metadata object itself if it is still there (rados leaves it when no
    data object was found). Returns the run's objects still present afterwards (empty when
    all went).
    """
    runs = list(runs)
    for run_name, prefix in runs:
        if prefix is None and not _object_exists(pool, run_name, conf, timeout):
            continue
        run_tool(cleanup_command(pool, run_name, conf, prefix), timeout)
        if _object_exists(pool, run_name, conf, timeout):
            run_tool(pool_command(pool, conf, "rm", run_name), timeout)
    if verify == "stat":
        probes = [r for r, _ in runs] + [f"{p}_object0" for _, p in runs if p]
        return [name for name in probes if _object_exists(pool, name, conf, timeout)]
    prefixes = [p + "_object" for _, p in runs if p]
    return leftover_objects(
        pool, conf, run_names=[r for r, _ in runs], prefixes=prefixes, timeout=timeout
    )


def _object_exists(pool: str, name: str, conf: CephConf, timeout: float) -> bool:
    return object_size(pool, name, conf, timeout) is not None
