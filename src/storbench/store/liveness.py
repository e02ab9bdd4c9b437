"""Is the process that executes a run still alive?

A run records which process executes it: host name, pid, and the process's identity (the
boot's id and the process's start time in clock ticks since boot, from /proc), so that a
pid reused by another program after a crash or a reboot is not taken for it. While it runs,
the process also writes a heartbeat every :data:`HEARTBEAT_INTERVAL` seconds: the only sign
of life a run executed from another machine (one database on a shared disk, or later a
database server) can give.
"""

from __future__ import annotations

import os
import time
from functools import cache

#: Seconds between two heartbeats of a running run.
HEARTBEAT_INTERVAL = 10.0
#: A run of another host is taken for dead when its heartbeat is older than this (s).
HEARTBEAT_STALE = 6 * HEARTBEAT_INTERVAL


@cache
def _boot_id() -> str:
    try:
        with open("/proc/sys/kernel/random/boot_id") as f:
            return f.read().strip()
    except OSError:
        return "?"


def process_identity(pid: int | None = None) -> str | None:
    """``BOOT_ID:START_TICKS`` of a live process (default: this one), or None when it does
    not exist (or /proc cannot tell)."""
    pid = os.getpid() if pid is None else pid
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
    except OSError:
        return None
    # the command name (field 2) may hold spaces and parentheses: fields after the last ')'
    fields = stat[stat.rfind(")") + 2 :].split()
    if len(fields) < 20:
        return None
    return f"{_boot_id()}:{fields[19]}"  # field 22 of proc(5): starttime


def hostname() -> str:
    return os.uname().nodename


def alive(
    host: str | None,
    pid: int | None,
    identity: str | None,
    heartbeat: float | None,
    *,
    now: float | None = None,
) -> bool:
    """Whether the process recorded as executing a run still lives.

    On this host: the pid exists and, when an identity was recorded, is the same process
    (not a reused pid). On another host: its last heartbeat is recent."""
    if host == hostname() and pid:
        if identity is None:  # recorded before identities were: the pid alone
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return False
            except PermissionError:
                return True
            return True
        return process_identity(pid) == identity
    if heartbeat is None:
        return False
    return ((time.time() if now is None else now) - heartbeat) < HEARTBEAT_STALE
