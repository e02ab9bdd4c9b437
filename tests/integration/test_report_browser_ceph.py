"""A report with Ceph clusters and a timeline in a real headless Chromium (the DevTools client
of test_report_browser.py): it loads with no console error and no request, shows the OSD
table, the benchmarked pools and every event, and a hostile event message as text.

The run is made with the Store API from recorded outputs: fio's (tests/data/fio), and the
cluster inventory that the real parsing code builds from the recorded ``ceph ... -f json``
outputs (tests/data/rados, through test_ceph_preflight's ``cluster_state``)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit"))  # the recordings' helpers

from test_ceph_preflight import cluster_state, recorded  # noqa: F401
from test_report_browser import DevTools, Page, assert_clean, browser  # noqa: F401
from test_report_ceph import cluster_entry, health_event
from test_report_html import HOSTILE, make_run, sweep

from storbench.report import html
from storbench.store import Store

pytestmark = pytest.mark.integration


def test_ceph_sections_render_in_chromium(
    browser: DevTools,  # noqa: F811
    cluster_state: Any,  # noqa: F811
    tmp_path: Path,
) -> None:
    store = Store(str(tmp_path / "results.db"))
    inv = {
        "host": {"hostname": "client1"},
        "ceph": [cluster_entry(cluster_state, "degraded", ["deg"])],
    }
    run = make_run(store, sweep(["4k", "64k"], [1, 8]), inventory=inv)
    start = store.runs.get(run).started_at
    health_event(store, run, "degraded-stuck", ["deg"], start + 61.5)
    health_event(store, run, "healthy", ["bench"], start + 75.0)
    store.events.add(run, "rados-cleanup", f"removed objects of {HOSTILE}", at=start + 80.0)
    path = tmp_path / "ceph.html"
    path.write_text(html.render_report(store, [str(run)]))

    url = path.resolve().as_uri()
    page = Page(browser, url)
    assert_clean(page, url)
    assert page.js("document.scripts.length") == 1, "only the report's own script"
    toc = page.js("[...document.querySelectorAll('nav.toc a')].map(a => a.textContent)")
    # the figures first, then the test bed with the cluster's inventory right after it
    bed = toc.index("Test bed")
    assert toc[bed : bed + 2] == ["Test bed", "Ceph cluster"], toc
    assert toc.index("Summary") < bed, toc

    ceph = page.js("document.getElementById('ceph').innerText")
    fsid = recorded("degraded", "s")["fsid"]
    assert f"Ceph cluster {fsid}" in ceph
    assert "HEALTH_WARN" in ceph and "OSD_DOWN: 1 osds down" in ceph
    assert "16.2.15 pacific: 1 mon, 1 mgr, 1 osd" in ceph
    osd_rows = page.js(
        "[...document.querySelectorAll('#ceph table.osds tbody tr')]"
        ".map(tr => [...tr.cells].map(td => td.textContent))"
    )
    host = recorded("degraded", "osd-metadata")[0]["hostname"]
    assert osd_rows == [
        ["osd.0", host, "hdd", "bluestore", "up", "in", "0.0077972", "1"],
        ["osd.1", host, "hdd", "memstore", "down", "in", "0.0077972", "1"],
    ]
    # the OSD that is down is marked (red), the one up is not
    colors = page.js(
        "[...document.querySelectorAll('#ceph table.osds tbody tr')]"
        ".map(tr => getComputedStyle(tr.cells[0]).color)"
    )
    assert colors[0] != colors[1]
    pools = page.js(
        "[...document.querySelectorAll('#ceph table.pools tbody tr')]"
        ".map(tr => [...tr.cells].map(td => td.textContent))"
    )
    assert [p[:5] for p in pools] == [["deg", "replicated", "2", "2", "8"]]

    events = page.js(
        "[...document.querySelectorAll('#timeline tbody tr')]"
        ".map(tr => [tr.cells[0].textContent, tr.cells[1].textContent])"
    )
    assert events == [
        ["+61.5 s (1m02s)", "health"],
        ["+75.0 s (1m15s)", "health"],
        ["+80.0 s (1m20s)", "rados-cleanup"],
    ]
    timeline = page.js("document.getElementById('timeline').innerText")
    assert f"removed objects of {HOSTILE}" in timeline
    assert "PG_AVAILABILITY (Reduced data availability: 8 pgs inactive" in timeline
    # an event's details open on a click, as text
    detail = page.js(
        "(() => { const d = document.querySelector('#timeline details.data'); d.open = true;"
        " return d.querySelector('pre').textContent; })()"
    )
    assert '"PG_AVAILABILITY"' in detail and '"inactive"' in detail
    png = page.screenshot()
    (tmp_path / "ceph-report.png").write_bytes(png)
    assert_clean(page, url)
