"""The capacity chart (report/charts/capacity.py, ``storbench chart RUN --kind capacity``, and
beside the answer in the HTML report): every step of a search as latency against offered
load, the target line, saturated steps marked with why their latency understates, the
capacity found. The runs are stored the way the runner stores a search's steps, measured by
recorded fio output of real open-loop steps against a device throttled to 2,000 read IOPS
(tests/data/climb: a closed-loop probe, offered rates 1,000 to 1,950 that it takes, and
2,200 that it cannot: saturated)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from starlette.testclient import TestClient

from storbench.cli import cli
from storbench.engines import fio
from storbench.model.errors import UserError
from storbench.plan import Point, Target
from storbench.plan.slokeys import Slo
from storbench.report import charts
from storbench.report.charts.capacity import SATURATED_NOTE
from storbench.report.html import render_runs
from storbench.store import Store
from storbench.web import app as web

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the harness modules
from stored_runs import recorded, stored_run

CLIMB = Path(__file__).resolve().parents[1] / "data" / "climb"
MS = 1e6
#: the steps in the order a search of them runs (2,200 offered above what the device takes)
RATES: list[int | None] = [None, 1000, 1500, 1800, 1950, 2200]


def _search(store: Store, slo: Slo, rates: list[int | None] = RATES, name: str = "cap") -> int:
    """A run of one search: a point per step, measured by its recording."""
    t = Target("device", "/dev/loop7")
    measured = []
    for i, rate in enumerate(rates):
        params = {"rw": "randread", "bs": "4k", "iodepth": 32}
        if rate is not None:
            params |= {"rate_iops": rate, "rate_process": "poisson"}
        axes = {} if rate is None else {"offered_iops": rate}
        p = Point(i, f"k{i}", 0, t, "rand4k-read", params, axes, slo=slo, offered_iops=rate)
        text = (CLIMB / f"rate-{rate or 'probe'}.json").read_text()
        measured.append((p, fio.parse_output(text)[0]))
    return stored_run(store, measured, name=name, inventory={"report": "capacity"})


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(str(tmp_path / "r.db"))


def _chart(store: Store, run: int) -> charts.Chart:
    return charts.build_chart("capacity", charts.load_runs(store, [str(run)]))


def _xs(panel: charts.Panel, key: str) -> list[float]:
    return [m.x for ln in panel.lines if ln.key == key for m in ln.marks]


def test_capacity_chart_draws_each_step_at_its_offered_load(store: Store) -> None:
    chart = _chart(store, _search(store, Slo(latency_ns=2 * MS, percentile=99)))
    assert chart.kind == "capacity" and "capacity" in charts.available_kinds(
        charts.load_runs(store, ["1"])
    )
    (panel,) = chart.panels
    assert panel.title == "rand4k-read on /dev/loop7"
    # the probe offers nothing: it stands at what it achieved (about 2,008 IOPS)
    (probe,) = _xs(panel, "probe")
    assert 2000 < probe < 2010
    assert _xs(panel, "meets") == [1000, 1500, 1800]
    assert _xs(panel, "capacity") == [1950]  # the highest that met
    assert _xs(panel, "saturated") == [2200]
    assert _xs(panel, "misses") == []
    assert chart.marks == len(RATES)  # a point per step; the achieved rates restate them
    # the achieved rate of each offered step, tied to its offer
    achieved = next(ln for ln in panel.lines if ln.key == "achieved")
    assert achieved.aside and [m.base for m in achieved.marks] == [1000, 1500, 1800, 1950, 2200]
    assert 2000 < achieved.marks[-1].x < 2010  # 2,200 offered, ~2,003 taken
    # the latency judged (p99 of total latency) in the answer's unit, on a log axis
    assert panel.ylabel == "p99 latency (ms)" and panel.yunit == MS and panel.yscale == "log"
    assert panel.xlabel.startswith("offered load (IOPS")
    tips = {ln.key: ln.marks[0].tip for ln in panel.lines}
    assert tips["capacity"].startswith("point 5: offered 1,950 IOPS, achieved 1,940")
    assert "meets p99 ≤ 2.00 ms: the capacity" in tips["capacity"]
    assert "understates what an open-loop client would see" in tips["saturated"]
    assert all(m.ref for ln in panel.lines for m in ln.marks)  # each links to its point


def test_capacity_chart_has_the_target_line_and_the_capacity_found(store: Store) -> None:
    (panel,) = _chart(store, _search(store, Slo(latency_ns=2 * MS, percentile=99))).panels
    target, found = panel.rules
    assert (target.axis, target.value, target.label) == ("y", 2 * MS, "target p99 ≤ 2.00 ms")
    assert (found.axis, found.value) == ("x", 1950)
    assert found.label == "capacity 1,940 IOPS (offered 1,950)"  # what the answer says
    # saturated steps carry the note on the chart itself
    assert SATURATED_NOTE in panel.note
    assert "understates what an open-loop client would see" in SATURATED_NOTE


def test_capacity_chart_marks_misses_and_a_search_nothing_met(store: Store) -> None:
    # at p99 ≤ 1 ms, 1,000 and 1,500 miss (1.22 and 1.04 ms) and 1,800, 1,950 meet
    (panel,) = _chart(store, _search(store, Slo(latency_ns=1 * MS, percentile=99))).panels
    assert _xs(panel, "misses") == [1000, 1500]
    assert _xs(panel, "meets") == [1800] and _xs(panel, "capacity") == [1950]
    # nothing meets 100 µs: no capacity line, a note that says so, the axis in µs
    run = _search(store, Slo(latency_ns=100_000, percentile=99), [None, 1000, 1500])
    (none,) = _chart(store, run).panels
    assert [r.axis for r in none.rules] == ["y"] and none.note == "no load meets p99 ≤ 100.0 µs"
    assert none.ylabel == "p99 latency (µs)" and none.yunit == 1e3
    assert _xs(none, "capacity") == [] and len(_xs(none, "misses")) == 2
    # a mean objective: the mean is judged, and the probe that meets it is the capacity
    run = _search(store, Slo(latency_ns=1e9, percentile=None), [None])
    (most,) = _chart(store, run).panels
    assert most.ylabel == "mean latency (ms)" and _xs(most, "probe") == []
    assert len(_xs(most, "capacity")) == 1 and "(offered" not in most.rules[1].label


def test_capacity_chart_svg_shows_the_target_and_each_step_on_hover(store: Store) -> None:
    chart = _chart(store, _search(store, Slo(latency_ns=2 * MS, percentile=99)))
    svg = charts.render_inline_svg(chart, "t-")  # text stays text
    assert "target p99 ≤ 2.00 ms" in svg and "capacity 1,940 IOPS (offered 1,950)" in svg
    assert "saturated" in svg and "p99 latency (ms)" in svg
    titles = re.findall(r'<g class="pt" data-ref="[^"]+"><title>([^<]*)</title>', svg)
    assert len(titles) == len(RATES) + len(RATES) - 1  # each step, each offered step's rate
    assert any(t.startswith("point 1: probe (closed loop)") for t in titles)
    file_svg = charts.render(chart, "svg").decode()  # a file's text is glyph paths
    assert "<title>Latency against offered load" in file_svg and file_svg.count('class="pt"') == 11
    assert charts.render(chart, "png").startswith(b"\x89PNG")


def test_capacity_chart_of_a_run_without_a_search_says_the_fix(store: Store) -> None:
    t = Target("file", "/srv/x.dat")
    p = Point(0, "k0", 0, t, "w", {"rw": "randread", "iodepth": 1}, {"iodepth": 1})
    run = stored_run(store, [(p, recorded("psync-randread-json"))])
    runs = charts.load_runs(store, [str(run)])
    assert "capacity" not in charts.available_kinds(runs)
    with pytest.raises(UserError, match="has no capacity search to draw") as e:
        charts.build_chart("capacity", runs)
    assert "storbench run capacity" in str(e.value.fix)


def test_capacity_chart_command_writes_the_file(store: Store, tmp_path: Path) -> None:
    run = _search(store, Slo(latency_ns=2 * MS, percentile=99))
    out = tmp_path / "curve.svg"
    args = ["chart", str(run), "--kind", "capacity", "-o", str(out), "--db", store.path]
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 0, r.output
    assert "wrote capacity" in r.output and "(1 panel(s), 6 points)" in r.output
    assert out.read_text().startswith("<?xml")
    assert "capacity" in CliRunner().invoke(cli, ["chart", "--help"]).output


def test_capacity_html_report_shows_the_chart_beside_the_answer(store: Store) -> None:
    run = _search(store, Slo(latency_ns=2 * MS, percentile=99))
    page = render_runs(charts.load_runs(store, [str(run)]))
    answer = re.search(r'<section id="answer">.*?</section>', page, re.S)
    assert answer is not None
    section = answer.group(0)
    # the table, then the chart, inline, in the answer's section
    assert section.index("capacity: 1,940 IOPS") < section.index("<svg")
    assert '<figure class="chart capacity"' in section and "target p99 ≤ 2.00 ms" in section
    assert section.count('class="pt"') == 11 and 'data-ref="r1-p5"' in section
    # not again among the other charts
    assert page.count("target p99 ≤ 2.00 ms") == 1


def test_capacity_web_view_shows_the_chart_with_the_answer(store: Store) -> None:
    run = _search(store, Slo(latency_ns=2 * MS, percentile=99))
    with TestClient(web.create_app(store.path), base_url="http://127.0.0.1:8700") as client:
        r = client.get(f"/runs/{run}")
    assert r.status_code == 200
    answer = re.search(r'<section id="answer">.*?</section>', r.text, re.S)
    assert answer is not None and "target p99 ≤ 2.00 ms" in answer.group(0)
    assert 'data-ref="r1-p5"' in answer.group(0)  # a step opens its point's page


def test_capacity_intervals_survive_the_store(store: Store) -> None:
    """A step read back from the store (its measurement without histograms) gets its
    percentile's 95 % interval from the point's stored total-latency histograms: the same
    interval as the step measured at once, in the answer's table, text and JSON."""
    from storbench.analysis.capacity import step_of
    from storbench.report.model import load_run

    slo = Slo(latency_ns=2 * MS, percentile=99)
    run = _search(store, slo)
    answer = load_run(store, str(run)).answer
    assert answer is not None
    steps = [c.step for c in answer.rows[0].steps]
    for rate, s in zip(RATES, steps, strict=True):
        assert s is not None and s.interval is not None
        text = (CLIMB / f"rate-{rate or 'probe'}.json").read_text()
        direct = step_of(slo, rate, fio.parse_output(text)[0])
        assert direct is not None and direct.interval == s.interval
    # the step at 1,000 offered (p99 1.22 ms) holds the 2 ms target in its interval
    out = CliRunner().invoke(cli, ["show", str(run), "--db", store.path])
    assert out.exit_code == 0, out.output
    assert "95 % CI" in out.output and "meets (within chance)" in out.output
    assert "within chance (point 2)" in out.output
    # the latency column is the objective's percentile's (a note naming points does not
    # rename it: it once read "point 2 latency")
    assert "p99 latency" in out.output and "point 2 latency" not in out.output


def test_capacity_table_says_why_a_step_ran_above_its_offered_rate() -> None:
    """What the S3 search from three hosts showed: 48 requests/s offered over 48 jobs for
    1 s (1 a job), 111 achieved: fio issues each job's first I/O at once. Said, with why;
    a step within 10 % of its rate is not."""
    from storbench.analysis.capacity import Step, capacity
    from storbench.analysis.capacityanswer import CapacityAnswer, CapacityRow, CapacityStep
    from storbench.report.capacity import capacity_tables

    slo = Slo(latency_ns=4 * MS, percentile=None)
    probe = Step(None, 1196.0, 39.5 * MS, False, False)
    close = Step(576, 620.0, 4.5 * MS, False, False)
    above = Step(48, 111.0, 6.8 * MS, False, False)
    steps = [probe, close, above]
    row = CapacityRow(
        "s3://bench/cap/",
        "get",
        {},
        slo,
        capacity(slo, steps),
        [CapacityStep(i + 1, s.offered_iops, s) for i, s in enumerate(steps)],  # type: ignore[arg-type]
    )
    (table,) = capacity_tables(CapacityAnswer([row]))
    said = [n for n in table.notes if n.startswith("achieved above offered")]
    assert len(said) == 1 and said[0].startswith("achieved above offered (point 3):"), table.notes
    assert "first I/O at once" in said[0]
