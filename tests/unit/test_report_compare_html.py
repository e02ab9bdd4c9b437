"""The comparison of runs in the HTML report (report/htmlcompare.py): besides the verdict and
the tables it shows what `storbench compare` says in its other formats — each run's advice
(iodepth with a synchronous ioengine does nothing), the options the runs differ in, and the
settings that differed between the test beds (`testbed_differences` of the JSON) — in the
report's reading order, every value escaped. Runs stored from recorded real fio outputs."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from storbench.analysis.testbed import differences
from storbench.plan import Point, Target
from storbench.report import html
from storbench.store import Store

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the harness modules
from stored_runs import recorded, stored_run

HOSTILE = "<script>alert(1)</script>"
IMG = "<img src=x onerror=alert(2)>"
CONTROL = "a\x1b]0;pwned\x07b"


def _run(store: Store, *, name: str, ioengine: str, scheduler: str, dirty: str = "20") -> int:
    """A run along iodepth of a hostile workload, its test bed's disk scheduler and dirty
    ratio as given."""
    t = Target("file", "/x", name=IMG)
    pts = [
        Point(i, f"q{q}", 0, t, HOSTILE, {"ioengine": ioengine, "iodepth": q}, {"iodepth": q})
        for i, q in enumerate((1, 32))
    ]
    inventory = {
        "host": {"hostname": name, "tuning": {"sysctl": {"vm.dirty_ratio": dirty}}},
        "targets": [{"path": "/x", "disk": {"tuning": {"scheduler": scheduler}}}],
    }
    measured = [(p, recorded("psync-randread-json")) for p in pts]
    return stored_run(store, measured, name=name, inventory=inventory)


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(str(tmp_path / "r.db"))


def _section(page: str, start: str, end: str) -> str:
    i = page.index(start)
    return page[i : page.index(end, i)]


def test_compare_html_shows_advice_after_the_verdict_and_before_the_tables(store: Store) -> None:
    a = _run(store, name="psync", ioengine="psync", scheduler="none")
    b = _run(store, name="libaio", ioengine="libaio", scheduler="none")
    page = html.render_report(store, [str(a), str(b)])
    cmp = _section(page, '<section id="comparison">', "</section>")
    verdict = cmp.index('<div class="card summary">')
    warn = cmp.index('<div class="warn advice">')
    table = cmp.index("<h4>Point by point</h4>")
    assert verdict < warn < table
    block = _section(cmp, '<div class="warn advice">', "</div>")
    (item,) = re.findall(r"<li>.*?</li>", block, re.S)
    # psync's queue does nothing; libaio's does: only the psync run is named
    assert f"<strong>run {a}: psync</strong>:" in item and f"run {b}" not in item
    assert "iodepth 32 with ioengine=psync does nothing" in item
    assert "&#39;&lt;script&gt;alert(1)&lt;/script&gt;&#39;" in item and HOSTILE not in page
    # the option the two runs were set to differently, as the terminal says it
    assert re.search(r"The runs differ in <code>ioengine</code> \(psync → libaio\)", cmp)
    # ... which changes what is measured: no point is judged, every row says why
    assert "those whose settings change what is measured are not comparable" in cmp
    assert "no point of run" in cmp and "can be judged against" in cmp
    rows = re.findall(r"<tr[^>]*><td>.*?</tr>", _section(cmp, "<tbody>", "</tbody>"), re.S)
    assert rows and all(r.startswith('<tr class="not-comparable">') for r in rows)
    assert all("ioengine=psync vs ioengine=libaio" in r for r in rows)
    assert 'class="good"' not in cmp and 'class="bad"' not in cmp


def test_compare_html_without_advice_has_no_warning(store: Store) -> None:
    a = _run(store, name="x", ioengine="libaio", scheduler="none")
    b = _run(store, name="y", ioengine="libaio", scheduler="none")
    page = html.render_report(store, [str(a), str(b)])
    assert 'class="warn' not in page and "The runs differ in" not in page
    assert "The test beds differ in no setting storbench records." in page
    diffs = _section(page, '<div id="testbed-differences">', "</div>")
    assert f"run {b}: y and run {a}: x: no setting storbench records differs." in diffs
    assert "<table" not in diffs


def test_compare_html_lists_the_test_bed_differences_in_the_test_bed_section(
    store: Store,
) -> None:
    a = _run(store, name="a", ioengine="libaio", scheduler="none")
    b = _run(store, name="b", ioengine="libaio", scheduler=IMG + CONTROL, dirty="1")
    page = html.render_report(store, [str(a), str(b)])
    want = differences(store.runs.get(a).inventory, store.runs.get(b).inventory)
    assert [k for k, _, _ in want] == [
        "host.tuning.sysctl.vm.dirty_ratio",
        "targets[/x].disk.tuning.scheduler",
    ]
    cmp = _section(page, '<section id="comparison">', "</section>")
    assert '2 settings: <a href="#testbed-differences">' in cmp
    diffs = _section(page, '<div id="testbed-differences">', "</div>")
    rows = re.findall(r"<tr><th>([^<]*)</th><td>([^<]*)</td><td>([^<]*)</td></tr>", diffs)
    assert rows == [
        ("host.tuning.sysctl.vm.dirty_ratio", "20", "1"),
        (
            "targets[/x].disk.tuning.scheduler",
            "none",
            "&lt;img src=x onerror=alert(2)&gt;a\\x1b]0;pwned\\x07b",
        ),
    ]
    assert "<img" not in page and "\x1b" not in page
    # the reading order: the verdict, the tables, the charts, then the test bed's differences
    # ahead of the runs side by side
    order = [
        page.index('<section id="comparison">'),
        page.index('<section id="summary">'),
        page.index('<figure class="chart"'),
        page.index('<div id="testbed-differences">'),
        page.index("<h3>The runs side by side</h3>"),
    ]
    assert order == sorted(order), order


def test_compare_html_of_three_runs_says_each_against_the_first(store: Store) -> None:
    a = _run(store, name="a", ioengine="libaio", scheduler="none")
    b = _run(store, name="b", ioengine="libaio", scheduler="none")
    c = _run(store, name="c", ioengine="psync", scheduler="kyber")
    page = html.render_report(store, [str(a), str(b), str(c)])
    diffs = _section(page, '<div id="testbed-differences">', "</section>")
    heads = re.findall(r"<h4>([^<]*)</h4>", diffs.split("<h3>The runs side by side</h3>")[0])
    assert heads == [f"run {b}: b vs run {a}: a", f"run {c}: c vs run {a}: a"]
    assert diffs.count("no setting storbench records differs") == 1
    assert "<td>none</td><td>kyber</td>" in diffs
    # the advice of run c is in its own comparison only
    cmp = _section(page, '<section id="comparison">', "</section>")
    first, second = cmp.split("<h3>")[1:]
    assert 'class="warn' not in first and f"<strong>run {c}: c</strong>:" in second


def test_single_run_report_has_no_comparison_or_differences(store: Store) -> None:
    a = _run(store, name="a", ioengine="psync", scheduler="none")
    page = html.render_report(store, [str(a)])
    assert 'id="comparison"' not in page and 'id="testbed-differences"' not in page


def test_compare_html_lists_the_first_points_and_says_how_many_more(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two big runs: the point-by-point table lists the first MAX_ROWS matched points and
    names the command that lists them all (here MAX_ROWS is made 1 to keep the runs small)."""
    from storbench.report import htmlcompare

    monkeypatch.setattr(htmlcompare, "MAX_ROWS", 1)
    a = _run(store, name="a", ioengine="libaio", scheduler="none")
    b = _run(store, name="b", ioengine="libaio", scheduler="none")
    cmp = _section(
        html.render_report(store, [str(a), str(b)]), '<section id="comparison">', "</section>"
    )
    table = _section(cmp, "<h4>Point by point</h4>", "</table>")
    assert table.count("<tr>") == 1 + 1  # the header and one point
    assert "the first 1 matched points (1 more)" in cmp
    assert f"<code>storbench compare {a} {b}</code>" in cmp


def test_report_html_of_one_run_warns_after_its_answer_and_before_its_summary(
    store: Store,
) -> None:
    a = _run(store, name="psync", ioengine="psync", scheduler="none")
    page = html.render_report(store, [str(a)])
    main = page[page.index("<main>") :]
    warn = main.index('<div class="warn advice">')
    assert warn < main.index('<section id="summary">')
    block = _section(main, '<div class="warn advice">', "</div>")
    (item,) = re.findall(r"<li>.*?</li>", block, re.S)
    assert "iodepth 32 with ioengine=psync does nothing" in item and HOSTILE not in page
    b = _run(store, name="libaio", ioengine="libaio", scheduler="none")
    assert 'class="warn advice"' not in html.render_report(store, [str(b)])


def test_report_markdown_warns_and_lists_the_test_beds_differences(store: Store) -> None:
    from storbench.report import markdown, model

    def _markdown_report(store: Store, refs: list[str]) -> str:
        if len(refs) > 1:
            return markdown.PRESENTER.comparison(model.load_comparison(store, refs))
        return markdown.PRESENTER.run(model.load_run(store, refs[0]))

    a = _run(store, name="psync", ioengine="psync", scheduler="none", dirty="20")
    b = _run(store, name="libaio", ioengine="libaio", scheduler="mq-deadline", dirty="40")
    one = _markdown_report(store, [str(a)])
    assert one.startswith("**Warnings**\n\n- ") and "ioengine=psync does nothing" in one
    two = _markdown_report(store, [str(a), str(b)])
    assert two.index("**Warnings**") < two.index("## ") and f"run {a}: " in two
    assert "test beds differ (base -> other):" in two
    assert "- host.tuning.sysctl.vm.dirty_ratio: 20 -> 40" in two
    assert HOSTILE not in one + two
