"""Purging a device before its preconditioning (plan key ``precondition: {purge: ...}``), as
SNIA PTS allows before WIPC: util-linux's ``blkdiscard`` over the whole device (``discard``),
or ``blkdiscard --secure`` (``secure``: the device must support secure erase; when it does
not, blkdiscard fails, the point fails with what the device answered).

Once per target and session of a run, before the target's first point and its other
preconditioning (storbench.execute.precondition), on this machine only. Its outcome is an event of
the run (kind ``precondition``, ``mode: purge``: what ran, the command, seconds, result),
never a measurement.

Whether a device may be purged is preflight's (preflight/safety/purge.py): a block device
of this machine that ``--destroy-data`` names, not in use. blkdiscard runs without
``--force``, so it still opens the device exclusively (a device mounted since preflight is
refused), with no terminal on its stdin (a signature it finds is a warning, not a question:
preflight has decided).
"""

from __future__ import annotations

import os
import subprocess
import time
from typing import Any

from storbench.engines.base import PointResult
from storbench.hosts import procguard
from storbench.model.metrics import Measurement
from storbench.plan import Point, Target
from storbench.preflight.safety import blkdiscard_path, discard_max_bytes

#: blkdiscard's options for each ``purge:`` value (``--verbose``: it says what it erased).
OPTIONS = {"discard": [], "secure": ["--secure"]}
#: What each ``purge:`` does, in words.
DOES = {"discard": "discarded the whole device", "secure": "securely erased the whole device"}


def command(how: str, device: str) -> list[str]:
    """The argv that purges ``device``."""
    return [blkdiscard_path() or "blkdiscard", "--verbose", *OPTIONS[how], device]


def targets(point: Point) -> list[Target]:
    """What a point's purge erases: its own target, or its local hosts' (preflight refuses a
    purge with remote hosts)."""
    return [h.target for h in point.hosts if h.local] if point.hosts else [point.target]


def run(how: str, device: str) -> PointResult:
    """Purge ``device`` (checked by preflight) and say how it went, as a phase's result."""
    argv = command(how, device)
    env = procguard.environment({**os.environ, "LC_ALL": "C"})
    started = time.time()
    try:
        proc = subprocess.run(
            argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, env=env, check=False
        )
        code, out, err = proc.returncode, proc.stdout, proc.stderr
    except OSError as e:
        code, out, err = None, "", f"cannot run {argv[0]}: {e.strerror}"
    ended = time.time()
    if code == 0:
        meas = Measurement(status="ok")
    else:
        meas = Measurement(status="failed", error_code=code or 0, error=_why(how, code, err))
    meas.extra["returncode"] = code
    return PointResult(
        measurement=meas,
        command=argv,
        job_text=None,
        raw_output=out,
        stderr=err,
        started_at=started,
        ended_at=ended,
        interrupted=code is not None and code < 0,
    )


def _why(how: str, code: int | None, stderr: str) -> str:
    """A failed purge in one line: what blkdiscard (and the device) answered."""
    said = " ".join(line.strip() for line in stderr.strip().splitlines()[-2:])
    if code is not None and code < 0:
        return f"blkdiscard was stopped (signal {-code})" + (f": {said}" if said else "")
    said = said or f"blkdiscard exited with status {code}"
    if how == "secure" and "not supported" in said.lower():
        return f"the device does not support secure erase ({said})"
    return said


def data(point: Point, target: Target, how: str, result: PointResult) -> dict[str, Any]:
    """The event's data: what ran, how, for how long, and what came of it."""
    meas = result.measurement
    assert meas is not None
    return {
        "point": point.index,
        "mode": "purge",
        "purge": how,
        "target": target.label,
        "device": target.path,
        "discard_max_bytes": discard_max_bytes(target.path),
        "status": "interrupted" if result.interrupted else meas.status,
        "error": meas.error,
        "started_at": result.started_at,
        "ended_at": result.ended_at,
        "seconds": result.ended_at - result.started_at,
        "command": result.command,
        "returncode": meas.extra.get("returncode"),
        "output": (result.raw_output + result.stderr).strip(),
    }


def message(point: Point, target: Target, how: str, result: PointResult) -> str:
    """The event's message: ``point N: purged TARGET (HOW): ...`` or why it was not."""
    meas = result.measurement
    n = point.index + 1
    if result.interrupted or meas is None or meas.status != "ok":
        why = meas.error if meas is not None and meas.error else "no result"
        status = "interrupted" if result.interrupted else "failed"
        return f"point {n}: purge of {target.label} ({how}) {status}: {why}"
    seconds = result.ended_at - result.started_at
    return f"point {n}: purged {target.label} ({how}): {DOES[how]} in {seconds:.1f} s"
