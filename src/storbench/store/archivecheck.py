"""What an archive (store/archive.py) may hold, checked member by member before anything
of it is stored, as fio's outputs are before ``import`` stores them (engines/fio/check.py):
every member -- the run's columns, each point, measurement (its figures, findings and
histograms), event and row of the time series and host samples -- must have the type, the
range and the shape storbench writes, or the archive is refused with one message naming
the member (``measurements[3].data.directions.read.iops``) and its value.

Every command reads every run (``runs`` lists them, ``serve`` shows them), so one archive
taken as it came broke them all: a start time of ``"yesterday"`` or ``1e300`` made ``runs``,
``show``, ``report`` and the web view fail for every run. A point's spec must be a point as
storbench writes it (plan/stored.py reads it; whether ``resume`` may run it is checked
there, at resume); a measurement's figures must read back as themselves
(:class:`~storbench.model.metrics.Measurement`), their numbers finite and not negative.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable
from typing import Any

from storbench.model.errors import UserError
from storbench.model.metrics import DIRECTIONS, Measurement

FIX = "give a file written by `storbench export RUN --format archive`"
#: The run's own columns an archive carries (its id, token and liveness are this database's).
RUN_COLUMNS = (
    "kind",
    "name",
    "source",
    "plan_text",
    "overrides",
    "status",
    "started_at",
    "ended_at",
    "inventory",
    "fio_version",
    "storbench_version",
    "hostname",
    "pid",
    "argv",
)
MEASUREMENT_COLUMNS = (
    "point_idx",
    "status",
    "error",
    "started_at",
    "ended_at",
    "engine",
    "engine_version",
    "command",
    "job_file",
    "stderr",
)
#: The members of an archive besides its format, version and origin (``from``); the
#: series tables (SERIES_COLUMNS) may be left out.
MEMBERS = ("run", "points", "measurements", "events", "intervals", "host_samples")
#: What a measurement of an archive holds besides its columns.
MEASUREMENT_MORE = ("raw_output", "data", "histograms")
#: The latest time (unix seconds) a run, a measurement or an event may carry: the end of
#: the year 9999, the last a date shows.
MAX_TIME = 253402300799.0
#: The largest whole number a database column holds (a signed 64-bit integer).
MAX_INT = 2**63 - 1
RUN_KINDS = ("run", "import")
RUN_STATUSES = ("running", "completed", "failed", "interrupted", "aborted")
MEASUREMENT_STATUSES = ("ok", "failed", "partial", "skipped")
#: The figures of a direction (bytes, I/Os, seconds, per second): numbers of 0 or more.
DIRECTION_NUMBERS = ("iops", "bw_bytes", "io_bytes", "total_ios", "runtime_s")
LATENCIES = ("slat", "clat", "lat")
LATENCY_NUMBERS = ("mean", "stddev", "min", "max")
#: The columns of the series tables an archive carries and what each holds: "index" (a
#: point's), "int", "count" (0 or more), "real" (a finite number), "text", "json" (a JSON
#: mapping as text); a "?" after it: or null. tests/unit/test_archive_validation.py holds
#: them to the database's tables.
SERIES_COLUMNS: dict[str, dict[str, str]] = {
    "intervals": {
        "point_idx": "index",
        "host": "text",
        "direction": "text",
        "seq": "count",
        "t_ms": "int",
        "dur_ms": "count",
        "ramp": "count",
        "ios": "count",
        "bytes": "count",
        "lat_mean": "real?",
        "p50": "real?",
        "p99": "real?",
        "p999": "real?",
    },
    "host_samples": {
        "point_idx": "index",
        "host": "text",
        "seq": "count",
        "t_ms": "int",
        "dur_ms": "count",
        "cpu_user": "real",
        "cpu_system": "real",
        "cpu_iowait": "real",
        "cpu_idle": "real",
        "cpu_steal": "real",
        "mem_used": "count",
        "mem_total": "count",
        "net": "json",
        "disks": "json",
        "watts": "real?",
    },
}
#: The key of a row of each series table (besides its run): no two rows share one.
SERIES_KEYS = {
    "intervals": ("point_idx", "host", "direction", "seq"),
    "host_samples": ("point_idx", "host", "seq"),
}
_BUCKET = re.compile(r"[0-9]{1,19}")


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


class Member:
    """The checks of one archive (``source``: its file or database): each raises the
    :class:`UserError` that names the member and its value."""

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, where: str, what: str, value: Any) -> UserError:
        return UserError(
            f"{self.source} is a damaged storbench archive: {where} {what}: {_short(value)}",
            fix=FIX,
        )

    def text(self, value: Any, where: str, *, null: bool = False, nul: bool = False) -> None:
        """Text a database column stores as it is: no lone surrogate (neither database
        stores one) and, unless ``nul``, no NUL (PostgreSQL's text holds none)."""
        if value is None and null:
            return
        if not isinstance(value, str):
            raise self.fail(where, "is not text" + (" or null" if null else ""), value)
        try:
            value.encode()
        except UnicodeEncodeError:
            raise self.fail(where, "holds a lone surrogate (no text)", value) from None
        if not nul and "\0" in value:
            raise self.fail(where, "holds a NUL character", value)

    def whole(self, value: Any, where: str, low: int = 0, *, null: bool = False) -> None:
        if value is None and null:
            return
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= MAX_INT:
            raise self.fail(where, f"is not a whole number of {low} or more", value)

    def number(self, value: Any, where: str, *, null: bool = False, negative: bool = False) -> None:
        """A finite number (of 0 or more unless ``negative``)."""
        if value is None and null:
            return
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
            or (value < 0 and not negative)
        ):
            raise self.fail(where, "is not a finite number" + ("" if negative else " ≥ 0"), value)

    def time(self, value: Any, where: str, *, null: bool = False) -> None:
        """A unix time, seconds, from 1970 to the end of the year 9999."""
        if value is None and null:
            return
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not 0 <= value <= MAX_TIME
        ):
            raise self.fail(where, "is not a time (seconds since 1970, up to the year 9999)", value)

    def known(self, value: dict[str, Any], where: str, keys: Iterable[str]) -> None:
        """Every key of mapping ``value`` is one storbench writes there."""
        other = next((k for k in value if k not in tuple(keys)), None)
        if other is not None:
            raise self.fail(where, "holds a key storbench does not write there", other)

    def point(self, value: Any, where: str, points: set[int]) -> None:
        """The index of one of the archive's points."""
        if isinstance(value, bool) or not isinstance(value, int) or value not in points:
            raise self.fail(where, "is not the idx of a point of the archive", value)

    def choice(self, value: Any, where: str, choices: Iterable[str]) -> None:
        if value not in tuple(choices):
            raise self.fail(where, f"is not one of {', '.join(choices)}", value)

    def mapping(self, value: Any, where: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(where, "is not a mapping", value)
        return value

    def listed(self, value: Any, where: str) -> list[Any]:
        if not isinstance(value, list):
            raise self.fail(where, "is not a list", value)
        return value

    def words(self, value: Any, where: str, *, null: bool = False) -> None:
        """A list of text (an argv, the --set arguments)."""
        if value is None and null:
            return
        for i, w in enumerate(self.listed(value, where)):
            self.text(w, f"{where}[{i}]")

    def unique(self, keys: list[Any], where: str, what: str) -> None:
        seen = set()
        for i, k in enumerate(keys):
            if k in seen:
                raise self.fail(f"{where}[{i}]", f"repeats {what}", k)
            seen.add(k)


def check_members(doc: dict[str, Any], source: str) -> None:
    """UserError naming the first member of archive ``doc`` that storbench does not write
    (module comment); ``doc`` has every member (store/archive.check)."""
    m = Member(source)
    m.known(doc, "the archive", (*MEMBERS, "format", "version", "from"))
    if "from" in doc:
        _origin(m, m.mapping(doc["from"], "from"), "from")
    m.known(doc["run"], "run", RUN_COLUMNS)
    _run(m, doc["run"])
    points = _points(m, m.listed(doc["points"], "points"))
    measurements = m.listed(doc["measurements"], "measurements")
    for i, meas in enumerate(measurements):
        _measurement(m, meas, f"measurements[{i}]", points)
    m.unique([x["point_idx"] for x in measurements], "measurements", "a point_idx")
    for i, e in enumerate(m.listed(doc["events"], "events")):
        where = f"events[{i}]"
        e = m.mapping(e, where)
        m.known(e, where, ("at", "kind", "message", "data"))
        m.time(e.get("at"), f"{where}.at")
        m.text(e.get("kind"), f"{where}.kind")
        m.text(e.get("message"), f"{where}.message")
        m.mapping(e.get("data"), f"{where}.data")
    for table in SERIES_COLUMNS:
        if doc.get(table) is not None:
            _series(m, table, doc[table], points)


def _origin(m: Member, origin: dict[str, Any], where: str) -> None:
    """Where a run was dumped (``from``) or came from (each entry of its provenance)."""
    for key in ("db", "token", "host", "via"):
        if origin.get(key) is not None:
            m.text(origin[key], f"{where}.{key}")
    if origin.get("run") is not None:
        m.whole(origin["run"], f"{where}.run")
    if origin.get("at") is not None:
        m.time(origin["at"], f"{where}.at")


def _run(m: Member, run: dict[str, Any]) -> None:
    m.choice(run["kind"], "run.kind", RUN_KINDS)
    m.choice(run["status"], "run.status", RUN_STATUSES)
    for key in ("name", "source"):
        m.text(run[key], f"run.{key}")
    for key in ("plan_text", "fio_version", "storbench_version", "hostname"):
        m.text(run[key], f"run.{key}", null=True)
    m.time(run["started_at"], "run.started_at")
    m.time(run["ended_at"], "run.ended_at", null=True)
    m.whole(run["pid"], "run.pid", null=True)
    m.words(run["overrides"], "run.overrides")
    m.words(run["argv"], "run.argv", null=True)
    inventory = m.mapping(run["inventory"], "run.inventory")
    if "provenance" in inventory:
        for i, p in enumerate(m.listed(inventory["provenance"], "run.inventory.provenance")):
            where = f"run.inventory.provenance[{i}]"
            _origin(m, m.mapping(p, where), where)


def _points(m: Member, points: list[Any]) -> set[int]:
    """The points' indexes, each point a point as storbench writes it."""
    from storbench.model.errors import PlanError
    from storbench.plan.stored import StoredPoint

    for i, p in enumerate(points):
        where = f"points[{i}]"
        p = m.mapping(p, where)
        m.known(p, where, ("idx", "key", "repetition", "spec"))
        m.whole(p.get("idx"), f"{where}.idx")
        m.whole(p.get("repetition"), f"{where}.repetition")
        m.text(p.get("key"), f"{where}.key")
        try:
            StoredPoint(p.get("spec"), p["idx"]).shape()
        except PlanError as e:
            raise m.fail(f"{where}.spec", f"is not a point ({e.message})", p.get("spec")) from None
        if (p["key"], p["repetition"]) != (p["spec"]["key"], p["spec"]["repetition"]):
            raise m.fail(where, "is not the point its spec says", p["spec"]["key"])
    m.unique([p["idx"] for p in points], "points", "an idx")
    return {p["idx"] for p in points}


def _measurement(m: Member, meas: Any, where: str, points: set[int]) -> None:
    meas = m.mapping(meas, where)
    for key in (*MEASUREMENT_COLUMNS, *MEASUREMENT_MORE):
        if key not in meas:
            raise m.fail(where, f"has no `{key}`", sorted(meas))
    m.known(meas, where, (*MEASUREMENT_COLUMNS, *MEASUREMENT_MORE))
    m.point(meas.get("point_idx"), f"{where}.point_idx", points)
    m.choice(meas.get("status"), f"{where}.status", MEASUREMENT_STATUSES)
    m.text(meas.get("engine"), f"{where}.engine")
    for key in ("error", "engine_version", "job_file", "stderr"):
        m.text(meas.get(key), f"{where}.{key}", null=True)
    m.text(meas.get("raw_output"), f"{where}.raw_output", null=True, nul=True)
    for key in ("started_at", "ended_at"):
        m.time(meas.get(key), f"{where}.{key}", null=True)
    m.words(meas.get("command"), f"{where}.command", null=True)
    _figures(m, m.mapping(meas.get("data"), f"{where}.data"), f"{where}.data")
    hists = m.listed(meas.get("histograms"), f"{where}.histograms")
    for i, h in enumerate(hists):
        at = f"{where}.histograms[{i}]"
        h = m.mapping(h, at)
        m.known(h, at, ("host", "direction", "metric", "bins"))
        for key in ("host", "direction", "metric"):
            m.text(h.get(key), f"{at}.{key}")
        for k, v in m.mapping(h.get("bins"), f"{at}.bins").items():
            if not _BUCKET.fullmatch(k) or int(k) > MAX_INT:
                raise m.fail(f"{at}.bins", "has a bucket that is no whole number of ns", k)
            m.whole(v, f"{at}.bins[{k!r}]")
    m.unique([(h["host"], h["direction"], h["metric"]) for h in hists], where, "a histogram")


def _figures(m: Member, data: dict[str, Any], where: str, depth: int = 0) -> None:
    """A measurement's figures (or one host's): what :class:`Measurement` writes, its
    numbers finite and not negative."""
    m.choice(data.get("status", "ok"), f"{where}.status", MEASUREMENT_STATUSES)
    m.whole(data.get("jobs", 0), f"{where}.jobs")
    m.whole(data.get("error_code", 0), f"{where}.error_code", low=-MAX_INT)
    for key in ("usr_cpu", "sys_cpu"):
        m.number(data.get(key), f"{where}.{key}", null=True)
    for name, d in m.mapping(data.get("directions", {}), f"{where}.directions").items():
        at = f"{where}.directions.{name}"
        m.choice(name, f"{where}.directions", DIRECTIONS)
        d = m.mapping(d, at)
        for key in DIRECTION_NUMBERS:
            m.number(d.get(key), f"{at}.{key}")
        for key in LATENCIES:
            if d.get(key) is not None:
                _latency(m, m.mapping(d[key], f"{at}.{key}"), f"{at}.{key}")
    for i, f in enumerate(m.listed(data.get("findings", []), f"{where}.findings")):
        f = m.mapping(f, f"{where}.findings[{i}]")
        for key in ("code", "evidence", "advice"):
            m.text(f.get(key), f"{where}.findings[{i}].{key}")
        m.mapping(f.get("data", {}), f"{where}.findings[{i}].data")
        m.text(f.get("host", ""), f"{where}.findings[{i}].host")
    for i, u in enumerate(m.listed(data.get("disk_util", []), f"{where}.disk_util")):
        m.mapping(u, f"{where}.disk_util[{i}]")
    m.mapping(data.get("extra", {}), f"{where}.extra")
    for host, h in m.mapping(data.get("hosts", {}), f"{where}.hosts").items():
        if depth:
            raise m.fail(f"{where}.hosts", "nests hosts in a host", host)
        _figures(m, m.mapping(h, f"{where}.hosts.{host}"), f"{where}.hosts.{host}", 1)
    _same(m, data, where, Measurement.from_dict, Measurement.to_dict)


def _latency(m: Member, lat: dict[str, Any], where: str) -> None:
    m.whole(lat.get("samples", 0), f"{where}.samples")
    for key in LATENCY_NUMBERS:
        m.number(lat.get(key), f"{where}.{key}", null=True)
    for k, v in m.mapping(lat.get("percentiles") or {}, f"{where}.percentiles").items():
        try:
            pct = float(k)
        except ValueError:
            pct = math.nan
        if not 0 <= pct <= 100:
            raise m.fail(f"{where}.percentiles", "has a key that is no percentage", k)
        m.number(v, f"{where}.percentiles[{k!r}]")
    for k, v in m.mapping(lat.get("bins") or {}, f"{where}.bins").items():
        if not _BUCKET.fullmatch(str(k)) or int(k) > MAX_INT:
            raise m.fail(f"{where}.bins", "has a bucket that is no whole number of ns", k)
        m.whole(v, f"{where}.bins[{k!r}]")


def _same(
    m: Member,
    data: dict[str, Any],
    where: str,
    read: Callable[[dict[str, Any]], Any],
    write: Callable[[Any], dict[str, Any]],
) -> None:
    """``data`` is what storbench writes: read and written again, it is itself."""
    try:
        again = write(read(data))
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise m.fail(where, f"cannot be read ({type(e).__name__}: {e})", data) from None
    for key in dict.fromkeys([*data, *again]):
        if data.get(key) != again.get(key):
            raise m.fail(f"{where}.{key}", "is not what storbench writes there", data.get(key))


def _series(m: Member, table: str, part: Any, points: set[int]) -> None:
    """A table of rows (``columns``, ``rows``): known columns, each value its column's."""
    part = m.mapping(part, table)
    m.known(part, table, ("columns", "rows"))
    cols = m.listed(part.get("columns"), f"{table}.columns")
    kinds = SERIES_COLUMNS[table]
    for c in cols:
        if not isinstance(c, str) or c not in kinds:
            raise m.fail(f"{table}.columns", "names a column the table does not have", c)
    m.unique(cols, f"{table}.columns", "a column")
    missing = [c for c, kind in kinds.items() if not kind.endswith("?") and c not in cols]
    rows = m.listed(part.get("rows"), f"{table}.rows")
    if missing and rows:
        raise m.fail(f"{table}.columns", "lacks a column every row needs", missing[0])
    for i, row in enumerate(rows):
        where = f"{table}.rows[{i}]"
        row = m.listed(row, where)
        if len(row) != len(cols):
            raise m.fail(where, f"does not have the {len(cols)} values of its columns", row)
        for c, v in zip(cols, row, strict=True):
            _cell(m, kinds[c], v, f"{where}.{c}", points)
    at = [cols.index(c) for c in SERIES_KEYS[table]] if not missing else []
    m.unique([tuple(r[j] for j in at) for r in rows], f"{table}.rows", "a row's key")


def _cell(m: Member, kind: str, value: Any, where: str, points: set[int]) -> None:
    null = kind.endswith("?")
    kind = kind.rstrip("?")
    if kind == "index":
        m.point(value, where, points)
    elif kind in ("int", "count"):
        m.whole(value, where, 0 if kind == "count" else -MAX_INT)
    elif kind == "real":
        m.number(value, where, null=null, negative=True)
    else:
        m.text(value, where)
        if kind == "json":
            try:
                ok = isinstance(json.loads(value), dict)
            except (ValueError, RecursionError):
                ok = False
            if not ok:
                raise m.fail(where, "is not a JSON mapping", value)
