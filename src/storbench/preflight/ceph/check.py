"""The Ceph part of preflight, for the points with rbd or rados targets: tools, ceph.conf,
each cluster reachable and healthy enough, pools, object sizes, and rbd images safe to write
(created when missing).
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from typing import Any

from storbench import engines
from storbench.hosts.ceph import CephClient
from storbench.model.errors import PreflightError
from storbench.model.units import UnitError, fmt_bytes, parse_size
from storbench.plan import Point, Target
from storbench.preflight.ceph.cluster_health import (
    HEALTH_ERR,
    checks_text,
    health_refusal,
    health_warning,
)
from storbench.preflight.ceph.commands import CEPH, CephCommandError
from storbench.preflight.ceph.inventory import cluster_inventory
from storbench.preflight.ceph.rbd_images import (
    RBD,
    RBD_OBJECT_SIZE,
    create_image,
    image_info,
    image_watchers,
    remove_image,
    remove_images,
)
from storbench.preflight.ceph.room import check_room, pool_room

__all__ = ["CephPreflight", "check_ceph", "client_of", "object_size", "point_targets"]


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
    ``osd_max_object_size``; what the run writes fits in its pool (``ceph df``'s MAX AVAIL
    and the pool's quota, see :mod:`.room`: refused above it, a warning above 70 % of it);
    rbd images are safe to write, and
    created when missing.
    Raises PreflightError; returns the inventory of each cluster and what was created."""
    targets = point_targets(points)
    out = CephPreflight()
    if not targets:
        return out
    _check_tools()
    for client, pools in _cluster_pools(targets).items():
        out.inventory.append(_check_cluster(client, pools, allow_unhealthy, out.warnings))
    _check_object_sizes(points, out.inventory)
    _check_rados_room(points, out)
    out.warnings += _shared_image_warnings(points)
    allowed = _rbd_destroy_data(targets, destroy_data)
    try:
        for t in targets:
            if t.kind == "rbd":
                _check_image(t, [p for p in points if t in p.targets], allowed, out)
    except BaseException:  # a later image refused, or Ctrl-C: leave no image behind
        remove_images(out.images)
        raise
    return out


def _check_tools() -> None:
    """Refuse unless the ceph, rbd and rados command line tools are installed."""
    for tool in (CEPH, RBD, "rados"):
        if shutil.which(tool) is None:
            raise PreflightError(
                f"`{tool}` is not installed: storbench needs the Ceph command line tools for "
                "rbd and rados targets",
                fix="install them: apt-get install ceph-common (or run `make setup`)",
            )


def _cluster_pools(targets: list[Target]) -> dict[CephClient, list[str]]:
    """The pools benchmarked on each cluster, in plan order; refuses a missing ceph.conf."""
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
    return clusters


def _check_object_sizes(points: list[Point], inventory: list[dict[str, Any]]) -> None:
    """Refuse rados writes of objects above their cluster's ``osd_max_object_size``."""
    by_client = {(inv["conf"], inv["client"]): inv for inv in inventory}
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


def _check_rados_room(points: list[Point], out: CephPreflight) -> None:
    """fio's rados writes of a run stay until its end: together they must fit in their pool
    (rados bench writes for a time, so its volume is not known beforehand)."""
    need: dict[Target, tuple[int, int]] = {}
    for p in points:
        if p.engine == "rados-bench" or not p.writes:
            continue
        for t in p.targets:
            if t.kind == "rados":
                count = _int(p.params.get("nrfiles", 1)) * _int(p.params.get("numjobs", 1))
                total, objects = need.get(t, (0, 0))
                need[t] = (total + object_size(p) * count, objects + count)
    for t, (total, objects) in need.items():
        what = f"the run's rados objects ({fmt_bytes(total)})"
        check_room(t, total, what, pool_room(out.inventory, t), out.warnings, objects)


def _int(value: Any) -> int:
    try:
        return max(1, int(str(value).strip()))
    except ValueError:
        return 1


def _shared_image_warnings(points: list[Point]) -> list[str]:
    """A warning for each rbd image that several hosts of a point write at once."""
    shared = sorted(
        {
            t.path
            for p in points
            if p.hosts and p.writes
            for t in p.targets
            if t.kind == "rbd" and p.targets.count(t) > 1
        }
    )
    return [
        f"several hosts write rbd image {path} at once: with exclusive-lock (on by "
        "default) they take turns holding the image, which measures the lock more than "
        "the cluster; give each host an image of its own (`targets:` under each host)"
        for path in shared
    ]


def _rbd_destroy_data(targets: list[Target], destroy_data: list[str] | None) -> set[str]:
    """The ``--destroy-data`` names; refuses one that names no rbd target of the plan."""
    allowed = set(destroy_data or [])
    for name in allowed - {f"rbd:{t.path}" for t in targets if t.kind == "rbd"}:
        raise PreflightError(
            f"--destroy-data {name} does not name an rbd target of this plan",
            fix="name the exact image the plan writes to: rbd:POOL/IMAGE",
        )
    return allowed


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
        warnings.append(f"the cluster is {HEALTH_ERR} (--allow-unhealthy): {checks_text(checks)}")
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
        what = f"rbd image {t.path} of {fmt_bytes(size)}"
        objects = -(-size // RBD_OBJECT_SIZE)
        check_room(t, size, what, pool_room(out.inventory, t), out.warnings, objects)
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
