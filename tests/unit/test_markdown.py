"""`storbench report RUN --format markdown`: the seeds' own table layouts, on summaries of the
recorded fio outputs of tests/data/fio."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest

from storbench.analysis.summary import PointSummary, summarize
from storbench.engines import fio
from storbench.model.metrics import Measurement
from storbench.model.units import fmt_iops, fmt_rate
from storbench.plan import Point, Target, point_key
from storbench.report.fmt import SummaryLead
from storbench.report.markdown import run_markdown, table
from storbench.report.model import from_summaries

DATA = Path(__file__).resolve().parent.parent / "data" / "fio"
NFS = Target("file", "/mnt/nfs/sb.dat", "NFS")
CEPH = Target("file", "/mnt/ceph/sb.dat", "Ceph RBD")


def last_doc(name: str) -> dict[str, Any]:
    docs, _ = fio.split_documents((DATA / f"{name}.json").read_text())
    return docs[-1]


def whole(name: str) -> Measurement:
    return fio.parse_output((DATA / f"{name}.json").read_text())[0]


def each_job(name: str) -> list[Measurement]:
    doc = last_doc(name)
    return [
        fio.parse_output(json.dumps({**copy.deepcopy(doc), "jobs": [j]}))[0] for j in doc["jobs"]
    ]


def summaries(
    spec: list[tuple[Target, str, dict[str, Any], dict[str, Any], list[Measurement]]],
) -> list[PointSummary]:
    """(target, workload, params, axes, repetitions) per point, repetitions in rounds."""
    items = []
    n = len(spec)
    for i, (target, wl, params, axes, ms) in enumerate(spec):
        for rep, m in enumerate(ms):
            key = point_key(target, wl, params)
            items.append((Point(rep * n + i, key, rep, target, wl, params, axes), m))
    return summarize(sorted(items, key=lambda pm: pm[0].index))


def tables_of(md: str) -> list[list[list[str]]]:
    """The GitHub tables of a Markdown text, as rows of cells; checks their shape."""
    out: list[list[list[str]]] = []
    block: list[str] = []
    for ln in [*md.splitlines(), ""]:
        if ln.startswith("|"):
            block.append(ln)
            continue
        if block:
            rows = [[c.strip() for c in re.split(r"(?<!\\)\|", r.strip()[1:-1])] for r in block]
            assert len({len(r) for r in rows}) == 1, block
            assert set(block[1]) <= set("|-: "), block
            out.append([rows[0], *rows[2:]])
            block = []
    return out


def test_table_escapes_pipes() -> None:
    (t,) = tables_of(table(["a", "b"], [["x|y", "1"]]))
    assert t == [["a", "b"], ["x\\|y", "1"]]


def test_qualify_run_is_seed_002s_device_table() -> None:
    jobs = each_job("numjobs4-nogroup-jsonplus")
    t = Target("device", "/dev/sdb")
    ss = summaries(
        [
            (t, "ceph-journal-write-test", {"numjobs": n}, {"numjobs": n}, [jobs[n - 1]])
            for n in (1, 2, 3, 4)
        ]
    )
    inv = {
        "targets": [
            {
                "path": "/dev/sdb",
                "identity": {
                    "model": "Samsung PM863a",
                    "size_bytes": 240 * 10**9,
                    "type": "SSD",
                    "proto": "SATA",
                },
            }
        ]
    }
    md = run_markdown(
        from_summaries(
            id=5, name="qualify", status="completed", report="qualify", summaries=ss, inventory=inv
        )
    )
    assert md.startswith("## run 5 (qualify)\n")
    (t1,) = tables_of(md)
    assert t1[0] == ["ID", "Size", "Type", "Proto", "IOPS", "#Jobs", "Notes"]
    iops = [e["write"]["iops"] for e in last_doc("numjobs4-nogroup-jsonplus")["jobs"]]
    best = iops.index(max(iops)) + 1
    assert t1[1][:6] == ["Samsung PM863a", "240GB", "SSD", "SATA", f"{max(iops):.0f}", str(best)]
    assert t1[1][6].startswith(f"1 job: {iops[0]:.0f}, 2: {iops[1]:.0f}")
    assert "- /dev/sdb: best job count is 3:" in md and "reach 95 % of it" in md


@pytest.mark.parametrize(
    ("identity", "cells"),
    [
        # a 400 MiB loop device: its size in human units, "loop" where it has no type
        (
            {"size_bytes": 400 * 2**20, "type": None, "proto": None, "device": "/dev/loop3"},
            ["419MB", "loop", "loop"],
        ),
        (
            {"size_bytes": 8 * 10**9, "type": None, "proto": None, "device": "/dev/dm-0"},
            ["8GB", "virtual", "virtual"],
        ),
        (
            {"size_bytes": 3_840 * 10**9, "type": "SSD", "proto": "NVMe", "device": "/dev/nvme0n1"},
            ["3.8TB", "SSD", "NVMe"],
        ),
        ({"size_bytes": None, "type": None, "proto": None, "device": None}, ["?", "?", "?"]),
    ],
)
def test_qualify_disk_row_says_size_and_kind(identity: dict[str, Any], cells: list[str]) -> None:
    jobs = each_job("numjobs4-nogroup-jsonplus")
    t = Target("device", "/dev/x")
    ss = summaries(
        [(t, "sync-write", {"numjobs": n}, {"numjobs": n}, [jobs[n - 1]]) for n in (1, 2)]
    )
    inv = {"targets": [{"path": "/dev/x", "identity": identity}]}
    md = run_markdown(
        from_summaries(
            id=1, name="q", status="completed", report="qualify", summaries=ss, inventory=inv
        )
    )
    (t1,) = tables_of(md)
    assert t1[1][1:4] == cells


def test_profiles_run_is_seed_001s_overview() -> None:
    seq, rnd = whole("twojobs-sections-json"), whole("libaio-randrw-jsonplus")
    ss = summaries(
        [
            (t, wl, params, {}, [m])
            for t in (NFS, CEPH)
            for wl, params, m in (
                ("seq-rw", {"rw": "readwrite", "bs": "1m", "iodepth": 16}, seq),
                ("rand4k", {"rw": "randrw", "rwmixread": 70, "bs": "4k", "iodepth": 64}, rnd),
            )
        ]
    )
    md = run_markdown(
        from_summaries(id=2, name="profiles", status="completed", report="profiles", summaries=ss)
    )
    overview, lat = tables_of(md)
    assert overview[0] == [
        "Storage Backend",
        "Seq Read",
        "Seq Write",
        "Rand 4k Read",
        "Rand 4k Write",
    ]
    sr, sw = seq.direction("read"), seq.direction("write")
    rr, rw = rnd.direction("read"), rnd.direction("write")
    assert sr and sw and rr and rw
    assert overview[1] == [
        "NFS",
        f"{fmt_rate(sr.bw_bytes)} MiB/s",
        f"{fmt_rate(sw.bw_bytes)} MiB/s",
        f"{fmt_iops(rr.iops)} IOPS",
        f"{fmt_iops(rw.iops)} IOPS",
    ]
    assert [r[0] for r in overview[1:]] == ["NFS", "Ceph RBD"]
    assert lat[0] == ["Storage Backend", "Direction", "clat mean", "p95", "p99"]
    assert len(lat) == 1 + 2 * 4


def test_matrix_run_has_iops_by_bs_and_iodepth_and_the_optimal_iodepth() -> None:
    recs = {
        1: "psync-randread-json",
        2: "numjobs4-group-jsonplus",
        4: "clientserver-2hosts-jsonplus",
    }
    ss = summaries(
        [
            (
                NFS,
                "sweep",
                {"rw": "randread", "bs": bs, "iodepth": q},
                {"rw": "randread", "bs": bs, "iodepth": q},
                [whole(n)],
            )
            for bs in ("4k", "64k")
            for q, n in recs.items()
        ]
    )
    md = run_markdown(
        from_summaries(id=9, name="matrix", status="completed", report="matrix", summaries=ss)
    )
    grid, optimal = tables_of(md)
    assert grid[0] == ["bs \\ iodepth", "1", "2", "4"]
    assert [r[0] for r in grid[1:]] == ["4k", "64k"]
    assert grid[1][1:] == [fmt_iops(s.total_iops) for s in ss[:3]]
    assert optimal[0][:4] == ["target", "rw", "bs", "optimal iodepth"]
    assert [r[2:4] for r in optimal[1:]] == [["4k", "4"], ["64k", "4"]]
    assert optimal[1][-1] == "2 → 4"


def test_other_runs_get_the_summary_table_with_spread() -> None:
    jobs = each_job("numjobs4-nogroup-jsonplus")
    t = Target("file", "/x")
    ss = summaries(
        [
            (t, "w", {"iodepth": 1}, {"iodepth": 1}, jobs),
            (t, "w", {"iodepth": 2}, {"iodepth": 2}, [whole("error-enospc-json")] * 4),
        ]
    )
    md = run_markdown(
        from_summaries(id=1, name="mine", status="completed", report=None, summaries=ss)
    )
    (tb,) = tables_of(md)
    assert tb[0] == ["iodepth", "n", "dir", "IOPS", "±95%", "MiB/s", "clat mean", "clat p99"]
    assert tb[1][:3] == ["1", "4", "write"] and tb[1][4].startswith("±")
    assert tb[2][:2] == ["2", "0"] and tb[2][3].startswith("failed: ")


def test_axis_column_shows_what_a_point_ran_with_when_it_has_no_such_axis() -> None:
    """quick's seq1m has no iodepth axis but runs at iodepth 8: its row says 8, not ''; a
    point that sets no iodepth at all says '-'."""
    m = whole("psync-randread-json")
    t = Target("file", "/x")
    ss = summaries(
        [
            (t, "rand4k", {"iodepth": 1}, {"iodepth": 1}, [m]),
            (t, "rand4k", {"iodepth": 32}, {"iodepth": 32}, [m]),
            (t, "seq1m", {"iodepth": 8}, {}, [m]),
            (t, "other", {}, {}, [m]),
        ]
    )
    lead = SummaryLead.of(ss)
    assert lead.columns() == ["workload", "iodepth"]
    assert [lead.cells(s) for s in ss] == [
        ["rand4k", "1"],
        ["rand4k", "32"],
        ["seq1m", "8"],
        ["other", "-"],
    ]


def test_profiles_overview_keeps_every_variant_of_an_extra_axis() -> None:
    """`--set direct=[0,1]` on profiles: a row per target and direct value, none folded."""
    seq, rnd = whole("twojobs-sections-json"), whole("libaio-randrw-jsonplus")
    ss = summaries(
        [
            (NFS, wl, {**params, "direct": d}, {"direct": d}, [m])
            for d in (0, 1)
            for wl, params, m in (
                ("seq-rw", {"rw": "readwrite", "bs": "1m", "iodepth": 16}, seq),
                ("rand4k", {"rw": "randrw", "rwmixread": 70, "bs": "4k", "iodepth": 64}, rnd),
            )
        ]
    )
    md = run_markdown(
        from_summaries(id=2, name="profiles", status="completed", report="profiles", summaries=ss)
    )
    overview = tables_of(md)[0]
    assert [r[0] for r in overview[1:]] == [f"{NFS.label} direct=0", f"{NFS.label} direct=1"]
