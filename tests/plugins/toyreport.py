"""A toy suite answer and a toy report format, registered from the test directory alone
(STORBENCH_PLUGINS=toyreport, this folder on PYTHONPATH): what the README's "How it is built"
says a newcomer writes to add a suite's answer and a format, and nothing else.

- ``report: toy``: per point, its IOPS and the share of the run's best;
- ``--format toycsv``: every answer table of the report model as CSV."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from typing import Any, ClassVar

from storbench import hooks
from storbench.report.fmt import AnswerTable
from storbench.report.model import ComparisonReport, RunReport


@dataclass
class ToyRow:
    point: int  # the point's number, from 1 (as `show --point` and the export count)
    iops: float
    of_best: float  # iops / the best point's iops


@dataclass
class ToyAnswer:
    kind: ClassVar[str] = "toy"
    rows: list[ToyRow]


def toy_answer(summaries: list[Any], inventory: dict[str, Any], series: Any) -> ToyAnswer:
    measured = [s for s in summaries if s.runs]
    best = max((s.total_iops for s in measured), default=0.0) or 1.0
    return ToyAnswer([ToyRow(s.index + 1, s.total_iops, s.total_iops / best) for s in measured])


def toy_tables(answer: ToyAnswer) -> list[AnswerTable]:
    return [
        AnswerTable(
            "Toy: IOPS per point",
            ["point", "IOPS", "of the best"],
            [[str(r.point), f"{r.iops:.0f}", f"{r.of_best:.0%}"] for r in answer.rows],
            right={1, 2},
            notes=["a toy answer, from tests/plugins"],
        )
    ]


class ToyCsv:
    name = "toycsv"

    def run(self, report: RunReport) -> str:
        out = io.StringIO()
        w = csv.writer(out, lineterminator="\n")
        w.writerow(["run", report.run.id, report.kind or ""])
        for t in report.tables:
            w.writerow([t.title])
            w.writerow(t.headers)
            w.writerows(t.rows)
        return out.getvalue()

    def comparison(self, report: ComparisonReport) -> str:
        out = io.StringIO()
        w = csv.writer(out, lineterminator="\n")
        w.writerow(["base", "other", "matched"])
        for c in report.comparisons:
            w.writerow([c.base_name, c.other_name, len(c.matched)])
        return out.getvalue()


hooks.register_answer("toy", toy_answer, toy_tables, doc="IOPS per point, and of the best")
hooks.register_format("toycsv", ToyCsv(), doc="the answer tables as CSV")
