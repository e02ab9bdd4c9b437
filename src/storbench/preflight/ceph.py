"""Ceph preflight: cluster inventory stored with every Ceph run, and the health gate.

Every query is ``ceph ... -f json`` as an argument list, with a timeout; ``conf`` is the
cluster's ceph.conf (None: ceph's own default, ``CEPH_CONF`` or /etc/ceph/ceph.conf).

Health, as Ceph 16.2 reports it (tests/data/rados/README.md):

- An OSD stopped under a pool of size 2 / min_size 2 gives **HEALTH_WARN**, not HEALTH_ERR:
  ``OSD_DOWN`` at once, ``PG_DEGRADED`` within seconds, and ``PG_AVAILABILITY`` ("Reduced
  data availability: N pgs inactive") only once the PGs have been inactive for
  ``mon_pg_stuck_threshold`` (60 s) -- yet from the first second no I/O to that pool
  completes: rados bench would wait forever. So the gate also looks at the PGs of the pool
  to be benchmarked (:func:`pool_pg_states`) and refuses when one is not active.
- HEALTH_ERR comes from checks such as ``OSD_FULL``, ``PG_DAMAGED``, ``MGR_MODULE_ERROR``.
"""

from __future__ import annotations

import json
import os
import subprocess
from concurrent.futures import ThreadPoolExecutor
from typing import Any

__all__ = [
    "CephCommandError",
    "ceph_command",
    "ceph_json",
    "cluster_inventory",
    "health",
    "health_refusal",
    "health_warning",
    "inactive_pgs",
    "pool_max_object_size",
    "pool_pg_states",
]

CEPH = os.environ.get("STORBENCH_CEPH", "ceph")
#: Timeout for each ceph command, in seconds (a ceph command takes ~0.35 s here).
COMMAND_TIMEOUT = 30.0
#: Seconds the ceph CLI tries to reach a monitor before giving up.
CONNECT_TIMEOUT = 10

HEALTH_OK = "HEALTH_OK"
HEALTH_WARN = "HEALTH_WARN"
HEALTH_ERR = "HEALTH_ERR"


class CephCommandError(RuntimeError):
    """A ceph command failed, timed out, or printed something that is not JSON."""


def ceph_command(conf: str | os.PathLike[str] | None, *args: str) -> list[str]:
    """``ceph [-c CONF] --connect-timeout N ARGS -f json`` as an argument list."""
    conf_args = ["-c", os.fspath(conf)] if conf else []
    return [CEPH, *conf_args, "--connect-timeout", str(CONNECT_TIMEOUT), *args, "-f", "json"]


def ceph_json(
    conf: str | os.PathLike[str] | None, *args: str, timeout: float = COMMAND_TIMEOUT
) -> Any:
    """Run a ceph command and decode its JSON output."""
    cmd = ceph_command(conf, *args)
    try:
        out = subprocess.run(
            cmd, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL
        )
    except subprocess.TimeoutExpired as e:
        raise CephCommandError(f"`ceph {' '.join(args)}` timed out after {timeout:g} s") from e
    except OSError as e:
        raise CephCommandError(f"cannot run {CEPH}: {e}") from e
    if out.returncode != 0:
        msg = out.stderr.strip().splitlines()[-1:] or [f"exit status {out.returncode}"]
        raise CephCommandError(f"`ceph {' '.join(args)}` failed: {msg[0]}")
    try:
        return json.loads(out.stdout)
    except json.JSONDecodeError as e:
        raise CephCommandError(f"`ceph {' '.join(args)}` printed no JSON: {e}") from e


# ---------------------------------------------------------------------------- health


def health(conf: str | os.PathLike[str] | None) -> tuple[str, dict[str, Any]]:
    """(``HEALTH_OK`` | ``HEALTH_WARN`` | ``HEALTH_ERR``, detail): the detail is ``ceph health
    detail``'s ``checks``: code -> {severity, summary: {message, count}, detail: [{message}],
    muted}."""
    doc = ceph_json(conf, "health", "detail")
    return str(doc.get("status")), dict(doc.get("checks") or {})


def pool_pg_states(conf: str | os.PathLike[str] | None, pool: str) -> dict[str, int]:
    """PG count by state (``active+clean``, ``undersized+degraded+peered``, ...) of a pool."""
    doc = ceph_json(conf, "pg", "ls-by-pool", pool)
    stats = doc.get("pg_stats", []) if isinstance(doc, dict) else doc
    states: dict[str, int] = {}
    for pg in stats:
        states[pg["state"]] = states.get(pg["state"], 0) + 1
    return states


def inactive_pgs(pg_states: dict[str, int]) -> dict[str, int]:
    """The states of ``pg_states`` in which a PG serves no I/O (not ``active``, or
    ``stale``: its primary stopped reporting)."""
    return {
        s: n
        for s, n in pg_states.items()
        if "active" not in s.split("+") or "stale" in s.split("+")
    }


def _checks_text(checks: dict[str, Any]) -> str:
    parts = []
    for code, c in checks.items():
        msg = (c.get("summary") or {}).get("message", "")
        parts.append(f"{code}: {msg}" if msg else code)
    return "; ".join(parts)


def health_refusal(
    status: str,
    allow_unhealthy: bool,
    *,
    checks: dict[str, Any] | None = None,
    pool: str | None = None,
    pg_states: dict[str, int] | None = None,
) -> str | None:
    """Why preflight refuses to start on this cluster, or None.

    Refuses on ``HEALTH_ERR``, and when the pool to be benchmarked has PGs that serve no I/O
    (``pg_states`` from :func:`pool_pg_states`; Ceph says only HEALTH_WARN for that, see the
    module docstring): the benchmark would hang. ``allow_unhealthy`` (``--allow-unhealthy``)
    overrides both. HEALTH_WARN is no refusal (see :func:`health_warning`).
    """
    if allow_unhealthy:
        return None
    reasons = []
    if status == HEALTH_ERR:
        why = f" ({_checks_text(checks)})" if checks else ""
        reasons.append(f"the cluster is {HEALTH_ERR}{why}")
    elif status not in (HEALTH_OK, HEALTH_WARN):
        reasons.append(f"the cluster's health is unknown ({status!r})")
    if pg_states:
        bad = inactive_pgs(pg_states)
        if bad:
            total = sum(pg_states.values())
            states = ", ".join(f"{n} {s}" for s, n in sorted(bad.items()))
            reasons.append(
                f"{sum(bad.values())} of {total} PGs of pool {pool or '?'} are not active "
                f"({states}): no I/O to it would complete"
            )
    if not reasons:
        return None
    return "; ".join(reasons) + " (fix the cluster, or pass --allow-unhealthy)"


def health_warning(status: str, checks: dict[str, Any] | None = None) -> str | None:
    """The warning preflight prints for HEALTH_WARN (None for any other status)."""
    if status != HEALTH_WARN:
        return None
    return f"the cluster is {HEALTH_WARN}" + (f": {_checks_text(checks)}" if checks else "")


# ---------------------------------------------------------------------------- inventory


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
)


def cluster_inventory(
    conf: str | os.PathLike[str] | None,
    pool: str | None = None,
    *,
    timeout: float = COMMAND_TIMEOUT,
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
    with ThreadPoolExecutor(max_workers=len(_QUERIES) + 1) as ex:
        futures = {
            key: ex.submit(ceph_json, conf, *args, timeout=timeout)
            for key, args in _QUERIES.items()
        }
        max_size = ex.submit(pool_max_object_size, conf)
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
