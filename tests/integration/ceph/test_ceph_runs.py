"""``storbench run`` on Ceph targets, end to end through the command line, against the
session's real cluster (``ceph_cluster`` in conftest.py: 2 bluestore OSDs, pool ``bench``):
rados bench through the ``rados`` suite (one and two clients, seed 000's Markdown table),
fio's rbd and rados engines, what storbench removes afterwards, and the preflight refusals
(an image it did not create, an unhealthy cluster, objects above osd_max_object_size).

Every run is short (2-3 s per point, MiB-sized data). Each test leaves the pool ``bench`` as
it found it: no benchmark objects, no image -- and not even the pool metadata objects
(``rbd_directory``, ``rbd_info``, ``rbd_trash``) that the first rbd image of a pool makes.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import os
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import time
import uuid
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from storbench.model.metrics import Measurement
from storbench.store import MeasurementRow, Store

pytestmark = [pytest.mark.integration, pytest.mark.ceph]

MiB = 1 << 20
GiB = 1 << 30
POOL = "bench"
#: every storbench command here ends well within this (s); a hang fails the test instead
TIMEOUT = 180
#: the objects rbd makes in a pool for its first image and leaves after the last one is gone
RBD_POOL_METADATA = ("rbd_directory", "rbd_info", "rbd_trash")


# ---------------------------------------------------------------------------- helpers


def sb(*args: str, db: Path, timeout: float = TIMEOUT) -> subprocess.CompletedProcess[str]:
    """The real storbench command line (as tests/integration/test_run.py runs it). Without
    CEPH_CONF: every ceph, rados, rbd and fio call must get the cluster from --ceph-conf."""
    env = {k: v for k, v in os.environ.items() if k != "CEPH_CONF"}
    return subprocess.run(
        [sys.executable, "-m", "storbench", *args, "--db", str(db)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        stdin=subprocess.DEVNULL,
    )


def objects(cluster: Any, pool: str = POOL) -> list[str]:
    return sorted(cluster.run("rados", "-p", pool, "ls").stdout.split())


def bench_objects(names: list[str]) -> list[str]:
    """What rados bench (``benchmark_data_*``, its metadata ``storbench-r*``) and fio's rados
    engine (``storbench-r<RUN>.*``) leave in a pool."""
    return [n for n in names if n.startswith(("benchmark_data", "storbench"))]


def images(cluster: Any, pool: str = POOL) -> list[str]:
    return cluster.run("rbd", "ls", pool).stdout.split()


def runs_in(db: Path) -> int:
    if not db.exists():
        return 0
    con = sqlite3.connect(db)
    try:
        return int(con.execute("SELECT COUNT(*) FROM runs").fetchone()[0])
    finally:
        con.close()


def restore_pool(cluster: Any, before: list[str]) -> None:
    """After a test (also a failed one): remove the benchmark objects it left and, when the
    pool has no image any more, the rbd metadata objects it made. The tests assert that
    storbench left no benchmark object; this only keeps the next test's pool as found."""
    left = bench_objects(objects(cluster))
    if left:
        for i in range(0, len(left), 200):
            cluster.run("rados", "-p", POOL, "rm", *left[i : i + 200], check=False)
        warnings.warn(f"removed {len(left)} benchmark objects left in {POOL}", stacklevel=1)
    if not images(cluster):
        made = [n for n in RBD_POOL_METADATA if n in objects(cluster) and n not in before]
        if made:
            cluster.run("rados", "-p", POOL, "rm", *made)


@pytest.fixture
def conf(ceph_cluster: Any) -> Iterator[str]:
    """The cluster's ceph.conf; the pool ``bench`` is put back as it was afterwards."""
    before = objects(ceph_cluster)
    assert bench_objects(before) == [], "an earlier test left benchmark objects"
    yield str(ceph_cluster.conf_path)
    restore_pool(ceph_cluster, before)


def write_plan(path: Path, text: str) -> str:
    path.write_text(text)
    return str(path)


def sha256_of_image(cluster: Any, image: str) -> str:
    out = subprocess.run(
        ["rbd", "export", "--no-progress", f"{POOL}/{image}", "-"],
        env=cluster.env(),
        capture_output=True,
        timeout=60,
        check=True,
    )
    return hashlib.sha256(out.stdout).hexdigest()


def direction_of(m: Measurement) -> str:
    (d,) = [k for k, v in m.directions.items() if v.active]
    return d


# ---------------------------------------------------------------------------- the rados suite


@dataclass
class SuiteRun:
    result: subprocess.CompletedProcess[str]
    db: Path
    conf: str
    before: list[str]  # the pool's objects before the run
    after: list[str]  # and right after it


@pytest.fixture(scope="module")
def rados_suite(ceph_cluster: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[SuiteRun]:
    """One run of the built-in ``rados`` suite, narrowed to 1 and 2 clients of 3 s each:
    write (4 MiB objects, 16 threads) then seq, 4 points. Several tests read it."""
    db = tmp_path_factory.mktemp("rados-suite") / "results.db"
    conf_path = str(ceph_cluster.conf_path)
    before = objects(ceph_cluster)
    assert bench_objects(before) == [], "an earlier test left benchmark objects"
    result = sb(
        "run",
        "rados",
        "--set",
        "runtime=3",
        "--set",
        "clients=[1,2]",
        "--target",
        f"rados:{POOL}",
        "--ceph-conf",
        conf_path,
        db=db,
    )
    after = objects(ceph_cluster)
    yield SuiteRun(result, db, conf_path, before, after)
    restore_pool(ceph_cluster, before)


def suite_rows(run: SuiteRun) -> list[MeasurementRow]:
    assert run.result.returncode == 0, run.result.stdout + run.result.stderr
    store = Store(str(run.db))
    try:
        return store.measurements.of_run(1)
    finally:
        store.close()


def test_rados_suite_runs_write_then_seq_with_one_and_two_clients(rados_suite: SuiteRun) -> None:
    r = rados_suite.result
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Traceback" not in r.stderr
    rows = suite_rows(rados_suite)
    assert len(rows) == 4
    got = [(m.point.params["mode"], m.point.params["clients"]) for m in rows if m.point]
    assert got == [("write", 1), ("write", 2), ("seq", 1), ("seq", 2)]
    store = Store(str(rados_suite.db))
    try:
        run = store.runs.get(1)
        assert run.status == "completed"
        for m in rows:
            assert m.point is not None and m.status == "ok", m.error
            assert m.engine == "rados bench"
            assert (m.point.params["runtime"], m.point.params["bs"]) == (3, "4m")
            d = m.measurement.directions["write" if m.point.params["mode"] == "write" else "read"]
            assert d.iops > 0 and d.bw_bytes > 0 and d.total_ios > 0
            assert d.lat is not None and d.lat.mean and d.lat.percentiles == {}
            # the exact commands, each client's own run name, the cluster from --ceph-conf
            commands = store.measurements.raw(m.id)["command"]
            assert len(commands) == m.point.params["clients"]
            for c, cmd in enumerate(commands, 1):
                assert cmd[:5] == ["rados", "-c", rados_suite.conf, "-p", POOL]
                assert cmd[5:8] == ["bench", "3", m.point.params["mode"]]
                name = cmd[cmd.index("--run-name") + 1]
                dataset = m.point.extra["dataset"]
                suffix = f"-c{c}" if m.point.params["clients"] > 1 else ""
                assert name == f"storbench-r1-{dataset}{suffix}"
        # each seq point reads the objects of the write with its client count
        writes, seqs = rows[:2], rows[2:]
        for w, s in zip(writes, seqs, strict=True):
            assert w.point and s.point and s.point.extra["dataset"] == w.point.extra["dataset"]
            assert s.measurement.directions["read"].total_ios > 0
            assert s.measurement.directions["read"].total_ios <= (
                w.measurement.extra.get("whole_run", {}).get("ops")
                or w.measurement.directions["write"].total_ios
            )
        # nothing left in the pool: not the objects, not the metadata of the run names
        assert bench_objects(rados_suite.after) == []
        assert rados_suite.after == rados_suite.before
        events = store.events.of_run(1)
        health = [e for e in events if e.kind == "health"]
        assert health and health[0].message.startswith("at the start: HEALTH_OK")
        noted = [e.data["run_name"] for e in events if e.kind == "rados-objects"]
        assert sorted(noted) == sorted(
            f"storbench-r1-{w.point.extra['dataset']}{s}"
            for w, n in zip(writes, (1, 2), strict=True)
            if w.point
            for s in ([""] if n == 1 else ["-c1", "-c2"])
        )
        (cleanup,) = [e for e in events if e.kind == "rados-cleanup"]
        assert sorted(cleanup.data["run_names"]) == sorted(noted)
        assert cleanup.data["left"] == []
        assert run.inventory["ceph"][0]["pools_benchmarked"] == [POOL]
    finally:
        store.close()


def _markdown_table(text: str, heading: str) -> tuple[list[str], dict[str, list[str]], list[str]]:
    """(column names, {row label: cells}, row labels in order) of the table under
    ``### heading``."""
    lines = text.splitlines()
    assert f"### {heading}" in lines, f"no table {heading!r} in:\n{text}"
    i = lines.index(f"### {heading}")
    header = [c.strip() for c in lines[i + 2].strip("|").split("|")]
    assert lines[i + 3].startswith("|---|")
    rows: dict[str, list[str]] = {}
    order = []
    for ln in lines[i + 4 :]:
        if not ln.startswith("|"):
            break
        label, *cells = (c.strip() for c in ln.strip("|").split("|"))
        rows[label] = cells
        order.append(label)
    return header[1:], rows, order


def _summary_value(raw: str, label: str) -> float:
    """A figure of rados bench's own summary, as it printed it."""
    m = re.search(rf"^(?:\S+ )?{re.escape(label)}:\s+(\S+)$", raw, re.M)
    assert m, f"{label!r} not in rados bench's output"
    return float(m.group(1))


#: seed 000's rows of its write table, in its order, and of its seq table
SEED_WRITE_ROWS = [
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
SEED_SEQ_ROWS = [
    "Total time run",
    "Total reads made",
    "Read size",
    "Object size",
    "Bandwidth (MB/sec)",
    "Average IOPS",
    "Stddev IOPS",
    "Max IOPS",
    "Min IOPS",
    "Average Latency(s)",
    "Max latency(s)",
    "Min latency(s)",
]


def test_series_of_rados_bench_points_from_its_per_second_table(rados_suite: SuiteRun) -> None:
    """Each rados bench point's time series: one client's as the point's own, several
    clients' each under its run name; operations and bytes per second, mean latency, no
    percentiles (rados bench has no histogram)."""
    rows = suite_rows(rados_suite)
    store = Store(str(rados_suite.db))
    try:
        for m in rows:
            assert m.point is not None
            series = store.series.of_point(1, m.point.index, host=None)
            clients = m.point.params["clients"]
            names = {i.host for i in series}
            assert names == ({""} if clients == 1 else set(m.measurement.hosts)), names
            for name in names:
                mine = [i for i in series if i.host == name]
                # 3 s of rados bench, a row a second (a seq read ends when it has read all)
                assert 1 <= len(mine) <= 4
                assert all(i.dur_ms == 1000 and i.p99_ns is None for i in mine)
                assert sum(i.ios for i in mine) > 0 and all(i.lat_mean_ns for i in mine if i.ios)
                whole = (m.measurement.hosts.get(name) or m.measurement).directions
                (d,) = whole.values()
                # the table's last row comes before the end: at most the whole run's count
                assert sum(i.ios for i in mine) <= d.total_ios
                assert all(i.bytes == i.ios * 4 * 2**20 for i in mine)
    finally:
        store.close()


def test_rados_suite_markdown_report_is_seed_000s_table(rados_suite: SuiteRun) -> None:
    rows = suite_rows(rados_suite)
    r = sb("report", "1", "--format", "markdown", db=rados_suite.db)
    assert r.returncode == 0, r.stderr
    text = r.stdout
    store = Store(str(rados_suite.db))
    try:
        raw = {m.id: store.measurements.raw(m.id)["raw_output"] for m in rows}
    finally:
        store.close()
    tables = {
        "write": _markdown_table(text, "rados bench 3 write -b 4M -t 16 --no-cleanup"),
        "seq": _markdown_table(text, "rados bench 3 seq -t 16 (uses 4M from write)"),
    }
    for mode, (columns, cells, order) in tables.items():
        assert columns == ["Single Client", "Two Clients"]
        assert all(len(c) == 2 for c in cells.values())
        seed = SEED_WRITE_ROWS if mode == "write" else SEED_SEQ_ROWS
        if mode == "write":
            assert order == seed
        else:  # seed 000's seq rows, in its order (the bandwidth spread is added)
            assert [label for label in order if label in seed] == seed
            assert cells["Stddev Latency(s)"] == ["—", "—"]  # rados bench measures none
        one, two = (m for m in rows if m.point and m.point.params["mode"] == mode)
        made = "Total writes made" if mode == "write" else "Total reads made"
        # Single Client: rados bench's own summary, as it printed it
        out1 = raw[one.id]
        assert cells["Total time run"][0] == f"{_summary_value(out1, 'Total time run'):,.2f}"
        assert cells[made][0] == f"{_summary_value(out1, made):,.2f}"
        bw1 = _summary_value(out1, "Bandwidth (MB/sec)")
        assert cells["Bandwidth (MB/sec)"][0] == f"{bw1:,.2f}"
        lat1 = _summary_value(out1, "Average Latency(s)")
        assert cells["Average Latency(s)"][0] == f"{lat1:,.4f}"
        for size_row in ("Write size" if mode == "write" else "Read size", "Object size"):
            assert cells[size_row] == ["4,194,304.00", "4,194,304.00"]
        # Two Clients: the operations of both clients' whole runs, the rates of the window
        m2 = two.measurement
        d2 = m2.directions[direction_of(m2)]
        whole_ops = sum(h.directions[direction_of(h)].total_ios for h in m2.hosts.values())
        assert cells[made][1] == f"{whole_ops:,.2f}"
        assert cells["Bandwidth (MB/sec)"][1] == f"{d2.bw_bytes / MiB:,.2f}"
        assert cells["Average IOPS"][1] == f"{d2.iops:,.2f}"
        longest = max(h.directions[direction_of(h)].runtime_s for h in m2.hosts.values())
        assert cells["Total time run"][1] == f"{longest:,.2f}"


def _client_line(h: Measurement) -> tuple[list[tuple[float, float]], float, float]:
    """One client's cumulative finished operations on the wall clock, from its stored
    per-second table (the ``--show-time`` stamps) and its summary: (points, start, end)."""
    series = h.extra["series"]
    col = {c: i for i, c in enumerate(series["columns"])}
    pts = [(r[col["time"]], r[col["finished"]]) for r in series["rows"] if r[col["time"]]]
    d = h.directions[direction_of(h)]
    start = pts[0][0]
    end = start + d.runtime_s  # rados bench's total time run
    if end > pts[-1][0]:
        pts.append((end, d.total_ios))
    return pts, start, pts[-1][0]


def _interp(pts: list[tuple[float, float]], t: float) -> float:
    for (ta, fa), (tb, fb) in itertools.pairwise(pts):
        if ta <= t <= tb:
            return fa + (fb - fa) * ((t - ta) / (tb - ta) if tb > ta else 1.0)
    raise AssertionError(f"{t} outside the client's run")


def test_two_clients_aggregate_is_the_sum_of_their_rates_in_the_common_window(
    rados_suite: SuiteRun,
) -> None:
    rows = suite_rows(rados_suite)
    several = [m for m in rows if m.point and m.point.params["clients"] == 2]
    assert len(several) == 2
    for m in several:
        assert m.point is not None
        meas = m.measurement
        name = f"storbench-r1-{m.point.extra['dataset']}"
        assert list(meas.hosts) == [f"{name}-c1", f"{name}-c2"]
        d = meas.directions[direction_of(meas)]
        win = meas.extra["window"]
        clients = win["clients"]
        assert [c["name"] for c in clients] == list(meas.hosts)
        # exactly: the aggregate is the sum of each client's rate in the window
        assert d.bw_bytes == pytest.approx(sum(c["bw_bytes"] for c in clients))
        assert d.iops == pytest.approx(sum(c["iops"] for c in clients))
        assert d.runtime_s == pytest.approx(win["seconds"])
        assert d.total_ios == round(sum(c["ops"] for c in clients))
        # the window, re-derived from what each client's own stored measurement holds: from
        # the latest start to the earliest end of the clients
        lines = {n: _client_line(h) for n, h in meas.hosts.items()}
        assert win["start"] == pytest.approx(max(s for _, s, _ in lines.values()), abs=1e-6)
        assert win["end"] == pytest.approx(min(e for _, _, e in lines.values()), abs=1e-6)
        assert win["seconds"] == pytest.approx(win["end"] - win["start"])
        for c in clients:
            pts, _, _ = lines[c["name"]]
            ops = _interp(pts, win["end"]) - _interp(pts, win["start"])
            assert c["ops"] == pytest.approx(ops)
            assert c["bytes"] == pytest.approx(ops * 4 * MiB)
            assert c["bw_bytes"] == pytest.approx(ops * 4 * MiB / win["seconds"])
            assert c["iops"] == pytest.approx(ops / win["seconds"])
        # whole runs: the window's operations are some of the clients' operations
        whole = [h.directions[direction_of(h)] for h in meas.hosts.values()]
        assert d.total_ios <= sum(w.total_ios for w in whole)
        assert meas.extra["whole_run"]["ops"] == sum(w.total_ios for w in whole)
        # ... and their rates those of the whole runs, approximately. The window leaves out
        # of each client what happened before the other one started (milliseconds) and
        # after the first one stopped: a write's last in-flight operations draining (up to
        # the max latency, ~1 s on this 2-core VM) or a seq reader that ran out of objects
        # a little after the other. How much of each run the window covers depends on how
        # the machine scheduled the two processes (CI under load saw 67 % of a 1.7 s seq
        # read): no timing assertion (that the window lies within every run is asserted
        # above, from the clients' starts and ends). Where it covers most of each run, the
        # per-second rate varies by up to a third of the mean here (the Stddev rows) and a
        # run of 3 s has its ramp-up inside the window: 25 % is the honest tolerance.
        if all(win["seconds"] >= 0.75 * w.runtime_s for w in whole):
            assert d.bw_bytes == pytest.approx(sum(w.bw_bytes for w in whole), rel=0.25)
            assert d.iops == pytest.approx(sum(w.iops for w in whole), rel=0.25)


# ---------------------------------------------------------------------------- fio on rbd and rados


def test_fio_on_a_new_rbd_image_and_a_rados_pool(
    ceph_cluster: Any, conf: str, tmp_path: Path
) -> None:
    image = f"sb-it-{uuid.uuid4().hex[:8]}"
    plan = write_plan(
        tmp_path / "ceph-fio.yaml",
        f"""\
name: ceph-fio
targets:
  - rbd: {POOL}/{image}
    size: 64m
  - rados: {POOL}
workloads:
  - name: rand
    rw: [randwrite, randread]
    bs: 4k
    iodepth: 4
    size: 4m
    runtime: 2
    time_based: 1
""",
    )
    db = tmp_path / "results.db"
    assert image not in images(ceph_cluster)
    try:
        r = sb("run", plan, "--ceph-conf", conf, db=db)
        assert r.returncode == 0, r.stdout + r.stderr
        assert "Traceback" not in r.stderr
        after_run = objects(ceph_cluster)
        after_images = images(ceph_cluster)
    finally:
        if image in images(ceph_cluster):
            ceph_cluster.run("rbd", "rm", "--no-progress", f"{POOL}/{image}")

    store = Store(str(db))
    try:
        rows = store.measurements.of_run(1)
        got = [(m.point.target.kind, m.point.params["rw"]) for m in rows if m.point]
        assert got == [
            ("rbd", "randwrite"),
            ("rbd", "randread"),
            ("rados", "randwrite"),
            ("rados", "randread"),
        ]
        for m in rows:
            assert m.point is not None
            assert m.status == "ok", m.error
            assert m.engine == "fio"
            want = "write" if m.point.params["rw"] == "randwrite" else "read"
            assert direction_of(m.measurement) == want
            d = m.measurement.directions[want]
            assert d.iops > 0 and d.total_ios > 0
            assert d.clat is not None and d.clat.samples > 0
            assert {"50", "99", "99.9"} <= set(d.clat.percentiles)
            assert 0 < d.clat.percentiles["50"] <= d.clat.percentiles["99"]
            job = store.measurements.raw(m.id)["job_file"]
            kind = m.point.target.kind
            assert f"ioengine={kind}\n" in job
            assert f"pool={POOL}\n" in job
            if kind == "rbd":
                assert f"rbdname={image}\n" in job
                assert "conf=" not in job  # librbd gets the ceph.conf as CEPH_CONF
            else:
                assert f"conf={conf}\n" in job
                assert "filename_format=storbench-r1.$jobname.$jobnum.$filenum\n" in job
        # what `storbench show RUN --point N` prints: the job file as it ran
        shown = sb("show", "1", "--point", "1", db=db)
        assert shown.returncode == 0, shown.stderr
        assert f"rbdname={image}" in shown.stdout and "ioengine=rbd" in shown.stdout
        shown = sb("show", "1", "--point", "3", db=db)
        assert shown.returncode == 0, shown.stderr
        assert f"conf={conf}" in shown.stdout and "ioengine=rados" in shown.stdout

        # nothing left: the image storbench created is gone, and fio's objects
        assert image not in after_images
        assert bench_objects(after_run) == []
        events = store.events.of_run(1)
        kinds = [e.kind for e in events]
        health = [e for e in events if e.kind == "health"]
        assert health and health[0].message.startswith("at the start: HEALTH_OK"), kinds
        created = [e for e in events if e.kind == "rbd-image" and e.data.get("created")]
        assert [(e.data["pool"], e.data["image"]) for e in created] == [(POOL, image)]
        removed = [e for e in events if e.kind == "rbd-image" and e.data.get("removed")]
        assert [e.data["removed"] for e in removed] == [f"{POOL}/{image}"]
        assert created[0].at <= removed[0].at
        (cleanup,) = [e for e in events if e.kind == "rados-cleanup"]
        assert cleanup.data["prefix"] == "storbench-r1." and cleanup.data["left"] == []
        assert store.runs.get(1).status == "completed"
    finally:
        store.close()


def test_an_image_storbench_did_not_create_is_written_only_with_destroy_data(
    ceph_cluster: Any, conf: str, tmp_path: Path
) -> None:
    image = f"sb-it-foreign-{uuid.uuid4().hex[:8]}"
    data = tmp_path / "image.bin"
    data.write_bytes(os.urandom(4 * MiB))
    original = hashlib.sha256(data.read_bytes()).hexdigest()
    plan = write_plan(
        tmp_path / "foreign.yaml",
        f"""\
name: foreign-image
targets:
  - rbd: {POOL}/{image}
workloads:
  - name: w
    rw: randwrite
    bs: 4k
    iodepth: 4
    size: 4m
    runtime: 2
    time_based: 1
""",
    )
    db = tmp_path / "results.db"
    ceph_cluster.run("rbd", "import", "--no-progress", str(data), f"{POOL}/{image}")
    try:
        assert sha256_of_image(ceph_cluster, image) == original
        r = sb("run", plan, "--ceph-conf", conf, db=db)
        assert r.returncode == 2, r.stdout + r.stderr
        assert "Traceback" not in r.stderr
        assert f"rbd image {POOL}/{image} exists and the plan writes to it" in r.stderr
        assert f"--destroy-data rbd:{POOL}/{image}" in r.stderr
        assert runs_in(db) == 0
        assert image in images(ceph_cluster)
        assert sha256_of_image(ceph_cluster, image) == original  # not one byte written

        # with the flag it runs -- and leaves the image, which it did not create
        r = sb("run", plan, "--ceph-conf", conf, "--destroy-data", f"rbd:{POOL}/{image}", db=db)
        assert r.returncode == 0, r.stdout + r.stderr
        store = Store(str(db))
        try:
            (m,) = store.measurements.of_run(1)
            assert m.status == "ok", m.error
            assert m.measurement.directions["write"].total_ios > 0
            assert [e for e in store.events.of_run(1) if e.kind == "rbd-image"] == []
        finally:
            store.close()
        assert image in images(ceph_cluster)
        assert sha256_of_image(ceph_cluster, image) != original  # fio wrote to it
    finally:
        ceph_cluster.run("rbd", "rm", "--no-progress", f"{POOL}/{image}", check=False)
    assert image not in images(ceph_cluster)


def test_a_refusal_after_an_image_was_created_removes_that_image(
    ceph_cluster: Any, conf: str, tmp_path: Path
) -> None:
    """Preflight creates a missing image before it looks at the next target; when that one
    is refused, nothing runs and the image it just made goes again."""
    new = f"sb-it-new-{uuid.uuid4().hex[:8]}"
    foreign = f"sb-it-theirs-{uuid.uuid4().hex[:8]}"
    plan = write_plan(
        tmp_path / "two-images.yaml",
        f"""\
name: two-images
targets:
  - rbd: {POOL}/{new}
    size: 16m
  - rbd: {POOL}/{foreign}
workloads:
  - name: w
    rw: write
    bs: 1m
    size: 4m
    runtime: 1
""",
    )
    db = tmp_path / "results.db"
    ceph_cluster.run("rbd", "create", "--size", "16M", f"{POOL}/{foreign}")
    try:
        r = sb("run", plan, "--ceph-conf", conf, db=db)
        assert r.returncode == 2, r.stdout + r.stderr
        assert f"rbd image {POOL}/{foreign} exists and the plan writes to it" in r.stderr
        assert runs_in(db) == 0
        assert new not in images(ceph_cluster)
        assert foreign in images(ceph_cluster)
    finally:
        for image in (new, foreign):
            ceph_cluster.run("rbd", "rm", "--no-progress", f"{POOL}/{image}", check=False)


# ---------------------------------------------------------------------------- refusals


def test_an_unhealthy_pool_is_refused_before_anything_runs(
    ceph_cluster: Any, inactive_pool: str, tmp_path: Path
) -> None:
    """With osd.1 stopped no PG of a size 2 / min_size 2 pool is active (Ceph says only
    HEALTH_WARN): rados bench would wait forever. Not run with --allow-unhealthy, which
    lets it try (and hang until its timeout)."""
    db = tmp_path / "results.db"
    conf_path = str(ceph_cluster.conf_path)
    r = sb(
        "run",
        "rados",
        "--set",
        "runtime=2",
        "--set",
        "clients=1",
        "--target",
        f"rados:{inactive_pool}",
        "--ceph-conf",
        conf_path,
        db=db,
    )
    assert r.returncode == 2, r.stdout + r.stderr
    assert "Traceback" not in r.stderr
    assert f"8 of 8 PGs of pool {inactive_pool} are not active" in r.stderr
    assert "no I/O to it would complete" in r.stderr
    assert "--allow-unhealthy" in r.stderr
    assert "run 1" not in r.stdout
    assert runs_in(db) == 0


def test_objects_above_osd_max_object_size_are_refused_before_any_io(
    ceph_cluster: Any, conf: str, tmp_path: Path
) -> None:
    plan = write_plan(
        tmp_path / "big.yaml",
        f"""\
name: big-objects
targets:
  - rados: {POOL}
workloads:
  - name: big
    rw: write
    bs: 4m
    size: 256m
""",
    )
    db = tmp_path / "results.db"
    r = sb("run", plan, "--ceph-conf", conf, db=db)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "Traceback" not in r.stderr
    assert "would write objects of 256.0 MiB" in r.stderr
    assert "osd_max_object_size of 128.0 MiB" in r.stderr
    assert "nrfiles" in r.stderr  # the fix
    assert runs_in(db) == 0
    assert bench_objects(objects(ceph_cluster)) == []


def test_rados_bench_objects_above_osd_max_object_size_are_refused(
    ceph_cluster: Any, conf: str, tmp_path: Path
) -> None:
    db = tmp_path / "results.db"
    r = sb(
        "run", "rados", "--target", f"rados:{POOL}", "--ceph-conf", conf,
        "--set", "bs=256m", "--set", "clients=1", "--set", "runtime=2",
        db=db,
    )  # fmt: skip
    assert r.returncode == 2, r.stdout + r.stderr
    assert "would write rados bench objects of 256.0 MiB (bs)" in r.stderr
    assert "osd_max_object_size of 128.0 MiB" in r.stderr
    assert "lower `bs`" in r.stderr
    assert runs_in(db) == 0
    assert bench_objects(objects(ceph_cluster)) == []


def test_an_image_to_create_smaller_than_the_workloads_is_refused(
    ceph_cluster: Any, conf: str, tmp_path: Path
) -> None:
    """An existing image smaller than what the workloads address is refused before any I/O;
    so must be an image storbench is told to create with a `size:` below it -- instead of
    creating and filling it, then failing every point with fio's "error 22"."""
    image = f"sb-it-small-{uuid.uuid4().hex[:8]}"
    plan = write_plan(
        tmp_path / "small.yaml",
        f"""\
name: small-image
targets:
  - rbd: {POOL}/{image}
    size: 16m
workloads:
  - name: w
    rw: randwrite
    bs: 4k
    size: 64m
    runtime: 1
    time_based: 1
""",
    )
    db = tmp_path / "results.db"
    try:
        r = sb("run", plan, "--ceph-conf", conf, db=db)
        assert r.returncode == 2, r.stdout + r.stderr
        assert f"rbd image {POOL}/{image}" in r.stderr and "64.0 MiB" in r.stderr
        assert runs_in(db) == 0
        assert image not in images(ceph_cluster)
    finally:
        ceph_cluster.run("rbd", "rm", "--no-progress", f"{POOL}/{image}", check=False)


# ---------------------------------------------------------------------------- interrupt, resume


def test_ctrl_c_after_the_write_keeps_its_objects_and_resume_runs_the_seq(
    ceph_cluster: Any, conf: str, tmp_path: Path
) -> None:
    """SIGINT once the write is recorded (the database is polled, no sleep decides): the
    seq point, which reads for about a second or more, is cut short; the write's objects stay
    for ``storbench resume``, which runs the seq point and removes them."""
    plan = write_plan(
        tmp_path / "rados.yaml",
        f"""\
name: rados-resume
targets:
  - rados: {POOL}
workloads:
  - name: write
    engine: rados-bench
    mode: write
    runtime: 2
  - name: seq
    engine: rados-bench
    mode: seq
    runtime: 3
""",
    )
    db = tmp_path / "results.db"
    env = {k: v for k, v in os.environ.items() if k != "CEPH_CONF"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "storbench", "run", plan, "--ceph-conf", conf, "--db", str(db)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        stdin=subprocess.DEVNULL,
    )
    try:
        end = time.monotonic() + 120
        while True:
            assert proc.poll() is None, proc.communicate()
            with contextlib.suppress(sqlite3.Error):
                con = sqlite3.connect(db)
                try:
                    if con.execute("SELECT COUNT(*) FROM measurements").fetchone()[0] >= 1:
                        break
                finally:
                    con.close()
            assert time.monotonic() < end, "the write point was not recorded within 120 s"
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, out + err
    assert "storbench resume 1" in out

    store = Store(str(db))
    try:
        assert store.runs.get(1).status == "interrupted"
        assert [m.point_idx for m in store.measurements.of_run(1)] == [0]
        (noted,) = store.events.of_run(1, "rados-objects")[:1]
        prefix, run_name = noted.data["prefix"], noted.data["run_name"]
        assert run_name == "storbench-r1-t0-4194304b-1c-rep0"
        kept = [e for e in store.events.of_run(1, "rados-objects") if e.data.get("kept")]
        assert len(kept) == 1 and "storbench resume 1" in kept[0].message
        assert store.events.of_run(1, "rados-cleanup") == []
    finally:
        store.close()
    left = objects(ceph_cluster)
    written = [n for n in left if n.startswith(f"{prefix}_object")]
    assert written and run_name in left  # the objects and the metadata seq reads

    r = sb("resume", "1", db=db)
    assert r.returncode == 0, r.stdout + r.stderr
    store = Store(str(db))
    try:
        assert store.runs.get(1).status == "completed"
        rows = store.measurements.of_run(1)
        assert [(m.point_idx, m.status) for m in rows] == [(0, "ok"), (1, "ok")]
        read = rows[1].measurement.directions["read"]
        assert 0 < read.total_ios <= len(written)
        (cleanup,) = store.events.of_run(1, "rados-cleanup")
        assert cleanup.data["run_names"] == [run_name] and cleanup.data["left"] == []
    finally:
        store.close()
    assert bench_objects(objects(ceph_cluster)) == []


@contextlib.contextmanager
def bare_fio_server(conf: str) -> Iterator[int]:
    """A bare `fio --server` on loopback (no agent: points go through fio's client), told
    the cluster's ceph.conf as an agent's host would have it."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    server = subprocess.Popen(
        ["fio", f"--server=127.0.0.1,{port}"],
        env={**os.environ, "CEPH_CONF": conf},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
                break
            assert time.monotonic() < deadline, "the bare fio server did not listen"
            time.sleep(0.05)
        yield port
    finally:
        os.killpg(server.pid, signal.SIGKILL)
        server.wait()


@pytest.mark.parametrize("host", ["local", "bare fio server"])
def test_fio_rbd_and_rados_engines_through_hosts(
    ceph_cluster: Any, conf: str, tmp_path: Path, host: str
) -> None:
    """With `hosts:` fio's rbd and rados engines run as many hosts run them: the `local`
    host through the run service storbench runs itself (its fio must get the rbd target's
    ceph.conf: $CEPH_CONF, librbd reads no other), a bare fio server through fio's
    client/server mode."""
    image = f"sb-cs-{uuid.uuid4().hex[:8]}"
    before = objects(ceph_cluster)
    with contextlib.ExitStack() as stack:
        if host == "local":
            entry = "address: local"
        else:
            entry = f"{{address: 127.0.0.1, port: {stack.enter_context(bare_fio_server(conf))}}}"
        _run_on_hosts(ceph_cluster, conf, tmp_path, image, entry, before)


def _run_on_hosts(
    ceph_cluster: Any, conf: str, tmp_path: Path, image: str, entry: str, before: Any
) -> None:
    plan = write_plan(
        tmp_path / "ceph-hosts.yaml",
        f"""\
name: ceph-hosts
hosts:
  - {entry}
targets:
  - rbd: {POOL}/{image}
    size: 32m
  - rados: {POOL}
workloads:
  - name: w
    rw: write
    bs: 1m
    size: 4m
    runtime: 2
    time_based: 1
""",
    )
    db = tmp_path / "results.db"
    try:
        r = sb("run", plan, "--ceph-conf", conf, db=db)
        assert r.returncode == 0, r.stdout + r.stderr
    finally:
        if image in images(ceph_cluster):
            ceph_cluster.run("rbd", "rm", "--no-progress", f"{POOL}/{image}")
    store = Store(str(db))
    try:
        rows = store.measurements.of_run(1)
        assert [m.point.target.kind for m in rows if m.point] == ["rbd", "rados"]
        for m in rows:
            assert m.status == "ok", m.error
            assert len(m.measurement.hosts) == 1
            assert m.measurement.directions["write"].iops > 0
            command = " ".join(store.measurements.raw(m.id)["command"] or [])
            local = entry == "address: local"
            assert ("--client" in command) != local, command
            assert m.measurement.extra.get("live_hosts", False) == local
    finally:
        store.close()
    assert image not in images(ceph_cluster)
    try:
        assert bench_objects(objects(ceph_cluster)) == []
    finally:
        restore_pool(ceph_cluster, before)


def pool_read_bytes(cluster: Any, pool: str = POOL) -> int:
    """What the OSDs have read from the pool so far (`rados df`)."""
    doc = json.loads(cluster.run("rados", "df", "-f", "json").stdout)
    return int(next(p for p in doc["pools"] if p["name"] == pool)["read_bytes"])


@pytest.mark.parametrize("with_hosts", [False, True], ids=["local fio", "fio client/server"])
def test_fio_rados_reads_read_data(
    ceph_cluster: Any, conf: str, tmp_path: Path, with_hosts: bool
) -> None:
    """fio's rados engine creates the objects it reads empty and then "reads" them at full
    speed without the OSDs reading a byte; storbench writes them first (each host its own,
    named h<i>): the pool's read counter must grow by what fio says it read."""
    before = objects(ceph_cluster)
    hosts = "hosts:\n  - address: local\n" if with_hosts else ""
    plan = write_plan(
        tmp_path / "rados-read.yaml",
        f"""\
name: rados-read
{hosts}targets:
  - rados: {POOL}
workloads:
  - name: r
    rw: randread
    bs: 64k
    size: 4m
    runtime: 2
    time_based: 1
""",
    )
    db = tmp_path / "results.db"
    read0 = pool_read_bytes(ceph_cluster)
    try:
        r = sb("run", plan, "--ceph-conf", conf, db=db)
        assert r.returncode == 0, r.stdout + r.stderr
        store = Store(str(db))
        try:
            (m,) = store.measurements.of_run(1)
            assert m.status == "ok", m.error
            fio_read = m.measurement.directions["read"].io_bytes
            job = store.measurements.raw(m.id)["job_file"] or ""
        finally:
            store.close()
        assert fio_read > 0
        assert ("storbench-r1.h0.$jobname" in job) == with_hosts
        # the OSDs' counters lag by a few seconds: wait for them, bounded
        deadline = time.monotonic() + 30
        while pool_read_bytes(ceph_cluster) - read0 < 0.5 * fio_read:
            assert time.monotonic() < deadline, (
                f"the pool read {pool_read_bytes(ceph_cluster) - read0} bytes, fio {fio_read}"
            )
            time.sleep(0.5)
        assert bench_objects(objects(ceph_cluster)) == []
    finally:
        restore_pool(ceph_cluster, before)


def test_hosts_writing_one_shared_image_are_warned(
    ceph_cluster: Any, conf: str, tmp_path: Path
) -> None:
    """Seed 003 gave each VM its own image; two librbd clients writing one image take turns
    holding its exclusive lock. storbench runs it, but says so."""
    from storbench.engines.fio import FioServer

    image = f"sb-it-shared-{uuid.uuid4().hex[:8]}"
    server = FioServer(cwd=str(tmp_path), env={**os.environ, "CEPH_CONF": conf})
    server.start()
    try:
        plan = write_plan(
            tmp_path / "shared.yaml",
            f"""\
name: shared-image
hosts:
  - address: local
  - address: 127.0.0.1
    port: {server.port}
targets:
  - rbd: {POOL}/{image}
    size: 16m
workloads:
  - name: w
    rw: write
    bs: 1m
    size: 4m
    runtime: 1
""",
        )
        r = sb("run", plan, "--ceph-conf", conf, db=tmp_path / "results.db")
        assert r.returncode == 0, r.stdout + r.stderr
        assert f"several hosts write rbd image {POOL}/{image} at once" in r.stderr
    finally:
        server.stop()
        ceph_cluster.run("rbd", "rm", "--no-progress", f"{POOL}/{image}", check=False)
    assert image not in images(ceph_cluster)


def test_writes_that_cannot_fit_in_the_pool_are_refused_before_any_image_or_object(
    ceph_cluster: Any, conf: str, tmp_path: Path
) -> None:
    """`ceph df` says what the pool can still take: an rbd image storbench would create (and
    write end to end) or fio's rados objects larger than that are refused before anything
    is created, naming the room; a plan that fits runs."""
    room = next(
        p["stats"]["max_avail"] for p in ceph_cluster.ceph("df")["pools"] if p["name"] == POOL
    )
    too_big = f"{(room // GiB) + 4}g"
    image = f"sb-it-room-{uuid.uuid4().hex[:8]}"
    before = objects(ceph_cluster)
    for target, size in ((f"rbd: {POOL}/{image}", too_big), (f"rados: {POOL}", too_big)):
        plan = write_plan(
            tmp_path / "room.yaml",
            f"""\
name: room
targets:
  - {target}
workloads:
  - {{name: w, rw: write, bs: 4m, size: {size}, nrfiles: 1024, runtime: 1}}
""",
        )
        r = sb("run", str(plan), "--ceph-conf", conf, db=tmp_path / "r.db")
        assert r.returncode == 2, r.stdout + r.stderr
        assert f"does not fit in pool {POOL}" in r.stderr and "MAX AVAIL" in r.stderr, r.stderr
        assert "Traceback" not in r.stderr
    assert image not in images(ceph_cluster)
    assert objects(ceph_cluster) == before


def _wait_for_pool_objects(cluster: Any, count: int, seconds: float = 60.0) -> None:
    """Until `ceph df` says the pool holds ``count`` objects and its stored bytes stayed the
    same over six looks a second apart, a whole report period of the manager (mgr_stats_period,
    5 s) (at most ``seconds``): the OSDs report their PGs' stats every few seconds, a busy
    machine's later, and objects and bytes need not arrive in the same report."""
    deadline = time.monotonic() + seconds
    seen: list[int] = []
    while True:
        stats = next(p["stats"] for p in cluster.ceph("df")["pools"] if p["name"] == POOL)
        seen = [*seen[-5:], int(stats["stored"])] if stats["objects"] == count else []
        if (len(seen) == 6 and len(set(seen)) == 1) or time.monotonic() > deadline:
            return
        time.sleep(1)


def test_writes_beyond_the_pool_quota_are_refused_naming_the_quota(
    ceph_cluster: Any, conf: str, tmp_path: Path
) -> None:
    """A pool's quota (`ceph osd pool set-quota`) bounds it below `ceph df`'s MAX AVAIL, which
    ignores it: an rbd image or fio's rados objects beyond what the quota leaves are refused
    before anything is created (Ceph would mark the pool full, seconds late, and block the
    writes), and so are more objects than its max_objects leaves; within it, a run runs."""
    image = f"sb-it-quota-{uuid.uuid4().hex[:8]}"
    before = objects(ceph_cluster)
    try:
        for target, size, files in (
            (f"rbd: {POOL}/{image}", "128m", 1),
            (f"rados: {POOL}", "128m", 2),
        ):
            # `ceph df` counts what an earlier test removed until the OSDs next report their
            # PGs' stats (seconds later, a busy machine's later still), and the room check
            # reads `ceph df`: the quota is set from settled figures just before each run,
            # 16 MiB above what the pool stores (a CI run once saw the figure fall by more
            # than the 64 MiB room it had between the two runs, and rados wrote 128 MiB)
            _wait_for_pool_objects(ceph_cluster, len(objects(ceph_cluster)))
            stats = next(p["stats"] for p in ceph_cluster.ceph("df")["pools"] if p["name"] == POOL)
            quota = stats["stored"] + 16 * (1 << 20)
            ceph_cluster.run("ceph", "osd", "pool", "set-quota", POOL, "max_bytes", str(quota))
            plan = write_plan(
                tmp_path / "quota.yaml",
                f"""\
name: quota
targets:
  - {target}
workloads:
  - {{name: w, rw: write, bs: 4m, size: {size}, nrfiles: {files}, runtime: 1}}
""",
            )
            r = sb("run", str(plan), "--ceph-conf", conf, db=tmp_path / "q.db")
            assert r.returncode == 2, r.stdout + r.stderr
            assert f"does not fit in pool {POOL}" in r.stderr, r.stderr
            assert "its quota of" in r.stderr and f"set-quota {POOL} max_bytes" in r.stderr
            assert "Traceback" not in r.stderr
        ceph_cluster.run("ceph", "osd", "pool", "set-quota", POOL, "max_bytes", "0")
        ceph_cluster.run(
            "ceph", "osd", "pool", "set-quota", POOL, "max_objects", str(stats["objects"] + 2)
        )
        r = sb("run", str(plan), "--ceph-conf", conf, db=tmp_path / "q.db")  # 2 objects: fit
        assert r.returncode == 0, r.stdout + r.stderr
        _wait_for_pool_objects(ceph_cluster, len(objects(ceph_cluster)))  # that run's removed
        plan = write_plan(
            tmp_path / "quota.yaml", Path(plan).read_text().replace("nrfiles: 2", "nrfiles: 3")
        )
        r = sb("run", str(plan), "--ceph-conf", conf, db=tmp_path / "q.db")
        assert r.returncode == 2, r.stdout + r.stderr
        assert "makes 3 objects in pool" in r.stderr and "allows 2 more" in r.stderr, r.stderr
    finally:
        ceph_cluster.run("ceph", "osd", "pool", "set-quota", POOL, "max_bytes", "0")
        ceph_cluster.run("ceph", "osd", "pool", "set-quota", POOL, "max_objects", "0")
    assert image not in images(ceph_cluster)
    assert objects(ceph_cluster) == before


# ---------------------------------------------------------------------------- findings


def _finding_codes(db: Path) -> dict[int, list[str]]:
    """Run 1's findings by point number, from its JSON export."""
    out = sb("export", "1", "--format", "json", db=db)
    assert out.returncode == 0, out.stderr
    found: dict[int, list[str]] = {}
    for f in json.loads(out.stdout)["findings"]:
        found.setdefault(f["point"], []).append(f["code"])
    return found


def test_findings_rbd_reads_of_a_blank_image_then_of_a_written_one(
    ceph_cluster: Any, conf: str, tmp_path: Path
) -> None:
    """A thin image storbench creates reads as zeroes until written: the read before the
    write is flagged unwritten-read (rbd du: nothing of it holds data), the same read after
    a write of the whole image is not."""
    image = f"sb-it-blank-{uuid.uuid4().hex[:8]}"
    plan = write_plan(
        tmp_path / "blank.yaml",
        f"""\
name: blank
targets:
  - rbd: {POOL}/{image}
    size: 16m
global: {{size: 16m, runtime: 1, time_based: 1}}
workloads:
  - {{name: before, rw: randread, bs: 4k}}
  - {{name: fill, rw: write, bs: 1m, time_based: 0}}
  - {{name: after, rw: randread, bs: 4k}}
""",
    )
    db = tmp_path / "results.db"
    try:
        r = sb("run", plan, "--ceph-conf", conf, db=db)
        assert r.returncode == 0, r.stdout + r.stderr
        found = _finding_codes(db)
        assert "unwritten-read" in found.get(1, []), found
        assert "unwritten-read" not in found.get(3, []), found
        assert "finding unwritten-read: the RBD image" in r.stdout
    finally:
        ceph_cluster.run("rbd", "rm", "--no-progress", f"{POOL}/{image}", check=False)


def test_findings_compressible_writes_to_a_compressing_pool(
    ceph_cluster: Any, conf: str, tmp_path: Path
) -> None:
    """With the pool's compression_mode aggressive, fio's default buffers (one per job,
    reused) are flagged compressible; refill_buffers (fresh data each write) is not."""
    image = f"sb-it-zip-{uuid.uuid4().hex[:8]}"
    plan = write_plan(
        tmp_path / "zip.yaml",
        f"""\
name: zip
targets:
  - rbd: {POOL}/{image}
    size: 16m
global: {{size: 16m, runtime: 1, time_based: 1, rw: randwrite, bs: 4k}}
workloads:
  - {{name: reused}}
  - {{name: fresh, refill_buffers: 1}}
""",
    )
    db = tmp_path / "results.db"
    ceph_cluster.run("ceph", "osd", "pool", "set", POOL, "compression_mode", "aggressive")
    try:
        r = sb("run", plan, "--ceph-conf", conf, db=db)
        assert r.returncode == 0, r.stdout + r.stderr
        found = _finding_codes(db)
        assert "compressible" in found.get(1, []), found
        assert "compressible" not in found.get(2, []), found
    finally:
        ceph_cluster.run("ceph", "osd", "pool", "set", POOL, "compression_mode", "none")
        ceph_cluster.run("rbd", "rm", "--no-progress", f"{POOL}/{image}", check=False)
