"""The report model: everything any presenter shows of a run or of a comparison, read from the
store by one loader (:func:`load_run`, :func:`load_runs`, :func:`load_comparison`).

A run's report holds its row, its per-point summaries (percentiles over repetitions merged
from histograms), its measurements (without raw output), its suite's answer (as data and as
:class:`~storbench.report.fmt.AnswerTable` s, each kind dispatched once, through
:mod:`storbench.hooks`), the engines' advice on its points, its failure drills and its Ceph
clusters and timeline. Presenters (terminal, Markdown, HTML, JSON, the web view) draw it: none
of them queries the store, calls an engine or computes an answer.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from storbench import hooks
from storbench.analysis.drill import drill_row
from storbench.analysis.select import parse_run_spec, select
from storbench.analysis.soak import SeriesSource
from storbench.analysis.summary import (
    PointSummary,
    fill_interval,
    fill_percentiles,
    needs_bins,
    needs_interval,
    summarize,
)
from storbench.model.findings import Finding
from storbench.model.metrics import PERCENTILES, Measurement
from storbench.model.series import Interval
from storbench.report.ceph import CephReport, ceph_report
from storbench.report.drill import DrillRow
from storbench.report.fmt import AnswerTable
from storbench.store import EventRow, MeasurementRow, RunRow, Store


class PointRecords(Protocol):
    """What the model reads of a run's points only when a presenter asks for it (the HTML
    report's and the web view's point details): each measurement's originals (command, job
    file, raw output, stderr), how many intervals each point's time series has, whether a
    point was planned and a point's own series (the web view's interactive chart)."""

    def originals(
        self, measurement_ids: list[int], *, raw_output: bool = True
    ) -> dict[int, dict[str, Any]]: ...

    def interval_counts(self) -> dict[int, int]: ...

    def planned(self, point_idx: int) -> bool: ...

    def series(self, point_idx: int) -> list[Interval]: ...


@dataclass(frozen=True)
class StoredPoints:
    """A stored run's :class:`PointRecords`, read from its store on demand."""

    store: Store
    run_id: int

    def originals(
        self, measurement_ids: list[int], *, raw_output: bool = True
    ) -> dict[int, dict[str, Any]]:
        return self.store.measurements.originals(measurement_ids, raw_output=raw_output)

    def interval_counts(self) -> dict[int, int]:
        return self.store.series.counts(self.run_id)

    def planned(self, point_idx: int) -> bool:
        return any(p.index == point_idx for p in self.store.runs.points(self.run_id))

    def series(self, point_idx: int) -> list[Interval]:
        """The point's own series: the aggregate of its hosts."""
        return self.store.series.of_point(self.run_id, point_idx, host="")


@dataclass(frozen=True)
class FindingRow:
    """A finding of a run's point, as presenters list it: the point (its first number, as
    ``show --point`` counts, from 1), each point number (repetition) that has it, and the
    finding as its first repetition found it."""

    point: int
    label: str
    finding: Finding
    points: tuple[int, ...]

    def to_dict(self) -> dict[str, Any]:
        """The JSON of ``export`` and ``compare``: code, point, evidence, advice (and the
        numbers, the host, the repetitions' point numbers)."""
        f = self.finding.to_dict()
        return {"code": f.pop("code"), "point": self.point, **f, "points": list(self.points)}


def finding_rows(rows: Iterable[MeasurementRow]) -> list[FindingRow]:
    """Each point's findings, a code (and host) once per point with every repetition that
    has it, in the points' order."""
    found: dict[tuple[str, str, str], tuple[MeasurementRow, Finding, list[int]]] = {}
    for m in sorted(rows, key=lambda m: m.point_idx):
        if m.point is None:
            continue
        for f in m.measurement.findings:
            entry = found.setdefault((m.point.key, f.code, f.host), (m, f, []))
            entry[2].append(m.point_idx + 1)
    return [
        FindingRow(
            point=nos[0],
            label=m.point.label() if m.point is not None else "",
            finding=f,
            points=tuple(nos),
        )
        for m, f, nos in sorted(found.values(), key=lambda e: (e[2][0], e[1].code))
    ]


@dataclass
class RunReport:
    """One run (or the points of it a ``RUN:key=value`` filter keeps) as every presenter
    shows it."""

    run: RunRow
    summaries: list[PointSummary]
    rows: list[MeasurementRow] = field(default_factory=list)
    filters: str = ""  # "target=/dev/sdb,bs=4k" when filtered
    selected: tuple[tuple[str, str], ...] = ()  # the same as (key, value) pairs
    tag: str = ""  # tells apart two sides from the same run in one page
    #: a point's intervals by its index (the soak answer is made of them; time charts)
    series: SeriesSource | None = None
    #: the suite's answer as data (analysis/answers.py), None for a run without one
    answer: Any = None
    #: the answer as tables: what every presenter draws of it
    tables: list[AnswerTable] = field(default_factory=list)
    #: the points a report lists in its point table after the answer (all without one)
    rest: list[PointSummary] = field(default_factory=list)
    #: what a reviewer would warn of in these points (the engines' advice)
    advice: list[str] = field(default_factory=list)
    drills: list[DrillRow] = field(default_factory=list)
    #: the run's Ceph clusters and timeline, None without either
    ceph: CephReport | None = None
    #: the run's timeline events (actions, health, cluster state), in time order
    events: list[EventRow] = field(default_factory=list)
    #: what is read on demand of its points (a point's job file and raw output, its time
    #: chart's intervals): the HTML report's point details; None for a model built without
    #: a store (then it has no point details)
    records: PointRecords | None = None
    #: where the run is stored, as messages show it (a URL without its password)
    where: str | None = None

    @property
    def kind(self) -> str | None:
        """The suite report the run's plan asks for (``report:``), None without."""
        kind = self.run.inventory.get("report")
        return str(kind) if kind else None

    @property
    def short(self) -> str:
        return f"run {self.run.id}" + (f" [{self.filters}]" if self.filters else "")

    @property
    def label(self) -> str:
        return f"run {self.run.id}: {self.run.name}" + (
            f" [{self.filters}]" if self.filters else ""
        )

    def anchor(self, s: PointSummary) -> str:
        """The id of a point's detail section in the HTML report."""
        return f"r{self.run.id}{self.tag}-p{s.index + 1}"

    @property
    def findings(self) -> list[FindingRow]:
        """The traps found in its points (model/findings.py), point by point."""
        return finding_rows(self.rows)

    @property
    def warnings(self) -> list[str]:
        """What a comparison warns of in the run: the engines' advice (a run recorded
        before findings) and a line per finding."""
        return self.advice + [
            f"point {row.point} ({row.label}): {row.finding.code}: {row.finding.evidence}"
            for row in self.findings
        ]

    @property
    def hosts(self) -> list[tuple[str, Measurement]]:
        """(point label, measurement) of every measurement that ran on several hosts."""
        return [
            (f"{m.point_idx + 1} {m.point.label() if m.point else ''}".strip(), m.measurement)
            for m in self.rows
            if m.measurement.hosts
        ]


@dataclass
class ComparisonReport:
    """Each later side against the first: what ``compare`` and a report of several runs show."""

    runs: list[RunReport]
    comparisons: list[Any]  # analysis.compare.Comparison, one per later side
    #: per later side, the test-bed settings that differed from the first's (setting, base,
    #: other): analysis/testbed.py
    differences: list[list[tuple[str, Any, Any]]] = field(default_factory=list)
    #: the advice on each run's points, once per run ("run N: ...")
    advice: list[str] = field(default_factory=list)


# --------------------------------------------------------------------------- answers


def answer_of(
    kind: str | None,
    summaries: list[PointSummary],
    inventory: dict[str, Any],
    series: SeriesSource | None = None,
) -> tuple[Any, list[AnswerTable], list[PointSummary]]:
    """The answer of a ``kind`` report (storbench.hooks: its answer, its tables, the points
    left to the point table): (None, [], summaries) for a run without one."""
    hook = hooks.ANSWERS.get(kind) if kind else None
    if hook is None:
        return None, [], summaries
    answer = hooks.resolve(hook.answer)(summaries, inventory, series)
    if answer is None:
        return None, [], summaries
    tables = list(hooks.resolve(hook.tables)(answer))
    rest: Callable[[list[PointSummary]], list[PointSummary]] | None = (
        hooks.resolve(hook.rest) if hook.rest is not None else None
    )
    return answer, tables, (rest(summaries) if rest is not None else [])


def assemble(
    run: RunRow,
    summaries: list[PointSummary],
    rows: list[MeasurementRow] | None = None,
    *,
    series: SeriesSource | None = None,
    drills: list[DrillRow] | None = None,
    ceph: CephReport | None = None,
    events: list[EventRow] | None = None,
    selected: tuple[tuple[str, str], ...] = (),
    answer: bool = True,
    records: PointRecords | None = None,
    where: str | None = None,
) -> RunReport:
    """A run's report from what was read of it (the loader's second half; tests build one
    from summaries alone); without ``answer``, no suite answer (a comparison shows none)."""

    rows = rows or []
    kind = run.inventory.get("report") if answer else None
    found, tables, rest = answer_of(kind, summaries, run.inventory, series)
    points = [m.point for m in rows if m.point is not None] or _points(summaries)
    return RunReport(
        run=run,
        summaries=summaries,
        rows=rows,
        filters=",".join(f"{k}={v}" for k, v in selected),
        selected=selected,
        series=series,
        answer=found,
        tables=tables,
        rest=rest,
        advice=_stored_advice(rows, points),
        drills=drills or [],
        ceph=ceph,
        events=events or [],
        records=records,
        where=where,
    )


def _stored_advice(rows: list[MeasurementRow], points: list[Any]) -> list[str]:
    """The engines' advice on a stored run's points: none for a run recorded with findings
    (the advice is among them, per point); for an older one, what its points' options say,
    without what depends on the machine it is read on (page-cache: this host's memory)."""
    from storbench import engines

    if any(m.measurement.findings for m in rows):
        return []
    return [line for line in engines.advice(points) if "(page-cache)" not in line]


def from_summaries(
    summaries: list[PointSummary],
    *,
    id: int = 1,
    name: str = "run",
    status: str = "completed",
    report: str | None = None,
    inventory: dict[str, Any] | None = None,
    ceph: CephReport | None = None,
) -> RunReport:
    """A run's report from its summaries alone (no store: no measurements, series, drills),
    for presenters fed from elsewhere and for their tests."""
    inv = dict(inventory or {})
    if report is not None:
        inv["report"] = report
    run = RunRow(
        id=id,
        kind="run",
        name=name,
        source="",
        plan_text=None,
        overrides=[],
        status=status,
        started_at=0.0,
        ended_at=None,
        inventory=inv,
        fio_version=None,
        storbench_version=None,
        hostname=None,
        pid=None,
    )
    return assemble(run, summaries, ceph=ceph)


def _points(summaries: Iterable[PointSummary]) -> list[Any]:
    """The points as the engines' advice reads them (workload and options), from summaries."""
    from storbench.plan import Point

    return [Point(s.index, s.key, 0, s.target, s.workload, s.params, s.axes) for s in summaries]


# --------------------------------------------------------------------------- loading


def read_summaries(
    store: Store,
    run_id: int,
    rows: Iterable[MeasurementRow],
    *,
    percentiles: tuple[float, ...] = PERCENTILES,
    dirs: bool = True,
    keys: Collection[str] | None = None,
) -> list[PointSummary]:
    """A run's per-point summaries from ``rows`` (its measurements without histograms), then
    the clat histograms of only the points whose percentiles need merging (repetitions,
    several directions), streamed one point at a time (a big run's histograms as objects are
    hundreds of MiB). Merged percentiles for ``percentiles`` only, per direction only with
    ``dirs``. ``keys``: ``rows`` are every measurement of those points only (histograms
    are read of those only)."""
    summaries = summarize((m.point, m.measurement) for m in rows if m.point is not None)
    need = {s.key: s for s in summaries if needs_bins(s)}
    if need:
        # bins: packed (histpack)
        for key, hists in store.measurements.point_histograms(run_id, "clat", keys):
            s = need.get(key)
            if s is not None:
                fill_percentiles(s, hists, percentiles=percentiles, directions=dirs)
    steps = {s.key: s for s in summaries if needs_interval(s)}
    if steps:
        for key, hists in store.measurements.point_histograms(run_id, "lat", keys):
            s = steps.get(key)
            if s is not None:
                fill_interval(s, hists)
    return summaries


def run_rows(store: Store, limit: int | None = None) -> list[RunRow]:
    """The runs' rows, newest first (``limit``: the newest so many): what a list of runs
    shows without loading any run."""
    return store.runs.all(limit)


def run_row(store: Store, ref: str | int) -> RunRow:
    """Run ``ref``'s row (an id, ``latest``, ``latest~N``); a run that is none raises
    NotFoundError."""
    return store.runs.get(ref)


def point_records(store: Store, ref: str | int) -> PointRecords:
    """Run ``ref``'s point records without loading the run (a point's series for a chart)."""
    return StoredPoints(store, store.runs.resolve(ref))


def load_run(
    store: Store,
    ref: str | int,
    *,
    percentiles: tuple[float, ...] = PERCENTILES,
    dirs: bool = True,
    answer: bool = True,
    light: bool = False,
    _read: dict[int, tuple[RunRow, list[MeasurementRow], list[PointSummary]]] | None = None,
) -> RunReport:
    """The report of run ``ref``: an id, ``latest``, ``latest~N``, optionally with a filter
    that keeps some of its points (``12:target=/dev/sdb``, ``latest:bs=4k,iodepth=32``:
    :mod:`storbench.analysis.select`). ``percentiles`` and ``dirs``: which merged
    percentiles the summaries get (a comparison needs only the p99 of all directions)."""
    spec = parse_run_spec(str(ref))
    run = store.runs.get(spec.run)
    read = _read if _read is not None else {}
    if run.id not in read and light:  # folded as read: only those with findings are kept
        kept: list[MeasurementRow] = []

        def streamed() -> Iterator[MeasurementRow]:
            for m in store.measurements.stream(run.id):
                if m.measurement.findings:
                    kept.append(m)
                yield m

        found = read_summaries(store, run.id, streamed(), percentiles=percentiles, dirs=dirs)
        read[run.id] = (run, kept, found)
    elif run.id not in read:
        rows = store.measurements.of_run(run.id, bins=False)
        read[run.id] = (
            run,
            rows,
            read_summaries(store, run.id, rows, percentiles=percentiles, dirs=dirs),
        )
    run, rows, summaries = read[run.id]
    events = store.events.of_run(run.id)
    if spec.filters:
        summaries = select(summaries, spec.filters, what=f"run {run.id} ({spec.text})")
        keys = {s.key for s in summaries}
        rows = [m for m in rows if m.point is not None and m.point.key in keys]
    return assemble(
        run,
        summaries,
        rows,
        series=store.run_series(run.id),
        drills=[] if light else _drills_of(store, run.id, None if spec.filters else rows),
        ceph=ceph_report(run, events),
        events=events,
        selected=spec.filters,
        answer=answer,
        records=StoredPoints(store, run.id),
        where=store.path,
    )


def load_runs(
    store: Store,
    refs: list[str],
    *,
    percentiles: tuple[float, ...] = PERCENTILES,
    dirs: bool = True,
    answer: bool = True,
    light: bool = False,
) -> list[RunReport]:
    """:func:`load_run` of each ref, each run read once however many of its parts are
    asked for; sides taken from the same run are told apart (``tag``). ``light``: each
    side keeps its summaries and the measurements with findings only (:func:`load_run`):
    a comparison of two 20,000-point runs never holds their measurements."""
    read: dict[int, tuple[RunRow, list[MeasurementRow], list[PointSummary]]] = {}
    runs = [
        load_run(
            store, ref, percentiles=percentiles, dirs=dirs, answer=answer, light=light, _read=read
        )
        for ref in refs
    ]
    ids = [r.run.id for r in runs]
    for i, r in enumerate(runs):
        if ids.count(r.run.id) > 1:
            r.tag = f"s{i + 1}"
    return runs


def side_name(r: RunReport) -> str:
    """What ``compare`` calls a side: ``run 3 (name)``, ``/dev/sdb (run 3)`` for a target."""
    if not r.selected:
        return f"run {r.run.id} ({r.run.name})"
    if len(r.selected) == 1 and r.selected[0][0] == "target":
        return f"{r.selected[0][1]} (run {r.run.id})"
    return f"run {r.run.id} [{r.filters}]"


def compare_runs(runs: list[RunReport], *, names: Callable[[RunReport], str]) -> ComparisonReport:
    """Each of ``runs[1:]`` against ``runs[0]``, the sides named by ``names``."""
    from storbench.analysis import testbed
    from storbench.analysis.compare import compare

    base, others = runs[0], runs[1:]
    advice = [f"run {r.run.id}: {line}" for r in runs for line in r.warnings]
    return ComparisonReport(
        runs=runs,
        comparisons=[
            compare(base.summaries, o.summaries, base_name=names(base), other_name=names(o))
            for o in others
        ],
        differences=[testbed.differences(base.run.inventory, o.run.inventory) for o in others],
        advice=list(dict.fromkeys(advice)),
    )


def load_comparison(store: Store, refs: list[str], *, detail: bool = False) -> ComparisonReport:
    """Each of refs[1:] against refs[0]. ``compare``'s: the p99 of all directions, no suite
    answer, the sides named as ``compare`` names them; with ``detail`` (the HTML report, the
    web view): every percentile of each direction, the answers, the sides named by label."""
    if detail:
        return compare_runs(load_runs(store, refs), names=lambda r: r.label)
    runs = load_runs(store, refs, percentiles=(99.0,), dirs=False, answer=False, light=True)
    return compare_runs(runs, names=side_name)


#: the events a drill report reads
DRILL_EVENTS = ("action", "health", "cluster-io")


def _drills_of(
    store: Store, run_id: int, measured: Iterable[MeasurementRow] | None = None
) -> list[DrillRow]:
    """The drill report of every measured point of the run that had actions; ``measured``:
    the run's measurements when the caller has them already (else read one at a time)."""
    if measured is None:
        measured = store.measurements.stream(run_id)
    rows = [m for m in measured if m.point is not None and m.point.actions]
    if not rows:
        return []
    r = store.runs.get(run_id)
    events = [(e.kind, e.at, e.data) for e in store.events.of_run(run_id) if e.kind in DRILL_EVENTS]
    return [
        drill_row(
            m.point_idx,
            f"point {m.point_idx + 1}: {m.point.label()}" if m.point else "",
            store.series.of_point(run_id, m.point_idx),
            events,
            r.ended_at,
            [m.error] if m.status != "ok" and m.error else [],
            store.host_samples.of_point(run_id, m.point_idx, None),
        )
        for m in rows
    ]
