"""Ceph inventory and health gate on real ``ceph ... -f json`` outputs of Ceph 16.2.15,
recorded by tests/data/rados/record.sh in four cluster states (see its README):
healthy, degraded (osd.1 stopped under a size 2 / min_size 2 pool), degraded-stuck (the
same 60 s later) and full (full ratios set below usage: HEALTH_ERR)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from storbench.preflight import ceph
from storbench.preflight.ceph import cluster_health
from storbench.preflight.ceph import inventory as ceph_inventory

DATA = Path(__file__).resolve().parent.parent / "data" / "rados"
STATES = ("healthy", "degraded", "degraded-stuck", "full")

FILES = {
    ("versions",): "versions",
    ("osd", "tree"): "osd-tree",
    ("osd", "metadata"): "osd-metadata",
    ("df",): "df",
    ("osd", "pool", "ls", "detail"): "osd-pool-ls-detail",
    ("osd", "crush", "rule", "dump"): "osd-crush-rule-dump",
    ("health", "detail"): "health-detail",
    ("status",): "s",
    ("config", "dump"): "config-dump",  # one recording, not per state (data/rados/README)
    ("config", "get", "osd", "osd_max_object_size"): "config-get-osd_max_object_size",
    ("pg", "ls-by-pool", "bench"): "pg-ls-by-pool-bench",
    ("pg", "ls-by-pool", "deg"): "pg-ls-by-pool-deg",
}


def recorded(state: str, what: str) -> Any:
    path = DATA / f"{state}.{what}.json"
    return json.loads((path if path.exists() else DATA / f"{what}.json").read_text())


@pytest.fixture
def cluster_state(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Make ceph_json answer from the recordings of one state (set ``.state``)."""

    class Answer:
        state = "healthy"
        failing: set[tuple[str, ...]] = set()  # noqa: RUF012
        calls: list[tuple[str, ...]] = []  # noqa: RUF012

        def __call__(self, conf: object, *args: str, timeout: float = 0) -> Any:
            self.calls.append(args)
            if args in self.failing:
                raise ceph.CephCommandError(f"`ceph {' '.join(args)}` failed: test")
            return recorded(self.state, FILES[args])

    answer = Answer()
    # patched where it is looked up: the modules that query the cluster
    for module in (cluster_health, ceph_inventory):
        monkeypatch.setattr(module, "ceph_json", answer)
    return answer


def test_ceph_command_is_an_argument_list() -> None:
    assert ceph.ceph_command("/x/ceph.conf", "osd", "tree") == [
        ceph.CEPH,
        "-c",
        "/x/ceph.conf",
        "--connect-timeout",
        str(ceph.CONNECT_TIMEOUT),
        "osd",
        "tree",
        "-f",
        "json",
    ]
    assert ceph.ceph_command(None, "df")[1:] == ["--connect-timeout", "10", "df", "-f", "json"]


def test_inventory_of_a_healthy_cluster(cluster_state: Any) -> None:
    inv = ceph.cluster_inventory("/x/ceph.conf", "bench")
    assert inv["errors"] == []
    assert inv["fsid"] == recorded("healthy", "s")["fsid"]
    assert inv["health"] == {"status": "HEALTH_OK", "checks": {}}
    assert inv["versions"]["overall"] and all("16.2.15" in v for v in inv["versions"]["overall"])
    osds = {o["name"]: o for o in inv["osds"]}
    assert osds["osd.0"]["objectstore"] == "bluestore"
    assert osds["osd.1"]["objectstore"] == "memstore"
    for o in osds.values():
        assert o["device_class"] == "hdd" and o["status"] == "up" and o["in"] is True
        assert o["host"] == recorded("healthy", "osd-metadata")[0]["hostname"]
    assert osds["osd.0"]["bluestore_bdev_type"] == "hdd"
    pool = inv["pool"]
    assert (pool["size"], pool["min_size"], pool["pg_num"], pool["pgp_num"]) == (1, 1, 8, 8)
    assert pool["crush_rule"] == 0 and pool["crush_rule_name"] == "replicated_rule"
    assert pool["type"] == "replicated"
    assert {p["pool_name"] for p in inv["pools"]} == {"device_health_metrics", "bench"}
    assert inv["df"]["stats"]["total_bytes"] == 2 * 8 * 1024**3
    assert inv["osd_max_object_size"] == 128 * 1024**2
    assert {o["type"] for o in inv["osd_tree"]} == {"root", "host", "osd"}
    # the configuration database's settings, by section/name: what compare diffs
    assert inv["config"] == {"osd/osd_recovery_sleep_hdd": "0.000000"}
    json.dumps(inv)


def test_inventory_never_raises_for_a_failing_query(cluster_state: Any) -> None:
    cluster_state.failing = {("osd", "metadata"), ("config", "get", "osd", "osd_max_object_size")}
    inv = ceph.cluster_inventory(None, "bench")
    assert [o["objectstore"] for o in inv["osds"]] == [None, None]
    assert inv["osd_max_object_size"] is None
    assert any("osd metadata" in e for e in inv["errors"])
    cluster_state.failing = set()
    assert ceph.cluster_inventory(None, "nope")["errors"] == ["pool nope does not exist"]


def test_inventory_of_the_degraded_cluster(cluster_state: Any) -> None:
    cluster_state.state = "degraded"
    inv = ceph.cluster_inventory(None, "deg")
    assert inv["health"]["status"] == "HEALTH_WARN"
    assert set(inv["health"]["checks"]) == {"OSD_DOWN", "PG_DEGRADED"}
    assert {o["name"]: o["status"] for o in inv["osds"]} == {"osd.0": "up", "osd.1": "down"}
    assert (inv["pool"]["size"], inv["pool"]["min_size"]) == (2, 2)


@pytest.mark.parametrize("state", STATES)
def test_health(cluster_state: Any, state: str) -> None:
    cluster_state.state = state
    status, checks = ceph.health(None)
    assert status == recorded(state, "health-detail")["status"]
    assert checks == recorded(state, "health-detail")["checks"]


def test_an_osd_down_under_min_size_is_only_a_warning() -> None:
    """What Ceph 16.2 really says: HEALTH_WARN, first without PG_AVAILABILITY (inactive PGs
    are reported only when stuck 60 s), though no PG of the pool is active."""
    for state in ("degraded", "degraded-stuck"):
        h = recorded(state, "health-detail")
        assert h["status"] == "HEALTH_WARN"
        assert {c["severity"] for c in h["checks"].values()} == {"HEALTH_WARN"}
    assert "PG_AVAILABILITY" not in recorded("degraded", "health-detail")["checks"]
    stuck = recorded("degraded-stuck", "health-detail")["checks"]["PG_AVAILABILITY"]
    assert "8 pgs inactive" in stuck["summary"]["message"]


def pg_states(state: str, pool: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for pg in recorded(state, f"pg-ls-by-pool-{pool}")["pg_stats"]:
        out[pg["state"]] = out.get(pg["state"], 0) + 1
    return out


def test_pool_pg_states(cluster_state: Any) -> None:
    cluster_state.state = "degraded"
    assert ceph.pool_pg_states(None, "deg") == {"undersized+degraded+peered": 8}
    assert ceph.pool_pg_states(None, "bench") == pg_states("degraded", "bench")


def test_inactive_pgs() -> None:
    assert ceph.inactive_pgs(pg_states("healthy", "bench")) == {}
    assert ceph.inactive_pgs(pg_states("degraded", "deg")) == {"undersized+degraded+peered": 8}
    # size 1 pool whose only copy was on the stopped OSD: stale, though still "active"
    assert ceph.inactive_pgs(pg_states("degraded", "bench")) == {"stale+active+clean": 6}


def test_refusal_healthy() -> None:
    status = recorded("healthy", "health-detail")["status"]
    assert (
        ceph.health_refusal(status, False, pool="bench", pg_states=pg_states("healthy", "bench"))
        is None
    )
    assert ceph.health_warning(status) is None


def test_refusal_on_an_osd_down_under_min_size() -> None:
    h = recorded("degraded", "health-detail")
    assert ceph.health_refusal(h["status"], False, checks=h["checks"]) is None  # WARN alone
    why = ceph.health_refusal(
        h["status"], False, checks=h["checks"], pool="deg", pg_states=pg_states("degraded", "deg")
    )
    assert why is not None
    assert "8 of 8 PGs of pool deg are not active (8 undersized+degraded+peered)" in why
    assert "--allow-unhealthy" in why
    assert (
        ceph.health_refusal(h["status"], True, pool="deg", pg_states=pg_states("degraded", "deg"))
        is None
    )
    warning = ceph.health_warning(h["status"], h["checks"])
    assert warning is not None and "OSD_DOWN: 1 osds down" in warning


def test_refusal_on_health_err() -> None:
    h = recorded("full", "health-detail")
    assert h["status"] == "HEALTH_ERR"
    why = ceph.health_refusal(h["status"], False, checks=h["checks"])
    assert why is not None and "HEALTH_ERR" in why and "OSD_FULL: 1 full osd(s)" in why
    assert ceph.health_refusal(h["status"], True, checks=h["checks"]) is None
    assert ceph.health_warning(h["status"], h["checks"]) is None
    assert ceph.health_refusal("HEALTH_UNKNOWN", False) is not None


def test_pool_max_object_size(cluster_state: Any) -> None:
    assert ceph.pool_max_object_size(None) == 134217728
    cluster_state.failing = {("config", "get", "osd", "osd_max_object_size")}
    assert ceph.pool_max_object_size(None) is None
