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
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from storbench import engines
from storbench.engines.process import CephClient, CephConf, ceph_args, pdeathsig_prefix
from storbench.errors import PreflightError
from storbench.plan import Point, Target
from storbench.units import UnitError, fmt_bytes, parse_size

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
    return [CEPH, *ceph_args(conf), "--connect-timeout", str(CONNECT_TIMEOUT), *args, "-f", "json"]


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


# ---------------------------------------------------------------------------- rbd images

RBD = os.environ.get("STORBENCH_RBD", "rbd")


def _rbd(
    conf: CephConf, *args: str, timeout: float = COMMAND_TIMEOUT
) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            # `rbd bench` fills a new image for minutes: it dies with storbench
            [*pdeathsig_prefix(), RBD, *ceph_args(conf), *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired as e:
        raise CephCommandError(f"`rbd {' '.join(args)}` timed out after {timeout:g} s") from e
    except OSError as e:
        raise CephCommandError(f"cannot run {RBD}: {e}") from e


def _rbd_error(args: tuple[str, ...], out: subprocess.CompletedProcess[str]) -> CephCommandError:
    lines = [ln for ln in out.stderr.strip().splitlines() if ln.startswith("rbd:")]
    msg = lines[-1] if lines else (out.stderr.strip().splitlines() or [""])[-1]
    return CephCommandError(f"`rbd {' '.join(args)}` failed: {msg or out.returncode}")


def image_info(conf: CephConf, pool: str, image: str) -> dict[str, Any] | None:
    """``rbd info POOL/IMAGE`` (size in bytes, object size, features, ...), or None when the
    image does not exist."""
    args = ("info", f"{pool}/{image}", "--format", "json")
    out = _rbd(conf, *args)
    if out.returncode != 0:
        if "No such file or directory" in out.stderr:
            return None
        raise _rbd_error(args, out)
    info: dict[str, Any] = json.loads(out.stdout)
    return info


def image_watchers(conf: CephConf, pool: str, image: str) -> list[str]:
    """Who has the image open (``rbd status``: a VM, a kernel mapping): addresses."""
    args = ("status", f"{pool}/{image}", "--format", "json")
    out = _rbd(conf, *args)
    if out.returncode != 0:
        raise _rbd_error(args, out)
    return [str(w.get("address")) for w in json.loads(out.stdout).get("watchers", [])]


def create_image(conf: CephConf, pool: str, image: str, size: int) -> None:
    """Create an image of ``size`` bytes and write it once from end to end (``rbd bench``,
    4 MiB sequential writes): reads from a thin image's unwritten objects never reach a disk
    and would measure nothing but the network."""
    mib = max(1, -(-size // (1 << 20)))  # rbd sizes are whole MiB: round up
    size = mib << 20
    args = ("create", f"{pool}/{image}", "--size", f"{mib}M")
    out = _rbd(conf, *args)
    if out.returncode != 0:
        raise _rbd_error(args, out)
    fill = (
        "bench", "--io-type", "write", "--io-pattern", "seq", "--io-size", "4M",
        "--io-threads", "16", "--io-total", str(size), f"{pool}/{image}",
    )  # fmt: skip
    out = _rbd(conf, *fill, timeout=max(COMMAND_TIMEOUT, size / (10 << 20)))
    if out.returncode != 0:
        err = _rbd_error(fill, out)
        remove_image(conf, pool, image)
        raise err


def remove_image(conf: CephConf, pool: str, image: str) -> None:
    args = ("rm", "--no-progress", f"{pool}/{image}")
    out = _rbd(conf, *args, timeout=300.0)
    if out.returncode != 0 and "No such file or directory" not in out.stderr:
        raise _rbd_error(args, out)


# ---------------------------------------------------------------------------- the plan's checks


@dataclass
class CephPreflight:
    """What the Ceph part of preflight found and did."""

    #: per cluster, what :func:`cluster_inventory` gives, with ``conf``, ``client``, ``pools``
    #: (the benchmarked ones) and ``health_warning``
    inventory: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    #: rbd images storbench created (and removes at the end): (client, pool, image)
    images: list[tuple[CephClient, str, str]] = field(default_factory=list)


def point_targets(points: list[Point]) -> list[Target]:
    """The Ceph targets of the points (each host's own, for points on several hosts)."""
    out: list[Target] = []
    for p in points:
        out += [t for t in p.targets if t.ceph]
    return list(dict.fromkeys(out))


def client_of(t: Target) -> CephClient:
    return CephClient(t.conf, t.client)


def _point_bytes(p: Point) -> int:
    """What one job of a fio point addresses (size, or filesize x nrfiles), 0 if unsaid."""
    try:
        if "filesize" in p.params:
            return parse_size(p.params["filesize"]) * int(p.params.get("nrfiles", 1))
        return parse_size(p.params.get("size", 0) or 0)
    except UnitError:
        return 0


def object_size(p: Point) -> int:
    """The size of each object a fio ``rados`` point writes (one object per fio file) or a
    rados bench write's object size."""
    return engines.get(p.engine).object_bytes(p)


def check_ceph(
    points: list[Point], *, allow_unhealthy: bool = False, destroy_data: list[str] | None = None
) -> CephPreflight:
    """The Ceph side of preflight, for the points with rbd or rados targets: the ceph tools
    and the ceph.conf are there; the cluster is reachable and healthy enough (the gate:
    :func:`health_refusal`); the pools exist; no object would exceed the pool's
    ``osd_max_object_size``; rbd images are safe to write, and created when missing.
    Raises PreflightError; returns the inventory of each cluster and what was created."""
    targets = point_targets(points)
    out = CephPreflight()
    if not targets:
        return out
    for tool in (CEPH, RBD, "rados"):
        if shutil.which(tool) is None:
            raise PreflightError(
                f"`{tool}` is not installed: storbench needs the Ceph command line tools for "
                "rbd and rados targets",
                fix="install them: apt-get install ceph-common (or run `make setup`)",
            )
    clusters: dict[CephClient, list[str]] = {}
    for t in targets:
        if t.conf and not os.path.isfile(t.conf):
            raise PreflightError(
                f"{t.label}: no ceph.conf at {t.conf}",
                fix="give the cluster's configuration with --ceph-conf PATH (or `conf:` on "
                "the target, or $CEPH_CONF)",
            )
        pools = clusters.setdefault(client_of(t), [])
        if t.pool not in pools:
            pools.append(t.pool)
    for client, pools in clusters.items():
        out.inventory.append(_check_cluster(client, pools, allow_unhealthy, out.warnings))
    by_client = {(inv["conf"], inv["client"]): inv for inv in out.inventory}
    for p in points:
        for t in p.targets:
            if t.kind != "rados" or not (p.writes or p.engine == "rados-bench"):
                continue
            cap = by_client[(t.conf, t.client)].get("osd_max_object_size")
            size = object_size(p)
            if cap and size > cap:
                what = (
                    f"rados bench objects of {fmt_bytes(size)} (bs)"
                    if p.engine == "rados-bench"
                    else f"objects of {fmt_bytes(size)} (size / nrfiles)"
                )
                raise PreflightError(
                    f"workload {p.workload!r} would write {what} to pool {t.pool}, above "
                    f"the cluster's osd_max_object_size of {fmt_bytes(cap)}: the OSDs refuse "
                    "them (and fio's rados engine would not even say so)",
                    fix="lower `size`, or raise `nrfiles` so that size / nrfiles fits"
                    if p.engine != "rados-bench"
                    else "lower `bs`",
                )
    shared = sorted(
        {
            t.path
            for p in points
            if p.hosts and p.writes
            for t in p.targets
            if t.kind == "rbd" and p.targets.count(t) > 1
        }
    )
    for path in shared:
        out.warnings.append(
            f"several hosts write rbd image {path} at once: with exclusive-lock (on by "
            "default) they take turns holding the image, which measures the lock more than "
            "the cluster; give each host an image of its own (`targets:` under each host)"
        )
    allowed = set(destroy_data or [])
    for name in allowed - {f"rbd:{t.path}" for t in targets if t.kind == "rbd"}:
        raise PreflightError(
            f"--destroy-data {name} does not name an rbd target of this plan",
            fix="name the exact image the plan writes to: rbd:POOL/IMAGE",
        )
    try:
        for t in targets:
            if t.kind == "rbd":
                _check_image(t, [p for p in points if t in p.targets], allowed, out)
    except BaseException:  # a later image refused, or Ctrl-C: leave no image behind
        remove_images(out.images)
        raise
    return out


def remove_images(images: list[tuple[CephClient, str, str]]) -> list[str]:
    """Remove images storbench created; returns the ``POOL/IMAGE`` names removed."""
    removed = []
    for client, pool, image in images:
        try:
            remove_image(client, pool, image)
            removed.append(f"{pool}/{image}")
        except CephCommandError:
            pass
    return removed


def _check_cluster(
    client: CephClient, pools: list[str], allow_unhealthy: bool, warnings: list[str]
) -> dict[str, Any]:
    where = f"the cluster of {client.conf}" if client.conf else "the cluster"
    # one parallel batch: health, inventory and the pools' PG states (each ceph command
    # costs ~0.3 s of CPU to start)
    inv = cluster_inventory(client, pools[0], pg_pools=pools)
    if inv.get("health") is None:
        why = inv["errors"][0] if inv["errors"] else "no answer"
        raise PreflightError(
            f"cannot reach {where}: {why}",
            fix="check that the monitors run and that ceph.conf and the keyring are right "
            "(`ceph -c CONF -s`)",
        )
    status = str(inv["health"].get("status"))
    checks = dict(inv["health"].get("checks") or {})
    existing = {p["pool_name"] for p in inv.get("pools") or []}
    for pool in pools:
        if inv.get("pools") is not None and pool not in existing:
            raise PreflightError(
                f"pool {pool} does not exist in {where}",
                fix=f"name an existing pool ({', '.join(sorted(existing)) or 'none yet'}) or "
                f"create it: ceph osd pool create {pool}",
            )
    refusals = []
    pg_states: dict[str, dict[str, int]] = inv["pg_states"]
    for pool in pools:
        if pool not in pg_states:
            warnings.append(f"cannot read the PG states of pool {pool}")
            continue
        reason = health_refusal(
            status, allow_unhealthy, checks=checks, pool=pool, pg_states=pg_states[pool]
        )
        if reason:
            refusals.append(reason)
    if refusals:
        raise PreflightError(
            f"{where} is not fit to benchmark: {refusals[0]}",
            fix="fix the cluster (`ceph health detail` says what is wrong), or pass "
            "--allow-unhealthy to measure it as it is (the health is stored with the run)",
        )
    warning = health_warning(status, checks)
    if warning:
        warnings.append(warning)
    if allow_unhealthy and status == HEALTH_ERR:
        warnings.append(f"the cluster is {HEALTH_ERR} (--allow-unhealthy): {_checks_text(checks)}")
    inv["health_warning"] = warning
    inv["conf"] = client.conf
    inv["client"] = client.client
    inv["pools_benchmarked"] = pools
    return inv


def _check_image(t: Target, points: list[Point], allowed: set[str], out: CephPreflight) -> None:
    client = client_of(t)
    need = max((_point_bytes(p) for p in points), default=0)
    writes = any(p.writes for p in points)
    try:
        info = image_info(client, t.pool, t.image)
    except CephCommandError as e:
        raise PreflightError(f"{t.label}: {e}", fix="check the pool and image names") from None
    if info is None:
        size = t.size or need
        if t.size and need > t.size:
            raise PreflightError(
                f"rbd image {t.path} would be created with {fmt_bytes(t.size)} (its `size`), "
                f"the workloads address {fmt_bytes(need)}",
                fix="raise the target's `size`, or lower the workloads' `size`",
            )
        if not size:
            raise PreflightError(
                f"rbd image {t.path} does not exist and the plan gives no size to create it",
                fix="add `size: 10g` to the target (or to the workloads: --set size=10g), or "
                "create the image yourself",
            )
        try:
            create_image(client, t.pool, t.image, size)
        except KeyboardInterrupt:
            remove_image(client, t.pool, t.image)  # interrupted while filling it
            raise
        except CephCommandError as e:
            raise PreflightError(
                f"cannot create rbd image {t.path}: {e}",
                fix="check that the pool exists and has room, and the client's rights",
            ) from None
        out.images.append((client, t.pool, t.image))
        return
    if need > int(info.get("size", 0)):
        raise PreflightError(
            f"rbd image {t.path} has {fmt_bytes(info.get('size', 0))}, the workloads address "
            f"{fmt_bytes(need)}",
            fix="lower `size`, or grow the image (rbd resize)",
        )
    if writes:
        watchers = image_watchers(client, t.pool, t.image)
        if watchers:
            raise PreflightError(
                f"rbd image {t.path} is open elsewhere ({', '.join(watchers)}): a VM or a "
                "mapping uses it, and writing would corrupt its data",
                fix="benchmark another image (storbench creates a missing one), or release it",
            )
        if f"rbd:{t.path}" not in allowed:
            raise PreflightError(
                f"rbd image {t.path} exists and the plan writes to it: its data would be destroyed",
                fix=f"name a new image (storbench creates and removes it), or, if its data "
                f"may be destroyed, add --destroy-data rbd:{t.path}",
            )
