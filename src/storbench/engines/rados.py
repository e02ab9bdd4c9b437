"""``rados bench`` adapter: point -> command line -> rados processes -> measurement.

``rados bench`` (ceph-common) writes objects to a pool (``write``) and reads back what a
``write`` left with ``--no-cleanup`` (``seq`` reads them in order, ``rand`` at random); the
read modes find the objects through the metadata object the write stored under its
``--run-name``. What it prints, in plain text and with ``-f json``, is described in
tests/data/rados/README.md (recorded with Ceph 16.2.15). Facts this module relies on:

- MB in its output is 2^20 bytes; latencies are seconds. ``-f json`` prints every value as a
  string, and the write benchmark's ``stddev_iops`` with ``printf("%d")`` from a double
  (ceph's obj_bencher.cc): undefined, garbage such as ``"-54090832"`` or ``"608609200"``.
  Its rows in which nothing finished print ``cur_bw``/``last_lat`` with ``printf("%f", 0)``
  (an int for a double, undefined too): they are set to 0 and none, as the text prints them.
- The per-second table: ``finished`` is cumulative; ``cur MB/s`` is the operations finished
  since the last row that saw any, times the op size, over the seconds since then; ``avg lat``
  is the mean latency of all operations so far. rados bench's IOPS and bandwidth min, max and
  stddev are statistics of exactly those per-second values (rows 1..n), so they can be
  recomputed from the table (:func:`per_second_samples`) -- and must be, for the JSON write's
  ``stddev_iops``. When no row after the first was printed (a read that ran out of objects
  within a second), "Min/Max IOPS" are ops/elapsed instead and can be below "Average IOPS".
- Plain text repeats the table header every 20 rows, after a ``min lat: ... max lat: ...
  avg lat: ...`` line stamped with the local time.
- ``--show-time`` stamps every table row with the wall clock (and the first line of the
  summary, which is printed up to 1 s after the end: the printer thread is joined first).
  storbench runs plain text with ``--show-time``: the stamps put concurrent clients on one
  time line (:func:`aggregate_clients`). JSON has no times and is written only at the end.
- rados bench reports the latency average, stddev (write only), min and max: **no percentiles
  can be derived from its output** (fio's ``rados`` engine reports them).
- Objects are named ``benchmark_data_<hostname[:29]>_<pid>_object<N>``; the metadata object is
  named after the run name. ``rados cleanup --run-name NAME`` without ``--prefix`` falls back,
  when NAME's metadata is missing (a write that was killed), to removing **every** benchmark
  object of this host: :func:`cleanup` always passes the run's own prefix.

Parsing never trusts a value that cannot be right: :func:`validate` rejects negative or
non-numeric values, a stddev larger than the spread of the values it describes (for samples
in [min, max] the sample stddev is at most (max - min)/sqrt(2), so ``stddev > max - min`` is
impossible; with min >= 0 that includes ``stddev > max``), min > max, an average latency
outside [min, max], and a bandwidth or average IOPS that disagrees with ops / time. A
rejected value is dropped with a warning (``rejected`` keeps what was printed); where the
per-second table allows, the value is recomputed and marked in ``derived``.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import re
import select
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import cache
from typing import Any

from storbench import procguard
from storbench.engines.process import (
    CephClient,
    CephConf,
    ceph_args,
    pdeathsig_prefix,
    tool_version,
)
from storbench.metrics import DirectionResult, LatencyStats, Measurement
from storbench.plan import Point
from storbench.units import parse_size, parse_time

RADOS = os.environ.get("STORBENCH_RADOS", "rados")

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


def _conf_args(conf: CephConf) -> list[str]:
    return ceph_args(conf)


def _pool_cmd(pool: str, conf: CephConf, *args: str) -> list[str]:
    """``rados [-c CONF] -p POOL ARGS``."""
    return [RADOS, *_conf_args(conf), "-p", pool, *args]


def _run(cmd: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
    """A short rados command (not a benchmark): output captured, no stdin."""
    return subprocess.run(
        cmd, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL
    )


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
    cmd = _pool_cmd(pool, conf, "bench", str(seconds), mode, "-t", str(threads))
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
    cmd = _pool_cmd(pool, conf, "cleanup", "--run-name", run_name)
    if prefix:
        if not prefix.startswith(BENCH_PREFIX):
            raise ValueError(f"prefix must start with {BENCH_PREFIX}, not {prefix!r}")
        cmd += ["--prefix", prefix if prefix.endswith("_object") else prefix + "_object"]
    return cmd


def list_objects_command(pool: str, conf: str | os.PathLike[str] | None = None) -> list[str]:
    """Every object of the pool, in all namespaces, as JSON."""
    return _pool_cmd(pool, conf, "ls", "--all", "-f", "json")


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
    out = _run(list_objects_command(pool, conf), timeout)
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
        _run(cleanup_command(pool, run_name, conf, prefix), timeout)
        if _object_exists(pool, run_name, conf, timeout):
            _run(_pool_cmd(pool, conf, "rm", run_name), timeout)
    if verify == "stat":
        probes = [r for r, _ in runs] + [f"{p}_object0" for _, p in runs if p]
        return [name for name in probes if _object_exists(pool, name, conf, timeout)]
    prefixes = [p + "_object" for _, p in runs if p]
    return leftover_objects(
        pool, conf, run_names=[r for r, _ in runs], prefixes=prefixes, timeout=timeout
    )


def _object_exists(
    pool: str, name: str, conf: str | os.PathLike[str] | None, timeout: float
) -> bool:
    return _object_size(pool, name, conf, timeout) is not None


def _object_size(pool: str, name: str, conf: CephConf, timeout: float) -> int | None:
    """The size of an object in bytes (``rados stat``), None when it does not exist."""
    out = _run(_pool_cmd(pool, conf, "stat", name), timeout)
    m = re.search(r" size (\d+)", out.stdout)
    return int(m.group(1)) if out.returncode == 0 and m else None


# ---------------------------------------------------------------------------- results


@dataclass
class SeriesRow:
    """One row of the per-second table, in rados bench's units (MB = 2^20 bytes, seconds)."""

    sec: int
    time: float | None  # wall clock, seconds since the epoch (--show-time only)
    cur_ops: int  # operations in flight
    started: int  # operations started so far
    finished: int  # operations finished so far
    avg_mib_s: float | None  # MB/s since the start
    cur_mib_s: float | None  # MB/s since the previous row that saw operations finish
    last_lat_s: float | None  # latency of the last finished operation (None: '-')
    avg_lat_s: float | None  # mean latency of all operations finished so far


#: summary field -> whether it holds a whole number
SUMMARY_FIELDS: dict[str, bool] = {
    "total_time_s": False,
    "ops": True,
    "op_size": True,
    "object_size": True,
    "bandwidth_mib_s": False,
    "stddev_bandwidth_mib_s": False,
    "max_bandwidth_mib_s": False,
    "min_bandwidth_mib_s": False,
    "average_iops": True,
    "stddev_iops": False,
    "max_iops": True,
    "min_iops": True,
    "average_latency_s": False,
    "stddev_latency_s": False,
    "max_latency_s": False,
    "min_latency_s": False,
    # header (write only)
    "concurrent_ios": True,
    "seconds_to_run": True,
    "max_objects": True,
}

_TEXT_LABELS = {
    "Total time run": "total_time_s",
    "Total writes made": "ops",
    "Total reads made": "ops",
    "Write size": "op_size",
    "Read size": "op_size",
    "Object size": "object_size",
    "Bandwidth (MB/sec)": "bandwidth_mib_s",
    "Stddev Bandwidth": "stddev_bandwidth_mib_s",
    "Max bandwidth (MB/sec)": "max_bandwidth_mib_s",
    "Min bandwidth (MB/sec)": "min_bandwidth_mib_s",
    "Average IOPS": "average_iops",
    "Stddev IOPS": "stddev_iops",
    "Max IOPS": "max_iops",
    "Min IOPS": "min_iops",
    "Average Latency(s)": "average_latency_s",
    "Stddev Latency(s)": "stddev_latency_s",
    "Max latency(s)": "max_latency_s",
    "Min latency(s)": "min_latency_s",
}

_JSON_KEYS = {
    "total_time_run": "total_time_s",
    "total_writes_made": "ops",
    "total_reads_made": "ops",
    "write_size": "op_size",
    "read_size": "op_size",
    "object_size": "object_size",
    "bandwidth": "bandwidth_mib_s",
    "stddev_bandwidth": "stddev_bandwidth_mib_s",
    "max_bandwidth": "max_bandwidth_mib_s",
    "min_bandwidth": "min_bandwidth_mib_s",
    "average_iops": "average_iops",
    "stddev_iops": "stddev_iops",
    "max_iops": "max_iops",
    "min_iops": "min_iops",
    "average_latency": "average_latency_s",
    "stddev_latency": "stddev_latency_s",
    "max_latency": "max_latency_s",
    "max_latency:": "max_latency_s",  # the key's spelling in older releases
    "min_latency": "min_latency_s",
    "concurrent_ios": "concurrent_ios",
    "op_size": "op_size",
    "seconds_to_run": "seconds_to_run",
    "max_objects": "max_objects",
}


@dataclass
class RadosBenchResult:
    """What one ``rados bench`` process printed, in its own units (MB/s = MiB/s, seconds).

    A field is None when rados bench did not print it (``seq``/``rand`` have no bandwidth
    spread and no latency stddev) or when :func:`validate` rejected it.
    """

    mode: str  # write | seq | rand
    fmt: str  # plain | json
    hints: bool | None = None
    concurrent_ios: int | None = None
    op_size: int | None = None  # bytes per operation ("Write size" / "Read size")
    object_size: int | None = None
    seconds_to_run: int | None = None
    max_objects: int | None = None
    object_prefix: str | None = None
    total_time_s: float | None = None
    ops: int | None = None  # "Total writes made" / "Total reads made"
    bandwidth_mib_s: float | None = None
    stddev_bandwidth_mib_s: float | None = None
    max_bandwidth_mib_s: float | None = None
    min_bandwidth_mib_s: float | None = None
    average_iops: int | None = None  # rados bench's: int(ops / total time)
    stddev_iops: float | None = None
    max_iops: int | None = None
    min_iops: int | None = None
    average_latency_s: float | None = None
    stddev_latency_s: float | None = None
    max_latency_s: float | None = None
    min_latency_s: float | None = None
    series: list[SeriesRow] = field(default_factory=list)
    summary_time: float | None = None  # wall clock stamped on the summary (--show-time)
    cleanup_removed: int | None = None  # a write without --no-cleanup: "Removed N objects"
    cleanup_time_s: float | None = None
    printed: dict[str, str] = field(default_factory=dict)  # summary values as printed
    warnings: list[str] = field(default_factory=list)
    rejected: dict[str, str] = field(default_factory=dict)  # field -> value as printed
    derived: dict[str, str] = field(default_factory=dict)  # field -> how it was computed

    @property
    def direction(self) -> str:
        return "write" if self.mode == "write" else "read"

    @property
    def start_time(self) -> float | None:
        """Wall clock of the first table row (the start of the benchmark), when stamped."""
        return self.series[0].time if self.series and self.series[0].time is not None else None

    @property
    def end_time(self) -> float | None:
        """Wall clock of the end: the first row's stamp plus the total time run (the stamp on
        the summary itself comes up to 1 s late)."""
        if self.start_time is None or self.total_time_s is None:
            return None
        return self.start_time + self.total_time_s


# ---------------------------------------------------------------------------- parsing


def parse_rados_bench(
    text: str, fmt: str | None = None, mode: str | None = None
) -> RadosBenchResult:
    """Parse rados bench's stdout: ``fmt`` ``plain`` (with or without ``--show-time``) or
    ``json`` (None: guess from the text). ``mode`` (write/seq/rand) is guessed when None:
    a write prints its header ("Maintaining ..." / ``concurrent_ios``), seq and rand do not
    differ in their output (pass ``mode`` to tell them apart; guessed as ``seq``).

    The result is validated (:func:`validate`). Raises :class:`RadosOutputError` when there is
    no summary (rados bench failed or was killed).
    """
    if fmt is None:
        fmt = "json" if re.search(r"^\{", text, re.MULTILINE) else "plain"
    if fmt == "json":
        res = _parse_json(text, mode)
    elif fmt == "plain":
        res = _parse_plain(text, mode)
    else:
        raise ValueError(f"fmt must be plain or json, not {fmt!r}")
    if res.total_time_s is None and "total_time_s" not in res.rejected:
        raise RadosOutputError("rados bench printed no summary (it failed or was stopped)")
    validate(res)
    return res


def _set_value(res: RadosBenchResult, name: str, raw: str) -> None:
    """Store a summary value after checking that it is a number of the right kind."""
    raw = raw.strip()
    res.printed[name] = raw
    value: float | int
    if SUMMARY_FIELDS[name]:
        if not _INT_RE.match(raw):
            _reject(res, name, raw, "not a whole number")
            return
        value = int(raw)
    else:
        try:
            value = float(raw)
        except ValueError:
            _reject(res, name, raw, "not a number")
            return
        if not math.isfinite(value):
            _reject(res, name, raw, "not a finite number")
            return
    if value < 0:
        _reject(res, name, raw, "negative")
        return
    setattr(res, name, value)


def _reject(res: RadosBenchResult, name: str, raw: str, why: str) -> None:
    setattr(res, name, None)
    res.rejected[name] = raw
    res.warnings.append(f"rejected {name} = {raw!r}: {why}")


def _stamp(line: str) -> tuple[float | None, str]:
    m = _TS_RE.match(line)
    if not m:
        return None, line
    t = datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S.%f%z").timestamp()
    return t, line[m.end() :]


def _num(text: str) -> float | None:
    """A table cell: a finite float, or None for '-', 'nan', '-nan', 'inf'."""
    try:
        v = float(text)
    except ValueError:
        return None
    return v if math.isfinite(v) else None


def _row(sec: str, cells: Sequence[str], t: float | None) -> SeriesRow:
    cur_ops, started, finished = (int(c) for c in cells[:3])
    if min(cur_ops, started, finished, int(sec)) < 0:
        raise ValueError("negative count")
    return SeriesRow(
        sec=int(sec),
        time=t,
        cur_ops=cur_ops,
        started=started,
        finished=finished,
        avg_mib_s=_num(cells[3]),
        cur_mib_s=_num(cells[4]),
        last_lat_s=_num(cells[5]) if cells[5] != "-" else None,
        avg_lat_s=_num(cells[6]),
    )


def _parse_plain(text: str, mode: str | None) -> RadosBenchResult:
    res = RadosBenchResult(mode=mode or "seq", fmt="plain")
    saw_write_header = False
    for line in text.splitlines():
        t, body = _stamp(line)
        s = body.strip()
        if not s:
            continue
        if s.startswith("hints = "):
            res.hints = s.endswith("1")
        elif m := _MAINTAINING_RE.match(s):
            saw_write_header = True
            for name, raw in zip(
                ("concurrent_ios", "op_size", "object_size", "seconds_to_run", "max_objects"),
                m.groups(),
                strict=True,
            ):
                _set_value(res, name, raw)
        elif s.startswith("Object prefix: "):
            res.object_prefix = s.split(":", 1)[1].strip()
        elif s.startswith("sec Cur ops"):
            continue
        elif s.startswith("min lat:"):
            continue  # the line before each repeated header (every 20 rows)
        elif m := _ROW_RE.match(body):
            try:
                res.series.append(_row(m.group(1), m.groups()[1:], t))
            except ValueError:
                res.warnings.append(f"ignored a table row that is not numbers: {s!r}")
        elif s.startswith("Cleaning up"):
            continue
        elif s.startswith("Clean up completed and total clean up time :"):
            res.cleanup_time_s = _num(s.rsplit(":", 1)[1])
        elif m := re.match(r"^Removed (\d+) objects?$", s):
            res.cleanup_removed = int(m.group(1))
        elif ":" in s and s.split(":", 1)[0].strip() in _TEXT_LABELS:
            label, raw = s.split(":", 1)
            name = _TEXT_LABELS[label.strip()]
            if name == "total_time_s":
                res.summary_time = t
            _set_value(res, name, raw)
        else:
            res.warnings.append(f"unexpected line: {s!r}")
    if mode is None and saw_write_header:
        res.mode = "write"
    return res


def _parse_json(text: str, mode: str | None) -> RadosBenchResult:
    res = RadosBenchResult(mode=mode or "seq", fmt="json")
    start = text.find("{")
    if start < 0:
        raise RadosOutputError("no JSON document in rados bench's output")
    for line in text[:start].splitlines():
        s = line.strip()
        if s.startswith("hints = "):
            res.hints = s.endswith("1")
        elif s:
            res.warnings.append(f"unexpected line: {s!r}")
    pairs_seen: list[list[tuple[str, Any]]] = []

    def keep_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        pairs_seen.append(pairs)
        return dict(pairs)

    try:
        doc, end = json.JSONDecoder(object_pairs_hook=keep_pairs).raw_decode(text, start)
    except json.JSONDecodeError as e:
        raise RadosOutputError(f"rados bench's JSON is cut short or broken: {e}") from e
    if text[end:].strip():
        res.warnings.append(f"text after the JSON document: {text[end:].strip()[:80]!r}")
    top = pairs_seen[-1]  # the outermost object is decoded last
    seen: dict[str, str] = {}
    for key, value in top:
        if key == "datas":
            continue
        if key == "object_prefix":
            res.object_prefix = str(value)
            continue
        name = _JSON_KEYS.get(key)
        if name is None:
            res.warnings.append(f"unknown key {key!r} = {value!r}")
            continue
        if name in seen and seen[name] != str(value):
            res.warnings.append(f"{key} printed twice: {seen[name]!r} and {value!r}")
        seen[name] = str(value)
        _set_value(res, name, str(value))
    if mode is None and "concurrent_ios" in seen:
        res.mode = "write"
    for row in doc.get("datas") or []:
        try:
            res.series.append(
                _row(
                    str(row["sec"]),
                    [
                        str(row[k])
                        for k in (
                            "cur_ops",
                            "started",
                            "finished",
                            "avg_bw",
                            "cur_bw",
                            "last_lat",
                            "avg_lat",
                        )
                    ],
                    None,
                )
            )
        except (KeyError, ValueError):
            res.warnings.append(f"ignored a per-second entry that is not numbers: {row!r}")
    # A row in which nothing finished (always the first): plain text prints cur MB/s "0" and
    # last lat "-"; -f json prints both with printf("%f", 0) -- an int for a double,
    # undefined (0.000000 in every recording, but not to be trusted): set them as text does.
    prev = 0
    for r in res.series:
        if r.finished == prev:
            if r.cur_mib_s or r.last_lat_s:
                res.warnings.append(
                    f"second {r.sec}: nothing finished, yet cur_bw {r.cur_mib_s} and "
                    f"last_lat {r.last_lat_s} printed (undefined printf): set to 0 and none"
                )
            r.cur_mib_s, r.last_lat_s = 0.0, None
        prev = r.finished
    return res


# ---------------------------------------------------------------------------- validation


def per_second_samples(series: Sequence[SeriesRow], op_size: int) -> tuple[list[int], list[float]]:
    """rados bench's per-second IOPS and bandwidth (MB/s) samples, recomputed from the table.

    As its status printer does (obj_bencher.cc): at every row after the first, the
    operations finished since the last row at which the count changed, divided by the
    seconds since then; IOPS is truncated to an int. A second in which nothing finished
    is a sample of 0. Min, max and stddev (n - 1) of these are rados bench's own figures.
    """
    iops: list[int] = []
    bw: list[float] = []
    prev_finished = 0
    cycles = 0
    for i, r in enumerate(series):
        if i > 0 and cycles:
            delta = r.finished - prev_finished
            iops.append(int(delta / cycles))
            bw.append(delta * op_size / MiB / cycles)
        if r.finished != prev_finished:
            prev_finished = r.finished
            cycles = 0
        cycles += 1
    return iops, bw


def _stddev(values: Sequence[float]) -> float:
    n = len(values)
    if n < 2:
        return 0.0
    mean = sum(values) / n
    return math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))


def _close(a: float, b: float, rel: float = 2e-5, abs_: float = 1e-6) -> bool:
    return abs(a - b) <= max(rel * max(abs(a), abs(b)), abs_)


def validate(res: RadosBenchResult) -> RadosBenchResult:
    """Reject values that cannot be right; recompute per-second statistics where possible.

    See the module docstring for the rules. Works in place and returns ``res``.
    """
    # the write benchmark's JSON stddev_iops is printf("%d", double): meaningless
    raw = res.printed.get("stddev_iops")
    if (
        res.fmt == "json"
        and res.mode == "write"
        and raw is not None
        and _INT_RE.match(raw)
        and "stddev_iops" not in res.rejected
    ):
        _reject(
            res,
            "stddev_iops",
            raw,
            "rados bench -f json prints the write stddev_iops with %d from a double "
            "(undefined: garbage)",
        )
    for prefix, unit in (
        ("bandwidth_mib_s", "MB/s"),
        ("iops", "IOPS"),
        ("latency_s", "s"),
    ):
        lo_f, hi_f, sd_f = f"min_{prefix}", f"max_{prefix}", f"stddev_{prefix}"
        lo, hi, sd = getattr(res, lo_f), getattr(res, hi_f), getattr(res, sd_f)
        if lo is not None and hi is not None and lo > hi:
            _reject(res, lo_f, res.printed[lo_f], f"min {lo} {unit} > max {hi} {unit}")
            _reject(res, hi_f, res.printed[hi_f], f"max {hi} {unit} < min {lo} {unit}")
            lo = hi = None
        if sd is not None and hi is not None:
            spread = hi - (lo or 0.0)
            if sd > spread and not _close(sd, spread):
                _reject(
                    res,
                    sd_f,
                    res.printed[sd_f],
                    f"a stddev larger than max - min ({spread:g} {unit}) is impossible",
                )
    avg, lo, hi = res.average_latency_s, res.min_latency_s, res.max_latency_s
    if (
        avg is not None
        and lo is not None
        and hi is not None
        and not (lo <= avg <= hi or _close(avg, lo) or _close(avg, hi))
    ):
        _reject(
            res,
            "average_latency_s",
            res.printed["average_latency_s"],
            f"outside [min, max] = [{lo:g}, {hi:g}] s",
        )
    ops, size, secs = res.ops, res.op_size, res.total_time_s
    if ops is not None and size is not None and secs:
        expect_bw = ops * size / secs / MiB
        bw = res.bandwidth_mib_s
        if bw is not None and not _close(bw, expect_bw, rel=0.01, abs_=0.01):
            _reject(
                res,
                "bandwidth_mib_s",
                res.printed["bandwidth_mib_s"],
                f"ops x size / time = {expect_bw:.6g} MB/s",
            )
        if res.bandwidth_mib_s is None:
            res.bandwidth_mib_s = expect_bw
            res.derived["bandwidth_mib_s"] = "ops x op size / total time"
        avg_iops = res.average_iops
        if avg_iops is not None and abs(avg_iops - int(ops / secs)) > 1:
            _reject(
                res,
                "average_iops",
                res.printed["average_iops"],
                f"ops / time = {ops / secs:.6g}",
            )
    _check_series(res)
    _derive_per_second(res)
    return res


def _check_series(res: RadosBenchResult) -> None:
    prev: SeriesRow | None = None
    for r in res.series:
        if prev is not None:
            if r.sec <= prev.sec:
                res.warnings.append(f"table row {r.sec} after row {prev.sec}")
            if r.finished < prev.finished or r.started < prev.started:
                res.warnings.append(f"table row {r.sec}: cumulative counts went down")
        if r.finished > r.started:
            res.warnings.append(f"table row {r.sec}: more finished than started")
        prev = r
    if res.series and res.ops is not None and res.series[-1].finished > res.ops:
        res.warnings.append("the table counts more operations than the summary")


def _derive_per_second(res: RadosBenchResult) -> None:
    """Per-second IOPS/bandwidth min, max, stddev from the table: fill what is missing or
    rejected (marked in ``derived``), and warn where printed values disagree."""
    if res.op_size is None or not res.series:
        return
    iops, bw = per_second_samples(res.series, res.op_size)
    if not iops:
        res.warnings.append(
            "no per-second sample (the run ended within its first second): rados bench's "
            "min/max IOPS are then ops / elapsed time, not per-second values"
        )
        return
    how = "from the per-second table, as rados bench computes it"
    computed: dict[str, float] = {
        "stddev_iops": _stddev(iops),
        "max_iops": max(iops),
        "min_iops": min(iops),
        "stddev_bandwidth_mib_s": _stddev(bw),
        "max_bandwidth_mib_s": max(bw),
        "min_bandwidth_mib_s": min(bw),
    }
    for name, value in computed.items():
        have = getattr(res, name)
        if have is None:
            if SUMMARY_FIELDS[name]:
                value = int(value)
            setattr(res, name, value)
            res.derived[name] = how + (
                "" if name in res.rejected else " (rados bench does not print it for reads)"
            )
        elif not _close(float(have), value, rel=1e-4, abs_=1e-3):
            res.warnings.append(
                f"{name} printed as {res.printed.get(name)!r}, "
                f"the per-second table gives {value:.6g}"
            )


# ---------------------------------------------------------------------------- measurement

SERIES_COLUMNS = (
    "sec",
    "time",
    "cur_ops",
    "started",
    "finished",
    "avg_bw",
    "cur_bw",
    "last_lat",
    "avg_lat",
)
SERIES_UNITS = {
    "sec": "s since the start (rados bench's row number)",
    "time": "s since the epoch, wall clock of the row (--show-time); null without it",
    "cur_ops": "operations in flight",
    "started": "operations started since the start (cumulative)",
    "finished": "operations finished since the start (cumulative)",
    "avg_bw": "bytes/s since the start",
    "cur_bw": "bytes/s since the previous row at which operations finished",
    "last_lat": "ns, latency of the last operation finished; null when none finished",
    "avg_lat": "ns, mean latency of all operations finished so far",
}


def _scale(v: float | None, k: float) -> float | None:
    return None if v is None else v * k


def series_table(res: RadosBenchResult) -> dict[str, Any]:
    """The per-second table in base units, for ``Measurement.extra["series"]``."""
    return {
        "columns": list(SERIES_COLUMNS),
        "units": dict(SERIES_UNITS),
        "rows": [
            [
                r.sec,
                r.time,
                r.cur_ops,
                r.started,
                r.finished,
                _scale(r.avg_mib_s, MiB),
                _scale(r.cur_mib_s, MiB),
                _scale(r.last_lat_s, NS_PER_S),
                _scale(r.avg_lat_s, NS_PER_S),
            ]
            for r in res.series
        ],
    }


def to_measurement(res: RadosBenchResult) -> Measurement:
    """The storbench measurement of one rados bench run, in base units.

    ``write`` fills the ``write`` direction, ``seq``/``rand`` the ``read`` direction:
    ``bw_bytes`` is rados bench's bandwidth x 2^20, ``iops`` ops / total time (rados bench's
    truncated "Average IOPS" is in ``extra["iops"]["average_printed"]``), latency (submission
    to completion) in ``lat``, in ns, without percentiles (see :data:`PERCENTILES_NOTE`).
    ``extra`` holds the IOPS and bandwidth spread, the per-second series with its units,
    and the validator's warnings, rejected and derived values.
    """
    ops = res.ops or 0
    secs = res.total_time_s or 0.0
    size = res.op_size or 0
    io_bytes = ops * size
    bw = res.bandwidth_mib_s * MiB if res.bandwidth_mib_s is not None else 0.0
    lat = None
    if ops:
        lat = LatencyStats(
            samples=ops,
            mean=_scale(res.average_latency_s, NS_PER_S),
            stddev=_scale(res.stddev_latency_s, NS_PER_S),
            min=_scale(res.min_latency_s, NS_PER_S),
            max=_scale(res.max_latency_s, NS_PER_S),
        )
    d = DirectionResult(
        iops=ops / secs if secs else 0.0,
        bw_bytes=bw,
        io_bytes=io_bytes,
        total_ios=ops,
        runtime_s=secs,
        lat=lat,
    )
    meas = Measurement(jobs=1, engine_version=rados_version())
    if ops:
        meas.directions[res.direction] = d
    else:
        meas.status = "failed"
        meas.error = "rados bench finished no operation"
    meas.extra = {
        "engine": "rados bench",
        "mode": res.mode,
        "format": res.fmt,
        "object_size": res.object_size,
        "op_size": res.op_size,
        "threads": res.concurrent_ios,
        "object_prefix": res.object_prefix,
        "iops": {
            "unit": "operations/s",
            "average": d.iops,
            "average_printed": res.average_iops,
            "stddev": res.stddev_iops,
            "min": res.min_iops,
            "max": res.max_iops,
        },
        "bandwidth": {
            "unit": "bytes/s",
            "average": bw,
            "stddev": _scale(res.stddev_bandwidth_mib_s, MiB),
            "min": _scale(res.min_bandwidth_mib_s, MiB),
            "max": _scale(res.max_bandwidth_mib_s, MiB),
        },
        "series": series_table(res),
        "percentiles": PERCENTILES_NOTE,
        "warnings": list(res.warnings),
        "rejected": dict(res.rejected),
        "derived": dict(res.derived),
    }
    return meas


# ---------------------------------------------------------------------------- several clients


@dataclass
class ClientWindow:
    """One client's operations in the common window ``[start, end]``: its cumulative
    counters at the window's edges, interpolated between the table rows on either side."""

    name: str
    start: float  # wall clock, s
    end: float
    ops: float  # operations finished in the window (fractional: interpolated)
    bytes: float
    lat_sum_s: float | None  # sum of the latencies of those operations (from avg lat)

    @property
    def seconds(self) -> float:
        return self.end - self.start

    @property
    def bw_bytes(self) -> float:
        return self.bytes / self.seconds

    @property
    def iops(self) -> float:
        return self.ops / self.seconds

    @property
    def lat_mean_s(self) -> float | None:
        return self.lat_sum_s / self.ops if self.lat_sum_s is not None and self.ops else None


#: (wall clock s, operations finished so far, sum of their latencies in s or None)
_Point = tuple[float, float, float | None]


def timeline(res: RadosBenchResult, start_time: float | None = None) -> list[_Point]:
    """A client's cumulative counters on the wall clock: at every table row and at the end
    (first row + total time run; the summary's own stamp comes up to 1 s late).

    Row times are rados bench's ``--show-time`` stamps; without them (JSON, plain text
    without --show-time) ``start_time`` + the row's second (approximate: the process's
    start-up, ~40 ms here, is not known). The latency sum at a row is avg lat x finished.
    """
    stamped = res.start_time is not None
    if not stamped and start_time is None:
        raise ValueError(
            "no wall clock for this client: run it with --show-time (or give its start time)"
        )
    pts: list[_Point] = []
    for r in res.series:
        if stamped:
            if r.time is None:
                continue
            t = r.time
        else:
            t = (start_time or 0.0) + r.sec
        lat = r.avg_lat_s * r.finished if r.avg_lat_s is not None else None
        pts.append((t, float(r.finished), 0.0 if r.finished == 0 else lat))
    if res.total_time_s is not None and res.ops is not None and pts:
        end = pts[0][0] + res.total_time_s
        lat_end = None if res.average_latency_s is None else res.average_latency_s * res.ops
        if end > pts[-1][0]:
            pts.append((end, float(res.ops), lat_end))
    return pts


def _at(pts: Sequence[_Point], t: float) -> tuple[float, float | None]:
    """The cumulative (operations, latency sum) at time ``t``, linear between two points."""
    for (t_a, f_a, s_a), (t_b, f_b, s_b) in itertools.pairwise(pts):
        if t_a <= t <= t_b:
            k = (t - t_a) / (t_b - t_a) if t_b > t_a else 1.0
            lat = None if s_a is None or s_b is None else s_a + (s_b - s_a) * k
            return f_a + (f_b - f_a) * k, lat
    raise ValueError(f"time {t} outside the client's run")


#: below this overlap (s) the clients did not really run together
MIN_WINDOW_S = 0.5


def common_window(
    results: Sequence[RadosBenchResult],
    names: Sequence[str],
    start_times: Sequence[float | None] | None = None,
) -> tuple[float, float, list[ClientWindow]]:
    """The time all clients were running, and each client's operations in it.

    The window runs from the latest start to the earliest end (:func:`timeline`). Each
    client's operations in it are its cumulative ``finished`` count at the window's end
    minus that at its start; at an edge that falls between two table rows the count is
    interpolated linearly (operations assumed to finish at an even rate within that
    second). Same for the latency sum. Raises ValueError when the overlap is shorter than
    :data:`MIN_WINDOW_S` or a client has no wall clock.
    """
    starts = list(start_times) if start_times is not None else [None] * len(results)
    lines = [timeline(r, t) for r, t in zip(results, starts, strict=True)]
    if any(len(pts) < 2 for pts in lines):
        raise ValueError("a client has no per-second row: nothing to align")
    w0 = max(pts[0][0] for pts in lines)
    w1 = min(pts[-1][0] for pts in lines)
    if w1 - w0 < MIN_WINDOW_S:
        raise ValueError(
            f"the clients ran together for {max(w1 - w0, 0):.2f} s only (< {MIN_WINDOW_S} s)"
        )
    out = []
    for res, name, pts in zip(results, names, lines, strict=True):
        f0, s0 = _at(pts, w0)
        f1, s1 = _at(pts, w1)
        ops = f1 - f0
        out.append(
            ClientWindow(
                name=name,
                start=w0,
                end=w1,
                ops=ops,
                bytes=ops * (res.op_size or 0),
                lat_sum_s=None if s0 is None or s1 is None else s1 - s0,
            )
        )
    return w0, w1, out


#: the aggregate series' columns mean what they mean in :func:`series_table`, summed over
#: the clients and counted from the start of the common window
AGGREGATE_SERIES_UNITS = {
    "sec": "whole seconds since the start of the common window (all clients running)",
    "time": "s since the epoch, wall clock of the second's end",
    "cur_ops": "operations in flight, all clients (interpolated)",
    "started": "operations started since the window's start, all clients (interpolated)",
    "finished": "operations finished since the window's start, all clients (interpolated)",
    "avg_bw": "bytes/s since the window's start, all clients",
    "cur_bw": "bytes/s in this second (the one ending at time), all clients",
    "last_lat": "null: no single last operation across clients",
    "avg_lat": "ns, mean latency of the operations finished since the window's start",
}


@dataclass
class WindowSecond:
    """The clients' cumulative counters, summed, at one whole second of the common window
    (``sec`` seconds after its start): counted from the window's start, each client's
    counters interpolated linearly between its table rows (as at the window's edges)."""

    sec: int
    time: float  # wall clock, s
    started: float  # operations started since the window's start
    finished: float  # operations finished since the window's start
    in_flight: float  # operations in flight at ``time``
    bytes: float  # bytes of the finished operations
    lat_sum_s: float | None  # sum of their latencies (None: a client has no avg lat)


def _started_line(res: RadosBenchResult, start_time: float | None) -> list[tuple[float, float]]:
    """A client's cumulative ``started`` count on the wall clock, at the instants of
    :func:`timeline` (every started operation has finished at the end)."""
    stamped = res.start_time is not None
    pts: list[tuple[float, float]] = []
    for r in res.series:
        t = r.time if stamped else (start_time or 0.0) + r.sec
        if t is not None:
            pts.append((t, float(r.started)))
    if res.total_time_s is not None and res.ops is not None and pts:
        end = pts[0][0] + res.total_time_s
        if end > pts[-1][0]:
            pts.append((end, float(res.ops)))
    return pts


def _lerp(pts: Sequence[tuple[float, float]], t: float) -> float:
    for (t_a, v_a), (t_b, v_b) in itertools.pairwise(pts):
        if t_a <= t <= t_b:
            return v_a + (v_b - v_a) * ((t - t_a) / (t_b - t_a) if t_b > t_a else 1.0)
    raise ValueError(f"time {t} outside the client's run")


def window_seconds(
    results: Sequence[RadosBenchResult],
    start_times: Sequence[float | None] | None = None,
) -> list[WindowSecond]:
    """The clients' summed counters at the start of the common window (:func:`common_window`)
    and at every whole second after it that lies in the window: ``floor(length)`` seconds,
    the fraction of a second at its end is left out (rados bench's own per-second values
    leave out the part of the last second after its last row too)."""
    names = [f"client{i + 1}" for i in range(len(results))]
    w0, w1, _ = common_window(results, names, start_times)
    starts = list(start_times) if start_times is not None else [None] * len(results)
    lines = [
        (timeline(r, t), _started_line(r, t), r.op_size or 0)
        for r, t in zip(results, starts, strict=True)
    ]
    origin = [(_at(fin, w0), _lerp(st, w0)) for fin, st, _ in lines]
    out = []
    for k in range(math.floor(w1 - w0 + 1e-9) + 1):
        t = min(w0 + k, w1)
        started = finished = in_flight = nbytes = 0.0
        lat_sum: float | None = 0.0
        for (fin, st, size), ((f0, s0), st0) in zip(lines, origin, strict=True):
            f, s = _at(fin, t)
            started_now = _lerp(st, t)
            finished += f - f0
            started += started_now - st0
            in_flight += max(started_now - f, 0.0)
            nbytes += (f - f0) * size
            lat_sum = None if lat_sum is None or s is None or s0 is None else lat_sum + s - s0
        out.append(
            WindowSecond(
                sec=k,
                time=t,
                started=started,
                finished=finished,
                in_flight=in_flight,
                bytes=nbytes,
                lat_sum_s=lat_sum,
            )
        )
    return out


def window_samples(seconds: Sequence[WindowSecond]) -> tuple[list[float], list[float]]:
    """Per-second IOPS (operations/s) and bandwidth (bytes/s) of the clients together: the
    operations (bytes) all clients finished in each whole second of the common window.
    Not truncated to integers (the counts are interpolated, hence fractional)."""
    iops = [b.finished - a.finished for a, b in itertools.pairwise(seconds)]
    bw = [b.bytes - a.bytes for a, b in itertools.pairwise(seconds)]
    return iops, bw


def spread_of(samples: Sequence[float]) -> dict[str, float | None]:
    """rados bench's statistics of per-second values: stddev (n - 1; 0 for one value, as
    obj_bencher.cc's vec_stddev), min, max; all None without a value."""
    if not samples:
        return {"stddev": None, "min": None, "max": None}
    return {"stddev": _stddev(samples), "min": min(samples), "max": max(samples)}


def window_series_table(seconds: Sequence[WindowSecond]) -> dict[str, Any]:
    """The clients' per-second table over the common window, in the shape of
    :func:`series_table` (columns, units, rows), counted from the window's start."""
    rows = []
    prev: WindowSecond | None = None
    for s in seconds:
        cur_bw = (s.bytes - prev.bytes) / (s.time - prev.time) if prev is not None else 0.0
        rows.append(
            [
                s.sec,
                s.time,
                s.in_flight,
                s.started,
                s.finished,
                s.bytes / s.sec if s.sec else 0.0,
                cur_bw,
                None,
                (
                    s.lat_sum_s / s.finished * NS_PER_S
                    if s.lat_sum_s is not None and s.finished
                    else None
                ),
            ]
        )
        prev = s
    return {
        "columns": list(SERIES_COLUMNS),
        "units": dict(AGGREGATE_SERIES_UNITS),
        "rows": rows,
    }


def pooled_stddev(parts: Sequence[tuple[int, float, float]]) -> float | None:
    """The sample stddev (n - 1) of the union of groups given as ``(n, mean, stddev)``, each
    stddev a sample one (as rados bench's latency stddev: obj_bencher.cc's vec_stddev over
    every operation's latency). Exact: the union's sum of squared deviations is each group's
    ``(n - 1) stddev²`` plus ``n (mean - union mean)²``. None for fewer than 2 values."""
    parts = [p for p in parts if p[0] > 0]
    n = sum(p[0] for p in parts)
    if n < 2:
        return None
    mean = sum(k * m for k, m, _ in parts) / n
    ss = sum((k - 1) * sd * sd + k * (m - mean) ** 2 for k, m, sd in parts)
    return math.sqrt(ss / (n - 1))


def _same(values: Iterable[int | None]) -> int | None:
    """The value every client has, or None when they differ or one lacks it."""
    vals = set(values)
    return vals.pop() if len(vals) == 1 else None


def whole_run(results: Sequence[RadosBenchResult]) -> dict[str, Any]:
    """The clients' whole runs together, as rados bench's summaries give them: total
    operations and bytes (sums), the longest total time run, and the latency of every
    operation of every client (ns): mean weighted by operations, stddev pooled from each
    client's n, mean and stddev (writes only: reads print no stddev), min and max over
    clients. A figure is None when a client lacks what it needs."""
    ops = [r.ops or 0 for r in results]
    n = sum(ops)
    times = [r.total_time_s for r in results]
    avgs = [r.average_latency_s for r in results]
    sds = [r.stddev_latency_s for r in results]
    mins = [r.min_latency_s for r in results]
    maxs = [r.max_latency_s for r in results]
    mean = None
    if n and all(a is not None for a in avgs):
        mean = sum(k * (a or 0.0) for k, a in zip(ops, avgs, strict=True)) / n * NS_PER_S
    stddev = None
    if all(a is not None for a in avgs) and all(s is not None for s in sds):
        sd = pooled_stddev(
            [(k, a or 0.0, s or 0.0) for k, a, s in zip(ops, avgs, sds, strict=True)]
        )
        stddev = _scale(sd, NS_PER_S)
    return {
        "ops": n,
        "bytes": sum(k * (r.op_size or 0) for k, r in zip(ops, results, strict=True)),
        "total_time_s": (
            max(t for t in times if t is not None) if all(t is not None for t in times) else None
        ),
        "bw_bytes_sum": sum((r.bandwidth_mib_s or 0.0) * MiB for r in results),
        "latency": {
            "unit": "ns",
            "samples": n,
            "mean": mean,
            "stddev": stddev,
            "min": (
                min(m for m in mins if m is not None) * NS_PER_S
                if all(m is not None for m in mins)
                else None
            ),
            "max": (
                max(m for m in maxs if m is not None) * NS_PER_S
                if all(m is not None for m in maxs)
                else None
            ),
        },
    }


def aggregate_clients(
    results: Sequence[RadosBenchResult],
    names: Sequence[str] | None = None,
    start_times: Sequence[float | None] | None = None,
) -> Measurement:
    """One measurement from N rados bench processes that ran at the same time.

    Bandwidth and IOPS are the **sum** over clients of each client's rate **in the common
    window** (:func:`common_window`; the clients' own starts and ends, when they did not all
    run, are left out). The latency mean is the mean over the operations finished in the
    window, weighted by operations (from each client's cumulative "avg lat" column: sum of
    latencies = avg lat x finished). Latency min/max are those of the clients' whole runs;
    the stddev is not given (rados bench's per-client stddev covers the whole run, not the
    window). **Percentiles cannot be derived from rados bench output.**

    ``total_ios``/``io_bytes`` count the operations in the window (rounded: the edges are
    interpolated), ``runtime_s`` is the window's length; ``hosts`` holds each client's own
    whole-run measurement by name, and ``extra["window"]`` each client's window figures.
    Clients need wall-clock rows (``--show-time``) or a ``start_times`` entry (JSON output:
    approximate).

    The spread is rados bench's kind, of per-second values (:func:`window_seconds`): per
    whole second of the window, the operations all clients finished in it (interpolated at
    the second's edges); ``extra["iops"]``/``extra["bandwidth"]`` hold their stddev, min
    and max (operations/s, bytes/s: the keys and units of :func:`to_measurement`, the
    averages being the window's), ``extra["series"]`` the per-second table
    (:func:`window_series_table`). ``extra["whole_run"]`` (:func:`whole_run`) is the clients'
    whole runs summed as rados bench's summaries give them: total operations, bytes, the
    longest time run, the latency of every operation (pooled stddev for writes).
    """
    if not results:
        raise ValueError("no client results to aggregate")
    names = list(names) if names else [f"client{i + 1}" for i in range(len(results))]
    modes = {r.mode for r in results}
    if len(modes) != 1:
        raise ValueError(f"clients ran different modes: {sorted(modes)}")
    direction = results[0].direction
    w0, w1, windows = common_window(results, names, start_times)
    seconds = window_seconds(results, start_times)
    iops_samples, bw_samples = window_samples(seconds)
    ops = sum(w.ops for w in windows)
    lat_sums = [w.lat_sum_s for w in windows]
    warnings = [f"{n}: {w}" for n, r in zip(names, results, strict=True) for w in r.warnings]
    if w1 - w0 < 2.0:
        warnings.append(
            f"the clients ran together for {w1 - w0:.2f} s only: the aggregate is noisy"
        )
    mean_ns = None
    if ops and all(s is not None for s in lat_sums):
        mean_ns = sum(s for s in lat_sums if s is not None) / ops * NS_PER_S
    mins = [r.min_latency_s for r in results if r.min_latency_s is not None]
    maxs = [r.max_latency_s for r in results if r.max_latency_s is not None]
    hosts = {n: to_measurement(r) for n, r in zip(names, results, strict=True)}
    meas = Measurement(jobs=len(results), hosts=hosts, engine_version=rados_version())
    failed = [n for n, m in hosts.items() if m.status != "ok"]
    if failed:
        meas.status = "partial" if len(failed) < len(hosts) else "failed"
        meas.error = "; ".join(f"{n}: {hosts[n].error}" for n in failed)
    d = meas.directions[direction] = DirectionResult(
        iops=sum(w.iops for w in windows),
        bw_bytes=sum(w.bw_bytes for w in windows),
        io_bytes=round(sum(w.bytes for w in windows)),
        total_ios=round(ops),
        runtime_s=w1 - w0,
        lat=LatencyStats(
            samples=round(ops),
            mean=mean_ns,
            stddev=None,
            min=min(mins) * NS_PER_S if len(mins) == len(results) else None,
            max=max(maxs) * NS_PER_S if len(maxs) == len(results) else None,
        ),
    )
    meas.extra = {
        "engine": "rados bench",
        "mode": results[0].mode,
        "clients": len(results),
        "object_size": _same(r.object_size for r in results),
        "op_size": _same(r.op_size for r in results),
        "threads": _same(r.concurrent_ios for r in results),
        "method": (
            "sum over clients of each client's bandwidth/IOPS in the common window (latest "
            "start to earliest end; cumulative counters interpolated linearly at its edges); "
            "latency mean weighted by operations in the window; IOPS/bandwidth stddev, min, "
            "max of the per-second sums over clients in each whole second of the window"
        ),
        "iops": {
            "unit": "operations/s",
            "average": d.iops,
            "average_printed": None,
            **spread_of(iops_samples),
        },
        "bandwidth": {
            "unit": "bytes/s",
            "average": d.bw_bytes,
            **spread_of(bw_samples),
        },
        "series": window_series_table(seconds),
        "window": {
            "start": w0,
            "end": w1,
            "seconds": w1 - w0,
            "clients": [
                {
                    "name": w.name,
                    "start": w.start,
                    "end": w.end,
                    "ops": w.ops,
                    "bytes": w.bytes,
                    "bw_bytes": w.bw_bytes,
                    "iops": w.iops,
                    "lat_mean_ns": _scale(w.lat_mean_s, NS_PER_S),
                }
                for w in windows
            ],
        },
        "whole_run": whole_run(results),
        "percentiles": PERCENTILES_NOTE,
        "warnings": warnings,
    }
    return meas


# ---------------------------------------------------------------------------- running


@dataclass
class RadosRun:
    """One rados bench process: what ran, what it printed, what storbench made of it."""

    command: list[str]
    run_name: str
    raw_output: str
    stderr: str
    exit_code: int | None
    pid: int
    started_at: float
    ended_at: float
    object_prefix: str | None  # of a write: printed, or derived from the pid
    result: RadosBenchResult | None
    measurement: Measurement
    interrupted: bool = False
    timed_out: bool = False


def run_commands(
    commands: Sequence[tuple[str, list[str]]],
    workdir: str,
    *,
    mode: str,
    fmt: str,
    timeout: float,
    should_stop: Callable[[], bool] = lambda: False,
) -> list[RadosRun]:
    """Start every ``(run_name, command)`` at once, wait for all, parse each.

    ``timeout`` (s) bounds the whole: rados bench waits forever on a pool whose PGs are not
    active; then every process still running is killed and its run marked ``timed_out``.
    ``should_stop`` is polled; when true the processes get SIGINT, then SIGKILL 10 s later.
    """
    procs = []
    try:
        for i, (run_name, cmd) in enumerate(commands):
            out_path = os.path.join(workdir, f"rados-{run_name}-{i}.out")
            err_path = out_path[:-4] + ".err"
            with open(out_path, "w") as out, open(err_path, "w") as err:
                started = time.time()
                p = subprocess.Popen(
                    pdeathsig_prefix() + cmd,
                    stdout=out,
                    stderr=err,
                    stdin=subprocess.DEVNULL,
                    start_new_session=True,
                    cwd=workdir,
                    env=procguard.environment(),
                )
            procs.append((run_name, cmd, p, out_path, err_path, started))
        ended, interrupted, timed_out = _wait_all(
            [p for _, _, p, *_ in procs], timeout, should_stop
        )
    except BaseException:
        # KeyboardInterrupt or any error while waiting: no rados process outlives us
        for _, _, p, *_ in procs:
            if p.poll() is None:
                p.kill()
            p.wait()
        raise
    runs = []
    for i, (run_name, cmd, p, out_path, err_path, started) in enumerate(procs):
        with open(out_path, errors="replace") as f:
            raw = f.read()
        with open(err_path, errors="replace") as f:
            stderr = f.read()
        result: RadosBenchResult | None = None
        try:
            result = parse_rados_bench(raw, fmt, mode)
            meas = to_measurement(result)
        except RadosOutputError as e:
            meas = Measurement(
                status="failed",
                error_code=p.returncode or -1,
                error=_error_message(stderr) or str(e),
                engine_version=rados_version(),
            )
        if p.returncode != 0 and meas.status == "ok":
            meas.status = "failed"
            meas.error_code = p.returncode or -1
            meas.error = _error_message(stderr) or f"rados exited with status {p.returncode}"
        if timed_out and p.returncode != 0:
            meas.error = (
                f"rados bench did not finish within {timeout:g} s and was killed "
                "(are all PGs of the pool active?)"
            )
        prefix = result.object_prefix if result else object_prefix_in(raw)
        if prefix is None and mode == "write":
            prefix = object_prefix_for(p.pid)
        runs.append(
            RadosRun(
                command=cmd,
                run_name=run_name,
                raw_output=raw,
                stderr=stderr,
                exit_code=p.returncode,
                pid=p.pid,
                started_at=started,
                ended_at=ended.get(i, time.time()),
                object_prefix=prefix,
                result=result,
                measurement=meas,
                interrupted=interrupted,
                timed_out=timed_out,
            )
        )
    return runs


def _wait_all(
    procs: Sequence[subprocess.Popen[bytes]],
    timeout: float,
    should_stop: Callable[[], bool],
) -> tuple[dict[int, float], bool, bool]:
    """Wait for every process: (index -> end time, interrupted, timed out)."""
    deadline = time.monotonic() + timeout
    interrupted = timed_out = False
    sigint_at: float | None = None
    ended: dict[int, float] = {}
    while len(ended) < len(procs):
        for i, p in enumerate(procs):
            if i not in ended and p.poll() is not None:
                ended[i] = time.time()
        if len(ended) == len(procs):
            break
        now = time.monotonic()
        if should_stop() and sigint_at is None:
            interrupted = True
            sigint_at = now
            for p in procs:
                if p.poll() is None:
                    p.send_signal(signal.SIGINT)
        if now > deadline or (sigint_at is not None and now - sigint_at > 10):
            timed_out = not interrupted
            for p in procs:
                if p.poll() is None:
                    p.kill()
            for p in procs:
                p.wait()
            continue
        _wait_any([p for i, p in enumerate(procs) if i not in ended], 0.05)
    return ended, interrupted, timed_out


def object_prefix_in(text: str) -> str | None:
    """The object prefix a write printed, even in output cut short (no summary)."""
    m = re.search(r"Object prefix: (\S+)|\"object_prefix\":\"([^\"]+)\"", text)
    return (m.group(1) or m.group(2)) if m else None


def _wait_any(procs: Sequence[subprocess.Popen[bytes]], seconds: float) -> None:
    """Sleep up to ``seconds``, waking as soon as one of ``procs`` exits (pidfd)."""
    fds = []
    try:
        for p in procs:
            try:
                fds.append(os.pidfd_open(p.pid))
            except (AttributeError, OSError):
                time.sleep(seconds)
                return
        if fds:
            select.select(fds, [], [], seconds)
        else:
            time.sleep(seconds)
    finally:
        for fd in fds:
            os.close(fd)


def _error_message(stderr: str) -> str | None:
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    return "; ".join(lines[-3:]) or None


def run_bench(
    pool: str,
    mode: str,
    seconds: int,
    object_size: int | None,
    threads: int,
    run_name: str,
    conf: str | os.PathLike[str] | None = None,
    *,
    clients: int = 1,
    no_cleanup: bool = True,
    fmt: str = "plain",
    workdir: str,
    timeout: float | None = None,
    should_stop: Callable[[], bool] = lambda: False,
) -> tuple[Measurement, list[RadosRun]]:
    """Run ``clients`` rados bench processes at once (run names from
    :func:`client_run_name`) and return the measurement (aggregated over the clients when
    there are several, see :func:`aggregate_clients`) and each process's run.

    ``timeout`` defaults to the duration plus 60 s.
    """
    commands = [
        (
            name,
            bench_command(
                pool, mode, seconds, object_size, threads, name, conf, no_cleanup, fmt=fmt
            ),
        )
        for name in (client_run_name(run_name, c, clients) for c in range(1, clients + 1))
    ]
    runs = run_commands(
        commands,
        workdir,
        mode=mode,
        fmt=fmt,
        timeout=timeout if timeout is not None else seconds + 60.0,
        should_stop=should_stop,
    )
    if clients == 1:
        return runs[0].measurement, runs
    ok = [r for r in runs if r.result is not None and r.measurement.status == "ok"]
    if len(ok) < 2:
        failed = Measurement(
            status="failed" if not ok else "partial",
            error="; ".join(f"{r.run_name}: {r.measurement.error}" for r in runs if r not in ok),
            hosts={r.run_name: r.measurement for r in runs},
            engine_version=rados_version(),
        )
        return failed, runs
    try:
        meas = aggregate_clients(
            [r.result for r in ok if r.result is not None],
            [r.run_name for r in ok],
            [r.started_at for r in ok],
        )
    except ValueError as e:
        # e.g. seq readers that each ran out of objects at different times
        return (
            Measurement(
                status="failed",
                error=f"no aggregate of the clients: {e} (each client's result is in hosts)",
                hosts={r.run_name: r.measurement for r in runs},
                jobs=len(runs),
                engine_version=rados_version(),
            ),
            runs,
        )
    if len(ok) < len(runs):
        meas.status = "partial"
        meas.error = "; ".join(f"{r.run_name}: {r.measurement.error}" for r in runs if r not in ok)
        meas.hosts.update({r.run_name: r.measurement for r in runs if r not in ok})
    return meas, runs


# ---------------------------------------------------------------------------- plan points


@dataclass
class PointRun:
    """What the runner records for one rados bench point (its clients' processes)."""

    measurement: Measurement
    command: list[list[str]]  # each client's argv
    raw_output: str  # each client's output under a ``==> RUN_NAME (pid N) <==`` line
    stderr: str
    started_at: float
    ended_at: float
    interrupted: bool
    #: the write runs of this point: (run name, object prefix), for cleanup at the end
    writes: list[tuple[str, str | None]] = field(default_factory=list)
    job_text: None = None  # rados bench has no job file: the command is all there is


def point_run_name(point: Point, run_id: int | None) -> str:
    """The rados bench run name of a point (client c of several adds ``-c<c>``): the run and
    the dataset the plan gave it (a write's objects, read by the seq/rand points after it).
    ``RUN`` stands for the run id before the run exists (`storbench plan show`)."""
    run = run_id if run_id is not None else "RUN"
    return check_run_name(f"{RUN_NAME_PREFIX}r{run}-{point.extra['dataset']}")


def _bench_args(point: Point) -> tuple[str, str, int, int | None, int]:
    """``run_bench``/``bench_command``'s pool, mode, seconds, object size and threads."""
    p = point.params
    mode = str(p["mode"])
    size = parse_size(p["bs"]) if mode == "write" else None
    return point.target.pool, mode, int(parse_time(p["runtime"])), size, int(p["threads"])


def point_client(point: Point) -> CephClient:
    return CephClient(point.target.conf, point.target.client)


def point_commands(point: Point, run_id: int | None = None) -> list[list[str]]:
    """The rados bench command of each client of a point (``RUN`` for the run id when the
    run does not exist yet, as `storbench plan show` prints them)."""
    clients = int(point.params.get("clients", 1))
    base = point_run_name(point, run_id)
    return [
        bench_command(*_bench_args(point), client_run_name(base, c, clients), point_client(point))
        for c in range(1, clients + 1)
    ]


def run_point(
    point: Point,
    workdir: str,
    *,
    run_id: int,
    should_stop: Callable[[], bool] = lambda: False,
) -> PointRun:
    """Run the ``clients`` rados bench processes of one plan point at once."""
    mode = str(point.params["mode"])
    meas, runs = run_bench(
        *_bench_args(point),
        point_run_name(point, run_id),
        point_client(point),
        clients=int(point.params.get("clients", 1)),
        workdir=workdir,
        should_stop=should_stop,
    )
    several = len(runs) > 1

    def block(r: RadosRun, text: str) -> str:
        return f"==> {r.run_name} (pid {r.pid}) <==\n{text}" if several else text

    return PointRun(
        measurement=meas,
        command=[r.command for r in runs],
        raw_output="\n".join(block(r, r.raw_output) for r in runs),
        stderr="\n".join(block(r, r.stderr) for r in runs if r.stderr or several),
        started_at=min(r.started_at for r in runs),
        ended_at=max(r.ended_at for r in runs),
        interrupted=any(r.interrupted for r in runs),
        writes=[(r.run_name, r.object_prefix) for r in runs] if mode == "write" else [],
    )


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
