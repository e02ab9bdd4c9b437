"""What differed between two runs' test beds: every setting of the host (kernel, sysctls,
CPU governor, MTUs: preflight/inventory/tuning.py) and of each remote host (what its fio
server says; with ``ssh:``, its whole inventory), of the targets and their disks (I/O
scheduler, read-ahead, queue limits, write cache) and of the Ceph cluster (versions, pools'
size and PG count, ...) that is not the same, so that "A beat B" comes with "and these
settings were not the same" (seeds 000 and 003 list them in their appendices); and the
labels the user gave the runs (``--label ceph=19.2.1``, ``labels:``).
"""

from __future__ import annotations

from typing import Any

#: the parts of an inventory that describe the test bed's settings (what compare diffs)
COMPARED = ("labels", "host", "targets", "hosts", "ceph")
#: keys that differ between any two runs without saying anything of the setup
NOISE = (
    "hostname",
    "error",
    "errors",
    "health",
    "health_warning",
    "pg_states",
    "df",
    "osds",
    "osd_tree",
)


def _flat(value: Any, prefix: str, out: dict[str, Any]) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            if k not in NOISE:
                _flat(v, f"{prefix}.{k}" if prefix else str(k), out)
    elif isinstance(value, list) and all(isinstance(v, dict) for v in value) and value:
        for i, v in enumerate(value):
            key = v.get("path") or v.get("pool_name") or v.get("label") or v.get("name") or str(i)
            _flat(v, f"{prefix}[{key}]", out)
    else:
        out[prefix] = value


def differences(a: dict[str, Any], b: dict[str, Any]) -> list[tuple[str, Any, Any]]:
    """What differs between two runs' test beds: (setting, in A, in B) for each setting of
    the host, the targets' disks and the Ceph cluster that is not the same (None where one
    run does not have it)."""
    fa: dict[str, Any] = {}
    fb: dict[str, Any] = {}
    for key in COMPARED:
        _flat(a.get(key), key, fa)
        _flat(b.get(key), key, fb)
    keys = sorted(fa.keys() | fb.keys())
    return [(k, fa.get(k), fb.get(k)) for k in keys if fa.get(k) != fb.get(k)]
