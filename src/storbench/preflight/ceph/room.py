"""How much a Ceph pool can still take, and the check that a run's writes fit in it.

Two limits bound a pool: the cluster's free space (``ceph df``'s MAX AVAIL: what the pool
can take after its replication, up to the full ratio) and the pool's quota (``ceph osd pool
set-quota``: ``quota_max_bytes``/``quota_max_objects`` in ``osd pool ls detail``, counted
against the pool's ``stored`` bytes and ``objects``, before replication). Ceph 16.2's MAX
AVAIL does not account for a quota. Ceph enforces a quota seconds late (a `rados bench`
wrote 1.7 GB into a pool with a 64 MiB quota before the monitor marked it full), then
marks the pool full (POOL_FULL, only HEALTH_WARN) and clients' writes to it block: a
benchmark would hang instead of failing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from storbench.model.errors import PreflightError
from storbench.model.units import fmt_bytes
from storbench.plan import Target

__all__ = ["ROOM_WARN", "Room", "check_room", "pool_room"]

#: above this share of a pool's room, a plan's writes are worth a warning (the cluster
#: warns at its nearfull ratio, 0.85 by default, and stops writes at full, 0.95)
ROOM_WARN = 0.7


@dataclass(frozen=True)
class Room:
    """What a pool can still take: bytes (and objects, when a quota counts them)."""

    bytes: int
    #: where ``bytes`` comes from, for messages: "`ceph df` MAX AVAIL" or the quota
    source: str
    #: objects left under ``quota_max_objects``; None without an object quota
    objects: int | None = None
    #: the bytes limit is the pool's quota (not the cluster's free space)
    by_quota: bool = False


def pool_room(inventory: list[dict[str, Any]], t: Target) -> Room | None:
    """The room left in the target's pool, or None when the inventory does not say."""
    for inv in inventory:
        if inv.get("conf") != t.conf or inv.get("client") != t.client:
            continue
        stats = next(
            (
                p.get("stats") or {}
                for p in (inv.get("df") or {}).get("pools") or []
                if p.get("name") == t.pool
            ),
            None,
        )
        pool = next((p for p in inv.get("pools") or [] if p.get("pool_name") == t.pool), {})
        if stats is None or not _number(stats.get("max_avail")):
            return None
        room = Room(int(stats["max_avail"]), "`ceph df` MAX AVAIL")
        quota, stored = pool.get("quota_max_bytes"), stats.get("stored")
        if _number(quota) and quota > 0 and _number(stored):
            left = max(0, int(quota) - int(stored))
            if left < room.bytes:
                room = Room(
                    left,
                    f"its quota of {fmt_bytes(int(quota))}, {fmt_bytes(int(stored))} stored",
                    by_quota=True,
                )
        quota, objects = pool.get("quota_max_objects"), stats.get("objects")
        if _number(quota) and quota > 0 and _number(objects):
            left = max(0, int(quota) - int(objects))
            room = Room(room.bytes, room.source, left, room.by_quota)
        return room
    return None


def _number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def check_room(
    t: Target, need: int, what: str, room: Room | None, warnings: list[str], objects: int = 0
) -> None:
    """Refuse writes that cannot fit in the pool (the OSDs would fill up and the cluster stop
    taking writes, or the pool reach its quota and writes to it block); warn when they take
    most of its room. ``objects``: how many RADOS objects the writes make."""
    if room is None or need <= 0:
        return
    quota_fix = f"or raise the pool's quota: ceph osd pool set-quota {t.pool} max_bytes N"
    if need > room.bytes:
        stop = (
            "the pool would reach its quota and writes to it block"
            if room.by_quota
            else "the OSDs would fill up and the cluster stop taking writes"
        )
        raise PreflightError(
            f"{what} does not fit in pool {t.pool}: it has room for {fmt_bytes(room.bytes)} "
            f"({room.source}); {stop}",
            fix="lower `size`, " + (quota_fix if room.by_quota else "or free or add capacity"),
        )
    if room.objects is not None and objects > room.objects:
        raise PreflightError(
            f"{what} makes {objects} objects in pool {t.pool}, its quota allows "
            f"{room.objects} more; the pool would reach its quota and writes to it block",
            fix=f"lower `size` or `nrfiles`, or raise the pool's quota: ceph osd pool "
            f"set-quota {t.pool} max_objects N",
        )
    if need > ROOM_WARN * room.bytes:
        reach = "its quota" if room.by_quota else "the cluster's nearfull ratio"
        warnings.append(
            f"{what} takes {100 * need / max(room.bytes, 1):.0f} % of the room left in pool "
            f"{t.pool} ({fmt_bytes(room.bytes)}, {room.source}): the pool may reach {reach}"
        )
