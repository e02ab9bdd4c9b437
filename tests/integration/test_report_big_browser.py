"""A report of a run with more points than its page holds details of, in a real headless
Chromium (the DevTools client of test_report_browser.py): it loads with no console error,
says what it left out, and a chart point or a table number past the details is no dead
link: hovering or clicking it names the command that shows the point.

The run is made with the Store API from a recorded fio output (tests/stored_runs.py)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the harness modules
from test_report_browser import DevTools, Page, assert_clean, browser  # noqa: F401

from storbench.plan import Point, Target
from storbench.report import html
from storbench.report.details import MAX_POINT_DETAILS
from storbench.store import Store
from stored_runs import recorded, stored_run

pytestmark = pytest.mark.integration

#: 2 bs x 10 iodepth x 26 numjobs = 520 points: past MAX_POINT_DETAILS (500)
GRID = [
    {"rw": "randread", "bs": bs, "iodepth": q, "numjobs": nj}
    for bs in ("4k", "64k")
    for q in (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)
    for nj in range(1, 27)
]


def _tip(cdp: DevTools, page: Page, selector: str) -> str | None:
    """Move the mouse onto the first element ``selector`` finds; the tooltip's text."""
    center = page.js(
        f"(() => {{ const g = document.querySelector({selector!r});"
        " g.scrollIntoView({block: 'center'}); const r = g.getBoundingClientRect();"
        " return [r.x + r.width / 2, r.y + r.height / 2]; })()"
    )
    cdp.send("Input.dispatchMouseEvent", page.session, type="mouseMoved", x=0, y=0)
    cdp.send("Input.dispatchMouseEvent", page.session, type="mouseMoved", x=center[0], y=center[1])
    return page.js(
        "(() => { const t = document.getElementById('tip');"
        " return t.hidden ? null : t.textContent; })()"
    )


def test_points_past_the_details_name_their_show_command_in_chromium(
    browser: DevTools,  # noqa: F811
    tmp_path: Path,
) -> None:
    assert len(GRID) > MAX_POINT_DETAILS
    store = Store(str(tmp_path / "results.db"))
    tgt = Target("file", "/x")
    meas = recorded("psync-randread-json")
    run = stored_run(
        store,
        [(Point(i, f"k{i}", 0, tgt, "w", dict(g), dict(g)), meas) for i, g in enumerate(GRID)],
        name="big",
    )
    path = tmp_path / "big.html"
    path.write_text(html.render_report(store, [str(run)]))
    url = path.resolve().as_uri()
    page = Page(browser, url)
    assert_clean(page, url)
    assert page.js("document.querySelectorAll('details.point').length") == MAX_POINT_DETAILS
    left = page.js("document.querySelector('#points p.left-out').innerText")
    assert f"the other {len(GRID) - MAX_POINT_DETAILS}:" in left, left

    # a chart point with details: click opens them; one without: its show command
    ref_of = (
        "(() => [...document.querySelectorAll('figure.chart svg .pt[data-ref]')]"
        ".map(g => g.getAttribute('data-ref')).find(r => {} document.getElementById(r)))()"
    )
    inside, outside = page.js(ref_of.format("")), page.js(ref_of.format("!"))
    assert inside and outside, (inside, outside)
    tip = _tip(browser, page, f'figure.chart svg .pt[data-ref="{inside}"]')
    assert tip and tip.endswith("(click: the point's details)"), tip
    tip = _tip(browser, page, f'figure.chart svg .pt[data-ref="{outside}"]')
    point = re.fullmatch(r"r\d+-p(\d+)", outside)
    assert point and int(point.group(1)) > MAX_POINT_DETAILS
    want = f"storbench show {run} --point {point.group(1)}"
    assert tip and tip.endswith(f"(details: {want})"), tip

    # clicking it says so where it was clicked, and opens nothing
    center = page.js(
        "(() => { const r = document.querySelector("
        f"'figure.chart svg .pt[data-ref=\"{outside}\"]').getBoundingClientRect();"
        " return [r.x + r.width / 2, r.y + r.height / 2]; })()"
    )
    for kind in ("mousePressed", "mouseReleased"):
        browser.send(
            "Input.dispatchMouseEvent",
            page.session,
            type=kind,
            x=center[0],
            y=center[1],
            button="left",
            clickCount=1,
        )
    said = page.js("document.getElementById('tip').textContent")
    assert said == f"details not in this report: {want}", said
    assert page.js("document.querySelectorAll('details.point[open]').length") == 0
    # the summary's number of such a point is plain text naming the same command
    title = page.js(
        f"document.querySelector('table.summary span[title$=\"--point {MAX_POINT_DETAILS + 1}\"]')"
        ".getAttribute('title')"
    )
    assert title == f"storbench show {run} --point {MAX_POINT_DETAILS + 1}"
    browser.pump(0.3)
    assert_clean(page, url)
