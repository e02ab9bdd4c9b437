"""Record what a Ceph pool with a quota looks like to `ceph ... -f json` (preflight fixtures).

Brings up a throwaway cluster with the test harness (tests/cephcluster.py: 1 mon, 1 mgr,
osd.0 on bluestore (8 GiB sparse file), pool `bench` of size 1 and 8 PGs), and records:

- ``quota.*.json``: `ceph osd pool set-quota bench max_bytes 1073741824` and
  `max_objects 1000`, then 32 objects of 4 MiB put with `rados put` (128 MiB stored), once
  `ceph df` counts all of them;
- ``quota-full.*.json``: the same pool after `set-quota bench max_bytes 67108864` (below
  what it stores), once `ceph health detail` carries POOL_FULL.

Each state: `df`, `df detail`, `osd pool ls detail`, `health detail`, byte for byte. Never
edit those files by hand: rerun this script (no root needed; ~30 s):

    python3 tests/data/rados/record_quota.py
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

OUT = Path(__file__).resolve().parent
sys.path.insert(0, str(OUT.parent.parent))

from cephcluster import CephCluster  # noqa: E402

MiB = 1 << 20
WHAT = {
    "df": ("df",),
    "df-detail": ("df", "detail"),
    "osd-pool-ls-detail": ("osd", "pool", "ls", "detail"),
    "health-detail": ("health", "detail"),
}


def record(c: CephCluster, state: str) -> None:
    for name, args in WHAT.items():
        out = c.run("ceph", *args, "-f", "json").stdout
        (OUT / f"{state}.{name}.json").write_text(out)
    print(f"  state {state}: {c.health()[0]}")


def wait(what: str, cond: object, limit: float = 60.0) -> None:
    end = time.monotonic() + limit
    while not cond():  # type: ignore[operator]
        if time.monotonic() > end:
            sys.exit(f"record_quota.py: {what} within {limit:g} s: no")
        time.sleep(0.5)


def bench_stats(c: CephCluster) -> dict[str, int]:
    return next(p["stats"] for p in c.ceph("df")["pools"] if p["name"] == "bench")


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="storbench-quota-record.") as work:
        c = CephCluster(Path(work) / "cluster", objectstore="bluestore", osd_gb=8).start()
        try:
            c.run("ceph", "osd", "pool", "set-quota", "bench", "max_bytes", str(1024 * MiB))
            c.run("ceph", "osd", "pool", "set-quota", "bench", "max_objects", "1000")
            blob = Path(work) / "blob"
            blob.write_bytes(b"\x5a" * (4 * MiB))
            for i in range(32):
                c.run("rados", "-p", "bench", "put", f"rec-quota-{i}", str(blob))
            wait("ceph df counts 32 objects", lambda: bench_stats(c)["objects"] == 32)
            record(c, "quota")
            c.run("ceph", "osd", "pool", "set-quota", "bench", "max_bytes", str(64 * MiB))
            wait("POOL_FULL", lambda: "POOL_FULL" in c.health()[1])
            record(c, "quota-full")
        except (subprocess.SubprocessError, OSError) as e:
            sys.exit(f"record_quota.py: {e}")
        finally:
            c.stop()
    for state in ("quota", "quota-full"):
        for name in WHAT:
            json.loads((OUT / f"{state}.{name}.json").read_text())
    print("recorded; checks ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
