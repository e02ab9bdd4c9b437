"""What a fio workload (``engine: fio``, the default) takes in a plan: every fio option,
checked by name against fio 3.33's own list, but those storbench refuses; how its points
expand (the ioengine of a Ceph or S3 target, a random seed per repetition). The values its
options take are values.py's, what a workload writes files.py's. Light: ``plan check``
imports it, never the engine."""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Any

from storbench.engines.fio.files import file_options, output_files, workload_writes
from storbench.engines.fio.values import VALUES, check_value
from storbench.model.units import parse_size
from storbench.plan.enginekeys import EngineKeys, PointExpander
from storbench.plan.model import Target
from storbench.plan.schema import Problem

NAME = "fio"
#: The fio engine that drives each Ceph target kind (set on every fio point of such a target).
CEPH_FIO_ENGINE = {"rbd": "rbd", "rados": "rados"}
#: ... and of an s3 target: fio's http engine in its S3 mode.
S3_FIO_OPTIONS = {"ioengine": "http", "http_mode": "s3"}
#: The plan's own workload keys a fio workload takes besides fio's options: the hosts a
#: point runs on, and an s3 target's object count.
PLAN_KEYS = ("clients", "objects")


@cache
def fio_option_names() -> frozenset[str]:
    """Every option name and alias fio 3.33 accepts (packaged; see scripts/fio-options.sh)."""
    text = resources.files("storbench.engines").joinpath("fio-options.txt").read_text()
    return frozenset(ln.strip() for ln in text.splitlines() if ln.strip() and ln[0] != "#")


@cache
def _taken() -> frozenset[str]:
    return fio_option_names() | frozenset(PLAN_KEYS)


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
    # an s3 target's (fio's http engine): where, how and as whom
    "http_host",
    "https",
    "http_mode",
    "http_user",
    "http_pass",
    "http_s3_key",
    "http_s3_keyid",
    "http_s3_region",
    "http_s3_sse_customer_key",
)


def _refuse(name: str) -> Problem | None:
    if name in REFUSED_OPTIONS:
        why, fix = REFUSED_OPTIONS[name]
        return f"`{name}` {why}", fix
    if name in TARGET_OPTIONS:
        return (
            f"`{name}` comes from the target, not the workload",
            "name files, devices and directories under `targets:` (or pass --target PATH); "
            "Ceph pools and images as `- rbd: POOL/IMAGE` or `- rados: POOL` (with "
            "`clientname:` and `conf:` there)",
        )
    return None


def s3_params(params: dict[str, Any]) -> None:
    """An s3 point's fio options: the http engine in S3 mode, and ``objects`` (each job's
    object count) as fio's ``size``, that many ``bs``."""
    params.update(S3_FIO_OPTIONS)
    if "objects" in params:
        bs = parse_size(str(params.get("bs", params.get("blocksize", "4k"))).split(",")[0])
        params["size"] = int(params.pop("objects")) * bs


def _expander(targets: list[Target], repeat: int) -> PointExpander:
    def point(target: Target, params: dict[str, Any], rep: int) -> dict[str, Any]:
        if target.ceph:
            params["ioengine"] = CEPH_FIO_ENGINE[target.kind]
        elif target.kind == "s3":
            s3_params(params)
        if repeat > 1 and not {"randseed", "randrepeat"} & params.keys():
            return {"randseed": 0x5B00 + rep}  # each repetition its own offsets
        return {}

    return point


KEYS = EngineKeys(
    name=NAME,
    label="fio",
    title="A fio workload (`engine: fio`, the default)",
    doc="Every key of a fio workload but the workload's own (above) is a fio option, checked "
    "by name against fio 3.33's own list (`fio --cmdhelp=all`); storbench refuses those that "
    "run commands, replay I/O logs onto devices it cannot check or name the target "
    "(`filename`, `pool`, `http_host`...: they come from `targets:`).",
    options=_taken,
    option_word="fio option",
    options_listed="`fio --cmdhelp=all` lists fio's options",
    refuse=_refuse,
    values=VALUES,
    check_value=check_value,
    target_options=frozenset(TARGET_OPTIONS),
    hints={
        "threads": "add `engine: rados-bench` to the workload to run rados bench (fio's own: "
        "`thread` runs jobs as threads)"
    },
    duration={"time_based": 1},
    writes=workload_writes,
    file_options=file_options,
    files=output_files,
    expander=_expander,
)
