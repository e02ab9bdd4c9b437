"""The room a Ceph pool has left (cluster free space and the pool's quota), on real `ceph ...
-f json` outputs of Ceph 16.2.15: the states healthy (no quota) of tests/data/rados/record.sh
and quota / quota-full of tests/data/rados/record_quota.py (see its docstring). Expected
values are read here from the recorded files, independently of storbench's inventory."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from storbench.model.errors import PreflightError
from storbench.plan import Target
from storbench.preflight.ceph import inventory as ceph_inventory
from storbench.preflight.ceph.room import ROOM_WARN, check_room, pool_room

DATA = Path(__file__).resolve().parent.parent / "data" / "rados"
MiB = 1 << 20
FILES = {
    ("df",): "df",
    ("osd", "pool", "ls", "detail"): "osd-pool-ls-detail",
    ("health", "detail"): "health-detail",
}
BENCH = Target("rados", "bench")


def recorded(state: str, what: str) -> Any:
    return json.loads((DATA / f"{state}.{what}.json").read_text())


def inventory(state: str, monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """storbench's inventory of the recorded cluster (the queries not recorded in the quota
    states, e.g. `osd tree`, fail: the inventory notes them and goes on)."""

    def answer(conf: object, *args: str, timeout: float = 0) -> Any:
        if args not in FILES:
            raise ceph_inventory.CephCommandError(f"`ceph {' '.join(args)}`: not recorded")
        return recorded(state, FILES[args])

    monkeypatch.setattr(ceph_inventory, "ceph_json", answer)
    inv = ceph_inventory.cluster_inventory(None, "bench")
    return [{**inv, "conf": None, "client": None}]


def bench_stats(state: str) -> dict[str, Any]:
    return next(p["stats"] for p in recorded(state, "df")["pools"] if p["name"] == "bench")


def bench_pool(state: str) -> dict[str, Any]:
    return next(p for p in recorded(state, "osd-pool-ls-detail") if p["pool_name"] == "bench")


def test_ceph_room_without_quota_is_max_avail(monkeypatch: pytest.MonkeyPatch) -> None:
    assert bench_pool("healthy")["quota_max_bytes"] == 0
    room = pool_room(inventory("healthy", monkeypatch), BENCH)
    assert room is not None and not room.by_quota and room.objects is None
    assert room.bytes == bench_stats("healthy")["max_avail"]
    assert "MAX AVAIL" in room.source
    assert pool_room(inventory("healthy", monkeypatch), Target("rados", "nope")) is None


def test_ceph_room_under_a_quota_is_what_the_quota_leaves(monkeypatch: pytest.MonkeyPatch) -> None:
    stats, pool = bench_stats("quota"), bench_pool("quota")
    # the recording: 1 GiB / 1000 objects of quota, 32 objects of 4 MiB stored, and a MAX
    # AVAIL that ignores the quota (Ceph 16.2)
    assert (pool["quota_max_bytes"], pool["quota_max_objects"]) == (1024 * MiB, 1000)
    assert (stats["stored"], stats["objects"]) == (128 * MiB, 32)
    assert stats["max_avail"] > pool["quota_max_bytes"]
    inv = inventory("quota", monkeypatch)
    assert inv[0]["pool"]["quota_max_bytes"] == 1024 * MiB  # kept in the run's inventory
    room = pool_room(inv, BENCH)
    assert room is not None and room.by_quota
    assert room.bytes == pool["quota_max_bytes"] - stats["stored"]
    assert room.objects == pool["quota_max_objects"] - stats["objects"]
    assert room.source == "its quota of 1.0 GiB, 128.0 MiB stored"


def test_ceph_room_check_refuses_beyond_the_quota(monkeypatch: pytest.MonkeyPatch) -> None:
    room = pool_room(inventory("quota", monkeypatch), BENCH)
    assert room is not None
    warnings: list[str] = []
    check_room(BENCH, room.bytes // 2, "the run's rados objects", room, warnings, objects=10)
    assert warnings == []
    with pytest.raises(PreflightError) as e:
        check_room(BENCH, room.bytes + 1, "the run's rados objects", room, warnings)
    assert "does not fit in pool bench" in str(e.value) and "its quota of 1.0 GiB" in str(e.value)
    assert "set-quota bench max_bytes" in (e.value.fix or "")
    with pytest.raises(PreflightError) as e:
        check_room(BENCH, 4 * MiB, "the run's rados objects", room, warnings, objects=969)
    assert "969 objects" in str(e.value) and "allows 968 more" in str(e.value)
    check_room(BENCH, int(room.bytes * (ROOM_WARN + 0.1)), "rbd image bench/x", room, warnings)
    (w,) = warnings
    assert "% of the room left in pool bench" in w and "may reach its quota" in w


def test_ceph_room_of_a_pool_over_its_quota_is_none(monkeypatch: pytest.MonkeyPatch) -> None:
    """quota-full: the quota lowered below what the pool stores; Ceph says POOL_FULL (only a
    warning) and would block writes: any write is refused, reads are not checked."""
    checks = recorded("quota-full", "health-detail")["checks"]
    assert recorded("quota-full", "health-detail")["status"] == "HEALTH_WARN"
    assert "POOL_FULL" in checks
    assert bench_pool("quota-full")["quota_max_bytes"] < bench_stats("quota-full")["stored"]
    room = pool_room(inventory("quota-full", monkeypatch), BENCH)
    assert room is not None and room.bytes == 0 and room.by_quota
    with pytest.raises(PreflightError, match="has room for 0 B"):
        check_room(BENCH, 4096, "rbd image bench/x of 4.0 KiB", room, [])
    check_room(BENCH, 0, "reads", room, [])  # nothing written: nothing to check
