"""A local fio point's time series, read from fio's ``--status-interval`` stream as fio
writes it.

With ``--output-format=json+ --status-interval=T`` fio prints one complete JSON document
every T, each cumulative since its measurement began, and a last one (the result) at the
end (FIELD-NOTES). The intervals are the differences of consecutive documents, per
direction over all jobs:

- I/Os and bytes: differences of ``total_ios`` and ``io_bytes``;
- length: the difference of the direction's ``runtime`` (fio's own clock: ms the direction
  ran; the longest job's when there are several), so fio's start-up (laying files out) does
  not count;
- latency: the I/Os completed in the interval, from the difference of the two cumulative
  json+ ``clat_ns`` histograms (exact, never an average of percentiles); the mean from the
  difference of ``mean`` x ``N``;
- ramp: during ``ramp_time`` fio counts I/Os but records no latency (``clat_ns.N`` 0);
  at its end it starts every counter (runtime too) again from 0. Those intervals are marked
  ramp, and the first document after them counts from 0 (measured: its counters may be
  higher than the ramp's, so a restart is not seen by counters going down alone).

Each interval goes to the sink the moment its document is read. The last document usually
comes moments after the last status report (measured: 18 ms after it with a 500 ms
interval); a document less than half of T after the one before is no interval of its own:
the interval given last is given again, measured to it, with the same ``seq`` (the store's
upsert replaces it), so the series has no tail of a few ms with a meaningless rate.

A document no fio writes (check.py; or a counter or time that is no whole number the
database can hold) is no report: it stays in the output as text, and the next report's
interval spans the time since the last good one (the counters are cumulative). Were it
the last, the point's result is fio's error (parse.final_document).
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from storbench.engines.fio.check import DocumentError, check_document
from storbench.model.metrics import DIRECTIONS, pct_key, percentiles_from_bins
from storbench.model.series import Interval

#: How a fio JSON document begins (fio's json output: "{", newline, two spaces).
_MARK = '{\n  "fio version"'
_PCTS = (50.0, 99.0, 99.9)
#: The largest whole number the database holds (a signed 64-bit integer).
_MAX = 2**63 - 1
#: What the stream reads of a direction as whole numbers.
_COUNTERS = ("total_ios", "io_bytes", "runtime")
#: A json+ histogram bin: a latency in ns (a whole number the database holds).
_BIN = re.compile(r"[0-9]{1,18}")


def _whole(v: Any) -> bool:
    """A count fio writes: a whole number from 0 to what the database holds (as fio
    prints it, or as a float with no fraction)."""
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    return isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= _MAX


def report_problem(doc: Any) -> str | None:
    """Why ``doc`` is no status report the stream can read (None: it is one)."""
    try:
        check_document(doc)
    except DocumentError as e:
        return str(e)
    if "timestamp_ms" in doc and not _whole(doc["timestamp_ms"]):
        return f"timestamp_ms is not a time in ms: {doc['timestamp_ms']!r}"
    for i, job in enumerate(doc.get("jobs") or []):
        for ddir in DIRECTIONS:
            d = job.get(ddir)
            if not isinstance(d, dict):
                continue
            where = f"jobs[{i}].{ddir}"
            clat = d.get("clat_ns") if isinstance(d.get("clat_ns"), dict) else {}
            counts = [(k, d[k]) for k in _COUNTERS if k in d]
            counts += [("clat_ns.N", clat["N"])] if "N" in clat else []
            for key, v in counts:
                if not _whole(v):
                    return f"{where}.{key} is not a count: {v!r}"
            for k, v in (clat.get("bins") or {}).items():
                if not (_BIN.fullmatch(k) and _whole(v)):  # by bucket index: fio 2.12 to 2.1x
                    return f"{where}.clat_ns.bins has {k!r}: {v!r}, not a latency in ns: a count"
    return None


@dataclass
class _Cumulative:
    """One direction's counters in one document, summed over its jobs."""

    ios: int = 0
    bytes: int = 0
    runtime_ms: int = 0
    lat_n: int = 0
    lat_sum_ns: float = 0.0
    bins: dict[int, int] = field(default_factory=dict)


def _cumulative(doc: dict[str, Any]) -> dict[str, _Cumulative]:
    out: dict[str, _Cumulative] = {}
    for ddir in DIRECTIONS:
        c = _Cumulative()
        for job in doc.get("jobs") or []:
            d = job.get(ddir) if isinstance(job, dict) else None
            if not isinstance(d, dict):
                continue
            c.ios += int(d.get("total_ios", 0))
            c.bytes += int(d.get("io_bytes", 0))
            c.runtime_ms = max(c.runtime_ms, int(d.get("runtime", 0)))
            clat = d.get("clat_ns") if isinstance(d.get("clat_ns"), dict) else {}
            n = int(clat.get("N", 0))
            c.lat_n += n
            c.lat_sum_ns += float(clat.get("mean", 0.0)) * n
            for k, v in (clat.get("bins") or {}).items():
                c.bins[int(k)] = c.bins.get(int(k), 0) + int(v)
        if c.ios or c.runtime_ms:
            out[ddir] = c
    return out


def _restarted(now: _Cumulative, before: _Cumulative) -> bool:
    """A direction's counters went down: fio started them again."""
    return (
        now.ios < before.ios
        or now.runtime_ms < before.runtime_ms
        or now.bytes < before.bytes
        or now.lat_n < before.lat_n
    )


@dataclass
class _Doc:
    t_ms: int  # when fio printed it, ms after the engine started
    dirs: dict[str, _Cumulative]

    @property
    def ramp(self) -> bool:
        """Printed during ramp_time: I/Os counted, no latency recorded."""
        return bool(self.dirs) and all(c.ios > 0 and c.lat_n == 0 for c in self.dirs.values())


class StatusStream:
    """Reads fio's output as it grows (:meth:`feed`) and gives each interval to ``sink``
    once the next document shows it is not the stream's short tail (:meth:`close` gives the
    last). ``started`` is the unix time (s) at which the engine was started; ``keep``: the
    stream keeps every interval too (:attr:`intervals`)."""

    def __init__(
        self,
        started: float,
        interval_ms: int,
        sink: Callable[[list[Interval]], None] | None = None,
        keep: bool = True,
    ) -> None:
        self.started_ms = started * 1000
        self.interval_ms = interval_ms
        self.sink = sink
        self.keep = keep  # False: the sink alone has them (a long point's are many)
        self.intervals: list[Interval] = []  # every interval given to the sink, in order
        self._buf = ""
        self._docs: list[_Doc] = []  # the last three: before the pending ones, pending, new
        self._last: list[Interval] = []  # the intervals given last (the tail revises them)
        self._kept: list[str] = []  # fio's output but for the reports before the last
        self._doc_at: int | None = None  # where the last document is in it
        self._reports = 0
        self._seq: dict[str, int] = {}  # the next seq of each direction, given at emit
        #: the I/Os the last document counts, every direction together (watchdog.py)
        self.completed = 0
        #: the last good document fed, as fio wrote it and decoded (checked: check.py):
        #: the result, once fio ended, which parse.parse_output then need not decode again
        self.last_document: tuple[str, dict[str, Any]] | None = None

    def feed(self, text: str) -> None:
        """More of fio's stdout (any piece of it)."""
        self._buf += text
        decoder = json.JSONDecoder()
        while True:
            start = self._buf.find(_MARK)
            if start < 0:  # keep what could be the beginning of a mark
                self._keep(self._buf[: max(len(self._buf) - len(_MARK) + 1, 0)])
                return
            self._keep(self._buf[:start])
            if self._buf.find("\n}", start) < 0:  # fio ends a document with "}" alone
                return
            try:
                doc, end = decoder.raw_decode(self._buf)
            except json.JSONDecodeError:
                later = self._buf.find(_MARK, 1)
                if later < 0:  # not complete yet
                    return
                self._keep(self._buf[:later])  # a broken document: kept as text
                continue
            good = report_problem(doc) is None
            if good:
                self.last_document = (self._buf[:end], doc)
            self._keep(self._buf[:end], document=good)
            if good:
                self.add(doc)

    def _keep(self, text: str, document: bool = False) -> None:
        """Move ``text`` (the start of the buffer) to what the database keeps: everything
        but the documents before the last (and the newline after each)."""
        self._buf = self._buf[len(text) :]
        if document:
            if self._doc_at is not None:
                del self._kept[self._doc_at]
                if self._doc_at < len(self._kept) and self._kept[self._doc_at].startswith("\n"):
                    self._kept[self._doc_at] = self._kept[self._doc_at][1:]
                self._kept = [k for k in self._kept if k]
                self._reports += 1
            self._doc_at = len(self._kept)
        if text:
            self._kept.append(text)

    def kept(self) -> tuple[str, int]:
        """fio's output as the database keeps it -- what fio printed besides documents and
        its last document (the result) -- and how many reports were left out; call after
        :meth:`close`. The reports are the series' source; the series keeps what each
        interval says of them, so the database need not keep a document per interval (a
        6-hour point at 1 s has 21,600)."""
        return "".join([*self._kept, self._buf]), self._reports

    def close(self) -> list[Interval]:
        """The end of the stream: all its intervals (as revised)."""
        return self.intervals

    def add(self, doc: dict[str, Any], t_ms: int | None = None) -> None:
        """One document (``jobs``: its job entries); ``t_ms``: when it was printed, ms
        after the engine started (default: from its ``timestamp_ms``)."""
        if t_ms is None:
            t_ms = int(doc.get("timestamp_ms", 0)) - round(self.started_ms)
        new = _Doc(t_ms=t_ms, dirs=_cumulative(doc))
        self.completed = sum(c.ios for c in new.dirs.values())
        docs = self._docs
        short = bool(docs) and new.t_ms - docs[-1].t_ms < self.interval_ms / 2
        if short and not self._any_restart(docs[-1], new) and self._last:
            # the stream's tail: the interval given last is measured to the new document
            docs[-1] = new
            self._emit(self._between(docs[-2] if len(docs) >= 2 else None, new), revise=True)
            return
        fresh = self._between(docs[-1] if docs else None, new)
        if not fresh:  # no time passed on fio's clock (a report at runtime 0): keep counting
            return
        self._emit(fresh)
        docs.append(new)
        del docs[:-2]

    def _emit(self, rows: list[Interval], revise: bool = False) -> None:
        """Intervals to the sink at once, numbered per direction; ``revise``: they replace
        the ones given last (the same seq: the store's upsert replaces them too)."""
        before = {i.direction: i.seq for i in self._last} if revise else {}
        out = []
        for i in rows:
            seq = before.get(i.direction)
            if seq is None:
                seq = self._seq.get(i.direction, 0)
                self._seq[i.direction] = seq + 1
            out.append(dataclasses.replace(i, seq=seq))
        if not out:
            return
        if self.keep:
            if revise:  # the ones given last are the list's last
                del self.intervals[-len(self._last) :]
            self.intervals.extend(out)
        self._last = out
        if self.sink is not None:
            self.sink(out)

    @staticmethod
    def _any_restart(before: _Doc, now: _Doc) -> bool:
        """fio started its counters again between the two documents: the first after
        ramp_time (whose counters may well exceed the ramp's), or any that went down."""
        if before.ramp and not now.ramp:
            return True
        return any(
            ddir in before.dirs and _restarted(c, before.dirs[ddir]) for ddir, c in now.dirs.items()
        )

    def _between(self, before: _Doc | None, now: _Doc) -> list[Interval]:
        out = []
        restart = before is None or self._any_restart(before, now)
        for ddir, c in now.dirs.items():
            b = before.dirs.get(ddir) if before is not None and not restart else None
            if b is None:
                b = _Cumulative()
            dur = c.runtime_ms - b.runtime_ms
            if dur <= 0:
                continue
            out.append(self._interval(ddir, now, c, b, dur))
        return out

    def _interval(self, ddir: str, now: _Doc, c: _Cumulative, b: _Cumulative, dur: int) -> Interval:
        n = c.lat_n - b.lat_n
        bins = {k: v - b.bins.get(k, 0) for k, v in c.bins.items() if v - b.bins.get(k, 0) > 0}
        pcts = percentiles_from_bins(bins, _PCTS) if n > 0 and bins else {}
        return Interval(
            seq=0,  # numbered when emitted
            t_ms=now.t_ms,
            dur_ms=dur,
            direction=ddir,
            ios=c.ios - b.ios,
            bytes=c.bytes - b.bytes,
            lat_mean_ns=_mean(c.lat_sum_ns - b.lat_sum_ns, n),
            p50_ns=pcts.get(pct_key(50.0)),
            p99_ns=pcts.get(pct_key(99.0)),
            p999_ns=pcts.get(pct_key(99.9)),
            ramp=now.ramp,
        )


def _mean(total_ns: float, n: int) -> float | None:
    """The mean latency of ``n`` I/Os that took ``total_ns`` together; None when unknown
    (no I/O, or a sum no fio's means give)."""
    mean = round(total_ns / n, 1) if n > 0 else math.nan
    return mean if math.isfinite(mean) and mean >= 0 else None


def host_intervals(entries: list[dict[str, Any]], interval_ms: int, host: str) -> list[Interval]:
    """A host's intervals from its entries in fio's client output (its status reports, then
    its final entry; one entry per report: group_reporting). The reports carry no time:
    report k is taken k x ``interval_ms`` after the host's server began (the final entry
    its runtime after the last report), on the server's own clock."""
    stream = StatusStream(0.0, interval_ms)
    t_ms = 0
    for k, entry in enumerate(entries, 1):
        if k < len(entries):
            t_ms = k * interval_ms
        else:  # the final entry: after the last report by the runtime it added
            before = runtime_ms(entries[-2]) if len(entries) > 1 else 0
            t_ms += max(runtime_ms(entry) - before, 0)
        stream.add({"jobs": [entry]}, t_ms=t_ms)
    return [dataclasses.replace(i, host=host) for i in stream.close()]


def merged_intervals(hosts: list[list[dict[str, Any]]], interval_ms: int) -> list[Interval]:
    """A multi-host point's own series (host ''): its hosts' reports of the same moment
    taken together, as one document of all their entries, so that each interval's I/Os and
    bytes are the hosts' sums and its percentiles those of the hosts' summed histograms
    (exact). Report k is k x ``interval_ms`` after the servers began (fio's client starts
    them together: the clock of :func:`host_intervals`); a host that ended early counts with
    its final entry from then on (it adds nothing), and the last document comes at the
    latest host's end."""
    hosts = [h for h in hosts if h]
    if not hosts:
        return []
    stream = StatusStream(0.0, interval_ms)
    count = max(len(h) for h in hosts)
    for k in range(1, count + 1):
        entries = [h[min(k, len(h)) - 1] for h in hosts]
        last = max(_final_ms(h, interval_ms) for h in hosts)
        stream.add({"jobs": entries}, t_ms=k * interval_ms if k < count else last)
    return stream.close()


def _final_ms(entries: list[dict[str, Any]], interval_ms: int) -> int:
    """When a host's final entry came, on the servers' clock (as host_intervals has it)."""
    before = runtime_ms(entries[-2]) if len(entries) > 1 else 0
    return (len(entries) - 1) * interval_ms + max(runtime_ms(entries[-1]) - before, 0)


def runtime_ms(entry: dict[str, Any]) -> int:
    """A job entry's runtime: its longest direction's, ms."""
    return max(
        (int(entry[d].get("runtime", 0)) for d in DIRECTIONS if isinstance(entry.get(d), dict)),
        default=0,
    )
