"""Runs of each suite with an answer (qualify, profiles, matrix, rados, s3), stored the way
the runner stores them (store.measurements.record of what the engines make of the recorded
real outputs of tests/data/fio, tests/data/rados and tests/data/s3), for tests of what every
presenter shows of the answer.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from storbench.engines import fio, rados
from storbench.model.metrics import Measurement
from storbench.model.units import fmt_iops, fmt_ns
from storbench.plan import Point, Target, point_key
from storbench.store import Store

DATA = Path(__file__).resolve().parent / "data"
#: the suites whose report has an answer of its own, in the order of analysis/answers.py
KINDS = ("qualify", "profiles", "matrix", "rados", "s3")
MiB = 1 << 20
#: the object sizes of the recorded s3 outputs (tests/data/s3)
SIZES = ("4k", "64k", "1m")
#: a target name a browser or a Markdown reader would take for markup
HOSTILE = "<b>x</b>|[red]y[/red]"


def _fio(name: str) -> Measurement:
    return fio.parse_output((DATA / "fio" / f"{name}.json").read_text())[0]


def _s3(name: str) -> Measurement:
    return fio.parse_output((DATA / "s3" / f"{name}.json").read_text())[0]


def _fio_jobs(name: str) -> list[Measurement]:
    """One measurement per job of a numjobs recording without group_reporting."""
    docs, _ = fio.split_documents((DATA / "fio" / f"{name}.json").read_text())
    doc = docs[-1]
    return [
        fio.parse_output(json.dumps({**copy.deepcopy(doc), "jobs": [j]}))[0] for j in doc["jobs"]
    ]


def _rados(name: str) -> Measurement:
    text = (DATA / "rados" / f"{name}.out").read_text()
    return rados.to_measurement(rados.parse_rados_bench(text, None, name.split("-")[0]))


def _rados_two(mode: str) -> Measurement:
    names = [f"{mode}-4m-2clients-c{c}" for c in (1, 2)]
    results = [
        rados.parse_rados_bench((DATA / "rados" / f"{n}.out").read_text(), None, mode)
        for n in names
    ]
    return rados.aggregate_clients(results, names)


Spec = list[tuple[Target, str, dict[str, Any], dict[str, Any], Measurement]]


def _spec(kind: str) -> tuple[Spec, dict[str, Any], str]:
    """(target, workload, params, axes, measurement) per point, the inventory, the engine."""
    if kind == "qualify":
        dev = Target("device", "/dev/sdb")
        jobs = _fio_jobs("numjobs4-nogroup-jsonplus")
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
        spec: Spec = [
            (dev, "sync-write", {"rw": "randwrite", "numjobs": n}, {"numjobs": n}, jobs[n - 1])
            for n in (1, 2, 3, 4)
        ]
        return spec, inv, "fio"
    if kind == "profiles":
        seq, rnd = _fio("twojobs-sections-json"), _fio("libaio-randrw-jsonplus")
        spec = [
            (t, wl, params, {}, m)
            for t in (Target("file", "/mnt/nfs/sb.dat", "NFS"), Target("file", "/x", HOSTILE))
            for wl, params, m in (
                ("seq-rw", {"rw": "readwrite", "bs": "1m", "iodepth": 16}, seq),
                ("rand4k", {"rw": "randrw", "rwmixread": 70, "bs": "4k", "iodepth": 64}, rnd),
            )
        ]
        return spec, {}, "fio"
    if kind == "matrix":
        recs = {1: "psync-randread-json", 2: "numjobs4-group-jsonplus", 4: "null-engine-jsonplus"}
        t = Target("file", "/srv/m.dat", HOSTILE)
        spec = [
            (t, "sweep", p, p, _fio(n))
            for bs in ("4k", "64k")
            for q, n in recs.items()
            for p in [{"rw": "randread", "bs": bs, "iodepth": q}]
        ]
        return spec, {}, "fio"
    if kind == "s3":
        bucket = Target("s3", "bench", HOSTILE, endpoint="http://127.0.0.1:7070")
        ops = [(rw, op, bs) for rw, op in (("write", "put"), ("read", "get")) for bs in SIZES]
        spec = [
            (bucket, "objects", {**p, "numjobs": 2, "objects": 8}, p, _s3(f"{op}-{bs}-jsonplus"))
            for rw, op, bs in [*ops, ("trim", "delete", "64k")]
            for p in [{"rw": rw, "bs": bs}]
        ]
        return spec, {}, "fio"
    assert kind == "rados", kind
    pool = Target("rados", "bench")
    spec = []
    for mode in ("write", "seq", "rand"):
        for clients, m in ((1, _rados(f"{mode}-4m-showtime")), (2, _rados_two(mode))):
            p = {"engine": "rados-bench", "mode": mode, "bs": "4m", "threads": 16}
            p |= {"runtime": 4, "clients": clients}
            spec.append((pool, mode, p, {"clients": clients}, m))
    return spec, {}, "rados-bench"


def store_run(db: Path, kind: str) -> int:
    """A completed run of the ``kind`` suite's report in the database ``db``; its id."""
    spec, inventory, engine = _spec(kind)
    points = [
        Point(i, point_key(t, wl, params), 0, t, wl, params, axes)
        for i, (t, wl, params, axes, _) in enumerate(spec)
    ]
    store = Store(str(db))
    run_id = store.runs.create(
        kind="run",
        name=kind,
        source=f"suite:{kind}",
        plan_text=None,
        overrides=[],
        inventory={**inventory, "report": kind},
        fio_version=None,
        storbench_version="0",
        argv=[],
        points=points,
    )
    for p, (*_, m) in zip(points, spec, strict=True):
        store.measurements.record(
            run_id,
            p,
            m,
            engine=engine,
            command=None,
            job_file=None,
            raw_output=None,
            stderr=None,
            started_at=None,
            ended_at=None,
        )
    store.runs.set_status(run_id, "completed")
    return run_id


# ---------------------------------------------------------------------------- what a report shows

#: an answer table as a report shows it: (title, [header cells, row cells...])
Table = tuple[str, list[list[str]]]


def expected_tables(answer: dict[str, Any]) -> dict[str, list[list[str]]]:
    """What a report's answer section must show of the JSON export's ``answer``: per table
    title (or its start), the rows (headers first) it must hold, figures formatted as the
    seeds write them, from the JSON's base units."""
    kind, rows = answer["kind"], answer["rows"]
    if kind == "qualify":
        return {
            "Best job count": [
                ["ID", "Size", "Type", "Proto", "IOPS", "#Jobs", "Notes"],
                *[
                    [
                        r["model"] or r["target"],
                        f"{r['size_bytes'] / 1e9:.0f}GB",
                        r["media"],
                        r["proto"],
                        f"{r['best_iops']:.0f}",
                        str(r["best_jobs"]),
                        ", ".join(
                            (f"{v} job{'s' if v > 1 else ''}" if i == 0 else str(v)) + f": {f:.0f}"
                            for i, (v, f) in enumerate(
                                [(v, f) for v, f in r["iops_by_jobs"] if v != r["best_jobs"]]
                            )
                        ),
                    ]
                    for r in rows
                ],
            ]
        }
    if kind == "profiles":
        return {
            "Overview": [
                ["Storage Backend", "Seq Read", "Seq Write", "Rand 4k Read", "Rand 4k Write"],
                *[
                    [
                        r["target"],
                        f"{r['seq_read']['bw_bytes_per_s'] / MiB:,.1f} MiB/s",
                        f"{r['seq_write']['bw_bytes_per_s'] / MiB:,.1f} MiB/s",
                        f"{fmt_iops(r['rand_read']['iops'])} IOPS",
                        f"{fmt_iops(r['rand_write']['iops'])} IOPS",
                    ]
                    for r in rows
                ],
            ]
        }
    if kind == "matrix":
        return {
            "Optimal iodepth": [
                ["target", "rw", "bs", "optimal iodepth", "IOPS", "best iodepth", "best IOPS"],
                *[
                    [
                        str(r["target"]),
                        r["rw"],
                        r["bs"],
                        str(r["optimal_iodepth"]),
                        fmt_iops(r["optimal_iops"]),
                        str(r["best_iodepth"]),
                        fmt_iops(r["best_iops"]),
                    ]
                    for r in rows
                ],
            ]
        }
    if kind == "s3":
        return _s3_tables(rows)
    assert kind == "rados", kind
    out = {}
    for g in rows:
        cols = g["columns"]
        words = {1: "Single Client", 2: "Two Clients"}
        title = f"rados bench {g['params']['runtime']} {g['mode']}"
        out[title] = [
            ["", *(words[c["clients"]] for c in cols)],
            ["Bandwidth (MB/sec)", *(f"{c['figures']['bw_bytes'] / MiB:,.2f}" for c in cols)],
            ["Average IOPS", *(f"{c['figures']['iops']:,.2f}" for c in cols)],
            ["Average Latency(s)", *(f"{c['figures']['lat_mean'] / 1e9:,.4f}" for c in cols)],
        ]
    return out


def _s3_tables(rows: list[dict[str, Any]]) -> dict[str, list[list[str]]]:
    """Per target and concurrency: a row per object size, each operation's requests/s,
    MiB/s (none for DELETE), p50 and p99."""
    out: dict[str, list[list[str]]] = {}
    groups: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault(f"{r['target']}: {r['concurrency']} concurrent request(s)", []).append(r)
    for title, group in groups.items():
        ops = list(dict.fromkeys(r["op"] for r in group))
        by = {(r["op"], s["bs"]): s for r in group for s in r["sizes"]}
        sizes = list(dict.fromkeys(s["bs"] for r in group for s in r["sizes"]))
        table = [["object size", *(f"{op} {f}" for op in ops for f in S3_FIGURES)]]
        for bs in sizes:
            cells = [bs]
            for op in ops:
                s = by.get((op, bs))
                if s is None:
                    cells += ["-"] * 4
                    continue
                rate = "-" if op == "DELETE" else f"{s['bytes_per_s'] / MiB:,.1f}"
                cells += [fmt_iops(s["requests_per_s"]), rate, fmt_ns(s["p50_ns"])]
                cells.append(fmt_ns(s["p99_ns"]))
            table.append(cells)
        out[title] = table
    return out


S3_FIGURES = ("req/s", "MiB/s", "p50", "p99")


def check_answer_tables(answer: dict[str, Any], shown: list[Table]) -> None:
    """The report's answer tables ``shown`` hold what the JSON ``answer`` says (for the rows
    expected_tables names: a matrix table has more columns than those, a rados table more
    rows)."""
    for start, want in expected_tables(answer).items():
        found = [rows for title, rows in shown if title.startswith(start)]
        assert len(found) == 1, (start, [t for t, _ in shown])
        (rows,) = found
        if answer["kind"] == "rados":
            by_label = {r[0]: r for r in rows}
            assert rows[0] == want[0]
            assert [by_label[w[0]] for w in want[1:]] == want[1:]
        else:
            width = len(want[0])
            assert [r[:width] for r in rows] == want
