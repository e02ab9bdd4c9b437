"""The plan's vocabulary: target kinds and keys (read from schema.py, where every key is
declared with its documentation), reserved and refused options, limits and ranges, the
values options take. What the loader checks against."""

from __future__ import annotations

import re

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
#: Workload keys storbench reads itself and never passes to fio.
RESERVED_KEYS = schema.WORKLOAD.names()[1:]
# (with fio's aliases: timeout is runtime, blockalign ba, nr_files nrfiles)
SIZE_OPTIONS = ("size", "io_size", "io_limit", "bs", "blocksize", "filesize", "ba", "blockalign")
TIME_OPTIONS = ("runtime", "timeout", "ramp_time", "startdelay")
INT_OPTIONS = (
    "iodepth",
    "numjobs",
    "rwmixread",
    "rwmixwrite",
    "nrfiles",
    "nr_files",
    "direct",
    "iodepth_batch",
    "iodepth_batch_complete_min",
    "iodepth_low",
    "clients",
    "threads",
    "objects",
)
#: The most jobs one fio 3.33 process holds: REAL_MAX_JOBS (4096) thread slots in segments of
#: 8, of which fio never uses the last (init.c add_thread_segment); 4089 is refused there.
FIO_MAX_JOBS = 4088
#: The deepest queue storbench passes on: libaio's default aio-max-nr (io_uring's own maximum
#: is 32768 entries); fio itself has no bound and allocates one buffer per entry.
MAX_IODEPTH = 65536
#: rados bench processes storbench starts at once on this machine for one point.
MAX_RADOS_CLIENTS = 1024
#: fio reads whole numbers into 32-bit integers.
MAX_INT = 2**31 - 1
#: Options whose whole number must lie in a range (inclusive).
INT_RANGES: dict[str, tuple[int, int]] = {
    "clients": (1, MAX_RADOS_CLIENTS),
    "threads": (1, MAX_INT),
    "objects": (1, MAX_INT),
    "iodepth": (1, MAX_IODEPTH),
    "numjobs": (1, FIO_MAX_JOBS),
    "nrfiles": (1, MAX_INT),
    "nr_files": (1, MAX_INT),
    "rwmixread": (0, 100),
    "rwmixwrite": (0, 100),
    "direct": (0, 1),
}
#: Why an option has the upper bound it has.
RANGE_WHY = {
    "numjobs": "fio holds at most 4088 jobs in one process",
    "iodepth": "fio allocates a buffer per entry; libaio's default aio-max-nr is 65536",
    "clients": "rados bench starts a process on this machine for each",
}
#: How many values a plan's YAML may hold once its aliases are expanded (a "billion laughs"
#: plan holds 9**9 through 9 lines of aliases); how deep it may nest is yamlpos.MAX_DEPTH.
MAX_YAML_VALUES = 1_000_000
#: The only fio option with a negative value (fio 3.33 options.c: every other number is 0 or
#: more; fio reads a negative one as a huge unsigned number, e.g. thinktime=-1 as 71 minutes).
NEGATIVE_OK = ("nice",)
_NEGATIVE = re.compile(r"\s*-\s*\d")
#: fio engines that change the target whatever ``rw`` says (fio 3.33 engines/: falloc
#: allocates even to "read", filedelete deletes): a point that uses one counts as writing.
WRITING_ENGINES = frozenset(
    ("falloc", "ftruncate", "e4defrag", "filecreate", "filedelete", "dircreate", "dirdelete")
)
#: Flags that make fio delete the target file at the end: they count as writing.
UNLINK_OPTIONS = ("unlink", "unlink_each_loop")
#: Options with which fio writes a log file of its own: write_iolog names the file (fio
#: appends to it); the others a prefix to which fio adds ``_bw.N.log``, ``_clat.N.log`` ...
LOG_PREFIX_OPTIONS = ("write_bw_log", "write_lat_log", "write_iops_log", "write_hist_log")
FILE_OPTIONS = ("write_iolog", *LOG_PREFIX_OPTIONS)
#: The log types fio appends to a write_*_log prefix (init.c setup_log_names).
LOG_TYPES = ("bw", "lat", "slat", "clat", "clat_hist", "iops")
#: ``mem``/``iomem`` types that may name a file (``mmap:/path``): fio creates, truncates and
#: at the end removes it.
MMAP_TYPES = ("mmap", "mmaphuge", "mmapshared")
#: Example values shown in a fix.
_EXAMPLE = {
    "bs": "4k",
    "blocksize": "4k",
    "size": "10g",
    "io_size": "10g",
    "filesize": "1g",
    "runtime": 60,
    "ramp_time": 10,
    "iodepth": 32,
    "numjobs": 4,
    "rwmixread": 70,
    "rwmixwrite": 30,
    "direct": 1,
    "rw": "randread",
    "readwrite": "randread",
    "ioengine": "libaio",
    "clients": "[1, 2, 3]",
    "threads": 16,
    "mode": "write",
    "engine": "rados-bench",
}
RW_VALUES = (
    "read",
    "write",
    "trim",
    "randread",
    "randwrite",
    "randtrim",
    "rw",
    "readwrite",
    "randrw",
    "trimwrite",
    "randtrimwrite",
)
WRITE_RW = (
    "write",
    "randwrite",
    "rw",
    "readwrite",
    "randrw",
    "trimwrite",
    "randtrimwrite",
    "trim",
    "randtrim",
)

#: Options that make no sense without a value (others, such as ``group_reporting``, are flags).
NEEDS_VALUE = frozenset(
    (*SIZE_OPTIONS, *TIME_OPTIONS, *INT_OPTIONS, "rw", "readwrite", "ioengine", "mode", "engine")
)
#: Options whose value is a path fio opens (besides the target's own): the stricter rule.
PATH_OPTIONS = (*FILE_OPTIONS, "donorname")

Scalar = str | int | float | bool | None
