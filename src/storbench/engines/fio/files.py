"""What a fio workload writes: its target (whether ``rw``, the ioengine or ``unlink`` change
it) and the files of its own fio writes beside it (logs, an mmap'd buffer file, e4defrag's
donor). The fio declaration (keys.py) answers the plan loader and preflight with these.
Light: ``plan check`` imports it, never the engine."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from storbench.plan.enginekeys import OutputFile
from storbench.plan.model import Target

#: ``rw`` values that write (verify and trim change the target too).
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
#: What follows a log prefix in the names of the files fio writes: ``PREFIX_TYPE[.N].log``
#: (N the job's number), ``.fz`` when compressed.
LOG_SUFFIX = rf"_({'|'.join(LOG_TYPES)})(\.\d+)?\.log(\.fz)?"
#: ``mem``/``iomem`` types that may name a file (``mmap:/path``): fio creates, truncates and
#: at the end removes it.
MMAP_TYPES = ("mmap", "mmaphuge", "mmapshared")
#: The options whose value may name the file fio maps its buffers from.
MEM_OPTIONS = ("mem", "iomem")
#: Options whose value is a path fio opens (besides the target's own): the stricter rule.
PATH_OPTIONS = (*FILE_OPTIONS, "donorname")


def flag_set(value: Any) -> bool:
    """Whether a fio bool option is on (a bare flag is; unsure values count as on)."""
    if value is None:
        return True
    if isinstance(value, int | float):
        return value != 0
    return str(value).strip().lower() not in ("0", "false", "no", "off")


def workload_writes(params: Mapping[str, Any]) -> bool:
    """Whether a workload writes: fio's default rw is read; verify/trim writes count too, and
    so do engines that change files whatever ``rw`` says and ``unlink`` (fio deletes the file)."""
    rw = str(params.get("rw", params.get("readwrite", "read"))).split(":")[0]
    if rw in WRITE_RW or str(params.get("ioengine", "")).strip() in WRITING_ENGINES:
        return True
    return any(k in params and flag_set(params[k]) for k in UNLINK_OPTIONS)


def mmap_file(params: Mapping[str, Any]) -> str | None:
    """The file fio's buffers are mapped from (``mem: mmap:/path``), or None."""
    for opt in MEM_OPTIONS:
        kind, sep, path = str(params.get(opt) or "").partition(":")
        if sep and kind.strip() in MMAP_TYPES:
            return path
    return None


def file_options(options: Mapping[str, Any]) -> tuple[str, ...]:
    """The options of a workload (a value may be a list: an axis) with which fio writes a
    file of its own: write_iolog, write_*_log, mem=mmap:FILE and donorname."""
    out = []
    for opt in (*FILE_OPTIONS, *MEM_OPTIONS, "donorname"):
        value = options.get(opt)
        values = value if isinstance(value, list) else [value]
        if opt not in options or (
            opt in MEM_OPTIONS and all(mmap_file({opt: v}) is None for v in values)
        ):
            continue
        out.append(opt)
    return tuple(out)


def output_files(params: Mapping[str, Any], target: Target) -> list[OutputFile]:
    """The files fio writes for a point besides its target: a write_*_log option names a
    prefix to which fio adds ``_TYPE.N.log``. e4defrag's donor file counts in a directory
    target (elsewhere fio puts it in its working directory, a temporary one of storbench's)."""
    out = [
        OutputFile(o, str(params[o]), LOG_SUFFIX if o in LOG_PREFIX_OPTIONS else "")
        for o in FILE_OPTIONS
        if o in params
    ]
    mapped = mmap_file(params)
    if mapped is not None:
        out.append(OutputFile("mem" if "mem" in params else "iomem", mapped))
    if "donorname" in params and target.kind == "directory":
        out.append(OutputFile("donorname", os.path.join(target.path, str(params["donorname"]))))
    return out
