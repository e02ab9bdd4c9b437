"""Plans: YAML loading with line numbers, validation, and expansion into points.

A plan names targets, workloads and repetitions. In a workload every key is a fio option
(checked against the option names fio 3.33 knows); a list value makes that option a matrix
axis, a scalar applies to every point. ``global:`` holds options for every workload.

``hosts:`` runs every point on several hosts at once through fio's client/server mode: each
host is a fio server (``storbench agent``) at an address and port, or ``local`` (storbench
starts a private loopback server itself). A host may list its own targets (each VM's own
``/dev/vdb``); the others use the plan's ``targets:``. Every host has the same number of
targets: point *i* of the matrix uses each host's *i*-th target. ``clients`` is a reserved
workload key (never passed to fio): ``clients: [1, 2, 3]`` is an axis that runs the point
on the first 1, 2, 3 hosts.

What a plan says never reaches fio's job file as anything but the value it is (fio 3.33 reads
a job file line by line, ends a line at its first ``;`` or ``#``, cuts lines at 8191 bytes and
replaces ``${VAR}`` from the environment): values holding such characters are refused here,
with the line and a fix, and again where the job file is written (engines/fio/jobfile.py). Options
that run commands or replay I/O on files storbench cannot check are refused; options that
write files of their own must name them by absolute path (preflight refuses existing ones).
A plan is counted before it is expanded (``max_points``), and its YAML may not nest deeply
or expand through aliases without bound.
"""

from __future__ import annotations

import errno
import hashlib
import io
import itertools
import json
import math
import os
import re
import stat
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import MarkedYAMLError, YAMLError

from storbench.errors import NotFoundError, PlanError, suggestion
from storbench.units import UnitError, fmt_size_short, parse_size, parse_time

#: Targets on this machine's file system (or a fio server's).
FS_KINDS = ("file", "device", "directory")
#: Ceph targets: an RBD image (``POOL/IMAGE``) and a RADOS pool.
CEPH_KINDS = ("rbd", "rados")
TARGET_KINDS = (*FS_KINDS, *CEPH_KINDS)
TOP_KEYS = ("name", "description", "targets", "hosts", "workloads", "global", "repeat", "report")
#: Keys of a Ceph target besides its kind: image size to create (rbd), ceph.conf, client name.
CEPH_TARGET_KEYS = ("size", "conf", "clientname")
TARGET_KEYS = (*TARGET_KINDS, "name", *CEPH_TARGET_KEYS)
#: The ceph.conf used when neither the target, --ceph-conf nor $CEPH_CONF names one.
DEFAULT_CEPH_CONF = "/etc/ceph/ceph.conf"
#: Engines a workload can name with ``engine:`` (fio unless it says otherwise).
ENGINES = ("fio", "rados-bench")
RADOS_BENCH = "rados-bench"
#: The keys of a ``engine: rados-bench`` workload (rados bench's own vocabulary, mapped to
#: its options: mode, -b, -t, seconds; ``clients`` concurrent processes).
RADOS_BENCH_KEYS = ("engine", "mode", "bs", "threads", "runtime", "clients")
RADOS_BENCH_MODES = ("write", "seq", "rand")
#: rados bench's own defaults: 16 concurrent operations, and a write's 4 MiB objects.
RADOS_BENCH_DEFAULTS: dict[str, Any] = {"threads": 16}
RADOS_BENCH_WRITE_BS = "4m"
#: The fio engine that drives each Ceph target kind (set on every fio point of such a target).
CEPH_FIO_ENGINE = {"rbd": "rbd", "rados": "rados"}
HOST_KEYS = ("address", "port", "name", "targets")
#: fio's default server port (``fio --server`` without one).
DEFAULT_FIO_PORT = 8765
#: The address of the controller itself in ``hosts:``; storbench starts its fio server.
LOCAL = "local"
#: Workload keys storbench reads itself and never passes to fio.
RESERVED_KEYS = ("clients", "engine")
REPORTS = ("qualify", "profiles", "matrix", "rados")
#: Options that come from the target, not from a workload.
TARGET_OPTIONS = (
    "filename",
    "directory",
    "filename_format",
    "opendir",
    "pool",
    "rbdname",
    "clientname",
    "conf",
)
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
#: fio counts bytes in 64-bit integers.
MAX_SIZE = 2**63 - 1
#: Options whose whole number must lie in a range (inclusive).
INT_RANGES: dict[str, tuple[int, int]] = {
    "clients": (1, MAX_RADOS_CLIENTS),
    "threads": (1, MAX_INT),
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
#: Plans larger than this many points are refused before they are expanded (``--max-points``).
MAX_POINTS = 100_000
#: The longest value (UTF-8 bytes) storbench writes into a fio job file: fio reads job files in
#: lines of at most 8191 bytes and reads the rest of a longer line as a line of its own.
MAX_VALUE_BYTES = 4096
#: The longest name (plan, workload, target, host): names go into job-file comment lines.
MAX_NAME_CHARS = 256
#: How deep a plan's YAML may nest, and how many values it may hold once its aliases are
#: expanded (a "billion laughs" plan holds 9**9 through 9 lines of aliases).
MAX_DEPTH = 64
MAX_YAML_VALUES = 1_000_000
#: The only fio option with a negative value (fio 3.33 options.c: every other number is 0 or
#: more; fio reads a negative one as a huge unsigned number, e.g. thinktime=-1 as 71 minutes).
NEGATIVE_OK = ("nice",)
_NEGATIVE = re.compile(r"\s*-\s*\d")
#: fio options a plan may not use, why, and the fix: storbench runs no commands from a plan
#: and writes only what preflight checked.
REFUSED_OPTIONS: dict[str, tuple[str, str]] = {
    "exec_prerun": (
        "runs a command (fio passes it to system()): storbench does not run commands from a plan",
        "run the command yourself before `storbench run`",
    ),
    "exec_postrun": (
        "runs a command (fio passes it to system()): storbench does not run commands from a plan",
        "run the command yourself after `storbench run`",
    ),
    "read_iolog": (
        "replays an I/O log on the files and devices the log names, which storbench cannot check",
        "replay it with fio yourself, or describe the workload with fio options",
    ),
    "replay_redirect": (
        "replays an I/O log (read_iolog) onto a device storbench cannot check",
        "replay it with fio yourself",
    ),
    "merge_blktrace_file": (
        "replays I/O logs (read_iolog) and writes their merge to a file storbench cannot check",
        "merge and replay them with fio yourself",
    ),
    "profile": (
        "runs a fio profile (act, tiobench) on devices and directories of its own "
        "(`device-names`, `dir`), not on the plan's targets",
        "describe the workload with fio options and name its targets under `targets:`",
    ),
}
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
    "engine": RADOS_BENCH,
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


@cache
def fio_option_names() -> frozenset[str]:
    """Every option name and alias fio 3.33 accepts (packaged; see scripts/fio-options.sh)."""
    text = resources.files("storbench.engines").joinpath("fio-options.txt").read_text()
    return frozenset(ln.strip() for ln in text.splitlines() if ln.strip() and ln[0] != "#")


@cache
def suite_names() -> tuple[str, ...]:
    files = resources.files("storbench.suites").iterdir()
    return tuple(sorted(f.name[:-5] for f in files if f.name.endswith(".yaml")))


def suite_text(name: str) -> str:
    return resources.files("storbench.suites").joinpath(f"{name}.yaml").read_text()


# ---------------------------------------------------------------------------- values


def _char_name(c: str) -> str:
    names = {"\n": "a newline", "\r": "a carriage return", "\t": "a tab", "\0": "a NUL"}
    return names.get(c, f"U+{ord(c):04X}")


def control_char(text: str, allow: str = "") -> str | None:
    """The first control character of ``text`` (newlines and the Unicode line and paragraph
    separators included) that is not in ``allow``, named, or None."""
    for c in text:
        if c not in allow and unicodedata.category(c) in ("Cc", "Cs", "Zl", "Zp"):
            return _char_name(c)
    return None


def name_problem(text: str, allow: str = "") -> str | None:
    """Why ``text`` cannot be a name (of a plan, workload, target or host), or None."""
    c = control_char(text, allow)
    if c is not None:
        return f"holds a control character ({c})"
    if len(text) > MAX_NAME_CHARS:
        return f"is longer than {MAX_NAME_CHARS} characters"
    return None


def job_value_problem(value: str) -> str | None:
    """Why ``value`` cannot be written as a value in a fio job file, or None.

    fio 3.33 reads the file line by line (a newline or carriage return would start an option
    of its own), ends a line at its first ``;`` or ``#`` (the rest would be dropped
    silently), reads lines in pieces of 8191 bytes, and replaces ``${VAR}`` with the
    environment variable (always, even unset), so storbench's checks would see other text
    than fio."""
    c = control_char(value)
    if c is not None:
        return (
            f"holds a control character ({c}), which would end or change its line of fio's job file"
        )
    for ch in ";#":
        if ch in value:
            return f"holds `{ch}`: fio's job file ends a line there and drops the rest"
    if "${" in value:
        return "holds `${`: fio replaces ${VAR} with the environment variable VAR"
    if len(value.encode(errors="surrogatepass")) > MAX_VALUE_BYTES:
        return f"is longer than {MAX_VALUE_BYTES} bytes: fio reads job files in lines of 8191"
    return None


def path_problem(path: str) -> str | None:
    """Why ``path`` cannot name a file fio opens, or None: the job-file rule, and no ``$``
    (fio replaces $pagesize, $ncpus, ${VAR} ... in values) nor blanks at either end (fio strips
    them, so it would open another file than the one storbench checked)."""
    if not path:
        return "is empty"
    problem = job_value_problem(path)
    if problem:
        return problem
    if "$" in path:
        return "holds `$`: fio replaces $pagesize, $ncpus and ${VAR} in values"
    if path != path.strip():
        return "starts or ends with a blank, which fio strips"
    return None


def fix_for(problem: str) -> str:
    """The fix for a :func:`job_value_problem` / :func:`path_problem` / :func:`name_problem`."""
    if "control character" in problem:
        return "remove the control character: one value, on one line"
    if "`$`" in problem or "`${`" in problem:
        return "write the value itself, without `$` (fio would substitute it)"
    if "`;`" in problem or "`#`" in problem:
        return "remove the `;` and `#`: a value in fio's job file cannot hold them"
    if "longer than" in problem:
        return "shorten it"
    if "blank" in problem:
        return "remove the blanks at its ends"
    return "give a path"


@dataclass(frozen=True)
class Target:
    """What is measured: a file, a block device or a directory (on the local host), an RBD
    image (``path`` is ``POOL/IMAGE``) or a RADOS pool (``path`` is the pool)."""

    kind: str
    path: str
    name: str | None = None
    conf: str | None = None  # Ceph targets: the cluster's ceph.conf
    client: str | None = None  # Ceph targets: the client name (fio clientname=, rados --id)
    size: int | None = None  # rbd: the size of the image storbench creates when it is missing

    @property
    def label(self) -> str:
        if self.name:
            return self.name
        return f"{self.kind}:{self.path}" if self.ceph else self.path

    @property
    def ceph(self) -> bool:
        return self.kind in CEPH_KINDS

    @property
    def pool(self) -> str:
        """The pool of a Ceph target."""
        return self.path.split("/", 1)[0]

    @property
    def image(self) -> str:
        """The image of an rbd target."""
        return self.path.split("/", 1)[1]

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"kind": self.kind, "path": self.path}
        for k in ("name", "conf", "client", "size"):
            if getattr(self, k) is not None:
                d[k] = getattr(self, k)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Target:
        return cls(
            kind=d["kind"],
            path=d["path"],
            name=d.get("name"),
            conf=d.get("conf"),
            client=d.get("client"),
            size=d.get("size"),
        )


@dataclass(frozen=True)
class Host:
    """A host of ``hosts:``: a fio server at ``address``:``port``, or ``local`` (the
    controller, where storbench starts a loopback fio server for the run itself)."""

    address: str
    port: int = DEFAULT_FIO_PORT
    name: str | None = None
    targets: tuple[Target, ...] | None = None  # None: the plan's targets

    @property
    def local(self) -> bool:
        return self.address == LOCAL

    @property
    def label(self) -> str:
        if self.name:
            return self.name
        return LOCAL if self.local else f"{self.address}:{self.port}"


@dataclass(frozen=True)
class PointHost:
    """One host of a point and the target it measures there."""

    label: str
    address: str
    port: int
    target: Target

    @property
    def local(self) -> bool:
        return self.address == LOCAL

    def to_dict(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "address": self.address,
            "port": self.port,
            "target": self.target.to_dict(),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> PointHost:
        return cls(
            label=d["label"],
            address=d["address"],
            port=int(d["port"]),
            target=Target.from_dict(d["target"]),
        )


@dataclass
class Workload:
    name: str
    options: dict[str, Any]  # global options, then the workload's own; lists are axes
    line: int | None = None


@dataclass
class Point:
    """One cell of the matrix: one engine invocation with fully resolved parameters."""

    index: int
    key: str  # stable identity: hash of target, workload name and params (not repetition)
    repetition: int
    target: Target
    workload: str
    params: dict[str, Any]  # resolved fio options of the workload (no target options)
    axes: dict[str, Any]  # the swept options and this point's value of each
    extra: dict[str, Any] = field(default_factory=dict)  # options storbench adds (randseed)
    est_seconds: float | None = None
    #: The hosts the point runs on at once (fio client/server), each with its own target;
    #: empty for a plan without ``hosts:`` (fio runs locally). ``target`` then only names
    #: the point's targets for display.
    hosts: list[PointHost] = field(default_factory=list)

    @property
    def writes(self) -> bool:
        if self.engine == RADOS_BENCH:
            return self.params.get("mode") == "write"
        return workload_writes(self.params)

    @property
    def targets(self) -> list[Target]:
        """What the point measures: each host's own target, or its target without hosts."""
        return [h.target for h in self.hosts] if self.hosts else [self.target]

    @property
    def engine(self) -> str:
        """``fio`` or ``rados-bench``."""
        return str(self.params.get("engine", "fio"))

    def label(self) -> str:
        shown = " ".join(f"{k}={v}" for k, v in self.axes.items())
        return f"{self.workload} {shown}".strip()

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "key": self.key,
            "repetition": self.repetition,
            "target": self.target.to_dict(),
            "workload": self.workload,
            "params": self.params,
            "axes": self.axes,
            "extra": self.extra,
            "est_seconds": self.est_seconds,
            **({"hosts": [h.to_dict() for h in self.hosts]} if self.hosts else {}),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Point:
        return cls(
            index=d["index"],
            key=d["key"],
            repetition=d["repetition"],
            target=Target.from_dict(d["target"]),
            workload=d["workload"],
            params=d["params"],
            axes=d["axes"],
            extra=d.get("extra", {}),
            est_seconds=d.get("est_seconds"),
            hosts=[PointHost.from_dict(h) for h in d.get("hosts") or []],
        )


def workload_writes(params: dict[str, Any]) -> bool:
    """Whether a workload writes: fio's default rw is read; verify/trim writes count too, and
    so do engines that change files whatever ``rw`` says and ``unlink`` (fio deletes the file)."""
    rw = str(params.get("rw", params.get("readwrite", "read"))).split(":")[0]
    if rw in WRITE_RW or str(params.get("ioengine", "")).strip() in WRITING_ENGINES:
        return True
    return any(k in params and _flag_set(params[k]) for k in UNLINK_OPTIONS)


def _flag_set(value: Any) -> bool:
    """Whether a fio bool option is on (a bare flag is; unsure values count as on)."""
    if value is None:
        return True
    if isinstance(value, int | float):
        return value != 0
    return str(value).strip().lower() not in ("0", "false", "no", "off")


def mmap_file(params: dict[str, Any]) -> str | None:
    """The file fio's buffers are mapped from (``mem: mmap:/path``), or None."""
    for opt in ("mem", "iomem"):
        kind, sep, path = str(params.get(opt) or "").partition(":")
        if sep and kind.strip() in MMAP_TYPES:
            return path
    return None


def output_files(params: dict[str, Any], target: Target) -> list[tuple[str, str, bool]]:
    """The files fio writes for a point besides its target, as (option, path, prefix):
    ``prefix`` True when fio adds ``_TYPE.N.log`` to the path (write_bw_log ...). e4defrag's
    donor file counts in a directory target (elsewhere fio puts it in its working directory,
    a temporary one of storbench's)."""
    out = [(o, str(params[o]), o in LOG_PREFIX_OPTIONS) for o in FILE_OPTIONS if o in params]
    mapped = mmap_file(params)
    if mapped is not None:
        out.append(("mem" if "mem" in params else "iomem", mapped, False))
    if "donorname" in params and target.kind == "directory":
        out.append(("donorname", os.path.join(target.path, str(params["donorname"])), False))
    return out


@dataclass
class Plan:
    name: str
    source: str  # file path, or "suite:NAME"
    text: str  # the plan text as read
    targets: list[Target]
    workloads: list[Workload]
    repeat: int = 1
    description: str = ""
    report: str | None = None
    overrides: list[str] = field(default_factory=list)
    hosts: list[Host] = field(default_factory=list)
    max_points: int = MAX_POINTS

    def point_count(self) -> int:
        """How many points :meth:`expand` makes, counted without making them."""
        slots = len(self.host_slots()) if self.hosts else len(self.targets)
        return self.repeat * slots * sum(combinations(wl) for wl in self.workloads)

    def host_slots(self) -> list[list[tuple[Host, Target]]]:
        """Per target index, each host with its target there (hosts in plan order)."""
        lists = [list(h.targets) if h.targets is not None else self.targets for h in self.hosts]
        count = len(lists[0]) if lists else 0
        return [[(h, ts[i]) for h, ts in zip(self.hosts, lists, strict=True)] for i in range(count)]

    def expand(self) -> list[Point]:
        """The matrix as an ordered list of points.

        Repetitions run as rounds (the whole matrix, then again), so slow drift of the
        target spreads over every point instead of biasing the last ones. With ``repeat`` > 1
        each round gets its own ``randseed`` (unless the plan sets one), so repetitions touch
        independent random offsets yet stay reproducible.

        With ``hosts:`` a point runs on every host (or on the first ``clients`` of them),
        each host on its own target of the same index.
        """
        count = self.point_count()
        if count > self.max_points:  # the loader refuses first, naming the line
            raise PlanError(
                f"the plan expands to {fmt_count(count)} points, more than {self.max_points:,}",
                file=self.source,
                fix="shrink the axes or `repeat`, or raise the limit with --max-points",
            )
        points: list[Point] = []
        datasets = _Datasets(self.targets)
        slots: list[tuple[Target, list[tuple[Host, Target]]]]
        if self.hosts:
            slots = [(slot_target([t for _, t in slot]), slot) for slot in self.host_slots()]
        else:
            slots = [(t, []) for t in self.targets]
        for rep in range(self.repeat):
            for target, slot in slots:
                for wl in self.workloads:
                    axis_names = [k for k, v in wl.options.items() if isinstance(v, list)]
                    axis_values = [wl.options[k] for k in axis_names]
                    for combo in itertools.product(*axis_values):
                        params = dict(wl.options)
                        params.update(zip(axis_names, combo, strict=True))
                        extra: dict[str, Any] = {}
                        hosts: list[PointHost] = []
                        if params.get("engine") == RADOS_BENCH:
                            # `clients` concurrent rados bench processes on this machine
                            params["clients"] = int(params.get("clients", 1))
                            extra["dataset"] = datasets.name(target, params, rep)
                        else:
                            clients = int(params.pop("clients", len(slot)))
                            hosts = [
                                PointHost(h.label, h.address, h.port, t) for h, t in slot[:clients]
                            ]
                            if target.ceph:
                                params["ioengine"] = CEPH_FIO_ENGINE[target.kind]
                            if self.repeat > 1 and not {"randseed", "randrepeat"} & params.keys():
                                extra["randseed"] = 0x5B00 + rep
                        points.append(
                            Point(
                                index=len(points),
                                key=point_key(target, wl.name, params, hosts),
                                repetition=rep,
                                target=target,
                                workload=wl.name,
                                params=params,
                                axes=dict(zip(axis_names, combo, strict=True)),
                                extra=extra,
                                est_seconds=estimate_seconds(params),
                                hosts=hosts,
                            )
                        )
        return points


def combinations(wl: Workload) -> int:
    """The points of one workload on one target in one repetition: its axes multiplied."""
    return math.prod(len(v) for v in wl.options.values() if isinstance(v, list))


def fmt_count(n: int) -> str:
    """``1,000,000``; a number too long to print in full (Python refuses ints of more than
    4300 digits) as its order of magnitude."""
    if n.bit_length() > 200:
        return f"about 10^{int(n.bit_length() * math.log10(2))}"
    return f"{n:,}"


class _Datasets:
    """The objects a rados bench ``write`` leaves for the ``seq``/``rand`` points after it.

    A write's dataset is named after its target, object size, client count and repetition;
    a read point uses the dataset of the last write before it with the same target, client
    count and repetition (and object size, when the read names one: without, it takes the
    write's, which is the size it reads). The runner prefixes the run: the rados bench run
    name of client c is ``storbench-r<RUN>-<dataset>[-c<c>]``.
    """

    def __init__(self, targets: list[Target]) -> None:
        self.targets = targets
        self.written: dict[tuple[Target, int, int], list[tuple[int, str]]] = {}

    def name(self, target: Target, params: dict[str, Any], rep: int) -> str | None:
        clients = int(params["clients"])
        key = (target, clients, rep)
        if params.get("mode") == "write":
            params.setdefault("bs", RADOS_BENCH_WRITE_BS)
            size = parse_size(params["bs"])
            t = self.targets.index(target) if target in self.targets else 0
            name = f"t{t}-{size}b-{clients}c-rep{rep}"
            self.written.setdefault(key, []).append((size, name))
            return name
        writes = self.written.get(key, [])
        if "bs" in params:
            size = parse_size(params["bs"])
            writes = [w for w in writes if w[0] == size]
        if not writes:
            return None
        size, name = writes[-1]
        params.setdefault("bs", fmt_size_short(size))
        return name


def slot_target(targets: list[Target]) -> Target:
    """The target that names a point's per-host targets in tables: the target itself when
    every host measures the same path, else the first one, named after all of them."""
    first = targets[0]
    paths = list(dict.fromkeys(t.label for t in targets))
    if len(paths) == 1:
        return first
    shown = ", ".join(paths[:3]) + (f" (+{len(paths) - 3})" if len(paths) > 3 else "")
    return Target(first.kind, first.path, name=shown)


def point_key(
    target: Target,
    workload: str,
    params: dict[str, Any],
    hosts: list[PointHost] | None = None,
) -> str:
    items: list[Any] = [target.kind, target.path, workload, params]
    if hosts:
        items.append([[h.address, h.port, h.target.kind, h.target.path] for h in hosts])
    blob = json.dumps(items, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def estimate_seconds(params: dict[str, Any]) -> float | None:
    """Planned duration of a point: ramp_time + runtime (an upper bound unless time_based)."""
    try:
        limit = params.get("runtime", params.get("timeout"))  # timeout: fio's alias
        runtime = parse_time(limit) if limit is not None else None
        ramp = parse_time(params.get("ramp_time", 0))
    except UnitError:
        return None
    if not runtime:  # none, or 0: fio's "no time limit" (the point ends with its size)
        return None
    return ramp + runtime


# ---------------------------------------------------------------------------- loading


def resolve_plan_source(spec: str) -> tuple[str, str]:
    """(source name, YAML text) of a plan file path or a built-in suite name."""
    path = Path(spec)
    try:
        os.stat(path)
    except PermissionError:  # a directory on the way may not be searched
        raise PlanError(
            "cannot read the plan file: permission denied",
            file=spec,
            fix="check the permissions of the file and of the directories above it",
        ) from None
    except OSError as e:
        if e.errno == errno.ENAMETOOLONG:
            raise PlanError(
                "cannot read the plan file: its name is too long",
                file=spec[:80] + "...",
                fix="give the path of a plan file, or a built-in suite: "
                + ", ".join(suite_names()),
            ) from None
        # missing: a suite name, or reported below
    except ValueError:
        pass  # a NUL in the name: reported below
    if path.is_file():
        try:
            return str(path), path.read_text()
        except OSError as e:
            raise PlanError(
                f"cannot read the plan file: {e.strerror}",
                file=str(path),
                fix=f"check its permissions (ls -l {path}); storbench needs to read it",
            ) from None
        except UnicodeDecodeError as e:
            raise PlanError(
                f"the plan file is not UTF-8 text (byte {e.start})",
                file=str(path),
                fix="give a YAML plan file saved as UTF-8",
            ) from None
    if spec in suite_names():
        return f"suite:{spec}", suite_text(spec)
    suites = ", ".join(suite_names())
    if path.is_dir():
        raise PlanError(
            "is a directory, not a plan file",
            file=spec,
            fix=f"give the path of a plan file (YAML) inside it, or a built-in suite: {suites}",
        )
    if path.exists():
        raise PlanError(
            "is not a regular file",
            file=spec,
            fix=f"give a plan file (YAML) or a built-in suite: {suites}",
        )
    if os.sep in spec or spec.endswith((".yaml", ".yml")):
        where = path.parent if str(path.parent) not in ("", ".") else Path(".")
        why = "no such file" if where.is_dir() else f"no such directory {where}"
        raise NotFoundError(
            f"cannot read the plan file: {why}",
            file=spec,
            fix=f"check the path, or give a built-in suite: {suites}",
        )
    hint = suggestion(spec, suite_names(), "")
    raise NotFoundError(
        f"no plan file or built-in suite named {spec!r}",
        fix=f"{hint + ' ' if hint else ''}built-in suites: {suites}; "
        "or give the path of a plan file",
    )


def load_plan(
    spec: str,
    *,
    sets: list[str] | None = None,
    targets: list[str] | None = None,
    ceph_conf: str | None = None,
    max_points: int = MAX_POINTS,
) -> Plan:
    """Load a plan file or suite, apply ``--set`` overrides and ``--target`` replacements;
    ``ceph_conf`` (``--ceph-conf``) is the ceph.conf of Ceph targets that name none; a plan
    of more than ``max_points`` points (``--max-points``) is refused."""
    source, text = resolve_plan_source(spec)
    return parse_plan(
        text,
        source,
        sets=sets or [],
        targets=targets or [],
        ceph_conf=ceph_conf,
        max_points=max_points,
    )


def parse_plan(
    text: str,
    source: str,
    *,
    sets: list[str] | None = None,
    targets: list[str] | None = None,
    ceph_conf: str | None = None,
    max_points: int = MAX_POINTS,
) -> Plan:
    try:
        return _Loader(text, source, ceph_conf, max_points).load(sets or [], targets or [])
    except RecursionError:  # the YAML checks below should make this unreachable
        raise PlanError(
            "the plan is nested too deeply",
            file=source,
            fix=f"a plan needs a few levels; at most {MAX_DEPTH}",
        ) from None


def default_ceph_conf() -> str:
    """``$CEPH_CONF``, else /etc/ceph/ceph.conf (what the ceph tools read by default)."""
    return os.environ.get("CEPH_CONF") or DEFAULT_CEPH_CONF


def ceph_target(kind: str, path: str, conf: str | None = None, **kw: Any) -> Target:
    """An rbd (``POOL/IMAGE``) or rados (``POOL``) target; raises ValueError with the fix
    when the name cannot be one."""
    path = path.strip()
    parts = path.split("/")
    want = 2 if kind == "rbd" else 1
    if (
        len(parts) != want
        or not all(parts)
        or any(c.isspace() for c in path)
        or path_problem(path) is not None
    ):
        raise ValueError(
            "rbd:POOL/IMAGE (e.g. rbd:bench/storbench)"
            if kind == "rbd"
            else "rados:POOL (e.g. rados:bench)"
        )
    conf = os.path.abspath(conf) if conf else os.path.abspath(default_ceph_conf())
    problem = path_problem(conf)
    if problem:
        raise ValueError(f"the ceph.conf path {conf!r} {problem}: {fix_for(problem)}")
    client = kw.get("client")
    if client is not None and path_problem(client):
        raise ValueError(f"the client name {client!r} {path_problem(client)}")
    return Target(kind, path, conf=conf, **kw)


def parse_target_arg(arg: str, ceph_conf: str | None = None) -> Target:
    """``--target`` value: ``file:PATH``, ``device:PATH``, ``directory:PATH``,
    ``rbd:POOL/IMAGE``, ``rados:POOL`` or a bare path (a block device or a path under /dev is
    a device, an existing directory a directory, anything else a file). ``ceph_conf``
    (``--ceph-conf``) is the ceph.conf of Ceph targets (default: :func:`default_ceph_conf`)."""
    for kind in CEPH_KINDS:
        if arg.startswith(kind + ":"):
            try:
                return ceph_target(kind, arg[len(kind) + 1 :], ceph_conf)
            except ValueError as e:
                article = "an" if kind == "rbd" else "a"
                raise PlanError(
                    f"--target {shown(arg)}: not {article} {kind} target", fix=str(e)
                ) from None
    for kind in (*FS_KINDS, "dir"):
        if arg.startswith(kind + ":"):
            path = arg[len(kind) + 1 :]
            if not path:
                raise PlanError(
                    f"--target {shown(arg)}: no path after {kind}:", fix=f"--target {kind}:/path"
                )
            _check_target_arg(arg, path)
            kind = "directory" if kind == "dir" else kind
            return Target(kind, os.path.abspath(path))
    if not arg.strip():
        raise PlanError("--target needs a path", fix="--target ./scratch.dat or --target /dev/sdb")
    _check_target_arg(arg, arg)
    # absolute: fio runs in a temporary directory of its own
    path = os.path.abspath(arg)
    try:
        mode = os.stat(arg).st_mode
    except OSError:
        if path.startswith("/dev/"):
            return Target("device", path)  # preflight says it does not exist
        return Target("file", path)
    if stat.S_ISBLK(mode):
        return Target("device", path)
    if stat.S_ISDIR(mode):
        return Target("directory", path)
    return Target("file", path)


def _check_target_arg(arg: str, path: str) -> None:
    problem = path_problem(path)
    if problem:
        raise PlanError(f"--target {shown(arg)}: the path {problem}", fix=fix_for(problem))


def shown(text: str) -> str:
    """``text`` as an error message may show it: quoted and escaped when it holds a control
    character (a newline would forge a line of the message)."""
    return repr(text) if control_char(text) is not None else text


class _Loader:
    def __init__(
        self,
        text: str,
        source: str,
        ceph_conf: str | None = None,
        max_points: int = MAX_POINTS,
    ) -> None:
        self.text = text
        self.source = source
        self.ceph_conf = ceph_conf
        self.max_points = max_points
        self.set_keys: dict[str, str] = {}  # key -> the --set argument that set it
        #: where each target was given: (node, key) in the plan, or the --target argument
        self.target_at: dict[Target, tuple[Any, Any] | str] = {}

    # -- error helpers
    def err(
        self,
        msg: str,
        node: Any = None,
        key: Any = None,
        fix: str | None = None,
        origin_key: str | None = None,
    ) -> PlanError:
        if origin_key is not None and origin_key in self.set_keys:
            if fix:  # show examples in the form they were given: `--set bs=4k`, not `bs: 4k`
                fix = fix.replace(f"`{origin_key}: ", f"`--set {origin_key}=")
            return PlanError(msg, file=f"--set {shown(self.set_keys[origin_key])}", fix=fix)
        line, col = _position(node, key)
        return PlanError(msg, file=self.source, line=line, column=col, fix=fix)

    def yaml_error(self, e: MarkedYAMLError) -> PlanError:
        """One message for a YAML syntax error, at the line the fix belongs on."""
        problem = (e.problem or e.context or "invalid YAML").strip()
        context = (e.context or "").strip()
        mark = e.problem_mark or e.context_mark
        fix = "check indentation, colons and quoting on this line and the one above"
        unclosed = {
            "flow sequence": ("this `[` is never closed", "close the list with `]`"),
            "flow mapping": ("this `{` is never closed", "close the mapping with `}`"),
            "quoted scalar": (
                "this quoted string is never closed",
                "end the string with the quote character it starts with",
            ),
        }
        for what, (msg, how) in unclosed.items():
            if what in context and e.context_mark is not None:
                # the unclosed bracket or quote: its line is where the fix goes
                mark = e.context_mark
                problem = f"{msg} ({problem} on line {_line(e)})"
                fix = how + (" and separate the items with commas" if "`" in how else "")
                break
        else:
            if "duplicate key" in problem:
                first = e.context_mark.line + 1 if e.context_mark else None
                fix = "remove one of the two (a key may appear once in a mapping" + (
                    f" that starts on line {first})" if first else ")"
                )
            elif "\\t" in problem or "\t" in problem:
                fix = "indent with spaces, not tabs"
            elif "mapping values are not allowed" in problem:
                fix = (
                    "indent this line like the other keys of its block (or quote a value that "
                    "contains ': ')"
                )
            elif "expected <block end>" in problem or "block mapping" in context:
                fix = "indent this line like the other keys of its block"
        line = mark.line + 1 if mark else None
        col = mark.column + 1 if mark else None
        return PlanError(
            f"malformed YAML: {problem}", file=self.source, line=line, column=col, fix=fix
        )

    def load(self, sets: list[str], target_args: list[str]) -> Plan:
        doc = self.parse_yaml(self.text, file=self.source)
        if doc is None:
            raise PlanError(
                "plan is empty",
                file=self.source,
                fix="a plan needs at least `workloads:` (see `storbench plan --help`)",
            )
        if not isinstance(doc, CommentedMap):
            raise PlanError(
                f"a plan must be a mapping (key: value lines) at the top level, not "
                f"{_describe(doc)}",
                file=self.source,
                line=1,
                fix="start with `name:`, `targets:` and `workloads:` keys "
                "(see `storbench plan --help`)",
            )
        self.apply_sets(doc, sets)

        for key in doc:
            if key not in TOP_KEYS:
                fix = suggestion(str(key), TOP_KEYS, f"top-level keys: {', '.join(TOP_KEYS)}")
                raise self.err(f"unknown key {str(key)!r}", doc, key, fix=fix)

        name = doc.get("name")
        if name is None:
            name = Path(self.source.removeprefix("suite:")).stem
        if not isinstance(name, str) or not name.strip():
            raise self.err(
                f"`name` must be a non-empty string, not {_describe(name)}",
                doc,
                "name",
                fix='name: my-plan (quote it if it looks like a number: name: "2024")',
                origin_key="name",
            )
        self.check_name("`name`", name, doc, "name")
        description = doc.get("description") or ""
        if not isinstance(description, str):
            raise self.err(
                f"`description` must be a string, not {_describe(description)}",
                doc,
                "description",
                fix="description: what the plan measures (use `|` for several lines)",
                origin_key="description",
            )
        # never in a job file: newlines and tabs are fine, other control characters not
        c = control_char(description, allow="\n\t")
        if c is not None:
            raise self.err(
                f"`description` holds a control character ({c})",
                doc,
                "description",
                fix="remove it (newlines are fine: `description: |` and the text below)",
                origin_key="description",
            )
        repeat = doc.get("repeat", 1)
        if isinstance(repeat, bool) or not isinstance(repeat, int) or repeat < 1:
            raise self.err(
                f"`repeat` must be a whole number ≥ 1, not {_describe(repeat)}",
                doc,
                "repeat",
                fix="e.g. `repeat: 3` (runs every point 3 times)",
                origin_key="repeat",
            )
        report = doc.get("report")
        if report is not None and report not in REPORTS:
            raise self.err(
                f"unknown report {_describe(report)}",
                doc,
                "report",
                fix=suggestion(str(report), REPORTS, f"one of: {', '.join(REPORTS)}"),
                origin_key="report",
            )

        global_opts = (
            self.options(doc.get("global"), doc, "global", "global") if "global" in doc else {}
        )
        workloads = self.workloads(doc, global_opts)
        if target_args:
            targets = [parse_target_arg(a, self.ceph_conf) for a in target_args]
            self.target_at.update((t, a) for t, a in zip(targets, target_args, strict=True))
        else:
            targets = self.targets(doc)
        hosts = self.hosts(doc, targets) if "hosts" in doc else []
        if not targets and not (hosts and all(h.targets is not None for h in hosts)):
            raise self.err(
                "the plan has no targets",
                doc,
                "targets" if "targets" in doc else None,
                fix="add `targets:` (e.g. `- file: /mnt/test/storbench.dat`) or pass --target PATH"
                + (" (or give every host its own `targets:`)" if hosts else ""),
            )
        self.check_engines(workloads, targets, hosts, doc)
        self.check_clients(workloads, hosts, doc)
        if hosts:
            pairs = [(t, h.local) for h in hosts for t in (h.targets or targets)]
        else:
            pairs = [(t, True) for t in targets]
        pairs = list(dict.fromkeys(pairs))
        self.check_local_targets([t for t, local in pairs if local])
        self.check_sizes(pairs, workloads, doc)
        self.check_blocks(workloads, [t for t, _ in pairs], doc)
        if hosts:
            self.check_no_output_files(workloads, doc)
        plan = Plan(
            name=name.strip(),
            source=self.source,
            text=self.text,
            targets=targets,
            workloads=workloads,
            repeat=repeat,
            description=description,
            report=report,
            overrides=list(sets),
            hosts=hosts,
            max_points=self.max_points,
        )
        self.check_count(plan, doc)  # before anything expands the plan (check_reads does)
        if any(wl.options.get("engine") == RADOS_BENCH for wl in workloads):
            self.check_reads(plan, doc)
        return plan

    def parse_yaml(self, text: str, *, file: str | None, set_arg: str | None = None) -> Any:
        """The YAML document of a plan (``file``) or a ``--set`` value (``set_arg``), refused
        when it nests deeper than :data:`MAX_DEPTH` (ruamel's scanner slows down with the
        square of the depth and its composer recurses once per level) or holds more than
        :data:`MAX_YAML_VALUES` values once its aliases are expanded."""
        where = {"file": file} if set_arg is None else {"file": f"--set {shown(set_arg)}"}
        deep = _too_deep(text)
        if deep is not None:
            raise PlanError(
                f"the YAML is nested more than {MAX_DEPTH} levels deep",
                line=deep if set_arg is None else None,
                fix="a plan needs a few levels of `[`, `{` and indentation; remove the rest",
                **where,
            )
        try:
            if set_arg is None:
                doc = YAML(typ="rt").load(io.StringIO(text))
            else:
                doc = YAML(typ="safe", pure=True).load(text)
        except YAMLError as e:
            if set_arg is not None:
                raise PlanError(
                    f"--set {shown(set_arg)}: the value is not valid YAML",
                    fix="quote it, or write a list as [1,32]",
                ) from None
            if isinstance(e, MarkedYAMLError):
                raise self.yaml_error(e) from None
            raise PlanError(
                f"malformed YAML: {e}", fix="check indentation, colons and quoting", **where
            ) from None
        except RecursionError:
            raise PlanError(
                "the YAML is nested too deeply",
                fix=f"a plan needs a few levels; at most {MAX_DEPTH}",
                **where,
            ) from None
        except TypeError:  # a list or mapping as a key inside a key
            raise PlanError(
                "malformed YAML: a list or mapping is used as a key",
                fix="keys are plain words such as `bs:`",
                **where,
            ) from None
        except (ValueError, OverflowError) as e:  # !!int abc, 2001-02-30, 5000-digit numbers
            raise PlanError(
                f"malformed YAML: a value YAML reads as a number, date or tagged value is "
                f"invalid ({e})",
                fix='quote it to make it a string, e.g. name: "2001-02-30"',
                **where,
            ) from None
        self.check_yaml(doc, where)
        return doc

    def check_yaml(self, doc: Any, where: dict[str, str | None]) -> None:
        """Refuse a document deeper than MAX_DEPTH, holding more than MAX_YAML_VALUES values
        once its aliases (``*name``) are expanded (a "billion laughs"), referring to itself,
        or with a list or mapping as a key. Without recursion, each node visited once."""
        sizes: dict[int, int] = {}  # expanded size of each finished collection
        open_: set[int] = set()  # collections being visited (their ancestors): a cycle
        stack: list[tuple[Any, int, bool]] = [(doc, 0, False)]
        distinct = 0  # values of the document as written (each alias's target counted once)

        def children(node: Any) -> list[Any]:
            return list(node.values()) if isinstance(node, dict) else list(node)

        def fail(msg: str, node: Any, key: Any = None, fix: str = "") -> PlanError:
            line, col = _position(node, key)
            if where["file"] != self.source:
                line = col = None
            return PlanError(msg, line=line, column=col, fix=fix, **where)

        while stack:
            node, depth, done = stack.pop()
            if not isinstance(node, dict | list | tuple | set | frozenset):
                continue
            nid = id(node)
            if done:
                open_.discard(nid)
                kids = children(node)
                size = 1 + sum(sizes.get(id(c), 1) for c in kids)
                sizes[nid] = size
                distinct += 1 + sum(1 for c in kids if id(c) not in sizes)
                if size > MAX_YAML_VALUES:
                    aliased = distinct <= MAX_YAML_VALUES
                    raise fail(
                        f"the plan holds more than {MAX_YAML_VALUES:,} values"
                        + (" once its YAML aliases (*name) are expanded" if aliased else ""),
                        node,
                        fix="a plan needs a few dozen values; do not repeat aliases of aliases",
                    )
                continue
            if nid in sizes:
                continue
            if nid in open_:
                raise fail(
                    "the YAML refers to itself through an alias (*name)",
                    node,
                    fix="remove the alias",
                )
            if depth > MAX_DEPTH:
                raise fail(
                    f"the YAML is nested more than {MAX_DEPTH} levels deep",
                    node,
                    fix="a plan needs a few levels; remove the rest",
                )
            if isinstance(node, dict):
                for k in node:
                    if isinstance(k, dict | list | tuple | set | frozenset):
                        raise fail(
                            "a key is a list or mapping",
                            node,
                            k,
                            fix="keys are plain words such as `bs:`",
                        )
            open_.add(nid)
            stack.append((node, depth, True))
            stack.extend((c, depth + 1, False) for c in children(node) if id(c) not in sizes)

    def check_count(self, plan: Plan, doc: CommentedMap) -> None:
        """Refuse a plan of more than ``max_points`` points before it is expanded."""
        count = plan.point_count()
        if count <= self.max_points:
            return
        slots = len(plan.host_slots()) if plan.hosts else len(plan.targets)
        combos = sum(combinations(wl) for wl in plan.workloads)
        parts = [f"repeat {fmt_count(plan.repeat)}"] if plan.repeat > 1 else []
        parts.append(f"{slots} target{'s' if slots != 1 else ''}")
        parts.append(f"{fmt_count(combos)} combination{'s' if combos != 1 else ''} of axes")
        if "repeat" in doc and plan.repeat * slots > self.max_points:
            at: tuple[Any, Any] = (doc, "repeat")
        else:
            biggest = max(range(len(plan.workloads)), key=lambda i: combinations(plan.workloads[i]))
            at = (doc.get("workloads"), biggest)
        raise self.err(
            f"the plan expands to {fmt_count(count)} points ({' × '.join(parts)}), more than "
            f"the limit of {self.max_points:,}",
            *at,
            fix="shrink the axes or `repeat`, or raise the limit: --max-points "
            + (str(count) if count < 10**12 else "N"),
            origin_key="repeat" if at[1] == "repeat" else None,
        )

    def check_engines(
        self, workloads: list[Workload], targets: list[Target], hosts: list[Host], doc: Any
    ) -> None:
        """rados bench measures rados targets from this machine only."""
        where = doc.get("workloads")
        all_targets = [t for h in hosts for t in (h.targets or targets)] or targets
        for i, wl in enumerate(workloads):
            if wl.options.get("engine") != RADOS_BENCH:
                continue
            if hosts:
                raise self.err(
                    f"workload {wl.name!r}: rados bench runs on this machine, not on `hosts:`",
                    where,
                    i,
                    fix="remove `hosts:` and use `clients: N` (N rados bench processes at "
                    "once), or drop `engine: rados-bench` to use fio's rados engine on the hosts",
                )
            other = [t for t in all_targets if t.kind != "rados"]
            if other:
                raise self.err(
                    f"workload {wl.name!r}: rados bench measures a pool, not the "
                    f"{other[0].kind} {other[0].path}",
                    where,
                    i,
                    fix="give it a `- rados: POOL` target (or --target rados:POOL); put file "
                    "and rbd targets in a plan of their own",
                )

    def check_reads(self, plan: Plan, doc: Any) -> None:
        """Every rados bench seq/rand point reads objects a write before it left."""
        for p in plan.expand():
            if p.engine == RADOS_BENCH and p.extra.get("dataset") is None:
                wl = next(w for w in plan.workloads if w.name == p.workload)
                i = plan.workloads.index(wl)
                size = f", bs {p.params['bs']}" if "bs" in p.params else ""
                raise self.err(
                    f"workload {wl.name!r}: rados bench {p.params['mode']} reads the objects "
                    f"a write left, and no `mode: write` point runs before it on "
                    f"{p.target.label} with clients {p.params['clients']}{size}",
                    doc.get("workloads"),
                    i,
                    fix="put a workload with `mode: write` (same clients and bs) before it",
                )

    def apply_sets(self, doc: CommentedMap, sets: list[str]) -> None:
        for arg in sets:
            key, sep, raw = arg.partition("=")
            key = key.strip()
            if not sep or not key:
                raise PlanError(
                    f"--set {arg!r} is not key=value",
                    fix="e.g. --set runtime=2 or --set iodepth=[1,32]",
                )
            value = self.parse_yaml(raw, file=None, set_arg=arg) if raw.strip() else None
            self.set_keys[key] = arg
            if key in TOP_KEYS:
                if key in ("targets", "workloads", "global"):
                    raise PlanError(
                        f"--set cannot replace `{key}`",
                        fix="use --target PATH for targets; edit the plan file for workloads",
                    )
                doc[key] = value
                continue
            if key in TARGET_OPTIONS:
                raise PlanError(
                    f"--set {shown(arg)}: `{key}` comes from the target, not the workload",
                    fix=f"pass --target {shown(raw.strip()) or 'PATH'} instead",
                )
            known = fio_option_names() | set(RESERVED_KEYS) | set(RADOS_BENCH_KEYS)
            if key not in known:
                raise PlanError(
                    f"--set {shown(arg)}: {key!r} is not a fio option or plan key",
                    fix=suggestion(
                        key,
                        known | set(TOP_KEYS),
                        f"plan keys: {', '.join(TOP_KEYS)}; fio options: `fio --cmdhelp=all`",
                    ),
                )
            glob = doc.get("global") if isinstance(doc.get("global"), dict) else {}
            workloads = [wl for wl in doc.get("workloads") or [] if isinstance(wl, dict)]
            # a key goes to the workloads whose engine has it (a plan may mix engines)
            fitting = [
                wl
                for wl in workloads
                if (wl.get("engine", glob.get("engine", "fio")) == RADOS_BENCH)
                == (key in RADOS_BENCH_KEYS and key not in fio_option_names())
                or key in ("runtime", "bs", "clients")
            ]
            if workloads and not fitting:
                if key in ("iodepth", "numjobs"):
                    fix = "use --set threads=N (rados bench's concurrent operations, -t)"
                elif key in fio_option_names():
                    fix = "the plan's rados-bench workloads take: " + ", ".join(RADOS_BENCH_KEYS)
                else:
                    fix = "only `engine: rados-bench` workloads take it"
                raise PlanError(
                    f"--set {shown(arg)}: no workload of the plan has `{key}`",
                    file=self.source,
                    fix=fix,
                )
            if glob:
                glob.pop(key, None)
            for wl in fitting:
                wl[key] = value

    def options(
        self, node: Any, parent: Any, key: Any, where: str, engine: str | None = None
    ) -> dict[str, Any]:
        """The options of a workload (``engine`` fio or rados-bench: only its keys) or of
        ``global:`` (``engine`` None: the keys of any engine)."""
        if not isinstance(node, dict):
            raise self.err(
                f"`{where}` must be a mapping of fio options, not {_describe(node)}",
                parent,
                key,
                fix=f"{where}:\n  ioengine: libaio\n  direct: 1",
            )
        out: dict[str, Any] = {}
        for opt, value in node.items():
            opt_s = str(opt)
            if engine == RADOS_BENCH or (engine is None and opt_s in RADOS_BENCH_KEYS):
                if opt_s not in RADOS_BENCH_KEYS:
                    fio_only = opt_s in fio_option_names()
                    raise self.err(
                        f"{where}: `{opt_s}` is "
                        + ("a fio option, not one of rados bench" if fio_only else "unknown")
                        + " (the workload says `engine: rados-bench`)",
                        node,
                        opt,
                        fix=(
                            "use `threads` for concurrent operations (rados bench -t)"
                            if opt_s in ("iodepth", "numjobs")
                            else "use `mode` (write, seq, rand)"
                            if opt_s in ("rw", "readwrite")
                            else suggestion(
                                opt_s,
                                RADOS_BENCH_KEYS,
                                f"a rados-bench workload has: {', '.join(RADOS_BENCH_KEYS)}",
                            )
                        ),
                        origin_key=opt_s,
                    )
                out[opt_s] = self.option_value(opt_s, value, node, opt, where)
                continue
            if opt_s in ("mode", "threads"):
                raise self.err(
                    f"{where}: `{opt_s}` is a rados bench key, not a fio option",
                    node,
                    opt,
                    fix="add `engine: rados-bench` to the workload to run rados bench"
                    + (" (fio's own: `thread` runs jobs as threads)" if opt_s == "threads" else ""),
                    origin_key=opt_s,
                )
            if opt_s in REFUSED_OPTIONS:
                why, fix = REFUSED_OPTIONS[opt_s]
                raise self.err(f"{where}: `{opt_s}` {why}", node, opt, fix=fix, origin_key=opt_s)
            if opt_s in TARGET_OPTIONS:
                raise self.err(
                    f"{where}: `{opt_s}` comes from the target, not the workload",
                    node,
                    opt,
                    fix="name files, devices and directories under `targets:` "
                    "(or pass --target PATH); Ceph pools and images as `- rbd: POOL/IMAGE` "
                    "or `- rados: POOL` (with `clientname:` and `conf:` there)",
                    origin_key=opt_s,
                )
            if opt_s not in fio_option_names() and opt_s not in RESERVED_KEYS:
                fix = suggestion(
                    opt_s, fio_option_names(), "`fio --cmdhelp=all` lists fio's options"
                )
                raise self.err(
                    f"{where}: unknown fio option {opt_s!r}", node, opt, fix=fix, origin_key=opt_s
                )
            out[opt_s] = self.option_value(opt_s, value, node, opt, where)
        return out

    def option_value(self, opt: str, value: Any, node: Any, key: Any, where: str) -> Any:
        if isinstance(value, list):
            if not value:
                raise self.err(
                    f"{where}: `{opt}` is an empty list",
                    node,
                    key,
                    fix=f"give at least one value (`{opt}: [a, b]`), or a single value",
                    origin_key=opt,
                )
            out = []
            for i, v in enumerate(value):
                # point at the list item when it sits on a line of its own
                at = (
                    (value, i)
                    if _position(value, i)[0] not in (None, _position(node, key)[0])
                    else (node, key)
                )
                v = self.scalar(opt, v, at[0], at[1], where)
                if any(str(v) == str(prev) for prev in out):
                    raise self.err(
                        f"{where}: `{opt}` lists {v!r} twice",
                        *at,
                        fix="list each value once (`repeat: N` runs every point N times)",
                        origin_key=opt,
                    )
                out.append(v)
            return out
        return self.scalar(opt, value, node, key, where)

    def scalar(self, opt: str, value: Any, node: Any, key: Any, where: str) -> Scalar:
        def fail(msg: str, fix: str) -> PlanError:
            return self.err(f"{where}: `{opt}` {msg}", node, key, fix=fix, origin_key=opt)

        if isinstance(value, dict | list):
            kind = "a mapping (key: value lines)" if isinstance(value, dict) else "a nested list"
            return_fix = f"write `{opt}: VALUE` or `{opt}: [VALUE, VALUE]` on one line"
            if isinstance(value, dict):
                return_fix += " (a `key: value` indented under it reads as a mapping)"
            raise fail(f"must be a value or a list of values, not {kind}", return_fix)
        if isinstance(value, bool):
            value = int(value)
        if value is None and opt == "ioengine":
            value = "null"  # YAML reads fio's `null` engine as a null value
        if value is None and opt in FILE_OPTIONS:
            raise fail(
                "needs an absolute path (without one, fio writes into its working directory, "
                "a temporary one storbench removes after the run)",
                f"e.g. `{opt}: /var/tmp/storbench/{'w' if opt != 'write_iolog' else 'w.iolog'}`",
            )
        if value is None:
            if opt in NEEDS_VALUE:
                raise fail("has no value", f"give it one, e.g. `{opt}: {_EXAMPLE.get(opt, 1)}`")
            return None  # a flag such as `group_reporting:` is written as a bare option
        if isinstance(value, float) and not math.isfinite(value):
            raise fail(f"must be a finite number, not {value}", "give a number")
        if isinstance(value, str):
            problem = job_value_problem(value)
            if problem:
                raise fail(problem, fix_for(problem))
        self.check_value(opt, value, fail)
        try:
            if opt in SIZE_OPTIONS and not _compound(value):
                size = parse_size(value)
                if size <= 0:
                    raise fail(
                        f"must be more than 0, not {value}",
                        "omit `size` to use the whole file or device (fio's default; a file "
                        "storbench creates needs one), or give e.g. `size: 10g`"
                        if opt == "size"
                        else f"omit it for fio's default, or give e.g. "
                        f"`{opt}: {_EXAMPLE.get(opt, '4k')}`",
                    )
                if size > MAX_SIZE:
                    raise fail(f"is larger than fio can count: {value}", f"at most {MAX_SIZE}")
            elif opt in TIME_OPTIONS:
                secs = parse_time(value)
                if not math.isfinite(secs):
                    raise fail(f"must be a finite time, not {value}", f"e.g. `{opt}: 60`")
                if secs < 0:
                    raise fail(
                        f"must be 0 or more, not {value}",
                        f"e.g. `{opt}: {_EXAMPLE.get(opt, 0)}` (seconds)"
                        + ("; 0: no time limit" if opt == "runtime" else ""),
                    )
                if secs * 1e6 >= 2**63:
                    raise fail(f"is longer than fio can count: {value}", f"e.g. `{opt}: 60`")
        except UnitError:
            if opt in SIZE_OPTIONS:
                raise fail(
                    f"is not a size: {value!r}",
                    f"use fio's size syntax, e.g. `{opt}: {_EXAMPLE.get(opt, '4k')}` "
                    "(k, m, g, t are powers of 1024; a plain number is bytes)",
                ) from None
            raise fail(
                f"is not a time: {value!r}",
                f"use fio's time syntax, e.g. `{opt}: 60` (seconds) or 60s, 2m, 500ms",
            ) from None
        if opt in INT_OPTIONS:
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            if not (isinstance(value, int) or (isinstance(value, str) and value.isdigit())):
                raise fail(
                    f"must be a whole number, not {_describe(value)}",
                    f"e.g. `{opt}: {_EXAMPLE.get(opt, 1)}`, or a list for an axis: `{opt}: [1, 32]`"
                    if opt in ("iodepth", "numjobs")
                    else f"e.g. `{opt}: {_EXAMPLE.get(opt, 1)}`",
                )
            lo, hi = INT_RANGES.get(opt, (0, MAX_INT))
            n = int(value)
            if n < lo or n > hi:
                span = f"{lo} or more" if n < lo and hi > 1000 else f"{lo} to {hi}"
                raise fail(
                    f"must be {span}, not {fmt_count(n)}"
                    + (f" ({RANGE_WHY[opt]})" if opt in RANGE_WHY and n > hi else ""),
                    f"e.g. `{opt}: {_EXAMPLE.get(opt, lo)}`",
                )
        negative = (
            value < 0 if isinstance(value, int | float) else bool(_NEGATIVE.match(str(value)))
        )
        if negative and opt not in NEGATIVE_OK:
            raise fail(
                f"must be 0 or more, not {value} (fio reads a negative number as a huge one)",
                f"give `{opt}` a value of 0 or more",
            )
        if opt == "engine" and value not in ENGINES:
            raise fail(
                f"cannot be {value!r}",
                suggestion(str(value), ENGINES, f"one of: {', '.join(ENGINES)}") or "",
            )
        if opt == "mode" and value not in RADOS_BENCH_MODES:
            raise fail(
                f"cannot be {value!r}",
                suggestion(str(value), RADOS_BENCH_MODES, "")
                or f"one of: {', '.join(RADOS_BENCH_MODES)} (rados bench's modes)",
            )
        if opt in ("rw", "readwrite") and str(value).split(":")[0] not in RW_VALUES:
            raise fail(
                f"cannot be {value!r}",
                suggestion(str(value).split(":")[0], RW_VALUES, f"one of: {', '.join(RW_VALUES)}")
                or "",
            )
        if isinstance(value, str | int | float):
            return value
        return str(value)

    def check_value(self, opt: str, value: Any, fail: Callable[[str, str], PlanError]) -> None:
        """Values that run a command, let fio write a mounted device or name a file badly."""
        text = str(value).strip()
        if opt == "ioengine" and text == "exec":
            raise fail(
                "`exec` runs a command: storbench does not run commands from a plan",
                "run the command yourself, before or beside `storbench run`",
            )
        if opt == "allow_mounted_write" and _flag_set(value):
            raise fail(
                "lets fio write to a mounted device: storbench never does",
                "remove it (unmount the device to benchmark it)",
            )
        path: str | None = None
        if opt in FILE_OPTIONS:
            path = str(value)
        elif opt in ("mem", "iomem"):
            path = mmap_file({opt: value})
        if path is not None:
            problem = path_problem(path) if path else None
            if problem:
                raise fail(f"names a file that {problem}", fix_for(problem))
            if not os.path.isabs(path):
                example = "/var/tmp/storbench/" + ("w.iolog" if opt == "write_iolog" else "w")
                if opt in ("mem", "iomem"):
                    example = f"{text.partition(':')[0].strip()}:/var/tmp/storbench.mmap"
                raise fail(
                    f"must name an absolute path, not {path!r} (fio runs in a temporary "
                    "directory storbench removes after the run)",
                    f"e.g. `{opt}: {example}`",
                )
        if opt == "donorname":
            problem = path_problem(str(value))
            if problem:
                raise fail(problem, fix_for(problem))
            if "/" in str(value) or str(value) in (".", ".."):
                raise fail(
                    "must be a file name: fio puts e4defrag's donor file in the target "
                    "directory (or in its own temporary one)",
                    "e.g. `donorname: storbench.donor`",
                )

    def check_name(self, what: str, name: Any, node: Any, key: Any) -> None:
        """A name shown in tables and written into job-file comment lines: a short string
        on one line."""
        origin = "name" if what == "`name`" else None
        if not isinstance(name, str | int | float):
            raise self.err(
                f"{what} must be a string, not {_describe(name)}",
                node,
                key,
                fix="e.g. `name: fast-disk`",
                origin_key=origin,
            )
        problem = name_problem(str(name))
        if problem:
            raise self.err(f"{what} {problem}", node, key, fix=fix_for(problem), origin_key=origin)

    def check_local_targets(self, targets: list[Target]) -> None:
        """What a local target is must match its kind: a ``file:`` that is a directory, a
        ``device:`` that is no block device or a ``directory:`` that is a file would record a
        failed point (a missing one is for preflight to report: it may appear before the
        run). Targets of remote hosts are not on this machine: nothing to look at here."""
        for t in targets:
            if t.ceph:
                continue
            try:
                mode = os.stat(t.path).st_mode
            except OSError:
                continue
            at = self.target_at.get(t)
            arg = isinstance(at, str)  # given as --target
            if t.kind == "file" and stat.S_ISDIR(mode):
                msg = f"`file:` target {t.path} is a directory"
                fix = (
                    f"--target directory:{t.path}" if arg else f"`- directory: {t.path}`"
                ) + " (fio makes files of its own in it), or name a file inside it"
            elif t.kind == "device" and not stat.S_ISBLK(mode):
                what = (
                    "a directory"
                    if stat.S_ISDIR(mode)
                    else "a character device"
                    if stat.S_ISCHR(mode)
                    else "a file"
                )
                msg = f"{t.path} is not a block device but {what}: `device:` must be one"
                fix = "name a block device (lsblk lists them)" + (
                    ", or a file with `file:`" if not stat.S_ISDIR(mode) else ""
                )
            elif t.kind == "directory" and not stat.S_ISDIR(mode):
                msg = f"`directory:` target {t.path} is not a directory"
                fix = "name a directory, or a file with `file:`"
            else:
                continue
            if isinstance(at, str):
                raise PlanError(f"--target {shown(at)}: {msg}", fix=fix)
            raise self.err(msg, *(at or (None, None)), fix=fix)

    def option_at(self, doc: CommentedMap, i: int, opt: str) -> tuple[Any, Any]:
        """Where workload ``i`` got option ``opt``: its own key, else ``global:``'s."""
        items = doc.get("workloads")
        item = items[i] if isinstance(items, list) else None
        if isinstance(item, dict) and opt in item:
            return item, opt
        glob = doc.get("global")
        if isinstance(glob, dict) and opt in glob:
            return glob, opt
        return items, i

    def check_blocks(
        self, workloads: list[Workload], targets: list[Target], doc: CommentedMap
    ) -> None:
        """Every block size of a workload fits each of its sizes (every combination of the
        axes): fio refuses to run a job whose size is below its block size, and a directory
        target's files (size / nrfiles each) smaller than a block get no I/O at all."""
        directories = any(t.kind == "directory" for t in targets)

        def sizes(wl: Workload, opt: str) -> list[tuple[Any, int]]:
            values = wl.options.get(opt)
            out = []
            for v in values if isinstance(values, list) else [values]:
                if v is None or _compound(v):
                    continue
                try:
                    out.append((v, parse_size(v)))
                except UnitError:
                    continue
            return out

        for i, wl in enumerate(workloads):
            if wl.options.get("engine") == RADOS_BENCH:
                continue
            bs_opt = "bs" if "bs" in wl.options else "blocksize"
            for bs_text, bs in sizes(wl, bs_opt):
                for other in ("size", "filesize"):
                    for text, n in sizes(wl, other):
                        if bs > n:
                            raise self.err(
                                f"workload {wl.name!r}: `{bs_opt}` {bs_text} is larger than "
                                f"`{other}` {text}: fio refuses a job smaller than its block",
                                *self.option_at(doc, i, bs_opt),
                                fix=f"lower `{bs_opt}` or raise `{other}` (each `{bs_opt}` "
                                f"must fit each `{other}` of the axes)",
                                origin_key=bs_opt,
                            )
                if not directories or "filesize" in wl.options:
                    continue
                nrfiles = wl.options.get("nrfiles", wl.options.get("nr_files", 1))
                for files in nrfiles if isinstance(nrfiles, list) else [nrfiles]:
                    for text, n in sizes(wl, "size"):
                        if int(files) > 1 and bs > n // int(files):
                            raise self.err(
                                f"workload {wl.name!r}: `size` {text} over `nrfiles` {files} "
                                f"gives each of the {files} files in a directory target "
                                f"{fmt_size_short(n // int(files))} bytes, less than "
                                f"`{bs_opt}` {bs_text}: fio would do no I/O on them",
                                *self.option_at(doc, i, "nrfiles"),
                                fix="raise `size`, lower `nrfiles`, or give each file a `filesize`",
                                origin_key="nrfiles",
                            )

    def check_no_output_files(self, workloads: list[Workload], doc: CommentedMap) -> None:
        """With ``hosts:`` fio writes the files of write_iolog, write_*_log, mem=mmap:FILE
        and donorname where storbench cannot check them: on each host, or (the logs) on
        this machine as NAME.HOST through fio's client."""
        for i, wl in enumerate(workloads):
            for opt in (*FILE_OPTIONS, "mem", "iomem", "donorname"):
                value = wl.options.get(opt)
                values = value if isinstance(value, list) else [value]
                if opt not in wl.options or (
                    opt in ("mem", "iomem") and all(mmap_file({opt: v}) is None for v in values)
                ):
                    continue
                raise self.err(
                    f"workload {wl.name!r}: `{opt}` writes a file, and with `hosts:` fio "
                    "writes it where storbench cannot check that it overwrites nothing (on "
                    "each host, or as NAME.HOST on this machine)",
                    *self.option_at(doc, i, opt),
                    fix="remove it, or run the workload in a plan without `hosts:`",
                    origin_key=opt,
                )

    def workloads(self, doc: CommentedMap, global_opts: dict[str, Any]) -> list[Workload]:
        node = doc.get("workloads")
        example = "workloads:\n  - name: rand4k\n    rw: randread\n    bs: 4k\n    size: 1g"
        if node is None:
            raise self.err(
                "the plan has no workloads"
                + (" (`workloads:` is empty)" if "workloads" in doc else ""),
                doc,
                "workloads" if "workloads" in doc else None,
                fix=f"add a list of workloads, e.g.\n{example}",
            )
        if not isinstance(node, list) or not node:
            raise self.err(
                f"`workloads` must be a non-empty list, not {_describe(node)}",
                doc,
                "workloads",
                fix=f"start each workload with `- ` under `workloads:`, e.g.\n{example}",
            )
        out: list[Workload] = []
        seen: set[str] = set()
        for i, item in enumerate(node):
            if not isinstance(item, dict):
                raise self.err(
                    f"each workload must be a mapping of fio options, not {_describe(item)}",
                    node,
                    i,
                    fix=f"write the workload's options under it, e.g.\n{example}",
                )
            item = dict(item) if not isinstance(item, CommentedMap) else item
            raw_name = item.get("name", f"w{i + 1}")
            if not isinstance(raw_name, str | int) or not str(raw_name).strip():
                raise self.err(
                    f"workload `name` must be a non-empty string, not {_describe(raw_name)}",
                    item,
                    "name",
                    fix="name: rand4k",
                )
            name = str(raw_name).strip()
            self.check_name("workload `name`", name, item, "name")
            if name in seen:
                raise self.err(
                    f"two workloads are named {name!r}",
                    item,
                    "name",
                    fix="give each workload its own name",
                )
            seen.add(name)
            opts = {k: v for k, v in item.items() if k != "name"}
            where = f"workload {name!r}"
            engine = opts.get("engine", global_opts.get("engine", "fio"))
            if engine not in ENGINES:
                self.scalar("engine", engine, item if "engine" in item else node, "engine", where)
            own = self.options(_submap(item, opts), node, i, where, engine=engine)
            # global options apply where they mean something: fio options to fio workloads,
            # rados bench keys to rados-bench workloads (a plan may mix both)
            fits = (
                (lambda k: k in RADOS_BENCH_KEYS)
                if engine == RADOS_BENCH
                else (lambda k: k not in ("mode", "threads"))
            )
            merged = {
                **{k: v for k, v in global_opts.items() if k not in own and fits(k)},
                **own,
            }
            if engine == RADOS_BENCH:
                merged = {**RADOS_BENCH_DEFAULTS, **merged, "engine": RADOS_BENCH}
                self.check_rados_bench(name, merged, item, node, i)
            elif "engine" in merged:
                merged.pop("engine")  # fio is the default: not a job option
            out.append(Workload(name=name, options=merged, line=_position(node, i)[0]))
        return out

    def check_rados_bench(
        self, name: str, opts: dict[str, Any], item: Any, node: Any, i: int
    ) -> None:
        """A rados-bench workload needs a mode and a runtime in whole seconds."""
        where = f"workload {name!r}"
        if "mode" not in opts:
            raise self.err(
                f"{where}: a rados-bench workload needs `mode`",
                node,
                i,
                fix="add `mode: write` (then `seq` or `rand` workloads read what it wrote)",
            )
        if "runtime" not in opts:
            raise self.err(
                f"{where}: a rados-bench workload needs `runtime` (rados bench's seconds)",
                node,
                i,
                fix="add e.g. `runtime: 60` (or --set runtime=60)",
            )
        for t in opts["runtime"] if isinstance(opts["runtime"], list) else [opts["runtime"]]:
            secs = parse_time(t)
            if secs < 1 or not float(secs).is_integer():
                raise self.err(
                    f"{where}: rados bench runs whole seconds (≥ 1), not `runtime: {t}`",
                    item if "runtime" in item else node,
                    "runtime" if "runtime" in item else i,
                    fix="e.g. `runtime: 60`",
                    origin_key="runtime",
                )

    def targets(self, doc: CommentedMap) -> list[Target]:
        return self.target_list(doc.get("targets"), doc, "targets")

    def target_list(self, node: Any, parent: Any, key: Any) -> list[Target]:
        example = "targets:\n  - file: /mnt/test/storbench.dat\n  - device: /dev/sdb"
        if node is None:
            return []
        if not isinstance(node, list):
            raise self.err(
                f"`targets` must be a list, not {_describe(node)}",
                parent,
                key,
                fix=f"start each target with `- `, e.g.\n{example}",
            )
        out: list[Target] = []
        for i, item in enumerate(node):
            if not isinstance(item, dict):
                raise self.err(
                    f"each target must be a mapping such as `- file: PATH`, not {_describe(item)}",
                    node,
                    i,
                    fix=f"say what it is: file, device or directory, e.g.\n{example}",
                )
            for k in item:
                if k not in TARGET_KEYS:
                    raise self.err(
                        f"unknown target key {str(k)!r}",
                        item,
                        k,
                        fix=suggestion(
                            str(k),
                            TARGET_KEYS,
                            f"a target is one of: {', '.join(TARGET_KINDS)} (and an optional name)",
                        ),
                    )
            kinds = [k for k in TARGET_KINDS if k in item]
            if len(kinds) != 1:
                raise self.err(
                    f"a target needs exactly one of {', '.join(TARGET_KINDS)}"
                    + (f", not {' and '.join(kinds)}" if kinds else ""),
                    node,
                    i,
                    fix=f"one `- KIND: PATH` line per target, e.g.\n{example}",
                )
            kind = kinds[0]
            path = item[kind]
            if kind in CEPH_KINDS:
                out.append(self.ceph_target(kind, item, node, i))
                continue
            for k in CEPH_TARGET_KEYS:
                if k in item:
                    raise self.err(
                        f"`{k}` belongs to Ceph targets (rbd, rados), not to a {kind}",
                        item,
                        k,
                        fix="remove it"
                        + (" (a workload's `size:` sets fio's size)" if k == "size" else ""),
                    )
            if not isinstance(path, str) or not path.strip():
                raise self.err(
                    f"`{kind}` needs a path, not {_describe(path)}",
                    item,
                    kind,
                    fix=f"e.g. `- {kind}: "
                    + {"file": "/mnt/test/storbench.dat", "device": "/dev/sdb"}.get(
                        kind, "/mnt/test"
                    )
                    + "`",
                )
            name = item.get("name")
            path = path.strip()
            problem = path_problem(path)
            if problem:
                raise self.err(f"the {kind} path {problem}", item, kind, fix=fix_for(problem))
            if kind == "device" and not os.path.isabs(path):
                raise self.err(
                    f"a device path must be absolute, not {path!r} (fio runs in a directory "
                    "of its own)",
                    item,
                    kind,
                    fix="e.g. `- device: /dev/sdb`",
                )
            if name is not None:
                self.check_name("target `name`", name, item, "name")
            target = Target(
                kind=kind, path=os.path.abspath(path), name=str(name) if name is not None else None
            )
            self.target_at.setdefault(target, (item, kind))
            out.append(target)
        return out

    def ceph_target(self, kind: str, item: Any, node: Any, i: int) -> Target:
        """``- rbd: POOL/IMAGE`` (optional ``size`` of the image to create) or
        ``- rados: POOL``, each with optional ``conf`` (ceph.conf) and ``clientname``."""
        path = item[kind]
        if not isinstance(path, str):
            path = str(path) if isinstance(path, int) else ""
        size = item.get("size")
        if "size" in item:
            if kind != "rbd":
                raise self.err(
                    "`size` is the size of an rbd image; a rados target has none",
                    item,
                    "size",
                    fix="remove it (a workload's `size:` sets how much fio writes)",
                )
            try:
                size = parse_size(size)
            except UnitError:
                raise self.err(
                    f"`size` is not a size: {size!r}",
                    item,
                    "size",
                    fix="e.g. `size: 10g` (the size of the image storbench creates if missing)",
                ) from None
            if not 0 < size <= MAX_SIZE:
                raise self.err(
                    f"`size` must be more than 0 (and less than 8 EiB), not {size}",
                    item,
                    "size",
                    fix="e.g. `size: 10g` (the size of the image storbench creates if missing)",
                )
        for k in ("conf", "clientname"):
            if k in item and (not isinstance(item[k], str) or not item[k].strip()):
                raise self.err(
                    f"`{k}` must be a non-empty string, not {_describe(item[k])}",
                    item,
                    k,
                    fix="e.g. `conf: /etc/ceph/ceph.conf`"
                    if k == "conf"
                    else "e.g. `clientname: admin` (the Ceph user without `client.`)",
                )
        client = item.get("clientname")
        if isinstance(client, str) and client.startswith("client."):
            client = client[len("client.") :]
        name = item.get("name")
        for k in ("conf", "clientname"):
            problem = path_problem(item[k].strip()) if k in item else None
            if problem:
                raise self.err(f"`{k}` {problem}", item, k, fix=fix_for(problem))
        if name is not None:
            self.check_name("target `name`", name, item, "name")
        try:
            return ceph_target(
                kind,
                path,
                item.get("conf") or self.ceph_conf,
                name=str(name) if name is not None else None,
                client=client.strip() if isinstance(client, str) else None,
                size=size,
            )
        except ValueError as e:
            article = "an" if kind == "rbd" else "a"
            raise self.err(
                f"not {article} {kind} target: {_describe(item[kind])}", item, kind, fix=str(e)
            ) from None

    def hosts(self, doc: CommentedMap, targets: list[Target]) -> list[Host]:
        node = doc.get("hosts")
        example = (
            "hosts:\n  - address: 192.0.2.10\n  - address: 192.0.2.11\n    port: 8766\n"
            "    targets:\n      - device: /dev/vdb"
        )
        if not isinstance(node, list) or not node:
            raise self.err(
                f"`hosts` must be a non-empty list, not {_describe(node)}",
                doc,
                "hosts",
                fix=f"one `- address: ADDRESS` per host (a fio server, `storbench agent`; "
                f"`local` for this machine), e.g.\n{example}",
                origin_key="hosts",
            )
        out: list[Host] = []
        seen: dict[tuple[str, int], int] = {}
        labels: dict[str, int] = {}
        for i, item in enumerate(node):
            if not isinstance(item, dict):
                raise self.err(
                    f"each host must be a mapping such as `- address: 192.0.2.10`, not "
                    f"{_describe(item)}",
                    node,
                    i,
                    fix=f"write `address:` (and optionally port, name, targets), e.g.\n{example}",
                )
            for k in item:
                if k not in HOST_KEYS:
                    raise self.err(
                        f"unknown host key {str(k)!r}",
                        item,
                        k,
                        fix=suggestion(str(k), HOST_KEYS, f"a host has: {', '.join(HOST_KEYS)}"),
                    )
            address = item.get("address")
            if not isinstance(address, str) or not address.strip():
                raise self.err(
                    f"a host needs an `address`, not {_describe(address)}",
                    item if "address" in item else node,
                    "address" if "address" in item else i,
                    fix="e.g. `- address: 192.0.2.10` (the fio server started with "
                    "`storbench agent`), or `- address: local` for this machine",
                )
            address = address.strip()
            if control_char(address) is not None:
                raise self.err(
                    f"host address {shown(address)} holds a control character "
                    f"({control_char(address)})",
                    item,
                    "address",
                    fix="give the address alone, e.g. `address: 192.0.2.10`",
                )
            if (
                address.startswith(("[", "ip6:"))
                or any(c in address for c in ",: ;#$")
                or len(address) > MAX_NAME_CHARS
            ):
                raise self.err(
                    f"host address {address!r} is not an IPv4 address or host name",
                    item,
                    "address",
                    fix="give the address alone (e.g. 192.0.2.10) and the port under `port:` "
                    "(IPv6 addresses: use a host name)",
                )
            port = item.get("port", DEFAULT_FIO_PORT)
            if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535:
                raise self.err(
                    f"host `port` must be a whole number from 1 to 65535, not {_describe(port)}",
                    item,
                    "port",
                    fix=f"e.g. `port: {DEFAULT_FIO_PORT}` (fio's default)",
                )
            if address == LOCAL and "port" in item:
                raise self.err(
                    "the `local` host takes no port: storbench starts its fio server itself",
                    item,
                    "port",
                    fix="remove `port:` from this host",
                )
            name = item.get("name")
            if name is not None and (not isinstance(name, str | int) or not str(name).strip()):
                raise self.err(
                    f"host `name` must be a non-empty string, not {_describe(name)}",
                    item,
                    "name",
                    fix="e.g. `name: vm01`",
                )
            if name is not None:
                self.check_name("host `name`", str(name).strip(), item, "name")
            own = (
                tuple(self.target_list(item["targets"], item, "targets"))
                if item.get("targets") is not None
                else None
            )
            if own is not None and not own:
                raise self.err(
                    "`targets` of a host is empty",
                    item,
                    "targets",
                    fix="list this host's targets, or remove `targets:` to use the plan's",
                )
            host = Host(
                address=address,
                port=port,
                name=str(name).strip() if name is not None else None,
                targets=own,
            )
            ident = (address, port if address != LOCAL else 0)
            if ident in seen:
                first = f"host {seen[ident] + 1}"
                raise self.err(
                    f"host {host.label} is listed twice (as {first} and host {i + 1})",
                    node,
                    i,
                    fix="list each fio server once (a different `port:` for a second server "
                    "on the same machine)",
                )
            if host.label in labels:
                raise self.err(
                    f"two hosts are named {host.label!r}",
                    node,
                    i,
                    fix="give each host its own `name:`",
                )
            seen[ident] = i
            labels[host.label] = i
            out.append(host)
        counts = [(h, len(h.targets) if h.targets is not None else len(targets)) for h in out]
        if len({c for _, c in counts}) > 1:
            odd = min(counts, key=lambda hc: [c for _, c in counts].count(hc[1]))
            others = max((c for _, c in counts), key=[c for _, c in counts].count)
            raise self.err(
                f"host {odd[0].label} has {odd[1]} target(s), the other hosts {others}: every "
                "host needs the same number of targets (point i uses each host's i-th target)",
                node,
                out.index(odd[0]),
                fix="list the same number of targets under each host (or none, to use the "
                "plan's `targets:`)",
            )
        return out

    def check_clients(
        self, workloads: list[Workload], hosts: list[Host], doc: CommentedMap
    ) -> None:
        """``clients`` (the number of hosts a point runs on) needs ``hosts:`` and at most
        as many clients as hosts."""
        for i, wl in enumerate(workloads):
            if "clients" not in wl.options or wl.options.get("engine") == RADOS_BENCH:
                continue  # rados bench: `clients` processes on this machine
            values = wl.options["clients"]
            where = (doc.get("workloads"), i)
            if not hosts:
                raise self.err(
                    f"workload {wl.name!r}: `clients` needs `hosts:` (the hosts a point runs on)",
                    *where,
                    fix="list the hosts under `hosts:`, or remove `clients`",
                    origin_key="clients",
                )
            for n in values if isinstance(values, list) else [values]:
                if int(n) > len(hosts):
                    raise self.err(
                        f"workload {wl.name!r}: `clients` {n} but the plan names "
                        f"{len(hosts)} host{'s' if len(hosts) != 1 else ''}",
                        *where,
                        fix=f"at most {len(hosts)}, e.g. `clients: "
                        f"[{', '.join(str(k) for k in range(1, len(hosts) + 1))}]`",
                        origin_key="clients",
                    )

    def check_sizes(
        self, targets: list[tuple[Target, bool]], workloads: list[Workload], doc: CommentedMap
    ) -> None:
        """A file or directory target that fio or storbench creates needs a size to lay out
        (``targets``: each with whether it is on this machine). An existing local file may do
        without; a file on a remote host is read at its own size when the workload has none
        (storbench cannot see whether it exists: fio says so if it does not)."""
        for t, local in targets:
            if t.kind in ("device", "rbd") or (t.kind == "file" and not local):
                continue  # a device's or image's own size
            for wl in workloads:
                if wl.options.get("engine") == RADOS_BENCH:
                    continue
                if (
                    "size" not in wl.options
                    and "filesize" not in wl.options
                    and not (t.kind == "file" and os.path.exists(t.path))
                ):
                    raise self.err(
                        f"workload {wl.name!r} has no `size` for {t.kind} target {t.path}",
                        doc.get("workloads"),
                        workloads.index(wl),
                        fix="add e.g. `size: 1g` to the workload (or --set size=1g)"
                        + (
                            " (fio's rados engine writes size/nrfiles per object, at most "
                            "osd_max_object_size: 128 MiB by default)"
                            if t.kind == "rados"
                            else ""
                        ),
                    )


def _too_deep(text: str, limit: int = MAX_DEPTH) -> int | None:
    """The line on which YAML flow collections (``[...]``, ``{...}``) in ``text`` nest more
    than ``limit`` deep, or None: a cheap look before the YAML parser, whose scanner slows
    down with the square of the depth (100,000 ``[`` took seconds before failing).

    It skips quoted strings and comments, and outside brackets counts only a bracket that
    starts a value; so it may miss some nesting (the parser's own limit catches that), but
    it does not count brackets inside plain text."""
    depth = 0
    line = 1
    quote = ""
    prev = "\n"  # the last character on this line that is not a blank
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            prev = "\n"
        elif quote:
            if quote == '"' and c == "\\":
                i += 1  # the escaped character
            elif c == quote:
                if quote == "'" and text.startswith("'", i + 1):
                    i += 1  # '' inside a single-quoted string
                else:
                    quote = ""
        elif c == "#" and (i == 0 or text[i - 1] in " \t\n"):
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        else:
            starts_value = depth > 0 or (prev in "\n:-?" and (i == 0 or text[i - 1] in " \t\n"))
            if c in "[{" and starts_value:
                depth += 1
                if depth > limit:
                    return line
            elif c in "]}" and depth > 0:
                depth -= 1
            elif c in "'\"" and (prev in "[{,:" if depth else starts_value):
                quote = c
            if c not in " \t":
                prev = c
        i += 1
    return None


def _line(e: MarkedYAMLError) -> int | None:
    return e.problem_mark.line + 1 if e.problem_mark else None


def _describe(value: Any) -> str:
    """A wrong value as a user wrote it: a mapping or list by kind, a scalar as itself."""
    if isinstance(value, dict):
        return "a mapping (key: value lines)"
    if isinstance(value, list):
        return "a list"
    if value is None:
        return "empty"
    return repr(value)


def _compound(value: Any) -> bool:
    """fio values such as bs=4k,8k (read,write), bssplit or percentages: not checked here
    (a leading minus is a negative number, not a range)."""
    return (
        isinstance(value, str)
        and not value.strip().startswith("-")
        and any(c in value for c in ",:%/-")
    )


def _submap(node: CommentedMap | dict[str, Any], keys: dict[str, Any]) -> Any:
    if isinstance(node, CommentedMap):
        sub = CommentedMap()
        for k in keys:
            sub[k] = node[k]
            pos = node.lc.key(k) if k in node.lc.data else None
            if pos:
                sub.lc.add_kv_line_col(k, list(node.lc.data[k]))
        return sub
    return keys


def _position(node: Any, key: Any = None) -> tuple[int | None, int | None]:
    """1-based (line, column) of a key in a mapping / index in a sequence, or of the node."""
    try:
        if key is not None and isinstance(node, CommentedMap) and key in node.lc.data:
            line, col = node.lc.key(key)
            return line + 1, col + 1
        if key is not None and isinstance(node, CommentedSeq) and isinstance(key, int):
            line, col = node.lc.item(key)
            return line + 1, col + 1
        if isinstance(node, CommentedMap | CommentedSeq):
            return node.lc.line + 1, node.lc.col + 1
    except (AttributeError, KeyError, IndexError, TypeError):
        pass
    return None, None


_SAFE_NAME = re.compile(r"[^A-Za-z0-9_.-]+")


def job_section_name(workload: str) -> str:
    """A workload name made safe for a fio job section header."""
    return _SAFE_NAME.sub("_", workload)[:60] or "job"
