"""CSV and JSON export of a run's measurements (one record per measurement, base units)."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from storbench.model.metrics import DIRECTIONS, PERCENTILES, LatencyStats, Measurement, pct_key
from storbench.model.series import Interval
from storbench.report.safe import csv_cell
from storbench.store import EventRow, MeasurementRow, RunRow

#: Percentile keys of LatencyStats.percentiles ("50", "99.9"); exported as "p50", "p99.9".
_LAT_KEYS = tuple(pct_key(p) for p in PERCENTILES)


def _lat(lat: LatencyStats | None) -> dict[str, Any] | None:
    if lat is None:
        return None
    out: dict[str, Any] = {
        "samples": lat.samples,
        "mean": lat.mean,
        "stddev": lat.stddev,
        "min": lat.min,
        "max": lat.max,
    }
    for k in _LAT_KEYS:
        out[f"p{k}"] = lat.percentiles.get(k)
    return out


def _measurement(m: Measurement) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for ddir in DIRECTIONS:
        d = m.direction(ddir)
        if d is None:
            continue
        out[ddir] = {
            "iops": d.iops,
            "bw_bytes": d.bw_bytes,
            "io_bytes": d.io_bytes,
            "total_ios": d.total_ios,
            "runtime_s": d.runtime_s,
            "clat_ns": _lat(d.clat),
            "lat_ns": _lat(d.lat),
            "slat_ns": _lat(d.slat),
        }
    out["usr_cpu_pct"] = m.usr_cpu
    out["sys_cpu_pct"] = m.sys_cpu
    return out


#: Timing keys of a multi-host measurement's ``extra`` that are exported (seconds, fractions).
_HOST_KEYS = (
    "aggregate",
    "aggregate_why",
    "start_spread_s",
    "end_spread_s",
    "span_s",
    "window_s",
    "overlap",
    "low_overlap",
    "failed_hosts",
    "status_interval_s",
    "live_hosts",
    "sum_of_host_rates",
    "notes",
)


def _host(m: Measurement) -> dict[str, Any]:
    """One host of a multi-host point: its status, figures and when it ran (seconds from the
    moment the fio servers began the point)."""
    out: dict[str, Any] = {"status": m.status, "error": m.error}
    out.update(_measurement(m))
    for k in ("start_s", "end_s", "last_report_s"):
        if k in m.extra:
            out[k] = m.extra[k]
    return out


#: The units of an exported interval's figures (the names say them too).
SERIES_UNITS = {
    "t_ms": "ms after the engine started, at the end of the interval",
    "dur_ms": "ms",
    "ios": "I/Os completed in the interval",
    "bytes": "bytes moved in the interval",
    "iops": "I/Os per s",
    "bw_bytes": "bytes/s",
    "lat_mean_ns": "ns",
    "p50_ns": "ns",
    "p99_ns": "ns",
    "p999_ns": "ns",
}


def interval_record(i: Interval) -> dict[str, Any]:
    """One interval as exported: the stored figures and the rates derived from them;
    ``host`` is '' for the point's own series, a host's label for that host's."""
    return {
        "host": i.host,
        "direction": i.direction,
        "seq": i.seq,
        "t_ms": i.t_ms,
        "dur_ms": i.dur_ms,
        "ramp": i.ramp,
        "ios": i.ios,
        "bytes": i.bytes,
        "iops": i.iops,
        "bw_bytes": i.bw_bytes,
        "lat_mean_ns": i.lat_mean_ns,
        "p50_ns": i.p50_ns,
        "p99_ns": i.p99_ns,
        "p999_ns": i.p999_ns,
    }


def records(
    run: RunRow, rows: list[MeasurementRow], series: dict[int, list[Interval]] | None = None
) -> list[dict[str, Any]]:
    """One record per measurement; with ``series`` (point index: its intervals, every
    host's), each record's ``series`` too (empty for a point without one). ``point`` and
    ``repetition`` count from 1, as ``show --point N``, the job files and every other
    export count them."""
    recs = []
    for r in rows:
        p = r.point
        rec: dict[str, Any] = {
            "run": run.id,
            "measurement": r.id,
            "point": r.point_idx + 1,
            "key": p.key if p else None,
            "repetition": p.repetition + 1 if p else 1,
            "target": p.target.to_dict() if p else None,
            "workload": p.workload if p else None,
            "params": p.params if p else {},
            "status": r.status,
            "error": r.error,
            "started_at": r.started_at,
            "ended_at": r.ended_at,
            "engine": r.engine,
            "engine_version": r.engine_version,
        }
        rec.update(_measurement(r.measurement))
        if r.measurement.findings:
            rec["findings"] = [f.to_dict() for f in r.measurement.findings]
        if "steady_state" in r.measurement.extra:
            rec["steady_state"] = r.measurement.extra["steady_state"]
        if isinstance(r.measurement.extra.get("power"), dict):
            rec["power"] = r.measurement.extra["power"]
        if r.measurement.hosts:
            if p is not None and p.hosts:
                rec["clients"] = len(p.hosts)
            agg = {k: r.measurement.extra[k] for k in _HOST_KEYS if k in r.measurement.extra}
            if agg:
                rec["aggregate"] = agg
            rec["hosts"] = {h: _host(m) for h, m in r.measurement.hosts.items()}
            for ph in p.hosts if p is not None else []:
                if ph.label in rec["hosts"]:
                    rec["hosts"][ph.label]["target"] = ph.target.to_dict()
        if series is not None:
            rec["series"] = [interval_record(i) for i in series.get(r.point_idx, [])]
        recs.append(rec)
    return recs


def numbered(data: dict[str, Any]) -> dict[str, Any]:
    """Stored data (an event's, a drill's) as exported: its ``point`` (the point's index,
    from 0, as the database keys it) counted from 1 as everywhere else."""
    point = data.get("point")
    if isinstance(point, int) and not isinstance(point, bool) and point >= 0:
        return {**data, "point": point + 1}
    return data


def to_json(
    run: RunRow,
    rows: list[MeasurementRow],
    events: list[EventRow] | None = None,
    answer: dict[str, Any] | None = None,
    series: dict[int, list[Interval]] | None = None,
    drills: list[dict[str, Any]] | None = None,
    findings: list[dict[str, Any]] | None = None,
) -> str:
    """The run, its measurements and its timeline events (at: unix time, s) as JSON, with
    the traps found in its points (``findings``: code, point, evidence, advice); every
    ``point`` (of a measurement, a finding, an event's or a drill's data) counts from 1; with
    ``answer``, its suite's answer (analysis/answers.py answer_data) under "answer"; with
    ``series`` (point index: intervals), each measurement's time series under "series";
    with ``drills``, each failure drill's report (analysis/drill.py; s, bytes/s, %)."""
    doc = {
        "run": {
            "id": run.id,
            "name": run.name,
            "kind": run.kind,
            "source": run.source,
            "status": run.effective_status,
            "started_at": run.started_at,
            "ended_at": run.ended_at,
            "fio_version": run.fio_version,
            "storbench_version": run.storbench_version,
            "overrides": run.overrides,
            "inventory": run.inventory,
        },
        "units": {
            "bw_bytes": "bytes/s",
            "latency": "ns",
            "runtime_s": "s",
            "cpu": "percent",
            "series": SERIES_UNITS,
        },
        "findings": findings or [],
        "measurements": records(run, rows, series),
        "events": [
            {"at": e.at, "kind": e.kind, "message": e.message, "data": numbered(e.data)}
            for e in events or []
        ],
    }
    if answer is not None:
        doc["answer"] = answer
    if drills:
        doc["drills"] = [
            {**numbered(d), "actions": [numbered(a) for a in d.get("actions") or []]}
            for d in drills
        ]
    return json.dumps(doc, indent=2, default=str) + "\n"


def series_json(run: RunRow, rows: list[MeasurementRow], series: dict[int, list[Interval]]) -> str:
    """Every interval of every point that has a series, as JSON: per point its number
    (from 1, as in the JSON export of measurements and ``show --point``), its measurement
    (null for a point that never finished: its intervals were written while it ran) and its
    intervals (every host's)."""
    ids = {r.point_idx: r.id for r in rows}
    doc = {
        "run": {"id": run.id, "name": run.name},
        "units": SERIES_UNITS,
        "points": [
            {
                "point": idx + 1,
                "measurement": ids.get(idx),
                "series": [interval_record(i) for i in intervals],
            }
            for idx, intervals in sorted(series.items())
        ],
    }
    return json.dumps(doc, indent=2) + "\n"


def _findings_cell(found: list[dict[str, Any]]) -> str:
    """A measurement's findings in a cell: their codes, ``code@host`` for one host's, space
    separated (the JSON export carries their evidence and fix)."""
    return " ".join(f["code"] + (f"@{f['host']}" if f.get("host") else "") for f in found)


def _csv_columns(recs: list[dict[str, Any]]) -> tuple[list[str], list[str], list[str]]:
    """The CSV's columns for these records, and the per-direction metrics and latency
    columns among them."""
    with_hosts = any("clients" in r for r in recs)  # storbench's own runs on hosts
    param_keys = list(dict.fromkeys(k for r in recs for k in (r["params"] or {})))
    cols = [
        "run",
        "measurement",
        "point",
        "repetition",
        "target",
        "workload",
        *param_keys,
        "status",
        "error",
    ]
    if with_hosts:
        cols[cols.index("target") + 1 : cols.index("target") + 1] = ["clients", "host"]
        cols += [
            "start_s",
            "end_s",
            "start_spread_s",
            "window_s",
            "span_s",
            "overlap",
            "low_overlap",
            "aggregate",
        ]
    metrics = ["iops", "bw_bytes", "io_bytes", "runtime_s"]
    lat_cols = ["mean", "stddev", "min", "max"] + [f"p{k}" for k in _LAT_KEYS]
    for ddir in DIRECTIONS:
        if any(ddir in r for r in recs):
            cols += [f"{ddir}_{m}" for m in metrics]
            cols += [f"{ddir}_clat_{c}_ns" for c in lat_cols]
    cols += ["usr_cpu_pct", "sys_cpu_pct"]
    if any("power" in r for r in recs):  # a sensor answered: this machine's watts
        cols += ["power_watts_mean", "power_source"]
    steady = any("steady_state" in r for r in recs)
    if steady:  # how each point's rounds ended: its figures are those of the window
        cols[cols.index("error") + 1 : cols.index("error") + 1] = STEADY_COLUMNS
    # the traps found (codes, "code@host" on one host; empty: none), last: every other
    # column keeps its place, as it had before findings were exported
    cols.append("findings")
    return cols, metrics, lat_cols


def to_csv(run: RunRow, rows: list[MeasurementRow]) -> str:
    """One row per measurement; in a run on several hosts (``hosts:``) each point's row (the
    aggregate, column ``host`` empty) is followed by one row per host, and the timing
    columns (start/end of each host, overlap of the aggregate) are added; the last column,
    ``findings``, has each row's finding codes (empty: none). A text cell that would start a
    spreadsheet formula (``=HYPERLINK(...)`` as a job name) starts with ``'``."""
    recs = records(run, rows)
    cols, metrics, lat_cols = _csv_columns(recs)
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=cols, extrasaction="ignore", lineterminator="\n")
    w.writer.writerow([csv_cell(c) for c in cols])  # option names come from plans and files
    for r in recs:
        flat: dict[str, Any] = {
            k: r.get(k)
            for k in (
                "run",
                "measurement",
                "point",
                "repetition",
                "workload",
                "status",
                "error",
                "usr_cpu_pct",
                "sys_cpu_pct",
            )
        }
        flat["target"] = _target_cell(r["target"])
        flat["findings"] = _findings_cell(r.get("findings") or [])
        flat.update(r["params"] or {})
        flat.update(_steady_cells(r))
        flat.update(_power_cells(r))
        _flat_dirs(flat, r, metrics, lat_cols)
        if "clients" in r:
            flat["clients"] = r.get("clients")
            flat.update({k: v for k, v in (r.get("aggregate") or {}).items() if k in cols})
        w.writerow(_safe_row(flat))
        for host, h in (r.get("hosts") or {}).items() if "clients" in r else ():
            row = {k: flat[k] for k in ("run", "measurement", "point", "repetition", "workload")}
            row.update(r["params"] or {})
            target = _target_cell(h.get("target")) or flat["target"]
            row.update(target=target, clients=r.get("clients"), host=host)
            row.update({k: h.get(k) for k in ("status", "error", "start_s", "end_s")})
            row.update(usr_cpu_pct=h.get("usr_cpu_pct"), sys_cpu_pct=h.get("sys_cpu_pct"))
            mine = [f for f in r.get("findings") or [] if f.get("host") == host]
            row["findings"] = _findings_cell(mine)
            _flat_dirs(row, h, metrics, lat_cols)
            w.writerow(_safe_row(row))
    return buf.getvalue()


STEADY_COLUMNS = [
    "steady_state",
    "steady_rounds",
    "steady_window",
    "steady_range_pct",
    "steady_slope_pct",
]


def _power_cells(rec: dict[str, Any]) -> dict[str, Any]:
    """This machine's power over the point, where a sensor answered (storbench.hosts.power)."""
    pw = rec.get("power")
    return {"power_watts_mean": pw["watts_mean"], "power_source": pw["source"]} if pw else {}


def _target_cell(target: dict[str, Any] | None) -> str | None:
    """A target in one CSV cell: its path (an s3 target: ``s3://BUCKET/PREFIX``, since a
    bucket name alone does not say which objects)."""
    if not target:
        return None
    if target.get("kind") == "s3":
        return f"s3://{target.get('path')}/{target.get('prefix') or ''}"
    return target.get("path")


def _steady_cells(rec: dict[str, Any]) -> dict[str, Any]:
    """The CSV cells of a point's steady-state rounds (none for a point that ran without)."""
    v = (rec.get("steady_state") or {}).get("verdict")
    if not v:
        return {}
    return {
        "steady_state": "reached" if v["reached"] else "NOT REACHED",
        "steady_rounds": v["rounds"],
        "steady_window": f"{v['first']}-{v['last']}",
        "steady_range_pct": v["range_pct"],
        "steady_slope_pct": v["slope_pct"],
    }


def _safe_row(row: dict[str, Any]) -> dict[str, Any]:
    """A row whose text cells a spreadsheet will not run as formulas (safe.csv_cell)."""
    return {k: csv_cell(v) for k, v in row.items()}


def _flat_dirs(
    flat: dict[str, Any], rec: dict[str, Any], metrics: list[str], lat_cols: list[str]
) -> None:
    for ddir in DIRECTIONS:
        d = rec.get(ddir)
        if not d:
            continue
        for m in metrics:
            flat[f"{ddir}_{m}"] = d[m]
        for c in lat_cols:
            flat[f"{ddir}_clat_{c}_ns"] = (d["clat_ns"] or {}).get(c)
