"""Running the ``ceph`` command line tool: ``ceph ... -f json`` as an argument list, with a
timeout, its JSON output decoded. ``conf`` is the cluster's ceph.conf (None: ceph's own
default, ``CEPH_CONF`` or /etc/ceph/ceph.conf).
"""

from __future__ import annotations

import json
import os
import subprocess
from typing import Any

from storbench.hosts import procguard
from storbench.hosts.ceph import ceph_args

__all__ = [
    "CEPH",
    "COMMAND_TIMEOUT",
    "CONNECT_TIMEOUT",
    "CephCommandError",
    "ceph_command",
    "ceph_json",
]

CEPH = os.environ.get("STORBENCH_CEPH", "ceph")
#: Timeout for each ceph command, in seconds (a ceph command takes ~0.35 s here).
COMMAND_TIMEOUT = 30.0
#: Seconds the ceph CLI tries to reach a monitor before giving up.
CONNECT_TIMEOUT = 10


class CephCommandError(RuntimeError):
    """A ceph command failed, timed out, or printed something that is not JSON."""


def ceph_command(conf: str | os.PathLike[str] | None, *args: str) -> list[str]:
    """``ceph [-c CONF] --connect-timeout N ARGS -f json`` as an argument list."""
    return [CEPH, *ceph_args(conf), "--connect-timeout", str(CONNECT_TIMEOUT), *args, "-f", "json"]


def ceph_json(
    conf: str | os.PathLike[str] | None, *args: str, timeout: float = COMMAND_TIMEOUT
) -> Any:
    """Run a ceph command and decode its JSON output."""
    cmd = ceph_command(conf, *args)
    try:
        out = subprocess.run(
            cmd,
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
            env=procguard.environment(),
        )
    except subprocess.TimeoutExpired as e:
        raise CephCommandError(f"`ceph {' '.join(args)}` timed out after {timeout:g} s") from e
    except OSError as e:
        raise CephCommandError(f"cannot run {CEPH}: {e}") from e
    if out.returncode != 0:
        msg = out.stderr.strip().splitlines()[-1:] or [f"exit status {out.returncode}"]
        raise CephCommandError(f"`ceph {' '.join(args)}` failed: {msg[0]}")
    try:
        return json.loads(out.stdout)
    except json.JSONDecodeError as e:
        raise CephCommandError(f"`ceph {' '.join(args)}` printed no JSON: {e}") from e
