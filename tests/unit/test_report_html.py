"""The HTML report and its charts on runs made with the Store API from recorded fio outputs:
escaping of everything that came from a plan, a host or fio; a hover title and a link for
every data point; raw output kept byte for byte (with --raw; by default named, not held);
size of a 500-point report; what a bigger run's page leaves out."""

from __future__ import annotations

import base64
import gzip
import re
import sys
from pathlib import Path

import pytest

from storbench.engines import fio
from storbench.plan import Point, Target
from storbench.report import charts, html
from storbench.store import Store

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the harness modules
from stored_runs import recorded, stored_run

DATA = Path(__file__).resolve().parent.parent / "data" / "fio"
HOSTILE = "<script>alert(1)</script> & \"q\" 's' $x$"
IMG = "<img src=x onerror=alert(2)>"
RAW_OUTPUTS = [
    "psync-randread-json",
    "libaio-randrw-jsonplus",
    "numjobs4-group-jsonplus",
    "null-engine-jsonplus",
]


def make_run(
    store: Store,
    grid: list[dict[str, object]],
    *,
    name: str = "r",
    workload: str = "w",
    target: str = IMG,
    inventory: dict[str, object] | None = None,
    plan_text: str = "name: r\n",
    fail: int | None = None,
) -> int:
    """A run of one point per grid entry (params = axes), measured by recorded fio outputs."""
    tgt = Target("file", "/mnt/x/sb.dat", name=target)
    points = [
        Point(i, f"{name}-{i}", 0, tgt, workload, dict(params), dict(params))
        for i, params in enumerate(grid)
    ]
    run_id = store.runs.create(
        kind="run",
        name=name,
        source="test",
        plan_text=plan_text,
        overrides=["--set x=<y>"],
        inventory=inventory or {"host": {"hostname": "h"}, "targets": [tgt.to_dict()]},
        fio_version="fio-3.33",
        storbench_version="0.1.0",
        argv=[],
        points=points,
    )
    for p in points:
        stem = RAW_OUTPUTS[p.index % len(RAW_OUTPUTS)]
        text = (DATA / f"{stem}.json").read_text()
        doc, _ = fio.final_document(text)
        meas = fio.measurement_from_document(doc)
        if p.index == fail:
            meas.status, meas.error, meas.directions = "failed", f"fio said {HOSTILE}", {}
        store.measurements.record(
            run_id,
            p,
            meas,
            engine="fio",
            command=["fio", "--output-format=json+", f"{HOSTILE}.fio"],
            job_file=f"[{HOSTILE}]\nrw=randread\n",
            raw_output=text,
            stderr=f"</pre>{HOSTILE}" if p.index == 0 else None,
            started_at=1.0,
            ended_at=2.0,
        )
    store.runs.set_status(run_id, "completed")
    return run_id


def sweep(bs: list[str], iodepth: list[int], **more: list[object]) -> list[dict[str, object]]:
    grid = [{"rw": "randread", "bs": b, "iodepth": q} for b in bs for q in iodepth]
    for key, values in more.items():
        grid = [{**g, key: v} for g in grid for v in values]
    return grid


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(str(tmp_path / "r.db"))


def tags(page: str) -> list[str]:
    return re.findall(r"<[a-zA-Z][^<>]*>", page)


def test_report_escapes_all_text_from_plans_hosts_and_fio(store: Store) -> None:
    inv = {
        "host": {"hostname": HOSTILE, "cpu_model": IMG, "memory_bytes": 1 << 30},
        "targets": [{"kind": "file", "path": f"/mnt/{IMG}", "name": IMG, "disk": {"model": IMG}}],
        "hosts": [{"address": HOSTILE, "fio_version": "3.33"}],  # any other inventory too
    }
    grid = sweep(["4k", "64k"], [1, 8], numjobs=[1, 2])
    a = make_run(
        store,
        grid,
        name=HOSTILE,
        workload=HOSTILE,
        inventory=inv,
        plan_text=f"name: x\n# </pre>{HOSTILE}\n",
        fail=3,
    )
    b = make_run(store, grid, name=IMG, workload=HOSTILE)
    page = html.render_report(store, [str(a), str(b)])

    assert page.count("<script") == 1, "only the report's own script"
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "&lt;img src=x onerror=alert(2)&gt;" in page
    bad = [t for t in tags(page) if re.search(r"\s(src|on[a-z]+)=", t)]
    assert not bad, bad[:3]
    assert "<img" not in page and "</pre><script" not in page
    # the page may load nothing: only in-page links, a data: icon, a CSP that forbids the rest
    links = {v for t in tags(page) for v in re.findall(r'href="([^"]*)"', t)}
    assert all(v.startswith("#") or v == "data:," for v in links), links
    assert "default-src 'none'" in page
    nonce = re.search(r"script-src 'nonce-([^']+)'", page)
    assert nonce and f'<script nonce="{nonce.group(1)}">' in page


def test_every_chart_point_has_a_hover_title_and_a_link_to_its_detail(store: Store) -> None:
    a = make_run(store, sweep(["4k", "16k", "64k"], [1, 2, 4, 8]))
    b = make_run(store, sweep(["4k", "16k", "64k"], [1, 2, 4, 8]))
    runs = [charts.load_run(store, a), charts.load_run(store, b)]
    ids = {f"r{r.run.id}-p{s.index + 1}" for r in runs for s in r.summaries}
    for kind in charts.available_kinds(runs):
        chart = charts.build_chart(kind, runs)
        svg = charts.render_inline_svg(chart, prefix="t-")
        groups = re.findall(r'<g (?:id="[^"]*" )?class="pt"( data-ref="[^"]*")?><title>', svg)
        assert len(groups) == chart.marks > 0, kind
        refs = {g[len(' data-ref="') : -1] for g in groups if g}
        assert refs <= ids, kind
        if kind != "compare":  # the averages of a comparison have no single point
            assert all(groups), kind
        # ids of the page are prefixed: two charts never share one
        assert all(i.startswith("t-") for i in re.findall(r'\sid="([^"]+)"', svg))


def test_sides_from_one_run_and_ids_unique_in_the_page(store: Store) -> None:
    run = make_run(store, sweep(["4k", "64k"], [1, 8]))
    page = html.render_report(store, [f"{run}:bs=4k", f"{run}:bs=64k", f"{run}"])
    ids = [i for t in tags(page) for i in re.findall(r'\sid="([^"]+)"', t)]
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)[:5]
    assert f"run {run}: r [bs=4k]" in page and f"run {run}: r [bs=64k]" in page
    assert page.count('class="point"') == 2 + 2 + 4


def test_raw_output_is_kept_byte_for_byte(store: Store) -> None:
    run = make_run(store, sweep(["4k"], [1, 2]))
    page = html.render_report(store, [str(run)], raw=True)
    blobs = re.findall(r'data-gz="([A-Za-z0-9+/=]+)"', page)
    assert len(blobs) == 2
    raws = [store.measurements.raw(m.id)["raw_output"] for m in store.measurements.of_run(run)]
    assert [gzip.decompress(base64.b64decode(b)).decode() for b in blobs] == raws


def test_raw_output_stays_in_the_database_unless_asked_for(store: Store, tmp_path: Path) -> None:
    """By default a point's details name the command that prints its raw output, and the
    page holds none of it; ``report --raw`` puts it in."""
    from click.testing import CliRunner

    from storbench.cli import cli

    run = make_run(store, sweep(["4k"], [1, 2, 4]))
    page = html.render_report(store, [str(run)])
    assert "data-gz=" not in page and '<details class="raw"' not in page
    assert '"fio version"' not in page  # nothing of fio's output
    pointers = re.findall(r'<p class="muted raw-pointer">raw output: <code>([^<]+)</code>', page)
    assert pointers == [f"storbench show {run} --point {n}" for n in (1, 2, 3)]
    assert "storbench report --raw</code> puts them all in the page" in page

    out = tmp_path / "raw.html"
    args = ["report", str(run), "--raw", "-o", str(out), "--db", store.path]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    with_raw = out.read_text()
    assert len(re.findall(r'data-gz="[A-Za-z0-9+/=]+"', with_raw)) == 3
    assert "raw-pointer" not in with_raw


def test_a_big_run_says_what_its_page_leaves_out(store: Store) -> None:
    """A run of more points than the page shows: the summary table holds the first
    MAX_SUMMARY_POINTS, the details the first MAX_POINT_DETAILS; each says how many were
    left out and how to see them, and a point past the details is not a dead link."""
    from storbench.report import details

    n = html.MAX_SUMMARY_POINTS + 1
    tgt = Target("file", "/x")
    meas = recorded("psync-randread-json")
    measured = [
        (Point(i, f"k{i}", 0, tgt, "w", {"rw": "randread", "size": i}, {"size": i}), meas)
        for i in range(n)
    ]
    run = stored_run(store, measured, name="big")
    page = html.render_report(store, [str(run)])
    summary = page.split('<section id="summary">', 1)[1].split("</section>", 1)[0]
    assert summary.count("<tr") == 1 + html.MAX_SUMMARY_POINTS  # the header, a row a point
    assert f"of its {n:,} points (1 left out)" in summary
    assert f"<code>storbench export {run} --format csv</code>" in summary
    linked = re.findall(r'data-open="r\d+-p(\d+)"', summary)
    assert linked == [str(i) for i in range(1, details.MAX_POINT_DETAILS + 1)]
    shown = f"storbench show {run} --point {details.MAX_POINT_DETAILS + 1}"
    assert f'<span title="{shown}">' in summary
    points = page.split('<section id="points">', 1)[1]
    assert points.count('class="point"') == details.MAX_POINT_DETAILS
    left = n - details.MAX_POINT_DETAILS
    assert (
        f"details of the first {details.MAX_POINT_DETAILS:,} points; the other {left:,}:" in points
    )
    assert f"<code>storbench show {run} --point N</code>" in points


def test_chart_text_with_dollars_is_not_mathtext(store: Store) -> None:
    run = make_run(store, sweep(["4k", "64k"], [1, 4]), target="$5 $6 $", workload="$a$")
    chart = charts.build_chart("iops-vs-iodepth", [charts.load_run(store, run)])
    assert charts.render(chart, "png")[:4] == b"\x89PNG"
    assert b"$a$" in charts.render(chart, "svg")


def test_a_500_point_report_stays_under_5_mb(store: Store) -> None:
    grid = sweep(["4k", "16k", "64k", "128k", "1m"], [1, 2, 4, 8, 16, 32, 64, 128, 256, 512])
    grid = [{**g, "rw": rw, "numjobs": nj} for g in grid for rw in RW for nj in (1, 2, 4, 8, 16)]
    assert len(grid) == 500
    run = make_run(store, grid)
    page = html.render_report(store, [str(run)])
    assert len(page.encode()) < 5_000_000
    assert page.count('class="point"') == 500


RW = ("randread", "randwrite")


def test_points_on_many_hosts_show_each_hosts_figures(store: Store) -> None:
    """Client/server output (recorded with two fio servers): the point detail lists the
    aggregate and each host with its own IOPS, escaped like everything else."""
    RAW_OUTPUTS.append("clientserver-2hosts-jsonplus")
    try:
        run_id = make_run(store, [{"rw": "randread", "iodepth": q} for q in (1, 2, 4, 8, 16)])
    finally:
        RAW_OUTPUTS.pop()
    (row,) = [m for m in store.measurements.of_run(run_id) if m.measurement.hosts]
    page = html.render_report(store, [str(run_id)])
    assert page.count('<table class="num hosts">') == 1
    section = page.split('<table class="num hosts">', 1)[1].split("</table>", 1)[0]
    assert "all hosts (2/2)" in section
    for host, m in row.measurement.hosts.items():
        assert f"<td>{host}</td>" in section
        d = m.direction("read") or m.direction("write")
        assert d is not None
        assert f'<td class="n">{html.fmt_iops(d.iops)}</td>' in section


def test_markdown_report_lists_each_host(store: Store) -> None:
    from storbench.report import markdown as md

    RAW_OUTPUTS.append("clientserver-2hosts-jsonplus")
    try:
        run_id = make_run(store, [{"rw": "randread", "iodepth": q} for q in (1, 2, 4, 8, 16)])
    finally:
        RAW_OUTPUTS.pop()
    items = [(str(m.point_idx + 1), m.measurement) for m in store.measurements.of_run(run_id)]
    text = md.hosts_markdown([(label, m) for label, m in items if m.hosts])
    assert "### Per host" in text and "all hosts (2/2)" in text
    (meas,) = [m for _, m in items if m.hosts]
    for host in meas.hosts:
        assert f"| {host} |" in text
    assert md.hosts_markdown([(label, m) for label, m in items if not m.hosts]) == ""


#: recorded randread outputs of similar latency (repetitions, or points of one sweep)
STEMS = ["psync-randread-json", "status-interval-json", "percentile-rank-jsonplus"]


def test_html_spread_is_the_terminals_95_ci(store: Store) -> None:
    """One definition of the spread of repetitions everywhere: the HTML table's ±95% cell is
    the terminal's and the Markdown's (the 95 % CI's half width relative to the mean)."""
    from storbench.analysis.summary import summarize
    from storbench.report.fmt import fmt_spread

    tgt = Target("file", "/x")
    measured = [
        (Point(rep, "k", rep, tgt, "w", {"rw": "randread"}, {"rw": "randread"}), recorded(stem))
        for rep, stem in enumerate(STEMS)
    ]
    run_id = stored_run(store, measured, name="reps")
    (s,) = summarize(measured)
    want = fmt_spread(s.dirs["read"].iops_spread)
    assert want.startswith("±") and want.endswith(" %")
    page = html.render_report(store, [str(run_id)])
    assert ">±95%</th>" in page
    assert f'<td class="n">{want}</td>' in page


def _reps_run(store: Store, depths: tuple[int, ...] = (1, 4), reps: int = 3) -> int:
    """A point per iodepth, each repeated ``reps`` times: recorded randread outputs (the
    i-th repetition, or with one repetition the i-th point, is STEMS[i])."""
    tgt = Target("file", "/x")
    points = [
        Point(i * reps + r, f"q{q}", r, tgt, "w", {"rw": "randread", "iodepth": q}, {"iodepth": q})
        for i, q in enumerate(depths)
        for r in range(reps)
    ]
    measured = [(p, recorded(STEMS[p.repetition if reps > 1 else p.index])) for p in points]
    run_id = stored_run(store, measured, name="reps")
    return run_id


def test_chart_points_of_repetitions_carry_their_95_ci(store: Store) -> None:
    """A sweep chart of repeated points draws each point's 95 % CI (the tables' ±) as an
    error bar, and its hover text says so."""
    from storbench.analysis.stats import spread

    run = charts.load_run(store, _reps_run(store))
    chart = charts.build_chart("iops-vs-iodepth", [run])
    marks = [m for p in chart.panels for ln in p.lines for m in ln.marks]
    assert len(marks) == 2
    for m, s in zip(marks, sorted(run.summaries, key=lambda s: s.axes["iodepth"]), strict=True):
        sp = spread(s.rep_iops)
        assert sp is not None and m.err == pytest.approx(sp.half_width)
        assert "(95 % CI, n=3)" in m.tip
    svg = charts.render_inline_svg(chart, prefix="e-")
    assert svg.count("<title>") >= 2


def test_log_latency_axis_has_several_ticks_within_one_decade(store: Store) -> None:
    from storbench.report.charts import draw

    run = charts.load_run(store, _reps_run(store, depths=(1, 2, 4), reps=1))
    chart = charts.build_chart("lat-percentiles", [run])
    assert chart.panels[0].yscale == "log"
    fig, _ = draw._draw(chart)
    ax = fig.axes[0]
    lo, hi = ax.get_ylim()
    ticks = [t for t in ax.get_yticks() if lo <= t <= hi]
    assert len(ticks) >= 3, (lo, hi, ticks)
