"""The HTML report: one self-contained file (styles, script and charts inline; no request
leaves the page) with the test bed, the plan, a summary table, charts with hover values and,
one click away from any point, its time chart (charts/timechart.py), fio command and job
file (report/details.py; the raw output too with ``--raw``). A big run's page holds the
first MAX_SUMMARY_POINTS points in its summary table and the details of the first
MAX_POINT_DETAILS, and says how to see the rest.

Escaping: every value from a plan, a host or fio reaches the page through Jinja2 with
autoescape on (and control characters written out, :func:`_visible`), or through
:mod:`storbench.report.charts`, which escapes what it puts into the SVG. Raw fio output is
gzip-compressed and base64-encoded (a 500-point run stays well under 5 MB) and is
decompressed in the page, on opening, into ``textContent`` — never parsed as HTML.
A Content-Security-Policy allows only the page's own script (by nonce), inline styles and
``data:`` images: no request can leave the page, and no injected script could run.
"""

from __future__ import annotations

import datetime as dt
import json
import secrets
import statistics
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from jinja2 import BaseLoader, ChoiceLoader, Environment, PackageLoader, StrictUndefined
from markupsafe import Markup

from storbench import __version__
from storbench.hosts.netbaseline import fmt_bits
from storbench.model.findings import CODES
from storbench.model.metrics import DIRECTIONS, PERCENTILES, pct_key
from storbench.model.units import fmt_bytes, fmt_duration, fmt_iops, fmt_rate
from storbench.report import charts, pointcharts
from storbench.report.ceph import OSD_HEADERS, POOL_HEADERS, CephReport
from storbench.report.details import (  # noqa: F401  (point_detail: the web view's)
    MAX_POINT_DETAILS,
    fit_raw_outputs,
    point_detail,
    point_details,
    when,
)
from storbench.report.drill import drill_tables
from storbench.report.fmt import (
    AnswerTable,
    SummaryLead,
    came_from,
    fmt_direction_latency,
    fmt_spread,
    ran_between,
)
from storbench.report.htmlcompare import comparison_context
from storbench.report.model import ComparisonReport, RunReport
from storbench.report.safe import visible

#: Chart kinds a report shows, in this order, when the runs have data for them (latency
#: against numjobs is left to `storbench chart`: seed 000 shows IOPS and bandwidth there).
REPORT_KINDS = (
    "iops-vs-iodepth",
    "bw-vs-iodepth",
    "lat-vs-iodepth",
    "iops-vs-numjobs",
    "bw-vs-numjobs",
    "iops-vs-bs",
    "bw-vs-bs",
    "lat-percentiles",
    "compare",
)

_SECTION_TITLES = {
    "iodepth": "Against queue depth (iodepth)",
    "numjobs": "Against the number of jobs (numjobs)",
    "bs": "Against the block or object size (bs)",
    "lat-percentiles": "Latency percentiles",
    "compare": "Comparison charts",
}


def _visible(value: Any) -> Any:
    """Every value a template prints, with its control characters written out (safe.visible):
    invisible in a browser, they would still reach a terminal that shows the file, and an SVG
    (XML) cannot hold them. Escaped text stays escaped: the replacements are plain ASCII."""
    if isinstance(value, Markup):
        return Markup(visible(str(value)))
    return visible(value) if isinstance(value, str) else value


def template_env(*first: BaseLoader) -> Environment:
    """The report's Jinja2 environment: autoescape, control characters written out; ``first``
    are loaders searched before the report's templates (the web view's pages, storbench.web,
    which include the report's sections: answer.html, summary.html, charts.html, ...)."""
    env = Environment(
        loader=ChoiceLoader([*first, PackageLoader("storbench.report", "templates")]),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        finalize=_visible,
    )
    return env


# --------------------------------------------------------------------------- inventory


def _inv_value(key: str, value: Any) -> Any:
    """Inventory values as people read them; nested structures stay nested."""
    if isinstance(value, dict):
        return {k: _inv_value(k, v) for k, v in value.items() if v not in (None, "", [], {})}
    if isinstance(value, list):
        return [_inv_value(key, v) for v in value]
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int) and key.endswith("_bytes") and value >= 1024:
        return f"{fmt_bytes(value)} ({value:,} bytes)"
    if isinstance(value, int | float) and key.endswith("_bits_per_s"):  # the network baseline
        return f"{fmt_bits(value)} ({value:,.0f} bits/s)"
    return value


def _flat(d: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested dicts as dotted keys (``disk.model``); lists of dicts stay as they are."""
    out: dict[str, Any] = {}
    for k, v in d.items():
        if isinstance(v, dict):
            out.update(_flat(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


def _side_by_side(dicts: list[dict[str, Any] | None]) -> list[tuple[str, list[Any]]]:
    """Rows of (key, value of each column) over the union of keys, in first-seen order."""
    flat = [_flat(d) if isinstance(d, dict) else {} for d in dicts]
    keys = list(dict.fromkeys(k for f in flat for k in f))
    rows = [(k, [f.get(k, "") for f in flat]) for k in keys]
    return [(k, vals) for k, vals in rows if any(v not in ("", None) for v in vals)]


def _testbed(ctx_runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The runs side by side: run facts and the host inventory, a column per run."""
    facts = [
        {
            "status": f"{r['status']} ({r['measured']} of {r['points']} points measured"
            + (f", {r['failed']} failed" if r["failed"] else "")
            + ")",
            "kind": f"{r['kind']} from {r['source']}",
            "started": f"{r['started']}, took {r['took']}",
            "fio ran": r["fio_ran"] and f"{r['fio_ran']} (the imported outputs' timestamps)",
            "fio": r["fio_version"],
            "storbench": r["storbench_version"],
            "recorded on": r["hostname"],
            "came from": "; ".join(r["came_from"]),
            "overrides": r["overrides"],
        }
        for r in ctx_runs
    ]
    multi = len(ctx_runs) > 1
    targets = [(r["label"], t) for r in ctx_runs for t in r["targets"]]
    return {
        "labels": [r["label"] for r in ctx_runs],
        "facts": _side_by_side(facts),
        "host": _side_by_side([r["host"] for r in ctx_runs]),
        "target_labels": [
            (f"{label}: " if multi else "") + str(t.get("name") or t.get("path"))
            for label, t in targets
        ],
        "targets": _side_by_side([t for _, t in targets]),
    }


# --------------------------------------------------------------------------- summary table


@dataclass
class SummaryTable:
    columns: list[str]  # lead columns (target, workload, axes, n)
    rows: list[dict[str, Any]] = field(default_factory=list)
    show_err: bool = False
    left_out: int = 0  # points past MAX_SUMMARY_POINTS, not in the table


#: Points of a run one report's summary table holds (the first, in plan order): 20,000
#: points would be 8 MB of table; the page says how to see the others.
MAX_SUMMARY_POINTS = 2000


def _lat_cell(ds: Any, which: str) -> str:
    """A latency cell of a direction: its clat, or its lat marked "(lat)" when the engine
    gives no clat (rados bench: no percentiles either, shown as —)."""
    return fmt_direction_latency(ds, which, "clat")


def summary_table(res: RunReport) -> SummaryTable:
    """The run's first MAX_SUMMARY_POINTS points, a row per direction; a point's number
    links to its details when the page holds them (the first MAX_POINT_DETAILS)."""
    ss = res.summaries[:MAX_SUMMARY_POINTS]
    layout = SummaryLead.of(ss)
    t = SummaryTable(
        columns=layout.columns(),
        show_err=any(s.failed or s.skipped for s in ss),
        left_out=len(res.summaries) - len(ss),
    )
    for n, s in enumerate(ss):
        lead = layout.cells(s, failed_note=True)
        dirs = [d for d in DIRECTIONS if d in s.dirs] or ["-"]
        for i, d in enumerate(dirs):
            ds = s.dirs.get(d)
            t.rows.append(
                {
                    "first": i == 0,
                    "span": len(dirs),
                    "ref": res.anchor(s),
                    "detailed": n < MAX_POINT_DETAILS,  # the page holds its details
                    "no": s.index + 1,
                    "lead": lead,
                    "dir": d,
                    "iops": fmt_iops(ds.iops_mean) if ds else "-",
                    # the terminal's and Markdown's spread: the 95 % CI's half width
                    "sd": fmt_spread(ds.iops_spread) if ds and s.runs > 1 else "",
                    "mibs": fmt_rate(ds.bw_mean) if ds else "-",
                    "mean": _lat_cell(ds, "mean"),
                    "p50": _lat_cell(ds, "50"),
                    "p99": _lat_cell(ds, "99"),
                    "p999": _lat_cell(ds, "99.9"),
                    "failed": s.runs == 0 and not s.only_skipped,
                    "error": s.note if i == 0 else "",
                }
            )
    return t


# --------------------------------------------------------------------------- plan


def _plan_axes(res: RunReport) -> list[tuple[str, str, str]]:
    """(workload, axis, values) for every swept option, in plan order."""
    seen: dict[tuple[str, str], list[str]] = {}
    for s in res.summaries:
        for k, v in s.axes.items():
            vals = seen.setdefault((s.workload, k), [])
            if str(v) not in vals:
                vals.append(str(v))
    return [(w, k, ", ".join(v)) for (w, k), v in seen.items()]


def _fixed_params(res: RunReport) -> list[tuple[str, str]]:
    """(workload, options) of each workload: its options that are the same at every point."""
    by_wl: dict[str, list[dict[str, Any]]] = {}
    for s in res.summaries:
        by_wl.setdefault(s.workload, []).append(s.params)
    out = []
    for wl, plist in by_wl.items():
        common = {k: v for k, v in plist[0].items() if all(p.get(k) == v for p in plist[1:])}
        out.append((wl, " ".join(f"{k}={v}" for k, v in common.items())))
    return out


# --------------------------------------------------------------------------- charts


def _charts(runs: list[RunReport], cmps: list[Any]) -> list[dict[str, Any]]:
    have = set(charts.available_kinds(runs))
    built: list[tuple[str, charts.Chart]] = []
    for kind in (k for k in REPORT_KINDS if k in have):
        if kind == "compare":
            chart = charts.compare_chart(runs, cmps)
            if not chart.panels:
                continue
        else:
            chart = charts.build_chart(kind, runs)
        built.append((kind, chart))
    svgs = charts.render_inline_svgs([(c, f"c{i}-") for i, (_, c) in enumerate(built)])
    sections: dict[str, dict[str, Any]] = {}
    for (kind, chart), svg in zip(built, svgs, strict=True):
        group = kind.split("-vs-")[1] if "-vs-" in kind else kind
        sec = sections.setdefault(
            group, {"id": f"charts-{group}", "title": _SECTION_TITLES[group], "charts": []}
        )
        sec["charts"].append(
            {
                "id": f"chart-{kind}",
                "kind": kind,
                "title": chart.title,
                "svg": Markup(svg),  # built by charts/draw.py, which escapes all it inserts
                "note": chart.note,
                "marks": chart.marks,
            }
        )
    return list(sections.values())


# --------------------------------------------------------------------------- the page


def _run_context(res: RunReport, *, raw: bool = False, details: bool = True) -> dict[str, Any]:
    """What the report shows of one run; ``details``: with the points' details (their job
    files, and with ``raw`` their raw outputs, read on demand: the model's records), which
    the web view shows a page per point instead."""
    r = res.run
    inv = dict(r.inventory)
    host = inv.pop("host", None)
    targets = inv.pop("targets", None)
    report = inv.pop("report", None)
    inv.pop("ceph", None)  # shown in its own section (report/ceph.py)
    inv.pop("provenance", None)  # with the run's facts: came_from
    return {
        "id": r.id,
        "label": res.label,
        "name": r.name,
        "kind": r.kind,
        "status": r.effective_status,
        "source": r.source,
        "started": when(r.started_at),
        "ended": when(r.ended_at),
        "took": fmt_duration(r.ended_at - r.started_at) if r.ended_at else "-",
        "fio_version": r.fio_version or "-",
        "storbench_version": r.storbench_version or "-",
        "hostname": r.hostname or "-",
        "came_from": came_from(r.inventory),
        "fio_ran": ran_between(res.rows) if r.kind == "import" else None,
        "overrides": " ".join(r.overrides),
        "points": r.points,
        "measured": r.measured,
        "failed": r.failed,
        "suite_report": report,
        "host": _inv_value("host", host) if isinstance(host, dict) else None,
        "targets": [_flat(_inv_value("target", t)) for t in targets or [] if isinstance(t, dict)],
        "inventory_rest": _inv_value("inventory", inv),
        "plan_text": r.plan_text,
        "axes": _plan_axes(res),
        "fixed": _fixed_params(res),
        "summary": summary_table(res),
        "findings": finding_context(res),
        "details": point_details(res, raw=raw) if details else [],
        "details_left_out": max(0, len(res.summaries) - MAX_POINT_DETAILS) if details else 0,
        "ceph": _ceph_context(res.ceph),
    }


def finding_context(res: RunReport) -> list[dict[str, Any]]:
    """The run's findings for findings.html: each with its point's number and anchor, the
    code and what it means, the evidence and the fix."""
    out = []
    for row in res.findings:
        f = row.finding
        known = CODES.get(f.code)
        out.append(
            {
                "no": row.point,
                "ref": f"r{res.run.id}{res.tag}-p{row.point}",
                "label": row.label,
                "points": ", ".join(map(str, row.points)) if len(row.points) > 1 else "",
                "code": f.code,
                "title": known.title if known is not None else "",
                "host": f.host,
                "evidence": f.evidence,
                "advice": f.advice,
            }
        )
    return out


def _ceph_context(report: CephReport | None) -> dict[str, Any] | None:
    """The run's Ceph clusters and timeline (None without either); each event's details as
    indented JSON, shown as text."""
    if report is None:
        return None
    return {
        "clusters": report.clusters,
        "osd_headers": OSD_HEADERS,
        "osd_right": {6, 7},
        "pool_headers": POOL_HEADERS,
        "pool_right": {2, 3, 4, 7, 8, 9},
        "timeline": [
            {
                "offset": row.offset,
                "clock": row.clock,
                "kind": row.kind,
                "message": row.message,
                "data": json.dumps(row.data, indent=1, default=str) if row.data else "",
            }
            for row in report.timeline
        ],
    }


def _answers(
    runs: list[RunReport], draw: bool = True
) -> list[tuple[str, list[AnswerTable], list[dict[str, Any]]]]:
    """Each run's suite answer, as the report model's tables, and (``draw``) the charts
    drawn beside them: a capacity search's latency against offered load (charts/capacity.py)."""
    shown = [res for res in runs if res.tables]
    built = [
        (i, charts.build_chart("capacity", [res]))
        for i, res in enumerate(shown)
        if draw and charts.has_searches([res])
    ]
    svgs = charts.render_inline_svgs([(c, f"a{i}-") for i, c in built])
    figures: dict[int, list[dict[str, Any]]] = {}
    for (i, chart), svg in zip(built, svgs, strict=True):
        figures.setdefault(i, []).append(
            {
                "id": f"chart-capacity-{i}",
                "kind": "capacity",
                "title": chart.title,
                "svg": Markup(svg),  # built by charts/draw.py, which escapes all it inserts
                "note": chart.note,
            }
        )
    return [(res.label, res.tables, figures.get(i, [])) for i, res in enumerate(shown)]


def _headline_figures(runs: Iterable[RunReport]) -> list[tuple[str, str]]:
    out = []
    for res in runs:
        ok = [s for s in res.summaries if s.runs]
        if not ok:
            continue
        best = max(ok, key=lambda s: s.total_iops)
        out.append(
            (
                res.label,
                f"{len(ok)} points measured; most IOPS: {fmt_iops(best.total_iops)} at "
                f"{best.target.label} {best.workload} "
                + " ".join(f"{k}={v}" for k, v in best.axes.items())
                + (
                    f"; median of points {fmt_iops(statistics.median(s.total_iops for s in ok))}"
                    if len(ok) > 2
                    else ""
                ),
            )
        )
    return out


def _drills(runs: list[RunReport]) -> list[tuple[str, list[AnswerTable], list[Any]]]:
    """Each run's failure drills (report/drill.py), beside the suites' answers."""
    return [(f"{r.label}: failure drills", drill_tables(r.drills), []) for r in runs if r.drills]


def render_report(store: Any, refs: list[str], *, raw: bool = False) -> str:
    """The whole report of runs ``refs`` as one HTML page: ids, ``latest``, ``latest~N``,
    each optionally filtered (``12:target=/dev/sdb``, see :func:`model.load_run`); with
    ``raw``, each point's raw engine output in its details."""
    from storbench.report import present

    return present.render(HtmlPresenter(raw=raw), store, refs, detail=True)


def render_runs(
    runs: list[RunReport],
    comparison: ComparisonReport | None = None,
    *,
    raw: bool = False,
) -> str:
    context = report_context(runs, comparison, raw=raw)
    return template_env().get_template("report.html").render(**context)


@dataclass(frozen=True)
class HtmlPresenter:
    """``report --format html``: one self-contained page; ``raw``: with each point's raw
    engine output. Point details (job files, raw outputs, time charts) are read on demand
    from the model's records."""

    raw: bool = False
    name: str = "html"

    def run(self, report: RunReport) -> str:
        return render_runs([report], raw=self.raw)

    def comparison(self, report: ComparisonReport) -> str:
        return render_runs(report.runs, report, raw=self.raw)


PRESENTER = HtmlPresenter()


def report_context(
    runs: list[RunReport],
    comparison: ComparisonReport | None = None,
    *,
    details: bool = True,
    draw: bool = True,
    raw: bool = False,
) -> dict[str, Any]:
    """What report.html shows of ``runs`` (the first the base of ``comparison``); without
    ``details`` no point's details (nor raw output, job file, time chart): the web view's
    run and compare pages, which link to a page per point instead; without ``draw`` no
    charts (the web view's page of a big run draws them when asked); with ``raw`` the
    engines' raw outputs in the points' details."""
    cmps = comparison.comparisons if comparison is not None else []
    title = "storbench report: " + (
        runs[0].label if len(runs) == 1 else " vs ".join(r.label for r in runs)
    )
    run_ctx = [_run_context(res, raw=raw, details=details) for res in runs]
    elided = fit_raw_outputs(runs, run_ctx)
    left_out = pointcharts.time_charts(runs, run_ctx) if details else 0
    return {
        "title": title,
        "testbed": _testbed(run_ctx),
        "generated": dt.datetime.now().strftime("%Y-%m-%d %H:%M:%S"),
        "version": __version__,
        "nonce": secrets.token_urlsafe(18),
        "runs": run_ctx,
        "raw": raw,
        "raw_elided": elided,
        "max_details": MAX_POINT_DETAILS,
        "max_summary": MAX_SUMMARY_POINTS,
        "timecharts_left_out": left_out,
        "max_time_charts": pointcharts.MAX_TIME_CHARTS,
        "headlines": _headline_figures(runs),
        "answers": _answers(runs, draw) + _drills(runs),
        "chart_sections": _charts(runs, cmps) if draw else [],
        "comparison": comparison_context(comparison) if comparison is not None else [],
        # one run's warnings (a comparison says those of both runs in its own section)
        "advice": runs[0].advice if len(runs) == 1 else [],
        "percentiles": [f"p{pct_key(p)}" for p in PERCENTILES],
        "has_ceph": any(r["ceph"] and r["ceph"]["clusters"] for r in run_ctx),
        "has_timeline": any(r["ceph"] and r["ceph"]["timeline"] for r in run_ctx),
    }
