"""JSON of the report model, for machines: one run as ``export --format json`` writes it (the
run, its measurements with their series, events, its suite's answer, drills), several as
``compare --format json`` (each comparison with the test beds' differences)."""

from __future__ import annotations

import json
from dataclasses import asdict

from storbench.analysis.answers import answer_data
from storbench.report import export
from storbench.report.model import ComparisonReport, RunReport


def run_json(report: RunReport) -> str:
    src = report.series
    series = (
        {m.point_idx: src.every_host(m.point_idx) for m in report.rows} if src is not None else {}
    )
    return export.to_json(
        report.run,
        report.rows,
        report.events,
        answer_data(report.answer) if report.answer is not None else None,
        series,
        [asdict(d) for d in report.drills],
        [f.to_dict() for f in report.findings],
    )


def comparison_json(report: ComparisonReport) -> str:
    doc = {"comparisons": [c.to_dict() for c in report.comparisons]}
    for diffs, c in zip(report.differences, doc["comparisons"], strict=True):
        c["testbed_differences"] = [{"setting": k, "base": a, "other": b} for k, a, b in diffs]
    return json.dumps(doc, default=str) + "\n"


class JsonPresenter:
    name = "json"

    def run(self, report: RunReport) -> str:
        return run_json(report)

    def comparison(self, report: ComparisonReport) -> str:
        return comparison_json(report)


PRESENTER = JsonPresenter()
