"""rados bench, cluster inventory and the health gate against a real Ceph cluster (one per
session: ``ceph_cluster`` in conftest.py). Each test leaves the cluster as it found it:
no benchmark objects, all OSDs up, only the pool ``bench`` (and the mgr's own)."""

from __future__ import annotations

import itertools
import subprocess
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from storbench.engines import rados
from storbench.hosts import ceph as cephtools
from storbench.preflight import ceph

pytestmark = [pytest.mark.integration, pytest.mark.ceph]

MiB = 1 << 20
POOL = "bench"
#: the two clients write smaller objects with fewer threads: less data, same checks
SIZE_2C = 1 * MiB


def wait_until(what: str, cond: Callable[[], Any], timeout: float = 60.0) -> Any:
    end = time.monotonic() + timeout
    while True:
        value = cond()
        if value:
            return value
        if time.monotonic() > end:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(0.5)


@pytest.fixture
def conf(ceph_cluster: Any) -> Iterator[str]:
    """The cluster's ceph.conf. Every test asserts that its own cleanup left nothing; this
    only makes sure the next test starts on an empty pool (after a failure or Ctrl-C)."""
    yield str(ceph_cluster.conf_path)
    left = rados.leftover_objects(POOL, str(ceph_cluster.conf_path))
    if left:  # a throwaway pool: remove every benchmark object
        env = ceph_cluster.env()
        subprocess.run(
            ["rados", "-p", POOL, "cleanup", "--prefix", rados.BENCH_PREFIX],
            env=env,
            capture_output=True,
            check=False,
        )
        for name in rados.leftover_objects(POOL, str(ceph_cluster.conf_path)):
            subprocess.run(["rados", "-p", POOL, "rm", name], env=env, check=False)
        warnings.warn(f"removed {len(left)} benchmark objects left in {POOL}", stacklevel=1)


def test_write_then_seq_reads_what_write_left(conf: str, tmp_path: Path) -> None:
    run = "storbench-it-single"
    meas, runs = rados.run_bench(POOL, "write", 3, 4 * MiB, 16, run, conf, workdir=str(tmp_path))
    assert meas.status == "ok", meas.error
    w, res = meas.directions["write"], runs[0].result
    assert res is not None and not res.rejected, res.warnings
    assert runs[0].exit_code == 0 and runs[0].object_prefix == res.object_prefix
    assert w.total_ios == res.ops and w.total_ios > 0
    assert w.io_bytes == res.ops * 4 * MiB  # type: ignore[operator]
    assert w.bw_bytes == pytest.approx(w.io_bytes / w.runtime_s, rel=0.01)
    assert 3.0 <= w.runtime_s < 10
    rows = meas.extra["series"]["rows"]
    assert len(rows) >= 3 and all(r[1] is not None for r in rows)  # --show-time stamps
    assert w.lat is not None and w.lat.mean and w.lat.min <= w.lat.mean <= w.lat.max  # type: ignore[operator]
    # the metadata object the read benchmarks need
    assert rados.leftover_objects(POOL, conf, prefixes=[], run_names=[run]) == [run]

    smeas, sruns = rados.run_bench(POOL, "seq", 3, None, 16, run, conf, workdir=str(tmp_path))
    assert smeas.status == "ok", smeas.error
    r, sres = smeas.directions["read"], sruns[0].result
    assert sres is not None and sres.op_size == 4 * MiB  # learned from the write's metadata
    # rados bench checks the content of every object it reads (exit status 0: all matched)
    assert sruns[0].exit_code == 0 and "is not correct" not in sruns[0].stderr
    assert 0 < r.total_ios <= res.ops  # type: ignore[operator]

    left = rados.cleanup(POOL, [(run, runs[0].object_prefix)], conf)
    assert left == []


def test_two_concurrent_clients(conf: str, tmp_path: Path) -> None:
    run = "storbench-it-2c"
    meas, runs = rados.run_bench(
        POOL, "write", 3, SIZE_2C, 8, run, conf, clients=2, workdir=str(tmp_path)
    )
    try:
        assert meas.status == "ok", meas.error
        assert [r.run_name for r in runs] == [f"{run}-c1", f"{run}-c2"]
        prefixes = {r.object_prefix for r in runs}
        assert len(prefixes) == 2 and None not in prefixes
        w = meas.directions["write"]
        win = meas.extra["window"]
        clients = win["clients"]
        assert w.bw_bytes == pytest.approx(sum(c["bw_bytes"] for c in clients))
        assert w.iops == pytest.approx(sum(c["iops"] for c in clients))
        assert w.runtime_s == pytest.approx(win["seconds"]) and win["seconds"] > 1.5
        # each client's window figures, recomputed here from its own table and summary
        for c, r in zip(clients, runs, strict=True):
            res = r.result
            assert res is not None and res.start_time is not None
            assert res.start_time <= win["start"] and win["end"] <= res.end_time  # type: ignore[operator]
            pts = [(row.time, row.finished) for row in res.series]
            pts.append((res.end_time, res.ops))
            fin = [_interp(pts, win["start"]), _interp(pts, win["end"])]
            assert c["ops"] == pytest.approx(fin[1] - fin[0])
            assert c["bw_bytes"] == pytest.approx((fin[1] - fin[0]) * SIZE_2C / win["seconds"])
            # a client's rate in the window is its whole-run rate, give or take
            whole = res.ops * SIZE_2C / res.total_time_s  # type: ignore[operator]
            assert 0.3 * whole < c["bw_bytes"] < 3 * whole
        assert set(meas.hosts) == {f"{run}-c1", f"{run}-c2"}
        assert w.lat is not None and w.lat.mean is not None and w.lat.percentiles == {}

        # each client reads its own objects (rand: for the whole 2 s; seq would stop as soon
        # as it has read them all, each client at its own time), and checks their content
        rmeas, rruns = rados.run_bench(
            POOL, "rand", 2, None, 8, run, conf, clients=2, workdir=str(tmp_path)
        )
        assert rmeas.status == "ok", rmeas.error
        assert all(r.exit_code == 0 for r in rruns), [r.stderr for r in rruns]
        assert "is not correct" not in "".join(r.stderr for r in rruns)
        assert rmeas.directions["read"].total_ios > 0
        for r in rruns:
            assert r.result is not None and r.result.op_size == SIZE_2C
    finally:
        left = rados.cleanup(POOL, [(r.run_name, r.object_prefix) for r in runs], conf)
    assert left == []


def _interp(pts: list[tuple[Any, Any]], t: float) -> float:
    for (ta, fa), (tb, fb) in itertools.pairwise(pts):
        if ta <= t <= tb:
            return fa + (fb - fa) * (t - ta) / (tb - ta)
    raise AssertionError(f"{t} outside the client's run")


def test_cleanup_of_a_killed_write_spares_other_runs(conf: str, tmp_path: Path) -> None:
    """A write stopped early stores no metadata object: cleanup must go by its object prefix,
    and must not touch the objects of another run (rados's host-wide fallback would)."""
    keep = "storbench-it-keep"
    _, kept = rados.run_bench(POOL, "write", 1, 64 * 1024, 4, keep, conf, workdir=str(tmp_path))
    keep_prefix = kept[0].object_prefix
    assert keep_prefix is not None
    kept_objects = rados.leftover_objects(POOL, conf, prefixes=[keep_prefix + "_object"])
    assert kept_objects

    killed = "storbench-it-killed"
    t0 = time.monotonic()
    meas, runs = rados.run_bench(
        POOL,
        "write",
        30,
        64 * 1024,
        4,
        killed,
        conf,
        workdir=str(tmp_path),
        should_stop=lambda: time.monotonic() - t0 > 2.0,
    )
    try:
        assert runs[0].interrupted and meas.status == "failed"
        prefix = runs[0].object_prefix
        # printed at the start (--show-time flushes each line), and what the pid gives
        assert prefix == rados.object_prefix_in(runs[0].raw_output)
        assert prefix == rados.object_prefix_for(runs[0].pid)
        assert rados.leftover_objects(POOL, conf, prefixes=[], run_names=[killed]) == []
        assert rados.leftover_objects(POOL, conf, prefixes=[prefix + "_object"])  # type: ignore[operator]
        assert rados.cleanup(POOL, [(killed, prefix)], conf) == []
        assert (
            rados.leftover_objects(POOL, conf, prefixes=[keep_prefix + "_object"]) == kept_objects
        )
    finally:
        left = rados.cleanup(POOL, [(keep, keep_prefix), (killed, runs[0].object_prefix)], conf)
    assert left == []


def test_cluster_inventory(ceph_cluster: Any, conf: str) -> None:
    t0 = time.monotonic()
    inv = ceph.cluster_inventory(conf, POOL)
    took = time.monotonic() - t0
    assert inv["errors"] == []
    assert {
        "fsid",
        "health",
        "versions",
        "osd_tree",
        "osds",
        "df",
        "pool",
        "pools",
        "osd_max_object_size",
    } <= set(inv)
    assert inv["fsid"] == ceph_cluster.fsid
    assert inv["health"]["status"] == "HEALTH_OK", inv["health"]["checks"]
    assert sum(inv["versions"]["osd"].values()) == 2
    assert [(o["name"], o["objectstore"], o["status"]) for o in inv["osds"]] == [
        ("osd.0", "bluestore", "up"),
        ("osd.1", "bluestore", "up"),
    ]
    assert all(o["device_class"] for o in inv["osds"])
    p = inv["pool"]
    assert (p["pool_name"], p["size"], p["min_size"], p["pg_num"]) == (POOL, 1, 1, 8)
    assert p["crush_rule_name"] == "replicated_rule"
    assert inv["df"]["stats"]["total_bytes"] == 2 * 8 * 1024**3
    assert inv["osd_max_object_size"] == ceph.pool_max_object_size(conf) == 128 * MiB
    assert took < 20, f"inventory took {took:.1f} s"


def test_health_gate_refuses_when_an_osd_of_a_size2_min2_pool_is_down(
    ceph_cluster: Any, conf: str
) -> None:
    status, checks = ceph.health(conf)
    assert (status, checks) == ("HEALTH_OK", {}), checks
    assert ceph.health_refusal(status, False) is None
    ceph_cluster.create_pool("degraded", 2, 2, 8)
    try:
        ceph_cluster.stop_osd(1)
        states = wait_until(
            "PGs of pool degraded inactive",
            lambda: (s := ceph.pool_pg_states(conf, "degraded")) and ceph.inactive_pgs(s) and s,
        )
        status, checks = wait_until(
            "health to report the OSD down",
            lambda: (h := ceph.health(conf)) and "OSD_DOWN" in h[1] and h,
        )
        # what Ceph says: a warning, not an error -- yet no I/O to the pool can complete
        assert status == "HEALTH_WARN"
        assert ceph.health_refusal(status, False, checks=checks) is None
        why = ceph.health_refusal(status, False, checks=checks, pool="degraded", pg_states=states)
        assert why is not None and "PGs of pool degraded are not active" in why
        assert ceph.health_refusal(status, True, pool="degraded", pg_states=states) is None
        warning = ceph.health_warning(status, checks)
        assert warning is not None and "OSD_DOWN" in warning
    finally:
        ceph_cluster.start_osd(1)
        ceph_cluster.delete_pool("degraded")
        ceph_cluster.wait_clean()
    assert wait_until("HEALTH_OK", lambda: ceph.health(conf)[0] == "HEALTH_OK", 30)


def test_remove_objects_goes_past_missing_ones(conf: str, tmp_path: Path) -> None:
    """`rados rm A B C` stops at the first object it cannot remove; remove_objects goes on
    after a missing one (fio may not have made every object) without listing the pool."""
    data = tmp_path / "obj"
    data.write_bytes(b"x" * 4096)
    names = ["storbench-rm.a", "storbench-rm.b", "storbench-rm.c"]
    for name in (names[0], names[2]):
        subprocess.run(
            [rados.RADOS, "-c", conf, "-p", POOL, "put", name, str(data)], check=True, timeout=60
        )
    assert cephtools.remove_objects(POOL, names, conf) == []
    assert rados.leftover_objects(POOL, conf, prefixes=["storbench-rm."]) == []
    failed = cephtools.remove_objects("no-such-pool", names[:1], conf)
    assert len(failed) == 1 and "no-such-pool" in failed[0]
