"""rados bench in reports: seed 000's appendix table (`storbench report RUN --format
markdown` for a `report: rados` run) and latency without clat in the summary, terminal,
Markdown and compare tables, on the real recordings of tests/data/rados (see its README).

Runs are stored the way the runner stores them (store.measurements.record of the measurement
that storbench.engines.rados makes) and reported through the real `storbench report` command.
Expected figures come from this file's own reading of the recordings' summary lines.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from rich.console import Console

from storbench.analysis.compare import compare
from storbench.analysis.summary import PointSummary, summarize
from storbench.cli import cli
from storbench.engines import fio, rados
from storbench.model.metrics import Measurement
from storbench.plan import Point, Target, point_key
from storbench.report import suites
from storbench.report.markdown import comparison_markdown, run_markdown
from storbench.report.model import from_summaries
from storbench.report.terminal import (
    comparison_text,
    hosts_table,
    point_result_line,
    summary_table,
)
from storbench.store import Store

DATA = Path(__file__).resolve().parent.parent / "data" / "rados"
FIO = Path(__file__).resolve().parent.parent / "data" / "fio"
MiB = 1 << 20
POOL = Target("rados", "bench")
DASH = "\u2014"


def printed(name: str) -> dict[str, str]:
    """A recording's summary lines, label -> value as printed."""
    out = {}
    for line in (DATA / f"{name}.out").read_text().splitlines():
        line = re.sub(r"^\d{4}-\d\d-\d\dT[\d:.]+[+-]\d{4} ", "", line)
        if re.match(r"^[A-Z][A-Za-z ()/]+:\s+\S+$", line):
            k, v = line.split(":", 1)
            out[k.strip()] = v.strip()
    return out


def parse(name: str) -> rados.RadosBenchResult:
    mode = name.split("-")[0]
    return rados.parse_rados_bench((DATA / f"{name}.out").read_text(), None, mode)


def one(name: str) -> Measurement:
    return rados.to_measurement(parse(name))


def two(mode: str) -> Measurement:
    names = [f"{mode}-4m-2clients-c{c}" for c in (1, 2)]
    return rados.aggregate_clients([parse(n) for n in names], names)


def params(mode: str, clients: int) -> dict[str, Any]:
    return {
        "engine": "rados-bench",
        "mode": mode,
        "bs": "4m",
        "threads": 16,
        "runtime": 4,
        "clients": clients,
    }


def rados_items(reps: dict[tuple[str, int], list[Measurement]]) -> list[tuple[Point, Measurement]]:
    """Points (mode, clients) with their repetitions, in plan order (rounds of points)."""
    items = []
    keys = list(reps)
    rounds = max(len(ms) for ms in reps.values())
    for r in range(rounds):
        for i, (mode, clients) in enumerate(keys):
            if r < len(reps[(mode, clients)]):
                p = params(mode, clients)
                items.append(
                    (
                        Point(
                            r * len(keys) + i,
                            point_key(POOL, mode, p),
                            r,
                            POOL,
                            mode,
                            p,
                            {"clients": clients},
                        ),
                        reps[(mode, clients)][r],
                    )
                )
    return items


def report(tmp_path: Path, items: list[tuple[Point, Measurement]], kind: str = "rados") -> str:
    """`storbench report RUN --format markdown` of a run holding ``items``."""
    db = str(tmp_path / "runs.db")
    store = Store(db)
    run_id = store.runs.create(
        kind="run",
        name="rados",
        source="suite:rados",
        plan_text=None,
        overrides=[],
        inventory={"report": kind},
        fio_version=None,
        storbench_version="0",
        argv=[],
        points=[p for p, _ in items],
    )
    for p, m in items:
        store.measurements.record(
            run_id,
            p,
            m,
            engine="rados-bench",
            command=None,
            job_file=None,
            raw_output=None,
            stderr=None,
            started_at=None,
            ended_at=None,
        )
    store.runs.set_status(run_id, "completed")
    result = CliRunner().invoke(cli, ["report", str(run_id), "--format", "markdown", "--db", db])
    assert result.exit_code == 0, result.output
    return result.output


def sections(md: str) -> dict[str, tuple[list[str], dict[str, list[str]], list[str]]]:
    """Per ``### rados bench ...`` heading: (column headers, row label -> cells, notes)."""
    out = {}
    for block in md.split("\n### ")[1:]:
        lines = block.splitlines()
        heading = lines[0]
        if not heading.startswith("rados bench "):
            continue
        table = [ln for ln in lines if ln.startswith("|")]
        rows = [[c.strip() for c in ln.strip().strip("|").split("|")] for ln in table]
        assert set(table[1]) <= set("|-: ")
        assert len({len(r) for r in rows}) == 1
        notes = [ln[2:] for ln in lines if ln.startswith("- ")]
        out[heading] = (rows[0], {r[0]: r[1:] for r in rows[2:]}, notes)
    return out


WRITE_ROWS = [
    "Total time run",
    "Total writes made",
    "Write size",
    "Object size",
    "Bandwidth (MB/sec)",
    "Stddev Bandwidth",
    "Max bandwidth (MB/sec)",
    "Min bandwidth (MB/sec)",
    "Average IOPS",
    "Stddev IOPS",
    "Max IOPS",
    "Min IOPS",
    "Average Latency(s)",
    "Stddev Latency(s)",
    "Max latency(s)",
    "Min latency(s)",
]
READ_ROWS = [r.replace("writes", "reads").replace("Write size", "Read size") for r in WRITE_ROWS]


def two_decimals(v: str | float) -> str:
    return f"{float(v):,.2f}"


def four_decimals(v: str | float) -> str:
    return f"{float(v):,.4f}"


# --------------------------------------------------------------------------- seed 000's table


@pytest.fixture(scope="module")
def seed_table(tmp_path_factory: pytest.TempPathFactory) -> str:
    reps: dict[tuple[str, int], list[Measurement]] = {}
    for mode in ("seq", "rand", "write"):  # plan order is not the table's order
        reps[(mode, 1)] = [one(f"{mode}-4m-showtime")]
        reps[(mode, 2)] = [two(mode)]
    return report(tmp_path_factory.mktemp("seed"), rados_items(reps))


def test_one_table_per_mode_write_first_with_seed_000s_headings(seed_table: str) -> None:
    assert list(sections(seed_table)) == [
        "rados bench 4 write -b 4M -t 16 --no-cleanup",
        "rados bench 4 seq -t 16 (uses 4M from write)",
        "rados bench 4 rand -t 16 (uses 4M from write)",
    ]


def test_rows_and_columns_are_seed_000s(seed_table: str) -> None:
    for heading, (cols, rows, _) in sections(seed_table).items():
        assert cols == ["", "Single Client", "Two Clients"]
        assert list(rows) == (WRITE_ROWS if " write " in heading else READ_ROWS)


@pytest.mark.parametrize("mode", ["write", "seq", "rand"])
def test_single_client_column_is_rados_bench_s_own_summary(seed_table: str, mode: str) -> None:
    (_, rows, _) = next(v for k, v in sections(seed_table).items() if f" {mode} " in k)
    got = {label: cells[0] for label, cells in rows.items()}
    own = printed(f"{mode}-4m-showtime")
    res = parse(f"{mode}-4m-showtime")
    for label in (
        "Total time run",
        "Total writes made" if mode == "write" else "Total reads made",
        "Write size" if mode == "write" else "Read size",
        "Object size",
        "Bandwidth (MB/sec)",
        "Stddev IOPS",
        "Max IOPS",
        "Min IOPS",
    ):
        assert got[label] == two_decimals(own[label]), label
    for label in ("Average Latency(s)", "Max latency(s)", "Min latency(s)"):
        assert got[label] == four_decimals(own[label]), label
    # seed 000's number format: thousands separators
    assert got["Object size"] == "4,194,304.00"
    # Average IOPS: operations / time run, not rados bench's truncated integer
    ops = int(own.get("Total writes made") or own["Total reads made"])
    assert got["Average IOPS"] == two_decimals(ops / float(own["Total time run"]))
    assert int(float(got["Average IOPS"].replace(",", ""))) == int(own["Average IOPS"])
    if mode == "write":
        assert got["Stddev Latency(s)"] == four_decimals(own["Stddev Latency(s)"])
        for label in ("Stddev Bandwidth", "Max bandwidth (MB/sec)", "Min bandwidth (MB/sec)"):
            assert got[label] == two_decimals(own[label]), label
    else:
        # rados bench measures no latency stddev for reads: shown as missing, never 0
        assert got["Stddev Latency(s)"] == DASH
        assert "Stddev Bandwidth" not in own
        # the read's bandwidth spread, computed as rados bench does for writes
        _, bw = rados.per_second_samples(res.series, res.op_size or 0)
        assert got["Max bandwidth (MB/sec)"] == two_decimals(max(bw))


@pytest.mark.parametrize("mode", ["write", "seq", "rand"])
def test_two_clients_column(seed_table: str, mode: str) -> None:
    """Totals summed over the clients' summaries, the longest time, the rates and their
    spread over the common window, the latency of all operations."""
    (_, rows, notes) = next(v for k, v in sections(seed_table).items() if f" {mode} " in k)
    got = {label: cells[1] for label, cells in rows.items()}
    own = [printed(f"{mode}-4m-2clients-c{c}") for c in (1, 2)]
    ops = [int(o.get("Total writes made") or o["Total reads made"]) for o in own]
    total = "Total writes made" if mode == "write" else "Total reads made"
    assert got[total] == two_decimals(sum(ops))
    assert got["Total time run"] == two_decimals(max(float(o["Total time run"]) for o in own))
    assert got["Max latency(s)"] == four_decimals(max(float(o["Max latency(s)"]) for o in own))
    assert got["Min latency(s)"] == four_decimals(min(float(o["Min latency(s)"]) for o in own))
    mean = sum(n * float(o["Average Latency(s)"]) for n, o in zip(ops, own, strict=True)) / sum(ops)
    assert got["Average Latency(s)"] == four_decimals(mean)
    agg = two(mode)
    d = next(iter(agg.directions.values()))
    assert got["Bandwidth (MB/sec)"] == two_decimals(d.bw_bytes / MiB)
    assert got["Average IOPS"] == two_decimals(d.iops)
    x = agg.extra
    assert got["Stddev IOPS"] == two_decimals(x["iops"]["stddev"])
    assert got["Max IOPS"] == two_decimals(x["iops"]["max"])
    assert got["Min bandwidth (MB/sec)"] == two_decimals(x["bandwidth"]["min"] / MiB)
    # the clients together are faster than either alone (they ran at the same time)
    bw = [float(o["Bandwidth (MB/sec)"]) for o in own]
    assert float(got["Bandwidth (MB/sec)"].replace(",", "")) > max(bw)
    if mode == "write":
        assert got["Stddev Latency(s)"] == four_decimals(x["whole_run"]["latency"]["stddev"] / 1e9)
    else:
        assert got["Stddev Latency(s)"] == DASH
    # said below the table: which figures are sums, which are over the common window
    text = " ".join(notes)
    assert f"Two Clients {x['window']['seconds']:.2f} s" in text
    assert "longest client's" in text and "sum of the clients'" in text
    assert "common window" in text and "MB = 2^20 bytes" in text
    assert ("no latency stddev for reads" in text) == (mode != "write")


def test_repetitions_show_the_mean_and_say_so(tmp_path: Path) -> None:
    """Two real single-client 4 s writes (text with and without --show-time) as two
    repetitions of one point."""
    names = ["write-4m-plain", "write-4m-showtime"]
    md = report(tmp_path, rados_items({("write", 1): [one(n) for n in names]}))
    ((cols, rows, notes),) = sections(md).values()
    assert cols == ["", "Single Client"]
    own = [printed(n) for n in names]
    for label in ("Total time run", "Bandwidth (MB/sec)", "Max IOPS"):
        assert rows[label] == [two_decimals(sum(float(o[label]) for o in own) / 2)], label
    assert rows["Max latency(s)"] == [
        four_decimals(sum(float(o["Max latency(s)"]) for o in own) / 2)
    ]
    assert "Each figure is the mean over 2 repetitions." in notes


def test_many_clients_are_named_like_seed_000() -> None:
    assert [suites.clients_heading(n) for n in (1, 2, 3, 4, 12)] == [
        "Single Client",
        "Two Clients",
        "Three Clients",
        "4 Clients",
        "12 Clients",
    ]


def test_other_points_of_a_rados_run_get_the_summary_table() -> None:
    rados_summaries = summarize(rados_items({("write", 1): [one("write-4m-showtime")]}))
    fio_point = Point(
        9,
        point_key(Target("file", "/tmp/x"), "r", {"rw": "randread"}),
        0,
        Target("file", "/tmp/x"),
        "r",
        {"rw": "randread"},
        {},
    )
    fio_meas = fio.parse_output((FIO / "psync-randread-json.json").read_text())[0]
    ss = [*rados_summaries, *summarize([(fio_point, fio_meas)])]
    md = run_markdown(
        from_summaries(id=1, name="r", status="completed", report="rados", summaries=ss)
    )
    assert "### rados bench 4 write -b 4M -t 16 --no-cleanup" in md
    assert "| workload | dir | IOPS | MiB/s | clat mean | clat p99 |" in md
    # the plain summary layout when the run does not ask for seed 000's
    md = run_markdown(from_summaries(id=1, name="r", status="completed", report=None, summaries=ss))
    assert "### rados bench" not in md


# --------------------------------------------------------------------------- latency without clat


def rados_summaries() -> list[PointSummary]:
    return summarize(
        rados_items(
            {
                ("write", 1): [one("write-4m-plain"), one("write-4m-showtime")],
                ("seq", 1): [one("seq-4m-plain"), one("seq-4m-showtime")],
                ("rand", 2): [two("rand")],
            }
        )
    )


def test_summary_falls_back_to_lat() -> None:
    ss = rados_summaries()
    for s in ss:
        ds = next(iter(s.dirs.values()))
        assert ds.clat is None and ds.lat is not None
        assert ds.latency is ds.lat and ds.latency_metric == "lat"
        assert s.latency_metric == "lat" and s.clat is None and s.latency is s.lat
        assert s.latency_p99 is None  # no percentiles: missing, never 0
        assert ds.latency_mean_spread is not None and ds.latency_mean_spread.n == s.runs
        assert len(s.engine_figures) == s.runs
    write, seq, _ = ss
    means = [one(n).directions["write"].lat.mean for n in ("write-4m-plain", "write-4m-showtime")]  # type: ignore[union-attr]
    ops = [one(n).directions["write"].total_ios for n in ("write-4m-plain", "write-4m-showtime")]
    assert write.latency_mean == pytest.approx(
        sum(m * n for m, n in zip(means, ops, strict=True)) / sum(ops)  # type: ignore[operator]
    )
    assert write.rep_latency_mean == pytest.approx(means)  # type: ignore[arg-type]
    # writes have a latency stddev: pooled over repetitions; reads have none, so none is
    # pooled (not one made from the means alone)
    assert write.latency is not None and write.latency.stddev is not None
    assert seq.latency is not None and seq.latency.stddev is None


def render(table: Any) -> str:
    console = Console(record=True, width=200)
    console.print(table)
    return console.export_text()


def test_terminal_summary_labels_lat_and_shows_no_percentile_as_a_dash() -> None:
    text = render(summary_table(rados_summaries()))
    assert "lat mean" in text and "lat p99" in text and "clat" not in text.split("\n", 3)[1]
    rows = [ln for ln in text.splitlines() if re.search(r"\b(read|write)\b", ln)]
    assert len(rows) == 3
    for ln in rows:
        assert ln.rstrip(" │").endswith(DASH), ln  # p99: none
        assert " ms " in ln  # the mean is there
    assert "rados bench" in text and "submission to completion" in text


def test_mixed_fio_and_rados_table_marks_the_lat_cells() -> None:
    fio_point = Point(
        99,
        point_key(Target("file", "/tmp/x"), "r", {"rw": "randread"}),
        0,
        Target("file", "/tmp/x"),
        "r",
        {"rw": "randread"},
        {},
    )
    fio_meas = fio.parse_output((FIO / "psync-randread-json.json").read_text())[0]
    ss = [*rados_summaries(), *summarize([(fio_point, fio_meas)])]
    text = render(summary_table(ss))
    assert "clat mean" in text and "clat p99" in text
    assert text.count("(lat)") == 3  # the rados means; the fio row is clat
    p99 = fio_meas.directions["read"].clat.percentiles["99"]  # type: ignore[union-attr]
    assert p99 > 0
    md = run_markdown(from_summaries(id=1, name="m", status="completed", report=None, summaries=ss))
    assert "| clat mean | clat p99 |" in md
    assert md.count("(lat)") == 3 and f"| {DASH} |" in md
    assert "submission to completion" in md


def test_markdown_summary_of_rados_points() -> None:
    ss = rados_summaries()
    md = run_markdown(from_summaries(id=1, name="r", status="completed", report=None, summaries=ss))
    assert "| lat mean | lat p99 |" in md
    body = [ln for ln in md.splitlines() if ln.startswith("| ") and " ms " in ln]
    assert len(body) == 3 and all(ln.endswith(f"| {DASH} |") for ln in body)
    assert "| 0 ns |" not in md


def test_progress_line_and_hosts_table_show_lat() -> None:
    line = point_result_line(one("rand-4m-showtime"))
    assert "lat mean" in line and "p99" not in line
    agg = two("write")
    line = point_result_line(agg)
    assert "lat mean" in line and "p99" not in line

    class Row:
        point_idx = 0
        point = None
        measurement = agg

    text = render(hosts_table([Row()]))
    assert "lat mean" in text and "lat p99" in text
    assert text.count(" ms ") >= 3  # the aggregate and both clients


def test_compare_rados_points_by_lat_without_a_p99() -> None:
    base = summarize(rados_items({("rand", 1): [one("rand-4m-plain"), one("rand-4m-json")]}))
    other = summarize(rados_items({("rand", 1): [one("rand-4m-showtime"), one("rand-4k-json")]}))
    c = compare(base, other, base_name="a", other_name="b")
    (m,) = c.matched
    assert m.p99_lat_change_pct is None
    b_mean, o_mean = base[0].latency_mean, other[0].latency_mean
    assert b_mean is not None and o_mean is not None
    assert m.mean_lat_change_pct == pytest.approx(100 * (o_mean - b_mean) / b_mean)
    assert m.verdict in ("better", "worse", "no significant difference")
    assert m.lat_metric == "lat" and m.clat_mean_change_pct is None
    text = comparison_text(c)
    row = next(ln for ln in text.splitlines() if ln.startswith("rand"))
    assert row.count(DASH) == 2  # no clat, no p99
    md = comparison_markdown(c)
    assert f"| {DASH} |" in md and "total latency lat (submission + completion" in md
    assert "the engine reports no such figure (rados bench)" in md


def test_compare_never_sets_lat_against_clat() -> None:
    """fio's total latency (lat) against rados bench's lat: both from submission to
    completion, compared; fio's clat is never set against rados bench's lat."""
    fio_target = Target("file", "/tmp/x")
    p = {"rw": "randread"}
    fio_meas = fio.parse_output((FIO / "psync-randread-json.json").read_text())[0]
    rados_like = rados.to_measurement(parse("rand-4m-plain"))
    base = summarize(
        [(Point(0, point_key(fio_target, "r", p), 0, fio_target, "r", p, {}), fio_meas)]
    )
    other = summarize(
        [(Point(0, point_key(fio_target, "r", p), 0, fio_target, "r", p, {}), rados_like)]
    )
    (m,) = compare(base, other, base_name="a", other_name="b").matched
    assert m.iops_change_pct is not None
    fio_lat, rados_lat = base[0].total_lat, other[0].total_lat
    assert fio_lat is not None and rados_lat is not None
    assert fio_lat.mean != base[0].clat_mean
    assert m.lat_metric == "lat"
    assert m.mean_lat_change_pct == pytest.approx(
        100 * ((rados_lat.mean or 0) - (fio_lat.mean or 0)) / (fio_lat.mean or 1)
    )
    assert m.clat_mean_change_pct is None and m.p99_lat_change_pct is None
