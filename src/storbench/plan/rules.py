"""The plan's vocabulary: target kinds and keys (read from schema.py, where every key is
declared with its documentation), reserved keys and limits. What the loader checks against;
the values an engine's options take are the engine's own (enginekeys.Value in its keys)."""

from __future__ import annotations

import storbench.plan.schema as schema
from storbench.model.constants import MAX_POINTS  # noqa: F401  (--max-points)
from storbench.plan.checks import MAX_NAME_CHARS, MAX_VALUE_BYTES  # noqa: F401
from storbench.plan.schema import DEFAULT_FIO_PORT, LOCAL, MAX_SIZE  # noqa: F401
from storbench.plan.yamlpos import MAX_DEPTH  # noqa: F401

#: Targets on this machine's file system (or a fio server's).
FS_KINDS = schema.TARGET_KINDS.names()[:3]
#: Ceph targets: an RBD image (``POOL/IMAGE``) and a RADOS pool.
CEPH_KINDS = schema.TARGET_KINDS.names()[3:5]
#: Object storage: an S3 bucket.
S3_KIND = "s3"
TARGET_KINDS = (*FS_KINDS, *CEPH_KINDS, S3_KIND)
TOP_KEYS = schema.PLAN.names()
#: Keys of a Ceph target besides its kind: image size to create (rbd), ceph.conf, client name.
CEPH_TARGET_KEYS = ("size", "conf", "clientname")
TARGET_KEYS = (*TARGET_KINDS, *schema.TARGET_MORE.names())
#: The ceph.conf used when neither the target, --ceph-conf nor $CEPH_CONF names one.
DEFAULT_CEPH_CONF = "/etc/ceph/ceph.conf"
HOST_KEYS = schema.HOST.names()
#: The axes a sweep may stop climbing on (``stop_at: knee``, analysis/climb.py): each adds
#: load as it grows.
LOAD_AXES = ("iodepth", "numjobs", "clients", "rate_iops", "rate")
#: Workload keys storbench reads itself and never passes to fio.
RESERVED_KEYS = schema.WORKLOAD.names()[1:]
#: How many values a plan's YAML may hold once its aliases are expanded (a "billion laughs"
#: plan holds 9**9 through 9 lines of aliases); how deep it may nest is yamlpos.MAX_DEPTH.
MAX_YAML_VALUES = 1_000_000

Scalar = str | int | float | bool | None
