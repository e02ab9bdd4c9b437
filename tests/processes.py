"""The processes a run left: live (not zombie) processes whose environment carries the run's
mark (hosts/procguard.py: every engine process a run starts has ``STORBENCH_RUN=token``)."""

from __future__ import annotations

import os
from pathlib import Path


def marked(token: str) -> list[int]:
    """Live processes whose environment carries the run's mark."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            env = Path(f"/proc/{entry}/environ").read_bytes().split(b"\0")
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, NotADirectoryError):
            continue
        if f"STORBENCH_RUN={token}".encode() in env and state != "Z":
            found.append(int(entry))
    return found
