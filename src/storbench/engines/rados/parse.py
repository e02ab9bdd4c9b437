"""Reading what ``rados bench`` prints: its per-second table and its summary, text or JSON.

``rados bench`` (ceph-common) writes objects to a pool (``write``) and reads back what a
``write`` left with ``--no-cleanup`` (``seq`` reads them in order, ``rand`` at random); the
read modes find the objects through the metadata object the write stored under its
``--run-name``. What it prints, in plain text and with ``-f json``, is described in
tests/data/rados/README.md (recorded with Ceph 16.2.15). Facts this package relies on:

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

import json
import math
import re
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from storbench.engines.rados.command import (
    _INT_RE,
    _MAINTAINING_RE,
    _ROW_RE,
    _TS_RE,
    RadosOutputError,
)
from storbench.engines.rados.result import (
    _JSON_KEYS,
    _TEXT_LABELS,
    SUMMARY_FIELDS,
    RadosBenchResult,
    SeriesRow,
    _reject,
)
from storbench.engines.rados.validate import SERIES_COLUMNS, validate

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
                    [str(row[k]) for k in SERIES_COLUMNS[2:]],  # sec, time: apart
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
