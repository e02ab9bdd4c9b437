"""Charts of several runs and of many-variant sweeps stay readable (report/charts/facets.py):
a run's lines are named by what tells the run apart (its name, filter, target, an option or
a test-bed setting), never ``run 7: matrix``; no panel holds more than MAX_SERIES lines (the
rest split over panels titled with what they hold, each with its own legend); the axes say
what they count. The chart model is inspected as the code builds it, on runs stored from
recorded real fio outputs."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest

from storbench.plan import Point, Target
from storbench.report import charts
from storbench.report.charts import MAX_SERIES, draw, run_labels
from storbench.store import Store

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the harness modules
from stored_runs import recorded, stored_run

#: recorded randread outputs, one per point in turn (their figures differ)
STEMS = ["psync-randread-json", "status-interval-json", "percentile-rank-jsonplus"]
HOSTILE = "<script>alert(1)</script> $x$"


def _run(
    store: Store,
    grid: list[dict[str, Any]],
    *,
    name: str = "matrix",
    target: str = "/dev/sdb",
    fixed: dict[str, Any] | None = None,
    inventory: dict[str, Any] | None = None,
) -> int:
    """A run of one point per grid entry (its axes), ``fixed`` options at every point."""
    t = Target("file", target)
    points = [
        Point(i, f"p{i}", 0, t, "w", {"rw": "randread", **(fixed or {}), **g}, dict(g))
        for i, g in enumerate(grid)
    ]
    measured = [(p, recorded(STEMS[p.index % len(STEMS)])) for p in points]
    return stored_run(store, measured, name=name, inventory=inventory)


def _grid(bs: list[str], iodepth: list[int]) -> list[dict[str, Any]]:
    return [{"bs": b, "iodepth": q} for b in bs for q in iodepth]


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(str(tmp_path / "r.db"))


def _load(store: Store, *refs: object) -> list[charts.RunReport]:
    return charts.load_runs(store, [str(r) for r in refs])


def _legend(chart: charts.Chart) -> list[str]:
    return [label for _, label in chart.legend]


# ---------------------------------------------------------------------------- run labels


def test_chart_facets_runs_of_different_names_are_called_by_them(store: Store) -> None:
    a = _run(store, _grid(["4k"], [1, 4]), name="proxmox")
    b = _run(store, _grid(["4k"], [1, 4]), name=HOSTILE)
    runs = _load(store, a, b)
    assert run_labels(runs) == ["proxmox", HOSTILE]
    chart = charts.build_chart("iops-vs-iodepth", runs)
    assert _legend(chart) == ["proxmox", HOSTILE]
    assert [ln.label for p in chart.panels for ln in p.lines] == ["proxmox", HOSTILE]
    # hovering a point still names its run in full
    tips = [m.tip for p in chart.panels for ln in p.lines for m in ln.marks]
    assert all(t.startswith((f"run {a}: proxmox\n", f"run {b}: {HOSTILE}\n")) for t in tips)


def test_chart_facets_runs_of_one_suite_are_called_by_what_differs(store: Store) -> None:
    """Two runs of the matrix suite: not "run 1: matrix" and "run 2: matrix", but their
    target; else the option set differently; else the test-bed setting; else the run id."""
    grid = _grid(["4k"], [1, 4])
    sdb = _run(store, grid, target="/dev/sdb")
    sdc = _run(store, grid, target="/dev/sdc")
    assert run_labels(_load(store, sdb, sdc)) == ["/dev/sdb", "/dev/sdc"]

    d0 = _run(store, grid, fixed={"direct": 0, "size": "1g"})
    d1 = _run(store, grid, fixed={"direct": 1, "size": "1g"})
    assert run_labels(_load(store, d0, d1)) == ["direct=0", "direct=1"]

    def tuned(scheduler: str) -> dict[str, Any]:
        return {"targets": [{"path": "/dev/sdb", "disk": {"tuning": {"scheduler": scheduler}}}]}

    none = _run(store, grid, inventory=tuned("none"))
    kyber = _run(store, grid, inventory=tuned("kyber"))
    assert run_labels(_load(store, none, kyber)) == ["scheduler=none", "scheduler=kyber"]

    again = _run(store, grid)
    assert run_labels(_load(store, sdb, again)) == [f"run {sdb}", f"run {again}"]


def test_chart_facets_sides_of_one_run_are_called_by_their_filter(store: Store) -> None:
    run = _run(store, _grid(["4k", "64k"], [1, 4]))
    runs = _load(store, f"{run}:bs=4k", f"{run}:bs=64k", run)
    assert run_labels(runs) == ["bs=4k", "bs=64k", f"run {run}"]
    chart = charts.build_chart("compare", runs[:2])
    assert chart.panels[0].title == "IOPS change, point by point: bs=64k vs bs=4k"
    assert f"run {run}: matrix [bs=64k] vs run {run}: matrix [bs=4k]" in chart.panels[0].bars[0].tip


def test_chart_facets_names_that_only_partly_differ_add_what_tells_them_apart(
    store: Store,
) -> None:
    grid = _grid(["4k"], [1, 4])
    a = _run(store, grid, name="nvme", target="/dev/nvme0n1")
    b = _run(store, grid, name="nvme", target="/dev/nvme1n1")
    c = _run(store, grid, name="sata", target="/dev/sda")
    assert run_labels(_load(store, a, b, c)) == [
        "nvme, /dev/nvme0n1",
        "nvme, /dev/nvme1n1",
        "sata, /dev/sda",
    ]


# ---------------------------------------------------------------------------- crowded panels


def _lines(chart: charts.Chart) -> list[tuple[str, str]]:
    return [(p.title.split(" · ")[0], ln.label) for p in chart.panels for ln in p.lines]


def test_chart_facets_many_runs_are_split_over_panels_of_a_handful(store: Store) -> None:
    targets = [f"/dev/sd{c}" for c in "abcdefgh"]
    ids = [_run(store, _grid(["4k", "64k"], [1, 2, 4]), target=t) for t in targets]
    chart = charts.build_chart("iops-vs-iodepth", _load(store, *ids))
    assert chart.panel_legends
    assert all(0 < len(p.lines) <= MAX_SERIES for p in chart.panels)
    # no line is lost or drawn twice: every run once in each block size's panels
    assert sorted(_lines(chart)) == sorted((f"bs={b}", t) for b in ("4k", "64k") for t in targets)
    assert chart.marks == 8 * 2 * 3
    assert [p.title for p in chart.panels] == [
        "bs=4k · /dev/sda … /dev/sdd",
        "bs=4k · /dev/sde … /dev/sdh",
        "bs=64k · /dev/sda … /dev/sdd",
        "bs=64k · /dev/sde … /dev/sdh",
    ]
    # a run keeps its colour in every panel; the lines of a panel have colours of their own
    colour = {}
    for p in chart.panels:
        assert len({ln.color for ln in p.lines}) == len(p.lines)
        for ln in p.lines:
            assert colour.setdefault(ln.key, ln.color) == ln.color
    # each panel is drawn with a legend of its own naming its lines, none for the figure
    fig, _ = draw._draw(chart)
    assert not fig.legends
    for ax, p in zip(fig.axes, chart.panels, strict=True):
        legend = ax.get_legend()
        assert legend is not None
        assert [t.get_text() for t in legend.get_texts()] == [ln.label for ln in p.lines]


def test_chart_facets_a_sweep_of_many_block_sizes_is_split_by_them(store: Store) -> None:
    sizes = ["4k", "8k", "16k", "32k", "64k", "128k", "256k", "1m"]
    grid = [{**g, "direct": d} for g in _grid(sizes, [1, 4]) for d in (0, 1)]
    chart = charts.build_chart("iops-vs-iodepth", _load(store, _run(store, grid)))
    assert all(len(p.lines) <= MAX_SERIES for p in chart.panels)
    assert [p.title for p in chart.panels] == [
        "direct=0 · bs=4k … bs=32k",
        "direct=0 · bs=64k … bs=1m",
        "direct=1 · bs=4k … bs=32k",
        "direct=1 · bs=64k … bs=1m",
    ]
    assert chart.marks == len(grid)


def test_chart_facets_a_handful_of_lines_keeps_one_legend(store: Store) -> None:
    ids = [_run(store, _grid(["4k"], [1, 4]), target=f"/dev/sd{c}") for c in "abc"]
    chart = charts.build_chart("iops-vs-iodepth", _load(store, *ids))
    assert not chart.panel_legends and len(chart.panels) == 1
    assert all(ln.color is None for ln in chart.panels[0].lines)
    fig, _ = draw._draw(chart)
    assert len(fig.legends) == 1 and fig.axes[0].get_legend() is None


def test_chart_facets_percentile_panels_hold_a_handful_of_lines(store: Store) -> None:
    """Latency percentiles of two runs along bs x iodepth: 24 points, at most MAX_SERIES
    lines a panel, each line named by what differs within its panel."""
    a = _run(store, _grid(["4k", "16k", "64k"], [1, 2, 4, 8]), name="a")
    b = _run(store, _grid(["4k", "16k", "64k"], [1, 2, 4, 8]), name="b")
    chart = charts.build_chart("lat-percentiles", _load(store, a, b))
    assert all(0 < len(p.lines) <= MAX_SERIES for p in chart.panels)
    assert sum(len(p.lines) for p in chart.panels) == 24
    for p in chart.panels:
        assert "matrix" not in p.title and all("matrix" not in ln.label for ln in p.lines)
        assert len({ln.label for ln in p.lines}) == len(p.lines), p.title


def test_chart_facets_one_axis_of_many_values_is_split_not_scattered(store: Store) -> None:
    """Eight iodepths of one run: two panels of four lines, not eight panels of one."""
    chart = charts.build_chart(
        "lat-percentiles", _load(store, _run(store, _grid(["4k"], [1, 2, 4, 8, 16, 32, 64, 128])))
    )
    assert [len(p.lines) for p in chart.panels] == [4, 4]
    assert [p.title for p in chart.panels] == [
        "iodepth=1 … iodepth=8",
        "iodepth=16 … iodepth=128",
    ]


# ---------------------------------------------------------------------------- axes


@pytest.mark.parametrize(
    ("kind", "xlabel", "ylabel"),
    [
        ("iops-vs-iodepth", "iodepth (I/Os queued per job)", "IOPS"),
        ("bw-vs-iodepth", "iodepth (I/Os queued per job)", "MiB/s"),
        ("lat-vs-iodepth", "iodepth (I/Os queued per job)", r"mean clat \((ns|µs|ms)\)"),
        ("lat-percentiles", "percentile", r"clat \((ns|µs|ms)\)"),
    ],
)
def test_chart_facets_axes_say_what_they_count(
    store: Store, kind: str, xlabel: str, ylabel: str
) -> None:
    run = _run(store, _grid(["4k"], [1, 2, 4, 8]))
    chart = charts.build_chart(kind, _load(store, run))
    for p in chart.panels:
        assert p.xlabel == xlabel and re.fullmatch(ylabel, p.ylabel), p.ylabel
    fig, _ = draw._draw(chart)
    ax = fig.axes[0]
    lo, hi = ax.get_ylim()
    assert len([t for t in ax.get_yticks() if lo <= t <= hi]) >= 3
    assert len(ax.get_xticks()) >= 4


def test_chart_facets_log_axis_over_decades_has_plain_decade_ticks(store: Store) -> None:
    """A psync and a null-engine point: their latencies lie four decades apart. The axis
    ticks the decades (not 1, 2 and 5 of each: crowded) and writes them without exponents."""
    t = Target("file", "/x")
    measured = [
        (Point(i, f"p{i}", 0, t, "w", {"rw": "randread", "iodepth": q}, {"iodepth": q}), m)
        for i, (q, m) in enumerate(
            ((1, recorded("psync-randread-json")), (2, recorded("null-engine-jsonplus")))
        )
    ]
    chart = charts.build_chart("lat-percentiles", _load(store, stored_run(store, measured)))
    (panel,) = chart.panels
    ys = [m.y for ln in panel.lines for m in ln.marks]
    assert max(ys) / min(ys) > 1000
    fig, _ = draw._draw(chart)
    ax = fig.axes[0]
    lo, hi = ax.get_ylim()
    ticks = [t for t in ax.get_yticks() if lo <= t <= hi]
    assert 3 <= len(ticks) <= 8, ticks
    labels = [draw._tick(t) for t in ticks]
    assert not [x for x in labels if "e" in x], labels
