"""`storbench history` over five real runs of one plan on a real device whose speed the
test sets: a blank loop device whose reads a blkio cgroup throttles (tests/throttled.py),
its 64 MiB written first (a blank device's reads would be found `unwritten-read` and not
judged). Runs 1-3 read at 400 I/Os per second at most; before run 4 the test changes the
device's read-ahead (a setting the run's inventory records: the test bed's change) and,
the real cause of the slow-down, its throttle to 150; runs 4 and 5 also carry a new label.
The history must list the change between runs 3 and 4 (and nowhere else), mark it on the
chart, and flag the drop at run 4 as a regression (the comparison's test over two
repetitions per run). The web view's /history shows the same in Chromium."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.root]

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from test_report_browser import (  # noqa: E402  (the DevTools harness; browser: a fixture)
    TIMEOUT,
    DevTools,
    Page,
    browser,  # noqa: F401
)

from serving import serving  # noqa: E402
from throttled import sb, throttled_devices  # noqa: E402

PLAN = """\
name: nightly-loop
labels: {{tune: base}}
repeat: 2
targets: [{{device: {dev}}}]
workloads:
  - {{name: rand, rw: randread, bs: 4k, direct: 1, iodepth: 4, time_based: 1, runtime: 1.5}}
"""
FAST, SLOW = 400, 150


def _read_ahead(dev: str) -> Path:
    return Path("/sys/block") / Path(dev).name / "queue" / "read_ahead_kb"


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict, str]:
    tmp = tmp_path_factory.mktemp("history")
    db = tmp / "results.db"
    with throttled_devices(tmp, [FAST]) as (devs, group):
        dev = devs[0]
        plan = tmp / "plan.yaml"
        plan.write_text(PLAN.format(dev=dev))
        with open("/dev/urandom", "rb") as src, open(dev, "r+b") as out:  # data to read:
            for _ in range(64):  # a blank device's reads are `unwritten-read`, not judged
                out.write(src.read(1 << 20))
            os.fsync(out.fileno())
        ra = _read_ahead(dev)
        before = ra.read_text().strip()
        try:
            for n in range(1, 6):
                if n == 4:  # the test bed changes, and the device slows down
                    ra.write_text("1024\n" if before != "1024" else "2048\n")
                    rdev = os.stat(dev).st_rdev
                    (group / "blkio.throttle.read_iops_device").write_text(
                        f"{os.major(rdev)}:{os.minor(rdev)} {SLOW}\n"
                    )
                extra = ["--label", "tune=ra"] if n >= 4 else []
                r = sb(group, db, "run", str(plan), *extra)
                assert r.returncode == 0, r.stdout + r.stderr
        finally:
            ra.write_text(before + "\n")
        r = sb(group, db, "history", "--format", "json")
        assert r.returncode == 0, r.stderr
        doc = json.loads(r.stdout)
        table = sb(group, db, "history", "--chart", str(tmp / "history.svg"))
        assert table.returncode == 0, table.stderr
    return db, doc, table.stdout


def test_history_lists_the_test_bed_change_where_it_happened(history: tuple) -> None:
    _, doc, _ = history
    assert [r["id"] for r in doc["runs"]] == [1, 2, 3, 4, 5]
    assert doc["selection"] == "runs of plan 'nightly-loop'"
    changes = doc["testbed_changes"]
    assert [(c["previous"], c["run"]) for c in changes] == [(3, 4)], changes
    settings = {c["setting"]: (c["before"], c["after"]) for c in changes[0]["changes"]}
    assert settings["labels.tune"] == ("base", "ra"), settings
    assert any(k.endswith("read_ahead_kb") for k in settings), settings
    assert [r["labels"] for r in doc["runs"]] == [{"tune": "base"}] * 3 + [{"tune": "ra"}] * 2


def test_history_flags_the_slow_down_as_a_regression(history: tuple) -> None:
    _, doc, text = history
    (track,) = doc["tracks"]
    cells = track["runs"]
    assert all(c is not None and c["repetitions"] == 2 for c in cells), cells
    assert all(c["iops"] <= FAST * 1.05 for c in cells[:3]), cells
    assert all(c["iops"] <= SLOW * 1.05 for c in cells[3:]), cells
    fourth = cells[3]
    assert fourth["flag"] == "regression", fourth
    assert fourth["versus_previous"]["verdict"] == "worse"
    assert fourth["versus_previous"]["iops_change_pct"] < -40
    assert fourth["versus_previous"]["p_value"] < 0.05
    assert cells[0]["versus_previous"] is None and cells[0]["flag"] is None
    assert "run 3 → run 4" in text and "regression" in text and "▼" in text, text
    assert "Test-bed changes between consecutive runs" in text, text


def test_history_chart_marks_the_change_and_the_regression(history: tuple) -> None:
    db, _, _ = history
    svg = (db.parent / "history.svg").read_text()
    assert svg.startswith("<?xml") and "regression against its previous run" in svg


def test_serve_history_page_shows_the_runs_change_and_regression(
    history: tuple,
    browser: DevTools,  # noqa: F811
) -> None:
    db, _, _ = history
    with serving(str(db), TIMEOUT) as (base, _):
        page = Page(browser, base + "/history?plan=nightly-loop&figure=iops")
        body = page.js("document.body.innerText")
        assert "History: runs of plan 'nightly-loop'" in body, body
        assert "run 3 → run 4" in body and "labels.tune" in body, body
        rule = page.js(
            "[...document.querySelectorAll('#chart-history svg text')]"
            ".map(t => t.textContent).filter(t => t.startsWith('changed:'))"
        )
        assert len(rule) == 1 and "labels.tune" in rule[0], rule
        marks = page.js(  # each point's hover text (web.js moved it from <title>)
            "[...document.querySelectorAll('#chart-history svg g.pt')]"
            ".map(g => g.dataset.tip || '').filter(t => t.includes('regression'))"
        )
        assert len(marks) >= 1, marks
        assert not page.events("Runtime.exceptionThrown")
