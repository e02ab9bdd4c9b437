"""Running storbench with the test directory's plugins (tests/plugins on PYTHONPATH, named
in STORBENCH_PLUGINS), or without any: what the plugin tests share."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

PLUGINS = Path(__file__).resolve().parent


def storbench(
    *args: str, db: Path, cwd: Path, plugins: str | None
) -> subprocess.CompletedProcess[str]:
    """``storbench ARGS`` on database ``db``, with the plugin modules ``plugins`` (comma-
    separated; None: no plugin, whatever the environment says)."""
    env = {**os.environ, "STORBENCH_DB": str(db), "COLUMNS": "200"}
    env.pop("STORBENCH_PLUGINS", None)
    if plugins is not None:
        path = os.pathsep.join(p for p in (str(PLUGINS), env.get("PYTHONPATH", "")) if p)
        env |= {"STORBENCH_PLUGINS": plugins, "PYTHONPATH": path}
    return subprocess.run(
        [sys.executable, "-m", "storbench", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
        env=env,
    )


def ok(r: subprocess.CompletedProcess[str]) -> str:
    """The output of a command that must succeed (with its output in the failure)."""
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Traceback" not in r.stderr
    return r.stdout
