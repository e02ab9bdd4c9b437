"""The health of a Ceph cluster, and the gate preflight puts on it.


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

import os
from typing import Any

from storbench.preflight.ceph.commands import ceph_json

__all__ = [
    "HEALTH_ERR",
    "HEALTH_OK",
    "HEALTH_WARN",
    "checks_text",
    "health",
    "health_refusal",
    "health_warning",
    "inactive_pgs",
    "pool_pg_states",
]

HEALTH_OK = "HEALTH_OK"
HEALTH_WARN = "HEALTH_WARN"
HEALTH_ERR = "HEALTH_ERR"


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


def checks_text(checks: dict[str, Any]) -> str:
    """The checks as ``CODE: summary message; ...``."""
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
        why = f" ({checks_text(checks)})" if checks else ""
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
    return f"the cluster is {HEALTH_WARN}" + (f": {checks_text(checks)}" if checks else "")
