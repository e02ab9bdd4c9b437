"""The HTML report's point details: for each point its options, and for every repetition its
command, job file, stderr, per-host figures and (for a time chart, report/pointcharts.py) its
row; the engine's raw output only on request (``report --raw``).

A report holds the details of at most :data:`MAX_POINT_DETAILS` points of a run (the first,
in plan order) and says how to see the others (``storbench show RUN --point N``). Raw output
is gzip-compressed and base64-encoded; past :data:`RAW_BUDGET` bytes of it, every output
loses its histogram buckets (json+ ``"bins"``). Without ``--raw`` each repetition names the
command that prints its output whole.
"""

from __future__ import annotations

import base64
import gzip
import re
import shlex
from typing import Any

from storbench.analysis.summary import PointSummary
from storbench.model.metrics import DIRECTIONS
from storbench.model.units import fmt_bytes, fmt_duration, fmt_iops, fmt_rate, when
from storbench.report.charts import RunReport
from storbench.report.fmt import fmt_latency
from storbench.report.hosts import host_rows

#: Points of one run whose details a report holds (a 20,000-point run would otherwise make
#: a page of tens of MB); the page says which are left out and how to see them.
MAX_POINT_DETAILS = 500

#: Bytes of compressed raw output one report holds before it leaves out the histogram
#: buckets of fio's json+ output (``"bins"``, summarized by the percentiles).
RAW_BUDGET = 2_000_000

_BINS = re.compile(r'"bins" : \{[^{}]*\}')


def elide_bins(text: str) -> tuple[str, int]:
    """fio's output with every json+ ``"bins"`` object replaced by a string saying how many
    buckets it had (still valid JSON); and the number of buckets left out."""
    left = 0

    def sub(m: re.Match[str]) -> str:
        nonlocal left
        n = m.group(0).count(":") - 1
        left += n
        return f'"bins" : "{n} buckets left out of this report"'

    return _BINS.sub(sub, text), left


def fit_raw_outputs(runs: list[RunReport], run_ctx: list[dict[str, Any]]) -> bool:
    """Keep the report's raw outputs within RAW_BUDGET: past it, every raw output loses its
    histogram buckets (the rest of it stays as fio wrote it). True when that happened."""
    reps = [
        (res, m)
        for res, r in zip(runs, run_ctx, strict=True)
        for p in r["details"]
        for m in p["reps"]
        if m["raw_gz"]
    ]
    if sum(len(m["raw_gz"]) for _, m in reps) <= RAW_BUDGET:
        return False
    for res, m in reps:
        assert res.records is not None  # it has details
        text = res.records.originals([m["measurement"]])[m["measurement"]]["raw_output"] or ""
        short, left = elide_bins(text)
        if left:
            m["raw_gz"], m["elided"] = _gz64(short), left
    return True


def _gz64(text: str) -> str:
    return base64.b64encode(gzip.compress(text.encode(), compresslevel=6, mtime=0)).decode()


def point_details(res: RunReport, *, raw: bool) -> list[dict[str, Any]]:
    """The details of the run's first MAX_POINT_DETAILS points (read on demand: the model's
    ``records``; none for a model without them); with ``raw`` each repetition's raw output
    too."""
    if res.records is None:
        return []
    shown = res.summaries[:MAX_POINT_DETAILS]
    keys = {s.key for s in shown}
    by_key: dict[str, list[Any]] = {}
    for m in res.rows:
        if m.point is not None and m.point.key in keys:
            by_key.setdefault(m.point.key, []).append(m)
    originals = res.records.originals([m.id for ms in by_key.values() for m in ms], raw_output=raw)
    out = []
    for s in shown:
        ms = sorted(by_key.get(s.key, []), key=lambda m: m.point.repetition if m.point else 0)
        out.append(_detail(res, s, [_repetition(res, m, originals[m.id]) for m in ms]))
    return out


def point_detail(
    res: RunReport, s: PointSummary, rows: list[Any], *, gz: bool = True
) -> dict[str, Any]:
    """One point's details with every repetition's raw output (``rows``: its
    measurements): gzip+base64 for the report's page to decompress, or as text (``raw_text``)
    without ``gz``: the web view's point page (storbench.web)."""
    if res.records is None:
        raise ValueError("a point's details are read from the run's records")
    ms = sorted(rows, key=lambda m: m.point.repetition if m.point else 0)
    originals = res.records.originals([m.id for m in ms], raw_output=True)
    reps = []
    for m in ms:
        rep = _repetition(res, m, originals[m.id], gz=gz)
        rep["raw_text"] = None if gz else originals[m.id]["raw_output"]
        reps.append(rep)
    return _detail(res, s, reps)


def _detail(res: RunReport, s: PointSummary, reps: list[dict[str, Any]]) -> dict[str, Any]:
    label = " ".join(f"{k}={v}" for k, v in s.axes.items())
    return {
        "ref": res.anchor(s),
        "title": f"#{s.index + 1} {s.target.label} · {s.workload} {label}".rstrip(),
        "no": s.index + 1,
        "target": s.target.label,
        "target_path": s.target.path,
        "workload": s.workload,
        "label": label,
        "headline": _headline(s),
        "params": {**s.params},
        "reps": reps,
        "failed": s.runs == 0,
    }


def _repetition(res: RunReport, m: Any, raw: dict[str, Any], *, gz: bool = True) -> dict[str, Any]:
    text = raw["raw_output"]
    return {
        "repetition": (m.point.repetition + 1) if m.point else 1,
        "measurement": m.id,
        "status": m.status,
        "error": m.error,
        "started": when(m.started_at),
        "took": fmt_duration(m.ended_at - m.started_at) if m.started_at and m.ended_at else "-",
        "engine": f"{m.engine} {m.engine_version or ''}".strip(),
        "command": _command_text(raw["command"]),
        "job_file": raw["job_file"],
        "raw_gz": _gz64(text) if text and gz else None,
        "raw_size": fmt_bytes(len(text.encode())) if text else None,
        "findings": [f.to_dict() for f in m.measurement.findings],
        "has_raw": raw["has_raw"],  # shown by `storbench show` (the report holds it: --raw)
        "elided": 0,  # histogram buckets left out (see fit_raw_outputs)
        "show": f"storbench show {res.run.id} --point {m.point_idx + 1}",
        "stderr": raw["stderr"],
        "hosts": host_rows(m.measurement),
        "row": m,  # for its time chart (see report/pointcharts.py)
        "timechart": None,
        "timechart_left_out": False,
    }


def _headline(s: PointSummary) -> str:
    if s.only_skipped:
        return s.note
    if s.runs == 0:
        return "failed" + (f": {s.errors[0]}" if s.errors else "")
    parts = []
    for d in DIRECTIONS:
        ds = s.dirs.get(d)
        if ds is None:
            continue
        if ds.latency_metric == "lat":
            lat = f"lat mean {fmt_latency(ds.latency, 'lat', 'mean', 'lat')}"
        else:
            lat = f"p99 {fmt_latency(ds.latency, ds.latency_metric, '99', 'clat')}"
        parts.append(f"{d} {fmt_iops(ds.iops_mean)} IOPS, {fmt_rate(ds.bw_mean)} MiB/s, {lat}")
    return "; ".join(parts)


def _command_text(command: list[str] | list[list[str]] | None) -> str | None:
    """A stored command as shell text: one line per process (rados bench clients)."""
    if not command:
        return None
    argvs = [c for c in command if isinstance(c, list)] or [[str(c) for c in command]]
    return "\n".join(shlex.join(a) for a in argvs)
