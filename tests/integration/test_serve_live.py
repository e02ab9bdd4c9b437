"""The web view's live page: `storbench serve` shows a run while a real `storbench run`
writes the same database (SQLite in WAL mode, and PostgreSQL), in a real headless
Chromium: without a reload, the run page's live section names the point running, draws
its time series as it grows (the count of intervals drawn rises between polls), lists
each point once it is recorded, and says when the run has ended."""

from __future__ import annotations

import os
import select
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_report_browser import (  # the DevTools harness; browser: its Chromium fixture
    TIMEOUT,
    DevTools,
    Page,
    browser,  # noqa: F401  (a fixture)
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the harness modules
import pgserver
from serving import serving
from waiting import wait_until

pytestmark = pytest.mark.integration

pg_server = pgserver.pg_server
pg_url = pgserver.pg_url

PLAN = """\
name: live
interval: 500ms
targets: [{{file: {dir}/live.dat}}]
workloads:
  - {{name: rand, rw: randread, bs: 4k, direct: 1, size: 16m, iodepth: [1, 2, 4], ioengine: libaio,
      time_based: 1, runtime: 5, ramp_time: 0}}
"""
#: how long a point may take on a busy machine before the test gives up on it
SLOW = 120.0


def _wait_for_line(proc: subprocess.Popen[str], start: str) -> None:
    """Read ``proc``'s output until a line starts with ``start`` (the run's progress)."""
    assert proc.stdout is not None
    end = time.monotonic() + SLOW
    seen = []
    while time.monotonic() < end:
        ready, _, _ = select.select([proc.stdout], [], [], 1.0)
        if ready:
            line = proc.stdout.readline()
            seen.append(line)
            if line.startswith(start):
                return
            if not line:
                break
    raise AssertionError(f"no line {start!r} from the run: {''.join(seen)}")


def _value(page: Page, expression: str) -> object:
    time.sleep(0.2)  # the page polls once a second: asking more often only adds load
    return page.js(expression)


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_serve_live_page_follows_a_run_as_it_runs(
    backend: str,
    request: pytest.FixtureRequest,
    tmp_path: Path,
    browser: DevTools,  # noqa: F811
) -> None:
    db = str(tmp_path / "live.db") if backend == "sqlite" else request.getfixturevalue("pg_url")
    plan = tmp_path / "plan.yaml"
    plan.write_text(PLAN.format(dir=tmp_path))
    run = subprocess.Popen(
        [sys.executable, "-m", "storbench", "run", str(plan)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "STORBENCH_DB": db},
        cwd=tmp_path,
        start_new_session=True,
    )
    try:
        assert run.stdout is not None
        _wait_for_line(run, "[1/3] ")
        if backend == "sqlite":
            with sqlite3.connect(db) as c:
                assert c.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        with serving(db, TIMEOUT) as (base, _):
            page = Page(browser, base + "/runs/1")
            page.js("window.storbenchTestMark = 'not reloaded'")
            assert page.js("document.getElementById('live') !== null"), "no live section"
            drawn = "Number(document.getElementById('live-series').dataset.intervals || 0)"
            shown = f"[document.getElementById('live-current').textContent, {drawn}]"
            first = wait_until("a drawn interval", lambda: _value(page, shown)[1], SLOW)
            seen = [_value(page, shown)]

            def grown() -> bool:  # the same point drawn with more intervals, no reload
                seen.append(_value(page, shown))
                (a, n), (b, m) = seen[-2], seen[-1]
                return bool(a == b and m > n > 0)

            wait_until(f"the series to grow (from {first})", grown, SLOW)
            now = str(page.js("document.getElementById('live-current').textContent"))
            assert now.startswith("Point ") and " runs now: rand iodepth=" in now, now
            rows = "document.querySelectorAll('#live-done tbody tr').length"
            wait_until("a recorded point in the table", lambda: _value(page, rows), SLOW)
            first_row = str(page.js("document.querySelector('#live-done tbody tr').innerText"))
            assert first_row.startswith("1\trand iodepth=1"), first_row
            ended = "document.getElementById('live').dataset.ended || ''"
            assert wait_until("the run's end", lambda: _value(page, ended), SLOW) == "completed"
            assert page.js(rows) == 3
            assert page.js("window.storbenchTestMark") == "not reloaded"
            count = str(page.js("document.getElementById('live-count').textContent"))
            assert count == "3 of 3 points recorded", count
            assert not page.events("Runtime.exceptionThrown")
            errors = [e for e in page.events("Runtime.consoleAPICalled") if e["type"] == "error"]
            assert not errors, errors
        assert run.wait(timeout=SLOW) == 0
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
