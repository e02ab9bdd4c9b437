"""Power drawn by this machine, where a sensor answers (seed 003 §8: watts, IOPS per watt).

Two sources, tried in this order:

- **RAPL** (``/sys/class/powercap/intel-rapl:N``, the CPU packages' energy counters,
  ``energy_uj``; AMD's are there too on recent kernels): watts over an interval are the
  energy counted in it over its length, the counter wrapping at ``max_energy_range_uj``.
  It measures the CPU packages (and DRAM where listed), not the whole machine.
- **IPMI DCMI** (``ipmitool dcmi power reading``): the BMC's instantaneous reading of the
  whole machine, in watts.

Where neither answers, :func:`probe` says why, and no figure is made up: the inventory
records the reason, and no power column is shown (never a zero).
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from storbench.hosts import procguard

#: Where the kernel's powercap tree is (``STORBENCH_POWERCAP`` moves it: a container that
#: mounts the host's /sys elsewhere).
POWERCAP = Path(os.environ.get("STORBENCH_POWERCAP") or "/sys/class/powercap")
IPMI_TIMEOUT_S = 5.0
_WATTS = re.compile(r"Instantaneous power reading:\s*([0-9.]+)\s*Watts", re.I)


@dataclass
class PowerSource:
    """What can be read here: ``kind`` rapl or ipmi, or None with ``why`` not."""

    kind: str | None
    zones: list[Path] = field(default_factory=list)  # rapl: the package zones
    why: str = ""

    def to_dict(self) -> dict[str, object]:
        return {
            "source": self.kind,
            **({"zones": [z.name for z in self.zones]} if self.zones else {}),
            **({"why": self.why} if self.why else {}),
        }


def _rapl_zones(root: Path) -> list[Path]:
    """The top-level RAPL zones (``intel-rapl:0``, not their sub-zones ``:0:0``) whose
    energy counter can be read."""
    zones = []
    for z in sorted(root.glob("intel-rapl:*")):
        if z.name.count(":") != 1:
            continue
        try:
            int((z / "energy_uj").read_text())
        except (OSError, ValueError):
            continue
        zones.append(z)
    return zones


def ipmi_watts() -> float | None:
    """The BMC's instantaneous power reading, or None when it gives none."""
    tool = shutil.which("ipmitool")
    if tool is None:
        return None
    try:
        out = subprocess.run(
            [tool, "dcmi", "power", "reading"],
            capture_output=True,
            text=True,
            timeout=IPMI_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
            env=procguard.environment(),
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = _WATTS.search(out.stdout)
    return float(m.group(1)) if out.returncode == 0 and m else None


def probe(root: Path | None = None) -> PowerSource:
    """Which power sensor answers on this machine (RAPL first), or why none does."""
    root = root or POWERCAP
    zones = _rapl_zones(root) if root.is_dir() else []
    if zones:
        return PowerSource("rapl", zones)
    if ipmi_watts() is not None:
        return PowerSource("ipmi")
    why = [
        f"no readable RAPL energy counter ({root} {'has none' if root.is_dir() else 'absent'})",
        "no IPMI DCMI power reading ("
        + ("ipmitool answered none" if shutil.which("ipmitool") else "ipmitool not installed")
        + ")",
    ]
    return PowerSource(None, why="; ".join(why))


@functools.cache
def source() -> PowerSource:
    """This machine's power sensor, probed once per process (a run probes before its first
    point; ``ipmitool`` takes up to seconds)."""
    return probe(POWERCAP)


def meter() -> PowerMeter | None:
    """A meter of this machine's power for one point's samples, None without a sensor."""
    src = source()
    return PowerMeter(src) if src.kind is not None else None


class PowerMeter:
    """Watts over each interval from :meth:`read` to the next (RAPL), or the BMC's reading
    at each :meth:`read` (IPMI); None when the source gives nothing."""

    def __init__(self, source: PowerSource) -> None:
        self.source = source
        self._last: tuple[float, list[int]] | None = None

    def _energy(self) -> list[int]:
        return [int((z / "energy_uj").read_text()) for z in self.source.zones]

    def _wrap(self, zone: Path) -> int:
        try:
            return int((zone / "max_energy_range_uj").read_text())
        except (OSError, ValueError):
            return 2**32

    def read(self, now: float) -> float | None:
        """``now``: a monotonic time (s) of this reading."""
        if self.source.kind == "ipmi":
            return ipmi_watts()
        if self.source.kind != "rapl":
            return None
        try:
            energy = self._energy()
        except (OSError, ValueError):
            return None
        last, self._last = self._last, (now, energy)
        if last is None or now <= last[0]:
            return None
        used = 0
        for zone, before, after in zip(self.source.zones, last[1], energy, strict=True):
            used += after - before if after >= before else after + self._wrap(zone) - before
        return used / 1e6 / (now - last[0])
