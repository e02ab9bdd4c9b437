"""page-cache's second trigger on real fio runs whose device has a known ceiling: a loop device
whose reads a blkio cgroup throttles to a number of I/Os per second (tests/throttled.py),
read by a fio server on loopback that storbench reaches as a remote host (so it knows
nothing of that host's memory, and only the run's own direct=1 figures can show the cache).
Whatever the machine's speed or load, the device reads no more than the throttle, while
reads the page cache serves are not throttled at all: buffered random reads of a small hot
set are many times the device's direct=1 figure, measured after them. Beside
them, what must not be flagged: buffered random reads whose misses go to the device, and a
buffered sequential read, which reads ahead far beyond what direct=1 reads of any block
size move at queue depth 1 without a single cache hit."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.root]

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "plugins"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from plugintools import ok, storbench  # noqa: E402  (tests/plugins: running storbench)

from throttled import BLKIO, throttled_devices  # noqa: E402
from waiting import wait_until  # noqa: E402

#: the device's reads per second at most (the cgroup's throttle)
IOPS = 300

PLAN = """\
name: ceiling-throttled
hosts:
  - address: 127.0.0.1
    port: {port}
    targets: [{{device: {dev}}}]
global: {{ioengine: psync, bs: 4k}}
workloads:
  - {{name: seq-ahead, rw: read, direct: 0, size: 32m}}
  - {{name: cached-rand, rw: randread, direct: 0, invalidate: 0, size: 512k, time_based: 1,
      runtime: 2}}
  - {{name: device-rand, rw: randread, direct: 0, offset: 32m, size: 32m, time_based: 1,
      runtime: 2}}
  - {{name: direct-rand, rw: randread, direct: 1, time_based: 1, runtime: 2}}
  - {{name: direct-seq, rw: read, direct: 1, time_based: 1, runtime: 2}}
  - {{name: direct-seq-big, rw: read, bs: 128k, direct: 1, time_based: 1, runtime: 2}}
"""
#: the points as `show --point` numbers them: 1 reads 32 MiB once through the page cache,
#: reading ahead; 2 reads a small hot set over and over, from the device once (128 reads)
#: and from RAM ever after (the kernel drops a block device's cache when its last opener
#: closes it, so the point caches it itself); 3 drops the device's cache (fio's
#: invalidate=1) and reads a region 1 did not, each block once; 4-6 are the device's own
#: figures, measured after the buffered points
SEQ_AHEAD, CACHED, DEVICE, DIRECT, DIRECT_SEQ, DIRECT_BIG = range(1, 7)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def _server(tmp_path: Path, group: Path) -> Iterator[int]:
    """A fio server on loopback inside the cgroup ``group`` (the jobs it forks are too);
    its port. Gone afterwards, so that the group can go."""
    port = _free_port()
    procs = group / "cgroup.procs"
    proc = subprocess.Popen(
        ["fio", f"--server=127.0.0.1,{port}"],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        preexec_fn=lambda: procs.write_text(f"{os.getpid()}\n"),
    )
    try:

        def listening() -> bool:
            assert proc.poll() is None, "fio's server exited"
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
                return True
            return False

        wait_until("fio's server to listen", listening)
        yield port
    finally:
        proc.kill()
        proc.wait(timeout=30)
        with contextlib.suppress(OSError):
            (BLKIO / "cgroup.procs").write_text(f"{proc.pid}\n")


def _export(fmt: str, db: Path, cwd: Path) -> str:
    return ok(storbench("export", "1", "--format", fmt, db=db, cwd=cwd, plugins=None))


def test_findings_page_cache_beyond_a_throttled_devices_direct_figure(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    with throttled_devices(tmp_path, [IOPS]) as (devs, group), _server(tmp_path, group) as port:
        plan = tmp_path / "plan.yaml"
        plan.write_text(PLAN.format(port=port, dev=devs[0]))
        out = ok(storbench("run", str(plan), db=db, cwd=tmp_path, plugins=None))
        again = ok(storbench("run", str(plan), db=db, cwd=tmp_path, plugins=None))  # compare's
    doc = json.loads(_export("json", db, tmp_path))
    iops = {m["point"]: m["read"]["iops"] for m in doc["measurements"]}
    bw = {m["point"]: m["read"]["bw_bytes"] for m in doc["measurements"]}
    cache = {f["point"]: f for f in doc["findings"] if f["code"] == "page-cache"}
    figures = f"IOPS {iops}, bytes/s {bw}"
    # the device's own figures are the throttle's (a busy machine's fewer)
    assert iops[DIRECT] <= 1.2 * IOPS and iops[DIRECT_BIG] <= 1.2 * IOPS, figures
    assert list(cache) == [CACHED], (cache, figures)
    found = cache[CACHED]
    # its reference: the most IOPS a direct=1 read of 4 KiB blocks reached, random or not
    ref = found["data"]["direct_point"]
    assert ref in (DIRECT, DIRECT_SEQ) and found["data"]["direct_iops"] == pytest.approx(
        max(iops[DIRECT], iops[DIRECT_SEQ]), rel=1e-3
    ), (found, figures)
    assert found["data"]["read_iops"] > 2 * found["data"]["direct_iops"], found
    assert f"point {ref}," in found["evidence"] and "direct=1" in found["evidence"], found
    assert found["advice"].startswith("set `direct: 1`"), found
    assert f"finding page-cache of point {CACHED} (cached-rand)" in out, out
    assert f"finding page-cache of point {CACHED} (cached-rand)" in again, again
    # the neighbours: reads ahead of a sequential reader beat direct=1 reads of its own
    # blocks many times over, and are left alone; random misses read the device
    assert bw[SEQ_AHEAD] > 2 * bw[DIRECT_SEQ], figures
    # stored with the measurement: every presenter reads it from the store
    shown = ok(storbench("show", "1", db=db, cwd=tmp_path, plugins=None))
    assert f"point {CACHED} (cached-rand): page-cache" in shown, shown
    point = ok(storbench("show", "1", "--point", str(CACHED), db=db, cwd=tmp_path, plugins=None))
    assert point.count("# finding page-cache") == 1, point
    table = list(csv.DictReader(io.StringIO(_export("csv", db, tmp_path))))
    assert list(table[0])[-1] == "findings", list(table[0])  # last: the others keep their place
    rows = {r["workload"]: r for r in table if not r["host"]}  # the points' aggregate rows
    assert "page-cache" in rows["cached-rand"]["findings"].split(), rows["cached-rand"]
    for name in ("seq-ahead", "device-rand", "direct-rand", "direct-seq", "direct-seq-big"):
        assert "page-cache" not in rows[name]["findings"].split(), rows[name]
    md = ok(storbench("report", "1", "--format", "markdown", db=db, cwd=tmp_path, plugins=None))
    assert f"| {CACHED} cached-rand | page-cache" in md, md
    # a pair carrying it is not judged in a comparison
    cmp = json.loads(
        ok(storbench("compare", "1", "2", "--format", "json", db=db, cwd=tmp_path, plugins=None))
    )
    pairs = {p["label"].split()[0]: p for p in cmp["comparisons"][0]["points"]}
    assert pairs["cached-rand"]["verdict"] == "not comparable", pairs["cached-rand"]
    assert "page-cache in" in pairs["cached-rand"]["reason"], pairs["cached-rand"]
    assert pairs["direct-rand"]["verdict"] != "not comparable", pairs["direct-rand"]
