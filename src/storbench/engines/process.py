"""What every engine adapter does the same way with the engine's process."""

from __future__ import annotations

import shutil
import subprocess


def tool_version(path: str | None) -> str | None:
    """First words of ``TOOL --version`` (``fio-3.33``), or None when it is missing or fails."""
    if path is None:
        return None
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() or None


def pdeathsig_prefix() -> list[str]:
    """``setpriv --pdeathsig KILL --``: the engine dies with storbench, even on SIGKILL, so no
    orphan goes on writing. Empty when setpriv (util-linux) is missing."""
    setpriv = shutil.which("setpriv")
    return [setpriv, "--pdeathsig", "KILL", "--"] if setpriv else []
