"""The values fio's options take in a plan: which are sizes, times and whole numbers (with
fio's limits), which are choices, and the values storbench refuses (a command to run, a
mounted device to write, a file named badly). The fio declaration (keys.py) gives them to
the plan loader, whose generic checks apply them. Light: ``plan check`` imports it."""

from __future__ import annotations

import os
import re
from typing import Any

from storbench.engines.fio.files import FILE_OPTIONS, MEM_OPTIONS, flag_set, mmap_file
from storbench.plan.checks import fix_for, path_problem
from storbench.plan.enginekeys import Value
from storbench.plan.schema import Problem

#: The most jobs one fio 3.33 process holds: REAL_MAX_JOBS (4096) thread slots in segments of
#: 8, of which fio never uses the last (init.c add_thread_segment); 4089 is refused there.
FIO_MAX_JOBS = 4088
#: The deepest queue storbench passes on: libaio's default aio-max-nr (io_uring's own maximum
#: is 32768 entries); fio itself has no bound and allocates one buffer per entry.
MAX_IODEPTH = 65536
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


def _size(example: str | None = None, omit: str = "") -> Value:
    return Value("size", needs_value=True, example=example, omit=omit)


def _time(example: int | None = None, zero: str = "") -> Value:
    return Value("time", needs_value=True, example=example, zero=zero)


def _int(lo: int, example: str | int | None = None, **more: Any) -> Value:
    return Value("int", needs_value=True, example=example, lo=lo, **more)


_RW = Value("choice", needs_value=True, example="randread", choices=RW_VALUES, sep=":")

#: What each of fio's options that storbench checks takes (with fio's aliases: timeout is
#: runtime, blockalign ba, nr_files nrfiles, readwrite rw); every other takes any value but
#: a negative number (fio reads one as a huge unsigned number, e.g. thinktime=-1 as 71
#: minutes): ``nice`` alone takes them (fio 3.33 options.c).
VALUES: dict[str, Value] = {
    "size": _size(
        "10g",
        omit="omit `size` to use the whole file or device (fio's default; a file storbench "
        "creates needs one)",
    ),
    "io_size": _size("10g"),
    "io_limit": _size(),
    "bs": _size("4k"),
    "blocksize": _size("4k"),
    "filesize": _size("1g"),
    "ba": _size(),
    "blockalign": _size(),
    "runtime": _time(60, zero="; 0: no time limit"),
    "timeout": _time(),
    "ramp_time": _time(10),
    "startdelay": _time(),
    "iodepth": _int(
        1,
        32,
        hi=MAX_IODEPTH,
        why="fio allocates a buffer per entry; libaio's default aio-max-nr is 65536",
        axis=True,
    ),
    "numjobs": _int(
        1, 4, hi=FIO_MAX_JOBS, why="fio holds at most 4088 jobs in one process", axis=True
    ),
    "rwmixread": _int(0, 70, hi=100),
    "rwmixwrite": _int(0, 30, hi=100),
    "nrfiles": _int(1),
    "nr_files": _int(1),
    "direct": _int(0, 1, hi=1),
    "iodepth_batch": _int(0),
    "iodepth_batch_complete_min": _int(0),
    "iodepth_low": _int(0),
    # the plan's own keys of a fio workload: the hosts a point runs on, an s3 target's objects
    "clients": _int(1, "[1, 2, 3]"),
    "objects": _int(1),
    "rw": _RW,
    "readwrite": _RW,
    "ioengine": Value(needs_value=True, example="libaio", null="null"),  # fio's `null` engine
    "nice": Value(negative=True),
}


#: fio's options that take a percentage of the file or device, and the least each takes
#: (fio 3.33 HOWTO: size and io_size "between 1 and 100", offset "between 0 and 100"). fio
#: reads 200% as a size it cannot lay out -- no I/O, error 0 -- and 50.5% as 50 bytes.
PERCENT_OPTIONS = {"size": 1, "io_size": 1, "io_limit": 1, "offset": 0, "offset_increment": 0}
#: A value written as a percentage (a compound one, ``10%,20%``, is fio's to read).
_PERCENT = re.compile(r"[0-9.\s]*%")


def _percent_problem(opt: str, text: str) -> Problem | None:
    """A percentage fio does not read as one: out of its range, not whole, or given to an
    option that takes none."""
    if not _PERCENT.fullmatch(text):
        return None
    if opt not in PERCENT_OPTIONS:
        if VALUES.get(opt) is not None and VALUES[opt].kind == "size":
            return (
                f"takes no percentage, not {text} (fio reads it as a size it cannot use)",
                f"give a size, e.g. `{opt}: {VALUES[opt].example or '4k'}`",
            )
        return None
    lo = PERCENT_OPTIONS[opt]
    example = f"e.g. `{opt}: 50%` (of the file or device)"
    if not re.fullmatch(r"[0-9]+%", text):
        return f"must be a whole percentage, not {text} (fio would misread it)", example
    if not lo <= int(text[:-1]) <= 100:
        return f"must be a percentage from {lo}% to 100%, not {text}", example
    return None


def _path_problem(opt: str, value: Any, text: str) -> Problem | None:
    """A file fio writes must be named by an absolute path fio opens as it is."""
    path: str | None = None
    if opt in FILE_OPTIONS:
        path = str(value)
    elif opt in MEM_OPTIONS:
        path = mmap_file({opt: value})
    if path is None:
        return None
    problem = path_problem(path) if path else None
    if problem:
        return f"names a file that {problem}", fix_for(problem)
    if not os.path.isabs(path):
        example = "/var/tmp/storbench/" + ("w.iolog" if opt == "write_iolog" else "w")
        if opt in MEM_OPTIONS:
            example = f"{text.partition(':')[0].strip()}:/var/tmp/storbench.mmap"
        return (
            f"must name an absolute path, not {path!r} (fio runs in a temporary "
            "directory storbench removes after the run)",
            f"e.g. `{opt}: {example}`",
        )
    return None


def check_value(opt: str, value: Any) -> Problem | None:
    """Values that run a command, let fio write a mounted device or name a file badly (and
    a file option left bare: fio would write into its working directory)."""
    if value is None:
        if opt == "allow_mounted_write":  # fio reads a flag written alone as set
            return (
                "lets fio write to a mounted device: storbench never does",
                "remove it (unmount the device to benchmark it)",
            )
        if opt in FILE_OPTIONS:
            return (
                "needs an absolute path (without one, fio writes into its working directory, "
                "a temporary one storbench removes after the run)",
                f"e.g. `{opt}: /var/tmp/storbench/{'w' if opt != 'write_iolog' else 'w.iolog'}`",
            )
        return None
    text = str(value).strip()
    if opt == "ioengine" and text == "exec":
        return (
            "`exec` runs a command: storbench does not run commands from a plan",
            "run the command yourself, before or beside `storbench run`",
        )
    if opt == "allow_mounted_write" and flag_set(value):
        return (
            "lets fio write to a mounted device: storbench never does",
            "remove it (unmount the device to benchmark it)",
        )
    problem = _path_problem(opt, value, text) or _percent_problem(opt, text)
    if problem:
        return problem
    if opt == "donorname":
        problem_text = path_problem(str(value))
        if problem_text:
            return problem_text, fix_for(problem_text)
        if "/" in str(value) or str(value) in (".", ".."):
            return (
                "must be a file name: fio puts e4defrag's donor file in the target "
                "directory (or in its own temporary one)",
                "e.g. `donorname: storbench.donor`",
            )
    return None
