"""fio itself: where it is, its version, its ioengines, and parsing a job file without
running it."""

from __future__ import annotations

import os
import shutil
import subprocess
from functools import cache

from storbench import s3creds
from storbench.engines.process import tool_version

#: storbench's own build of Debian's fio with the http engine (scripts/build-fio-http.sh)
OWN_BUILD = "/usr/local/lib/storbench/fio/bin/fio"


def _which_fio() -> str:
    """The fio storbench runs: $STORBENCH_FIO when set (``fio`` means the one on PATH), else
    the own build when it is there, else ``fio`` from PATH."""
    named = os.environ.get("STORBENCH_FIO")
    if named:
        return named
    return OWN_BUILD if os.access(OWN_BUILD, os.X_OK) else "fio"


FIO = _which_fio()


class FioOutputError(ValueError):
    """fio's output holds no result document."""


# ---------------------------------------------------------------------------- discovery


def fio_path() -> str | None:
    return shutil.which(FIO)


@cache
def fio_version() -> str | None:
    """``fio-3.33`` or None when fio is not installed."""
    return tool_version(fio_path())


def about() -> dict[str, object]:
    """Which fio runs and what it can do, for the inventory: path, version and ioengines."""
    return {"path": fio_path(), "version": fio_version(), "ioengines": sorted(available_engines())}


@cache
def available_engines() -> frozenset[str]:
    path = fio_path()
    if path is None:
        return frozenset()
    out = subprocess.run([path, "--enghelp"], capture_output=True, text=True, timeout=10)
    return frozenset(ln.strip() for ln in out.stdout.splitlines()[1:] if ln.strip())


def parse_only(job_text: str, workdir: str) -> str | None:
    """Let fio parse a job file without running it; its complaint, or None when it is valid."""
    path = fio_path()
    if path is None:
        return None
    jf = os.path.join(workdir, "parse-check.fio")
    with open(jf, "w") as f:
        f.write(job_text)
    # an s3 target's keys are ${VARIABLES} of fio's environment: any value parses
    env = {**os.environ, s3creds.KEY_ID_VAR: "parse-only", s3creds.SECRET_VAR: "parse-only"}
    out = subprocess.run(
        [path, "--parse-only", jf], capture_output=True, text=True, timeout=30, env=env
    )
    if out.returncode == 0:
        return None
    lines = [
        ln.strip()
        for ln in (out.stderr + out.stdout).splitlines()
        if ln.strip() and "job" not in ln.split(":")[-1].split()[:1]
    ]
    msg = "; ".join(ln for ln in lines if not ln.endswith("dropped")) or "fio rejected the job"
    return msg


# ---------------------------------------------------------------------------- job files
