"""The history report model (``storbench history``, the web view's history page): which
runs it follows, read from the store, and their points' history (analysis/history.py).

Selecting: runs named on the command line (ids, ``latest~N``), or every run of one plan
(its ``name:``; by default the newest run's), kept when they carry every label asked for
(``--label ceph=19.2.1``), newest ``last`` of them, oldest first. A run still running, or
one with nothing measured, is left out unless named."""

from __future__ import annotations

from dataclasses import dataclass, field

from storbench import nogc
from storbench.analysis.history import FIGURES, History, RunEntry, follow
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
    if refs:
        rows = [store.runs.get(r) for r in refs]
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
) -> HistoryReport:
    """The history of the runs selected (:func:`select_runs`), ``figure`` shown."""
    if figure not in FIGURES:
        raise UserError(f"no figure {figure!r}", fix=f"one of: {', '.join(FIGURES)}")
    rows, said, left = select_runs(store, refs, plan=plan, labels=labels, last=last)
    with nogc.paused():  # many runs' summaries are many objects and no cycles
        runs = []
        for row in rows:
            res = load_run(
                store, str(row.id), percentiles=(99.0,), dirs=False, answer=False, light=True
            )
            entry = RunEntry(
                id=row.id,
                name=row.name,
                started_at=row.started_at,
                status=row.effective_status,
                labels=labels_of(row),
                inventory=row.inventory,
            )
            runs.append((entry, res.summaries))
        return HistoryReport(follow(runs), figure=figure, selection=said, left_out=left)
