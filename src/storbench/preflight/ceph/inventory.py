"""The inventory of a Ceph cluster that storbench stores with every Ceph run: versions,
OSDs and their devices, pools, CRUSH rules, ``ceph df``, health and PG states, queried in
parallel and best effort.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from storbench.preflight.ceph.cluster_health import pool_pg_states
from storbench.preflight.ceph.commands import COMMAND_TIMEOUT, CephCommandError, ceph_json

__all__ = ["cluster_inventory", "pool_max_object_size"]


def pool_max_object_size(conf: str | os.PathLike[str] | None) -> int | None:
    """``osd_max_object_size`` in bytes (the largest object a write may make; 128 MiB by
    default), or None when it cannot be read."""
    try:
        value = ceph_json(conf, "config", "get", "osd", "osd_max_object_size")
    except CephCommandError:
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


_QUERIES: dict[str, tuple[str, ...]] = {
    "versions": ("versions",),
    "osd_tree": ("osd", "tree"),
    "osd_metadata": ("osd", "metadata"),
    "df": ("df",),
    "pools": ("osd", "pool", "ls", "detail"),
    "crush_rules": ("osd", "crush", "rule", "dump"),
    "health": ("health", "detail"),
    "status": ("status",),
    "config": ("config", "dump"),  # what the cluster's configuration database sets
}

#: Per-OSD fields kept from ``ceph osd metadata`` (besides id and objectstore).
_OSD_METADATA_KEYS = (
    "hostname",
    "default_device_class",
    "devices",
    "rotational",
    "osd_data",
    "bluestore_bdev_type",
    "bluestore_bdev_size",
    "bluestore_bdev_rotational",
    "bluefs_dedicated_db",
    "bluefs_dedicated_wal",
    "ceph_version_short",
    "kernel_version",
)

_POOL_KEYS = (
    "pool_id",
    "pool_name",
    "type",
    "size",
    "min_size",
    "pg_num",
    "crush_rule",
    "pg_autoscale_mode",
    "application_metadata",
    "erasure_code_profile",
    "quota_max_bytes",
    "quota_max_objects",
)


def cluster_inventory(
    conf: str | os.PathLike[str] | None,
    pool: str | None = None,
    *,
    timeout: float = COMMAND_TIMEOUT,
    pg_pools: list[str] | None = None,
) -> dict[str, Any]:
    """What storbench stores with every Ceph run, best effort (a failing query leaves its
    key None and adds to ``errors``; this never raises for that):

    - ``fsid``, ``health`` {status, checks}, ``versions`` (``ceph versions``)
    - ``osds``: per OSD id, name, host, device_class (CRUSH), objectstore (``ceph osd
      metadata``), status up/down, in (reweight > 0), crush_weight, and device facts
    - ``osd_tree``: ``ceph osd tree`` nodes as printed
    - ``df``: ``ceph df`` (stats, stats_by_class, pools)
    - ``pool``: the benchmarked pool's size, min_size, pg_num, crush rule (id and name), ...
      (None without ``pool``); ``pools``: the same for every pool
    - ``osd_max_object_size`` (bytes)

    The queries run in parallel (each ``ceph`` command costs ~0.35 s of start-up).
    """
    inv: dict[str, Any] = {"errors": []}
    raw: dict[str, Any] = {}
    pg_pools = list(pg_pools or [])
    with ThreadPoolExecutor(max_workers=len(_QUERIES) + 1 + len(pg_pools)) as ex:
        futures = {
            key: ex.submit(ceph_json, conf, *args, timeout=timeout)
            for key, args in _QUERIES.items()
        }
        max_size = ex.submit(pool_max_object_size, conf)
        pgs = {p: ex.submit(pool_pg_states, conf, p) for p in pg_pools}
        inv["pg_states"] = {}
        for p, fut in pgs.items():
            try:
                inv["pg_states"][p] = fut.result()
            except CephCommandError as e:
                inv["errors"].append(str(e))
        for key, fut in futures.items():
            try:
                raw[key] = fut.result()
            except CephCommandError as e:
                raw[key] = None
                inv["errors"].append(str(e))
        inv["osd_max_object_size"] = max_size.result()
    status = raw.get("status") or {}
    inv["fsid"] = status.get("fsid")
    h = raw.get("health")
    inv["health"] = (
        {"status": h.get("status"), "checks": h.get("checks") or {}} if h is not None else None
    )
    inv["versions"] = raw.get("versions")
    tree = raw.get("osd_tree")
    inv["osd_tree"] = tree.get("nodes") if tree else None
    inv["df"] = raw.get("df")
    inv["config"] = {
        f"{e.get('section')}/{e.get('name')}": e.get("value")
        for e in raw.get("config") or []
        if isinstance(e, dict)
    }
    inv["osds"] = _osds(tree, raw.get("osd_metadata")) if tree is not None else None
    rules = {r.get("rule_id"): r.get("rule_name") for r in raw.get("crush_rules") or []}
    pools = (
        [_pool(p, rules) for p in raw.get("pools") or []] if raw.get("pools") is not None else None
    )
    inv["pools"] = pools
    inv["pool"] = None
    if pool is not None and pools is not None:
        inv["pool"] = next((p for p in pools if p["pool_name"] == pool), None)
        if inv["pool"] is None:
            inv["errors"].append(f"pool {pool} does not exist")
    return inv


def _osds(tree: dict[str, Any], metadata: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    meta = {m.get("id"): m for m in metadata or []}
    hosts = {}
    for node in tree.get("nodes", []):
        if node.get("type") == "host":
            for child in node.get("children", []):
                hosts[child] = node.get("name")
    osds = []
    for node in tree.get("nodes", []):
        if node.get("type") != "osd":
            continue
        m = meta.get(node["id"], {})
        osds.append(
            {
                "id": node["id"],
                "name": node.get("name"),
                "host": hosts.get(node["id"]),
                "device_class": node.get("device_class"),
                "objectstore": m.get("osd_objectstore"),
                "status": node.get("status"),
                "in": float(node.get("reweight", 0)) > 0,
                "reweight": node.get("reweight"),
                "crush_weight": node.get("crush_weight"),
                **{k: m.get(k) for k in _OSD_METADATA_KEYS},
            }
        )
    return sorted(osds, key=lambda o: o["id"])


def _pool(p: dict[str, Any], rules: dict[Any, Any]) -> dict[str, Any]:
    out = {k: p.get(k) for k in _POOL_KEYS}
    out["pgp_num"] = p.get("pg_placement_num")
    out["type"] = {1: "replicated", 3: "erasure"}.get(p.get("type"), p.get("type"))
    out["crush_rule_name"] = rules.get(p.get("crush_rule"))
    out["application"] = sorted((p.get("application_metadata") or {}).keys())
    return out
