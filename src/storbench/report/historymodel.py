"""The history report model (``storbench history``, the web view's history page): which
runs it follows, read from the store, and their points' history (analysis/history.py).

Selecting: runs named on the command line (ids, ``latest~N``), or every run of one plan
(its ``name:``; by default the newest run's), kept when they carry every label asked for
(``--label ceph=19.2.1``), newest ``last`` of them, oldest first. A run still running, or
one with nothing measured, is left out unless named."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from storbench import nogc
from storbench.analysis.history import FIGURES, History, RunEntry, follow
from storbench.analysis.summary import PointSummary, fill_percentiles, needs_bins, summarize
from storbench.model.errors import UserError
from storbench.report.model import load_run
from storbench.store import RunRow, Store

#: the runs a history follows when not told how many
LAST = 10
#: the most runs one history follows (each is loaded: a table per run is no longer a table)
MOST = 100


@dataclass
class HistoryReport:
    """A history and what it was asked for: the figure its table and chart show."""

    history: History
    figure: str = "iops"
    #: what selected the runs, as a sentence ("runs of plan 'nightly' labelled ceph=19.2.1")
    selection: str = ""
    #: the runs the selection matched but left out (still running, nothing measured), why
    left_out: list[str] = field(default_factory=list)


def labels_of(row: RunRow) -> dict[str, str]:
    labels = row.inventory.get("labels")
    return {str(k): str(v) for k, v in labels.items()} if isinstance(labels, dict) else {}


def _selected(
    store: Store, refs: list[str], plan: str | None, labels: dict[str, str]
) -> tuple[list[RunRow], str, bool]:
    """The rows the selection names, newest first; what it was; whether they were named."""
    if refs:  # a run named twice (`6 latest`) is followed once
        rows = list({row.id: row for row in (store.runs.get(r) for r in refs)}.values())
        return rows, "runs " + ", ".join(refs), True
    every = store.runs.all(None)
    if plan is None:
        if labels:  # runs of any plan that carry the labels
            return every, "runs", False
        if not every:
            raise UserError(
                "the database holds no run", fix="run a plan first: storbench run quick"
            )
        plan = every[0].name
    return [r for r in every if r.name == plan], f"runs of plan {plan!r}", False


def select_runs(
    store: Store,
    refs: list[str],
    *,
    plan: str | None = None,
    labels: dict[str, str] | None = None,
    last: int = LAST,
) -> tuple[list[RunRow], str, list[str]]:
    """The runs a history follows, oldest first; the selection as a sentence; the runs it
    left out, each with why."""
    if not 1 <= last <= MOST:
        raise UserError(f"--last {last}: a history follows 1 to {MOST} runs", fix="--last 10")
    wanted = labels or {}
    rows, said, named = _selected(store, refs, plan, wanted)
    if wanted:
        said += " labelled " + ", ".join(f"{k}={v}" for k, v in wanted.items())
        rows = [r for r in rows if all(labels_of(r).get(k) == v for k, v in wanted.items())]
    kept, left = [], []
    for r in rows:
        why = None if named else _why_left_out(r)
        if why:
            left.append(f"run {r.id}: {why}")
        else:
            kept.append(r)
    if not kept:
        raise UserError(
            f"no run to follow: {said} matched none"
            + (f" ({'; '.join(left[:3])})" if left else ""),
            fix="storbench runs lists the runs, their names and labels; name runs by id",
        )
    kept.sort(key=lambda r: (r.started_at, r.id), reverse=True)
    return sorted(kept if named else kept[:last], key=lambda r: (r.started_at, r.id)), said, left


def _why_left_out(r: RunRow) -> str | None:
    if r.effective_status == "running":
        return "still running"
    if r.measured == 0:
        return "nothing measured"
    return None


def load_history(
    store: Store,
    refs: list[str],
    *,
    plan: str | None = None,
    labels: dict[str, str] | None = None,
    last: int = LAST,
    figure: str = "iops",
    by: str | None = None,
) -> HistoryReport:
    """The history of the runs selected (:func:`select_runs`), ``figure`` shown; with
    ``by``, the runs that share a value of that label pooled as one (analysis/history.py)."""
    if figure not in FIGURES:
        raise UserError(f"no figure {figure!r}", fix=f"one of: {', '.join(FIGURES)}")
    rows, said, left = select_runs(store, refs, plan=plan, labels=labels, last=last)
    groups = [[row] for row in rows]
    if by is not None:
        groups, unlabelled = _grouped(rows, by)
        left += [f"run {r.id}: no label {by!r}" for r in unlabelled]
        said += f", by {by}"
    with nogc.paused():  # many runs' summaries are many objects and no cycles
        runs = [_entry(store, group, by) for group in groups]
        return HistoryReport(follow(runs), figure=figure, selection=said, left_out=left)


def _grouped(rows: list[RunRow], by: str) -> tuple[list[list[RunRow]], list[RunRow]]:
    """The runs by their value of label ``by``, in the order of each value's first run;
    and the runs without that label."""
    groups: dict[str, list[RunRow]] = {}
    for row in rows:
        value = labels_of(row).get(by)
        if value is not None:
            groups.setdefault(value, []).append(row)
    if not groups:
        raise UserError(
            f"no run of the selection has the label {by!r}",
            fix=f"label runs with `run --label {by}=VALUE` (or `labels:` in the plan)",
        )
    return list(groups.values()), [r for r in rows if labels_of(r).get(by) is None]


def _entry(
    store: Store, group: list[RunRow], by: str | None
) -> tuple[RunEntry, list[PointSummary]]:
    first, last = group[0], group[-1]
    if len(group) == 1:
        summaries = load_run(
            store, str(first.id), percentiles=(99.0,), dirs=False, answer=False, light=True
        ).summaries
    else:
        summaries = _pooled(store, [r.id for r in group])
    entry = RunEntry(
        id=first.id,
        name=first.name,
        started_at=first.started_at,
        status=first.effective_status,
        labels=labels_of(first),
        inventory=first.inventory,
        runs=tuple(r.id for r in group) if by is not None else (),
        group=f"{by}={labels_of(first)[by]}" if by is not None else "",
        last_inventory=last.inventory,
    )
    return entry, summaries


def _pooled(store: Store, run_ids: list[int]) -> list[PointSummary]:
    """The points of several runs as one run's: each point's repetitions in all of them
    (matched by point key: the same plan on the same targets), its p99 from the merged
    histograms of all."""
    rows = [m for rid in run_ids for m in store.measurements.of_run(rid, bins=False)]
    summaries = summarize((m.point, m.measurement) for m in rows if m.point is not None)
    need = {s.key: s for s in summaries if needs_bins(s)}
    hists: dict[str, list[tuple[str, Any]]] = {}
    for rid in run_ids if need else []:
        for key, found in store.measurements.point_histograms(rid, "clat"):
            if key in need:
                hists.setdefault(key, []).extend(found)
    for key, found in hists.items():
        fill_percentiles(need[key], found, percentiles=(99.0,), directions=False)
    return summaries
