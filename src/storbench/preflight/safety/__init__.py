"""Write safety: storbench never destroys data.

Block devices
    :func:`device_write_refusal` says why writing to a block device must be refused. There are
    two kinds of reasons:

    * *in use* (the device or one of its partitions is mounted or used as swap, it has holders
      such as device-mapper/LVM/MD, or the kernel refuses an exclusive open): these can never be
      overridden — writing would corrupt a live filesystem or mapping. See
      :func:`device_in_use_refusal`.
    * *data present* (partitions, or a filesystem/LVM/RAID/swap/partition-table signature found
      by ``wipefs``/``blkid``): these are waived only when the user names that exact device in
      ``--destroy-data`` (see :func:`is_destroy_allowed`).

    When storbench cannot find out (tool missing, permission denied), it refuses.

    A purge (``precondition: {purge: ...}``: blkdiscard of the whole device) is refused
    unless ``--destroy-data`` names the device, even a blank one (:func:`purge_refusal`).

Files
    storbench never writes to an existing file it did not create. :func:`create_scratch_file`
    creates a file exclusively and marks it with :func:`mark_created`; the mark is the extended
    attribute ``user.storbench.created`` holding the file's inode number (so a copy made with
    ``cp -a`` or a restored backup, which gets a new inode, is *not* considered storbench's).

    Sidecar registry: when the filesystem does not support user extended attributes (tmpfs on
    old kernels, some NFS/FUSE mounts), the mark goes to a registry file named
    ``.storbench-created`` in the same directory as the file. It holds one JSON object per line,
    ``{"name": "<file name>", "ino": <inode number>}``, appended on each creation; a file counts
    as storbench's when a line matches both its name and its current inode number. Entries are
    never rewritten, stale ones are harmless (the inode no longer matches). Residual risk: on such
    a filesystem, if storbench's file is deleted and a new file of the same name happens to get
    the same inode number, the new file would pass as storbench's.
"""

from __future__ import annotations

from storbench.preflight.safety.devices import (
    device_in_use_refusal,
    device_write_refusal,
    is_destroy_allowed,
)
from storbench.preflight.safety.files import (
    create_scratch_file,
    created_by_storbench,
    file_write_refusal,
    free_space_refusal,
    mark_created,
    missing_parent_refusal,
)
from storbench.preflight.safety.purge import blkdiscard_path, discard_max_bytes, purge_refusal
from storbench.preflight.safety.system import REGISTRY_NAME, XATTR_NAME, human_bytes

__all__ = [
    "REGISTRY_NAME",
    "XATTR_NAME",
    "blkdiscard_path",
    "create_scratch_file",
    "created_by_storbench",
    "device_in_use_refusal",
    "device_write_refusal",
    "discard_max_bytes",
    "file_write_refusal",
    "free_space_refusal",
    "human_bytes",
    "is_destroy_allowed",
    "mark_created",
    "missing_parent_refusal",
    "purge_refusal",
]
