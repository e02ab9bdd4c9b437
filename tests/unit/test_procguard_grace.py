"""The guard's sweep (hosts/procguard.py) and a process told to stop rather than killed when
storbench dies (fio's client of many hosts, which must send each host's server its quit):
it is left its grace to end by itself, and killed only if it does not; every other process
of the run is killed at once."""

from __future__ import annotations

import os
import subprocess
import uuid

from storbench.hosts import procguard


def _marked(token: str, argv: list[str], grace: float | None) -> subprocess.Popen[bytes]:
    env = {**os.environ, procguard.ENV: token}
    if grace is not None:
        env[procguard.GRACE_ENV] = str(grace)
    return subprocess.Popen(argv, env=env)


def test_procguard_sweep_leaves_a_graceful_process_its_grace() -> None:
    token = uuid.uuid4().hex
    plain = _marked(token, ["sleep", "60"], None)
    ends = _marked(token, ["sh", "-c", "sleep 0.3"], 30.0)  # ends well within its grace
    hangs = _marked(token, ["sleep", "60"], 0.5)  # does not: killed after it
    try:
        killed = procguard.sweep(token, timeout=60.0)
        assert plain.wait(timeout=10) == -9
        assert ends.wait(timeout=10) == 0  # not killed: it ended by itself
        assert hangs.wait(timeout=10) == -9
        assert killed == 2
        assert procguard.processes(token) == []
    finally:
        for p in (plain, ends, hangs):
            if p.poll() is None:
                p.kill()
                p.wait()
