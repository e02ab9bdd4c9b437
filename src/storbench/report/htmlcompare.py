"""The comparison of runs in the HTML report (templates/comparison.html): each later run
against the first, read from the top — the summary in words (geometric means of the
ratios with their intervals, the significant verdicts, the points not comparable), what a reviewer
would warn of in either run (the engines' advice: iodepth with a synchronous ioengine makes
the changes along iodepth noise), the options the runs were set to differently, the averages
and every point; and what differed between the two test beds, shown in the report's test
bed section after the charts (the same settings ``storbench compare`` lists and its JSON
holds as ``testbed_differences``).

Everything here is text for the template, which escapes it (autoescape).
"""

from __future__ import annotations

from typing import Any

from storbench.analysis.compare import BETTER, WORSE, Comparison
from storbench.analysis.summary import PointSummary
from storbench.model.units import fmt_iops
from storbench.report.comparison import (
    changes_note,
    differs_sentence,
    group_rows,
    lat_changes,
    p99_header,
    pair_note,
    summary_lines,
    verdict_cell,
)
from storbench.report.fmt import fmt_p, fmt_pct
from storbench.report.model import ComparisonReport, RunReport


def testbed_rows(diffs: list[tuple[str, Any, Any]]) -> list[dict[str, str]]:
    """Each setting of the host, the targets' disks or the Ceph cluster that differed
    between the two runs (analysis/testbed.py), as the terminal shows its values."""
    return [{"setting": k, "base": _shown(a), "other": _shown(b)} for k, a, b in diffs]


def _warnings(sides: list[tuple[str, list[str]]]) -> list[tuple[str, str]]:
    """(runs, line) for each line of advice: a line both runs get is said once, of both."""
    by_line: dict[str, list[str]] = {}
    for label, lines in sides:
        for line in lines:
            by_line.setdefault(line, []).append(label)
    return [(" and ".join(dict.fromkeys(labels)), line) for line, labels in by_line.items()]


def _shown(value: Any) -> str:
    return "(none)" if value is None else str(value)


def _axes(s: PointSummary) -> str:
    return " ".join(f"{k}={v}" for k, v in s.axes.items())


#: Matched points one comparison table of the report lists (the first, in the base run's
#: order); the page says how many more there are and where to see them.
MAX_ROWS = 2000


def _tone(verdict: str) -> str:
    """The colour of a row's verdict: only a significant one has one."""
    return "good" if verdict == BETTER else "bad" if verdict == WORSE else ""


def _rows(base: RunReport, other: RunReport, cmp: Comparison) -> list[dict[str, Any]]:
    p99_label = p99_header(cmp)
    rows = []
    for m in cmp.matched[:MAX_ROWS]:
        lat, clat, p99 = lat_changes(m, p99_label)
        rows.append(
            {
                "label": m.label,
                "base_ref": base.anchor(m.base),
                "other_ref": other.anchor(m.other),
                "base_iops": fmt_iops(m.base.total_iops) if m.base.runs else "-",
                "other_iops": fmt_iops(m.other.total_iops) if m.other.runs else "-",
                "iops": fmt_pct(m.iops_change_pct),
                "bw": fmt_pct(m.bw_change_pct),
                "lat": lat,
                "clat": clat,
                "p99": p99,
                "tone": _tone(m.verdict),
                "comparable": m.comparable,
                "verdict": verdict_cell(m),
                "p": fmt_p(m.p_value) if m.p_value is not None else "",
                "note": pair_note(m, cmp),
            }
        )
    return rows


def comparison_context(report: ComparisonReport) -> list[dict[str, Any]]:
    """Each later run against the first, for templates/comparison.html and the test bed
    section: the headline, the warnings, the averages, every point, the test beds."""
    runs = report.runs
    base = runs[0]
    advice = {id(res): res.warnings for res in runs}
    out = []
    pairs = zip(runs[1:], report.comparisons, report.differences, strict=True)
    for other, cmp, diffs in pairs:
        out.append(
            {
                "base": base.label,
                "other": other.label,
                "summary": summary_lines(cmp),
                "changes_note": changes_note(cmp),
                "p99_header": p99_header(cmp),
                "warnings": _warnings([(r.label, advice[id(r)]) for r in (base, other)]),
                "differs": [(k, str(b), str(o)) for k, (b, o) in cmp.differs.items()],
                "differs_text": differs_sentence(cmp) if cmp.differs else "",
                "by_iodepth": group_rows(cmp.by_iodepth) if len(cmp.by_iodepth) > 1 else [],
                "by_bs": group_rows(cmp.by_bs) if len(cmp.by_bs) > 1 else [],
                "rows": _rows(base, other, cmp),
                "rows_left_out": max(0, len(cmp.matched) - MAX_ROWS),
                "refs": (base.run.id, other.run.id),
                "only_base": [f"{s.target.label} {s.workload} {_axes(s)}" for s in cmp.only_base],
                "only_other": [f"{s.target.label} {s.workload} {_axes(s)}" for s in cmp.only_other],
                "testbed": testbed_rows(diffs),
            }
        )
    return out
