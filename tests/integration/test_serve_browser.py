"""The web view (`storbench serve`) in a real headless Chromium, driven over the DevTools
protocol with test_report_browser.py's harness: the real server on a free loopback port
over two real fio runs whose workload is named ``<script>alert(1)</script>`` and target
``<img src=x onerror=alert(2)>``. Pages load with no console error (a CSP violation is
one) and no request to another origin; the names show as text; links lead from the runs to
a run, to a point (its time series drawn by uPlot) and back; a compare is made by picking
two runs and submitting; unknown runs are 404 pages and writes are refused.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from typing import Any

import pytest
from test_report_browser import (  # the DevTools harness; browser: its Chromium fixture
    CHROMIUM,
    IMG_NAME,
    SCRIPT_NAME,
    TIMEOUT,
    DevTools,
    Page,
    browser,  # noqa: F401  (a fixture)
    sb,
)

from serving import serving

pytestmark = pytest.mark.integration

PLAN = """\
name: "team <b>results</b>"
report: matrix
targets:
  - file: {dir}/scratch.dat
    name: "{img}"
workloads:
  - name: "{script}"
    rw: randread
    bs: 4k
    iodepth: [1, 4]
    size: 8m
    time_based: 1
    runtime: 2
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Two real runs of the plan, served by `storbench serve --port 0`; its base URL. The
    server is ended (its process group) however the tests end."""
    if CHROMIUM is None:
        pytest.skip("chromium is not installed (scripts/setup-system.sh installs it)")
    if shutil.which("fio") is None:
        pytest.skip("fio is not installed")
    tmp = tmp_path_factory.mktemp("serve-browser")
    db = tmp / "results.db"
    plan = tmp / "plan.yaml"
    plan.write_text(PLAN.format(dir=tmp, img=IMG_NAME, script=SCRIPT_NAME.replace('"', '\\"')))
    for _ in range(2):
        r = sb("run", str(plan), db=db, cwd=tmp)
        assert r.returncode == 0, r.stdout + r.stderr
    with serving(str(db), TIMEOUT) as (base, line):
        assert "read-only" in line
        yield base


def follow(page: Page, action: str) -> None:
    """Do ``action`` (JavaScript that clicks or submits) and wait for the page it loads."""
    after = len(page.cdp.events)
    page.js(action)
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        ev = page.cdp.wait_for("Page.loadEventFired", after)
        if ev.get("sessionId") == page.session:
            page.cdp.pump(0.3)
            return
        after = page.cdp.events.index(ev) + 1
    raise AssertionError(f"no page loaded after {action}")


def assert_clean(page: Page, base: str) -> None:
    """No exception, console error (a CSP violation logs one), dialog, nor request that
    leaves the server."""
    assert not page.events("Runtime.exceptionThrown"), page.events("Runtime.exceptionThrown")
    console = [e for e in page.events("Runtime.consoleAPICalled") if e["type"] == "error"]
    assert not console, console
    logged = [e["entry"] for e in page.events("Log.entryAdded") if e["entry"]["level"] == "error"]
    assert not logged, logged
    urls = [e["request"]["url"] for e in page.events("Network.requestWillBeSent")]
    others = [u for u in urls if not u.startswith(base + "/") and not u.startswith("data:")]
    assert not others, f"requests to another origin: {others}"
    assert not page.events("Page.javascriptDialogOpening"), "a dialog (alert) opened"


def text(page: Page) -> str:
    return str(page.js("document.body.innerText"))


def test_serve_pages_links_and_escaping(server: str, browser: DevTools) -> None:  # noqa: F811
    page = Page(browser, server + "/")
    assert "team <b>results</b>" in text(page), "the run's name shows as text"
    assert page.js("document.querySelectorAll('table.runs tbody tr').length") == 2
    assert page.js("document.querySelectorAll('b, img').length") == 0

    follow(page, "document.querySelector('table.runs a.name').click()")
    assert page.js("location.pathname") == "/runs/2"
    shown = text(page)
    assert SCRIPT_NAME in shown and IMG_NAME in shown
    assert page.js("document.querySelectorAll('img, b').length") == 0
    assert page.js("document.querySelectorAll('#answer table.answer').length") >= 1
    assert page.js("document.querySelectorAll('figure.chart svg').length") >= 2
    # the plan reads an 8 MiB file buffered (fio's default): each point's findings, linked
    codes = page.js("[...document.querySelectorAll('tr.finding')].map(r => r.dataset.code)")
    assert codes.count("page-cache") == 2 and codes.count("sync-iodepth") == 1, codes
    assert page.js("document.querySelector('tr.finding a').getAttribute('href')") == (
        "/runs/2/points/1"
    )
    assert page.js("[...document.scripts].map(s => s.src.replace(location.origin, ''))") == [
        "/static/web.js"
    ]

    follow(page, "document.querySelector('table.summary a').click()")
    assert page.js("location.pathname") == "/runs/2/points/1"
    drawn = page.js(
        "(async () => { const f = document.querySelector('figure.series');"
        " for (let i = 0; i < 200 && !f.hasAttribute('data-drawn'); i++)"
        "   await new Promise(r => setTimeout(r, 50));"
        " return [f.getAttribute('data-drawn'), f.querySelectorAll('canvas').length,"
        " f.innerText]; })()"
    )
    assert drawn[0] == "3" and drawn[1] >= 3, drawn  # IOPS, MiB/s and latency, by uPlot
    assert "IOPS" in drawn[2] and "read" in drawn[2]
    assert "rw=randread" in page.js("document.querySelector('pre.job').textContent")
    found = page.js("document.querySelector('ul.findings').innerText")
    assert "page-cache" in found and "direct=0" in found, found
    raw = page.js("document.querySelector('pre.rawtext').textContent")
    assert '"fio version"' in raw and '"jobs"' in raw
    assert SCRIPT_NAME in text(page) and page.js("document.querySelectorAll('img').length") == 0

    follow(page, "document.querySelector('nav a.back').click()")
    assert page.js("location.pathname") == "/runs/2"
    follow(
        page,
        "document.querySelector('svg .pt[data-ref]').dispatchEvent("
        "new MouseEvent('click', {bubbles: true}))",
    )
    assert page.js("location.pathname").startswith("/runs/2/points/")
    assert_clean(page, server)


def test_serve_compare_by_clicking(server: str, browser: DevTools) -> None:  # noqa: F811
    page = Page(browser, server + "/compare")
    assert page.js("document.getElementById('comparison')") is None
    follow(
        page,
        "(() => { document.getElementById('compare-a').value = '1';"
        " document.getElementById('compare-b').value = '2';"
        " document.querySelector('#compare-form button').click(); })()",
    )
    assert page.js("location.search") == "?a=1&b=2"
    card = page.js("document.querySelector('#comparison .card').innerText")
    # both runs read the page cache (fio's default buffered I/O on an 8 MiB file): figures
    # shown, as measured, and no verdict
    assert "in IOPS (" in card and "geometric mean of 2 points, 95 % CI" in card, card
    assert "not comparable (page-cache in run 1" in card and " beat " not in card, card
    verdicts = page.js(
        "[...document.querySelectorAll('#comparison h4 + table tbody tr')].map(r => r.innerText)"
    )
    assert len(verdicts) == 2 and all("NOT COMPARABLE" in v for v in verdicts), verdicts
    assert all(SCRIPT_NAME in v for v in verdicts), "the workload's name as text"
    assert page.js("document.querySelectorAll('img').length") == 0
    follow(page, "document.querySelector('#comparison h4 + table tbody a').click()")
    assert page.js("location.pathname") == "/runs/1/points/1"
    assert_clean(page, server)


def _status(page: Page, url: str) -> Any:
    responses = [e["response"] for e in page.events("Network.responseReceived")]
    return next(r["status"] for r in responses if r["url"] == url)


def test_serve_refuses_unknown_runs_and_writes(server: str, browser: DevTools) -> None:  # noqa: F811
    page = Page(browser, server + "/runs/99")
    assert _status(page, server + "/runs/99") == 404
    assert "there is no run 99" in text(page)
    follow(page, "location.href = '/runs/1/points/42'")
    assert _status(page, server + "/runs/1/points/42") == 404
    assert "run 1 has no point 42" in text(page)
    posted = page.js(
        "(async () => { const r = await fetch('/runs/1', {method: 'POST', body: 'x'});"
        " return [r.status, await r.text()]; })()"
    )
    assert posted[0] == 405 and "only shows results" in posted[1]
    assert not page.events("Runtime.exceptionThrown")
    assert not page.events("Page.javascriptDialogOpening")
