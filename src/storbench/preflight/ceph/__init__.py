"""Ceph preflight: cluster inventory stored with every Ceph run, and the health gate.

- :mod:`.commands`: running ``ceph ... -f json`` (:func:`ceph_json`, the ``CEPH`` command)
- :mod:`.cluster_health`: health, PG states and the gate on them (why a run is refused)
- :mod:`.inventory`: what storbench stores about a cluster with every Ceph run
- :mod:`.rbd_images`: rbd images: inspect, create and fill, remove
- :mod:`.check`: the Ceph part of preflight (:func:`check_ceph`)

A name is looked up in the module that defines it: to replace ``ceph_json`` or ``CEPH`` (in
tests), patch them there, not here.
"""

from __future__ import annotations

from storbench.preflight.ceph.check import (
    CephPreflight,
    check_ceph,
    client_of,
    object_size,
    point_targets,
)
from storbench.preflight.ceph.cluster_health import (
    HEALTH_ERR,
    HEALTH_OK,
    HEALTH_WARN,
    health,
    health_refusal,
    health_warning,
    inactive_pgs,
    pool_pg_states,
)
from storbench.preflight.ceph.commands import (
    CEPH,
    COMMAND_TIMEOUT,
    CONNECT_TIMEOUT,
    CephCommandError,
    ceph_command,
    ceph_json,
)
from storbench.preflight.ceph.inventory import cluster_inventory, pool_max_object_size
from storbench.preflight.ceph.rbd_images import (
    RBD,
    create_image,
    image_info,
    image_watchers,
    remove_image,
    remove_images,
)

__all__ = [
    "CEPH",
    "COMMAND_TIMEOUT",
    "CONNECT_TIMEOUT",
    "HEALTH_ERR",
    "HEALTH_OK",
    "HEALTH_WARN",
    "RBD",
    "CephCommandError",
    "CephPreflight",
    "ceph_command",
    "ceph_json",
    "check_ceph",
    "client_of",
    "cluster_inventory",
    "create_image",
    "health",
    "health_refusal",
    "health_warning",
    "image_info",
    "image_watchers",
    "inactive_pgs",
    "object_size",
    "point_targets",
    "pool_max_object_size",
    "pool_pg_states",
    "remove_image",
    "remove_images",
]
