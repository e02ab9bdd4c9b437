"""Each suite's answer (analysis/answers.py) reaches the HTML report and the JSON export as
the same data: `storbench report --format html` and `storbench export --format json` of runs
stored from the recorded engine outputs (tests/answer_runs.py), the HTML parsed as a browser
reads it (text after entity decoding)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the harness modules
from answer_runs import HOSTILE, KINDS, Table, check_answer_tables, store_run


def sb(*args: str, db: Path) -> str:
    r = subprocess.run(
        [sys.executable, "-m", "storbench", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "STORBENCH_DB": str(db)},
    )
    assert r.returncode == 0, r.stderr
    return r.stdout


class _AnswerTables(HTMLParser):
    """The tables of ``<section id="answer">``: (the h4 before each, its rows of cell text)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.inside = self.in_title = False
        self.tables: list[Table] = []
        self.title = ""
        self.cell: list[str] | None = None
        self.tags: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "section" and ("id", "answer") in attrs:
            self.inside = True
        if not self.inside:
            return
        self.tags.append(tag)
        if tag == "h4":
            self.in_title, self.title = True, ""
        elif tag == "table":
            self.tables.append((self.title, []))
        elif tag == "tr":
            self.tables[-1][1].append([])
        elif tag in ("td", "th"):
            self.cell = []

    def handle_endtag(self, tag: str) -> None:
        if not self.inside:
            return
        if tag == "section":
            self.inside = False
        elif tag == "h4":
            self.in_title = False
        elif tag in ("td", "th") and self.cell is not None:
            self.tables[-1][1][-1].append("".join(self.cell))
            self.cell = None

    def handle_data(self, data: str) -> None:
        if self.in_title:
            self.title += data
        elif self.cell is not None:
            self.cell.append(data)


def answer_tables(html: str) -> list[Table]:
    p = _AnswerTables()
    p.feed(html)
    return p.tables


@pytest.mark.parametrize("kind", KINDS)
def test_report_answers_html_and_json_export_carry_each_suite_answer(
    kind: str, tmp_path: Path
) -> None:
    db = tmp_path / "r.db"
    run = str(store_run(db, kind))
    answer = json.loads(sb("export", run, "--format", "json", db=db))["answer"]
    assert answer["kind"] == kind and answer["rows"]
    text = json.dumps(answer, ensure_ascii=False)
    for formatted in ("MiB/s", 'GB"', " µs", " ms", "job:"):  # base units, named in the keys
        assert formatted not in text, formatted
    html = sb("report", run, "--format", "html", db=db)
    shown = answer_tables(html)
    check_answer_tables(answer, shown)
    if kind in ("profiles", "matrix"):  # a hostile target name: text, not markup
        assert HOSTILE in {r[0] for _, rows in shown for r in rows}
        assert "<b>x</b>" not in html.split('<section id="answer">')[1].split("</section>")[0]
