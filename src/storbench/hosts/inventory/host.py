"""Facts about the local host (kernel, distribution, CPU, memory, tool versions)."""

from __future__ import annotations

import os
import platform
import re
import socket
from typing import Any

import storbench
from storbench.hosts import power
from storbench.hosts.inventory.probe import _clean, _read, _run_json
from storbench.hosts.inventory.tuning import host_tuning


def _os_release() -> str | None:
    for candidate in ("/etc/os-release", "/usr/lib/os-release"):
        text = _read(candidate)
        if text is None:
            continue
        for line in text.splitlines():
            key, _, value = line.partition("=")
            if key.strip() == "PRETTY_NAME":
                return _clean(value.strip().strip("\"'"))
    return None


def _cpu_model() -> str | None:
    text = _read("/proc/cpuinfo")
    if text:
        for key in ("model name", "Model", "Hardware", "cpu model", "cpu"):
            for line in text.splitlines():
                name, sep, value = line.partition(":")
                if sep and name.strip() == key and value.strip():
                    return value.strip()
    data = _run_json(["lscpu", "-J"])
    if data:
        for entry in data.get("lscpu", []):
            if isinstance(entry, dict) and str(entry.get("field", "")).startswith("Model name"):
                return _clean(entry.get("data"))
    return _clean(platform.processor())


def _memory_bytes() -> int | None:
    text = _read("/proc/meminfo")
    if text:
        match = re.search(r"^MemTotal:\s+(\d+)\s*kB", text, re.MULTILINE)
        if match:
            return int(match.group(1)) * 1024
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        return None


def memory_available() -> int | None:
    """Bytes of memory this machine has available now (MemAvailable: free memory and what
    the kernel can reclaim, the page cache among it), None where /proc does not say."""
    text = _read("/proc/meminfo")
    match = re.search(r"^MemAvailable:\s+(\d+)\s*kB", text or "", re.MULTILINE)
    return int(match.group(1)) * 1024 if match else None


def _fio_version(about: dict[str, Any]) -> str | None:
    text = about.get("version")
    return _clean(str(text).removeprefix("fio-")) if text else None


def host_inventory(fio: dict[str, Any] | None = None) -> dict[str, Any]:
    """The local host: every key always present, None when unknown.

    Keys: ``hostname``, ``kernel`` (uname release and version, e.g. "6.1.0-18-amd64 #1 SMP
    PREEMPT_DYNAMIC Debian 6.1.76-1"), ``arch``, ``distribution`` (PRETTY_NAME), ``cpu_model``,
    ``cpu_count`` (logical CPUs), ``memory_bytes`` (MemTotal), ``python_version``,
    ``fio_version`` ("3.33", from ``fio --version``; None when fio is missing), ``fio``
    (which fio: ``path``, ``version``, ``ioengines``, e.g. whether it has ``http``: what
    the engine's ``about()`` says, given by the caller; none given: unknown),
    ``storbench_version``, ``power`` (the power sensor that answers: ``source`` rapl or
    ipmi, or None and ``why``; storbench.hosts.power) and ``tuning`` (sysctls, CPU governor, THP,
    MTUs: inventory/tuning.py).
    """
    uname = platform.uname()
    kernel = " ".join(part for part in (uname.release, uname.version) if part) or None
    try:
        hostname: str | None = socket.gethostname() or None
    except OSError:
        hostname = None
    fio = dict(fio or {"path": None, "version": None, "ioengines": []})
    return {
        "hostname": hostname or _clean(uname.node),
        "kernel": kernel,
        "arch": _clean(uname.machine),
        "distribution": _os_release(),
        "cpu_model": _cpu_model(),
        "cpu_count": os.cpu_count(),
        "memory_bytes": _memory_bytes(),
        "python_version": platform.python_version(),
        "fio_version": _fio_version(fio),
        "fio": fio,
        "storbench_version": getattr(storbench, "__version__", None),
        "power": power.source().to_dict(),
        "tuning": host_tuning(),
    }
