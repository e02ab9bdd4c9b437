"""Readable series in charts of several runs and of many-variant sweeps.

- **What a line of a run is called** (:func:`run_labels`): what tells the run apart from
  the others drawn with it, not ``run 7: matrix`` (two runs of one suite share the name).
  The first of these that differs between the runs, then the next, until every run has a
  label of its own: the run's name; its filter (``12:target=/dev/sdb`` against
  ``12:target=/dev/sdc``); its target; the workload options each run sets to one value
  but the runs set differently (``direct=0`` against ``direct=1``); a setting of the test
  bed (``scheduler=none``, when one or two differ: analysis/testbed.py). What nothing
  tells apart is called by its run id (``run 7``). The hover text of every point still
  names its run in full.
- **At most MAX_SERIES lines a panel** (:func:`split_crowded`): a panel with more is drawn
  as several, the chart's series cut, in legend order, into even groups of at most
  MAX_SERIES; each panel's title adds the lines it holds, and each panel has its own
  legend, a series keeping its colour in every panel.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import replace

from storbench.analysis import testbed
from storbench.analysis.matching import constant_options
from storbench.report.charts.model import MAX_SERIES, Chart, Line, Panel, RunReport

#: Most test-bed settings a label names: more say that the test beds are others altogether.
MAX_TESTBED_SETTINGS = 2
#: Longest value of a setting in a label (cut with an ellipsis).
MAX_VALUE = 24


def run_labels(runs: list[RunReport]) -> list[str]:
    """What each run is called in a chart of these runs (module doc), in their order."""
    if len(runs) < 2:
        return [r.label for r in runs]
    parts: list[list[str]] = [[] for _ in runs]
    labels: list[str] = []
    for texts in _distinctions(runs):
        for part, text in zip(parts, texts, strict=True):
            if text:
                part.append(text)
        # a run that nothing named yet (the side of a run without a filter): its id
        labels = [", ".join(p) or f"run {r.run.id}" for r, p in zip(runs, parts, strict=True)]
        if len(set(labels)) == len(labels):
            return labels
    labels = [", ".join([f"run {r.run.id}", *p]) for r, p in zip(runs, parts, strict=True)]
    if len(set(labels)) < len(labels):  # the same run twice, as it is
        labels = [f"{label} (#{i + 1})" for i, label in enumerate(labels)]
    return labels


def _distinctions(runs: list[RunReport]) -> Iterator[list[str]]:
    """Texts that tell the runs apart, one list per way of telling (in the order of the
    module doc), each only when its texts are not all the same."""
    for texts in (
        [r.run.name for r in runs],
        [r.filters for r in runs],
        [_targets(r) for r in runs],
        _options(runs),
        _settings(runs),
    ):
        if len(set(texts)) > 1:
            yield texts


def _targets(res: RunReport) -> str:
    return " + ".join(dict.fromkeys(s.target.label for s in res.summaries))


def _options(runs: list[RunReport]) -> list[str]:
    """``key=value`` of each option every run sets to one value, not the same in all."""
    consts = [constant_options(r.summaries) for r in runs]
    keys = [k for k in consts[0] if all(k in c for c in consts[1:])]
    keys = [k for k in keys if len({c[k] for c in consts}) > 1]
    return [", ".join(f"{k}={c[k]}" for k in keys) for c in consts]


def _settings(runs: list[RunReport]) -> list[str]:
    """``setting=value`` of the test-bed settings that differ from the first run's, when
    there are at most MAX_TESTBED_SETTINGS; empty texts otherwise."""
    base = runs[0].run.inventory
    diffs = [{k: (a, b) for k, a, b in testbed.differences(base, r.run.inventory)} for r in runs]
    keys = list(dict.fromkeys(k for d in diffs for k in d))
    if not keys or len(keys) > MAX_TESTBED_SETTINGS:
        return ["" for _ in runs]
    first = {k: next(d[k][0] for d in diffs if k in d) for k in keys}
    return [
        ", ".join(f"{_setting_name(k)}={_value(d[k][1] if k in d else first[k])}" for k in keys)
        for d in diffs
    ]


def _setting_name(key: str) -> str:
    """A test-bed setting by its own name: ``vm.dirty_ratio`` of
    ``host.tuning.sysctl.vm.dirty_ratio``, ``scheduler`` of a disk's."""
    if ".sysctl." in key:
        return key.split(".sysctl.", 1)[1]
    return key.rsplit(".", 1)[-1]


def _value(v: object) -> str:
    text = "(none)" if v is None else str(v)
    return text if len(text) <= MAX_VALUE else text[: MAX_VALUE - 1] + "…"


# --------------------------------------------------------------------------- crowded panels


def split_crowded(chart: Chart, most: int = MAX_SERIES) -> Chart:
    """``chart`` with no panel of more than ``most`` lines (module doc); as it is when none
    has more."""
    if all(len(p.lines) <= most for p in chart.panels):
        return chart
    keys = list(
        dict.fromkeys(
            [k for k, _ in chart.legend] + [ln.key for p in chart.panels for ln in p.lines]
        )
    )
    size = math.ceil(len(keys) / math.ceil(len(keys) / most))
    group = {k: divmod(i, size) for i, k in enumerate(keys)}  # (group, place in it)
    panels: list[Panel] = []
    for p in chart.panels:
        by_group: dict[int, list[Line]] = {}
        for line in p.lines:
            g, place = group[line.key]
            line.color = place
            by_group.setdefault(g, []).append(line)
        for _, lines in sorted(by_group.items()):
            panels.append(replace(p, title=_group_title(p.title, lines), lines=lines))
    chart.panels = panels
    chart.panel_legends = True
    return chart


def _group_title(title: str, lines: list[Line]) -> str:
    held = lines[0].label if len(lines) == 1 else f"{lines[0].label} … {lines[-1].label}"
    return f"{title} · {held}" if title else held
