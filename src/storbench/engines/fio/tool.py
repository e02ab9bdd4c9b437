"""fio itself: where it is, its version, its ioengines, and parsing a job file without
running it."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from functools import cache

from storbench.hosts import probecache, procguard, s3creds

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


def fio_version() -> str | None:
    """``fio-3.33`` or None when fio is not installed."""
    return _facts()[0]


def about() -> dict[str, object]:
    """Which fio runs and what it can do, for the inventory: path, version and ioengines."""
    return {"path": fio_path(), "version": fio_version(), "ioengines": sorted(available_engines())}


def available_engines() -> frozenset[str]:
    return _facts()[1]


@cache
def _facts() -> tuple[str | None, frozenset[str]]:
    """fio's version and ioengines: what this very fio answered before (probecache.py),
    else its answers to ``--version`` and ``--enghelp``, asked at once."""
    path = fio_path()
    if path is None:
        return None, frozenset()
    identity = probecache.program_identity(path)
    name = probecache.key("fio-facts", identity) if identity else None
    if name is not None:
        kept = probecache.load("fio", name)
        if isinstance(kept, dict) and isinstance(kept.get("version"), str):
            engines = kept.get("engines")
            if isinstance(engines, list) and engines:
                return kept["version"], frozenset(str(e) for e in engines)
    version, engines, whole = _ask_facts(path)
    if name is not None and whole and version and engines:
        probecache.save("fio", name, {"version": version, "engines": sorted(engines)})
    return version, engines


def _ask_facts(path: str) -> tuple[str | None, frozenset[str], bool]:
    """(``fio --version``'s first words or None, ``--enghelp``'s engines, whether both
    answered in full): the two commands run side by side."""
    try:
        version_proc: subprocess.Popen[str] | None = subprocess.Popen(
            [path, "--version"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=procguard.environment(),
        )
    except OSError:
        version_proc = None
    engines_proc = subprocess.Popen(
        [path, "--enghelp"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=procguard.environment(),
    )
    try:
        listed, _ = engines_proc.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        engines_proc.kill()
        engines_proc.communicate()
        if version_proc is not None:
            version_proc.kill()
            version_proc.communicate()
        raise
    engines = frozenset(ln.strip() for ln in listed.splitlines()[1:] if ln.strip())
    version: str | None = None
    if version_proc is not None:
        try:
            version = version_proc.communicate(timeout=10)[0].strip() or None
        except subprocess.TimeoutExpired:
            version_proc.kill()
            version_proc.communicate()
    whole = version_proc is not None and version_proc.returncode == 0
    return version, engines, whole and engines_proc.returncode == 0


def parse_only(job_text: str, workdir: str) -> str | None:
    """Let fio parse a job file without running it; its complaint, or None when it is valid.

    A job file this fio accepted before (the same text, the same environment for the
    variables it names) is not parsed again (probecache.py). fio runs with
    ``--clocksource=clock_gettime``: a clock source given skips fio's check of the CPU's
    clock at start-up (fio 3.33 gettime.c fio_clock_init, ~0.15 s), and a parse runs no
    job, so no clock is read (fio.c main: fio_backend returns at once without jobs)."""
    path = fio_path()
    if path is None:
        return None
    # an s3 target's keys are ${VARIABLES} of fio's environment: any value parses
    env = procguard.environment(
        {**os.environ, s3creds.KEY_ID_VAR: "parse-only", s3creds.SECRET_VAR: "parse-only"}
    )
    identity = probecache.program_identity(path)
    named = {v: env.get(v) for v in sorted(set(re.findall(r"\$\{(\w+)\}", job_text)))}
    name = probecache.key("parse-only", identity, job_text, named) if identity else None
    if name is not None and probecache.load("parse-only", name) is True:
        return None
    jf = os.path.join(workdir, "parse-check.fio")
    with open(jf, "w") as f:
        f.write(job_text)
    out = subprocess.run(
        [path, "--clocksource=clock_gettime", "--parse-only", jf],
        capture_output=True,
        text=True,
        timeout=30,
        env=env,
    )
    if out.returncode == 0:
        if name is not None:
            probecache.save("parse-only", name, True)
        return None
    lines = [
        ln.strip()
        for ln in (out.stderr + out.stdout).splitlines()
        if ln.strip() and "job" not in ln.split(":")[-1].split()[:1]
    ]
    msg = "; ".join(ln for ln in lines if not ln.endswith("dropped")) or "fio rejected the job"
    return msg


# ---------------------------------------------------------------------------- job files
