"""Each suite's answer in the HTML report, read in a real headless Chromium (the DevTools
client of test_report_browser.py): the answer section's tables, as the page shows them,
hold what the JSON export's "answer" says, hostile names show as text, and the page loads
offline without an error. Runs stored from the recorded engine outputs
(tests/answer_runs.py), so no engine runs here."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_report_browser import DevTools, Page, assert_clean
from test_report_browser import browser as _browser  # noqa: F401  (the fixture "browser")

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the harness modules
from answer_runs import HOSTILE, KINDS, check_answer_tables, store_run

pytestmark = pytest.mark.integration

#: the answer section's tables as the page shows them: (title, rows of cell text)
TABLES_JS = (
    "[...document.querySelectorAll('#answer table.answer')].map(t => "
    "[t.previousElementSibling.textContent, [...t.querySelectorAll('tr')].map(r => "
    "[...r.children].map(c => c.textContent))])"
)


def sb(*args: str, db: Path) -> str:
    r = subprocess.run(
        [sys.executable, "-m", "storbench", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "STORBENCH_DB": str(db)},
    )
    assert r.returncode == 0, r.stderr
    return r.stdout


@pytest.mark.parametrize("kind", KINDS)
def test_report_answers_in_chromium_match_the_json_export(
    kind: str,
    browser: DevTools,
    tmp_path: Path,
) -> None:
    db = tmp_path / "r.db"
    run = str(store_run(db, kind))
    answer = json.loads(sb("export", run, "--format", "json", db=db))["answer"]
    report = tmp_path / f"{kind}.html"
    sb("report", run, "-o", str(report), db=db)
    url = report.resolve().as_uri()
    page = Page(browser, url)
    assert_clean(page, url)
    assert page.js("document.querySelector('nav a[href=\"#answer\"]') !== null")
    shown = [(title, rows) for title, rows in page.js(TABLES_JS)]
    check_answer_tables(answer, shown)
    if kind in ("profiles", "matrix"):
        assert HOSTILE in {r[0] for _, rows in shown for r in rows}, "the name shows as text"
        assert page.js("document.querySelector('#answer b') === null")
