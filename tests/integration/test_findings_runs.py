"""Findings on real fio runs: each trap reproduced on a small scratch file, beside a point
that must not be flagged; the findings in every presenter (run's output, show, show
--point, export's JSON, Markdown, HTML)."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "plugins"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from plugintools import ok, storbench  # noqa: E402  (tests/plugins: running storbench)

from waiting import wait_until  # noqa: E402

PLAN = """\
name: traps
targets: [{{file: {target}}}]
global: {{size: 16m, bs: 4k, runtime: 1, time_based: 1}}
workloads:
{workloads}
"""


def _run(tmp_path: Path, workloads: str) -> tuple[Path, str]:
    plan = tmp_path / "plan.yaml"
    plan.write_text(PLAN.format(target=tmp_path / "data.bin", workloads=workloads))
    db = tmp_path / "r.db"
    out = ok(storbench("run", str(plan), db=db, cwd=tmp_path, plugins=None))
    return db, out


def _findings(db: Path, tmp_path: Path) -> dict[int, set[str]]:
    doc = json.loads(
        ok(storbench("export", "1", "--format", "json", db=db, cwd=tmp_path, plugins=None))
    )
    found: dict[int, set[str]] = {}
    for f in doc["findings"]:
        assert set(f) >= {"code", "point", "evidence", "advice"}, f
        found.setdefault(f["point"], set()).add(f["code"])
    return found


@pytest.fixture(scope="module")
def traps(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    """One run of every trap fio alone can show here, each beside its clean neighbour (2 and
    7 capped at 1,500 IOPS: uncapped, a fast disk lets a direct job spend a whole CPU, and
    client-cpu-bound then rightly flags it, as CI's machine did; 2 s of them: a busy
    machine's capped job can fall short of 1,000 I/Os in one)."""
    tmp = tmp_path_factory.mktemp("traps")
    db, out = _run(
        tmp,
        "  - {name: buffered, rw: randread, ioengine: psync}\n"  # page-cache (1)
        "  - {name: direct, rw: randread, ioengine: psync, direct: 1, rate_iops: 1500,"
        " runtime: 2}\n"  # clean (2)
        # pre_read: the file in the page cache before the job's I/O (points 1 and 2 dropped
        # it: fio's invalidate): else a busy machine's job waits for the disk, not the CPU
        "  - {name: cpufast, rw: randread, bs: 512, numjobs: 2, invalidate: 0, pre_read: 1,"
        " runtime: 3}\n"
        "  - {name: cpuslow, rw: randread, bs: 512, rate_iops: 2000, invalidate: 0}\n"  # (4)
        "  - {name: few, rw: randread, direct: 1, number_ios: 200, time_based: 0}\n"  # short (5)
        "  - {name: syncq, rw: randread, ioengine: psync, iodepth: 8, direct: 1}\n"  # (6)
        "  - {name: aioq, rw: randread, ioengine: libaio, iodepth: 8, direct: 1,"
        " rate_iops: 1500, runtime: 2}\n",  # clean (7)
    )
    return tmp, db, out


def test_findings_each_trap_and_its_clean_neighbour(traps: tuple[Path, Path, str]) -> None:
    tmp, db, _ = traps
    found = _findings(db, tmp)
    assert "page-cache" in found.get(1, set())
    # the CPU: by the job's own CPU time, or (its CPU taken by others) its busy host
    assert {"client-cpu-bound", "host-busy"} & found.get(3, set()), found
    assert "short-run" in found.get(5, set())
    assert "sync-iodepth" in found.get(6, set())
    # the neighbours: direct I/O, enough I/Os, a real queue (a busy machine may warn of any
    # point host-busy; 4 reads RAM too, slowly, and its own CPU time says it is not bound)
    for clean in (2, 7):
        assert not found.get(clean, set()) - {"host-busy"}, (clean, found)
    assert "client-cpu-bound" not in found.get(4, set()), found
    assert "page-cache" not in found.get(6, set())  # direct=1


def test_findings_cpu_bound_by_the_job_itself(traps: tuple[Path, Path, str]) -> None:
    """fio reading a cached file (invalidate=0) 512 bytes at a time on both CPUs is held back
    by the CPU (copies and system calls); capped at 2,000 IOPS it is not: its own CPU time
    says so (on a machine busy with other work, its host's CPUs: host-busy)."""
    tmp, db, _ = traps
    doc = json.loads(ok(storbench("export", "1", "--format", "json", db=db, cwd=tmp, plugins=None)))
    cpu = {f["point"]: f for f in doc["findings"] if f["code"] == "client-cpu-bound"}
    busy = {f["point"]: f for f in doc["findings"] if f["code"] == "host-busy"}
    assert 4 not in cpu, cpu[4]
    if 3 in cpu:
        fast = cpu[3]["data"]
        assert fast["usr_cpu_pct"] + fast["sys_cpu_pct"] >= 90, fast
    else:
        assert busy[3]["data"]["host_cpu_busy_pct"] >= 90, doc["findings"]


def test_findings_carry_their_evidence_and_fix(traps: tuple[Path, Path, str]) -> None:
    tmp, db, _ = traps
    doc = json.loads(ok(storbench("export", "1", "--format", "json", db=db, cwd=tmp, plugins=None)))
    cache = next(f for f in doc["findings"] if f["code"] == "page-cache")
    assert cache["point"] == 1 and cache["points"] == [1]
    assert cache["data"]["data_bytes"] == 16 << 20
    assert cache["data"]["memory_available_bytes"] > 16 << 20
    assert "direct=0" in cache["evidence"] and "direct: 1" in cache["advice"]
    # each measurement carries its own
    per = {m["point"]: [f["code"] for f in m.get("findings", [])] for m in doc["measurements"]}
    assert "page-cache" in per[1] and "page-cache" not in per[2]  # as the findings number them


def test_findings_in_every_presenter(traps: tuple[Path, Path, str]) -> None:
    tmp, db, out = traps
    # run's own output, point by point
    assert "finding page-cache: buffered I/O (direct=0)" in out
    shown = ok(storbench("show", "1", db=db, cwd=tmp, plugins=None))
    assert "findings: what to check before trusting these numbers" in shown
    assert "point 1 (buffered): page-cache" in shown
    assert "point 6 (syncq): sync-iodepth" in shown
    # the advice is among the findings now, not said twice
    assert "warning: workload 'syncq'" not in shown
    point = ok(storbench("show", "1", "--point", "3", db=db, cwd=tmp, plugins=None))
    assert "# finding client-cpu-bound:" in point or "# finding host-busy:" in point
    md = ok(storbench("report", "1", "--format", "markdown", db=db, cwd=tmp, plugins=None))
    assert "### Findings" in md and "| 1 buffered | page-cache" in md
    ok(storbench("report", "1", "-o", str(tmp / "r.html"), db=db, cwd=tmp, plugins=None))
    html = (tmp / "r.html").read_text()
    assert 'data-code="page-cache"' in html and 'data-code="short-run"' in html
    clean = ok(storbench("show", "1", "--point", "2", db=db, cwd=tmp, plugins=None))
    assert "# finding page-cache" not in clean
    table = ok(storbench("export", "1", "--format", "csv", db=db, cwd=tmp, plugins=None))
    rows = {r["workload"]: r for r in csv.DictReader(io.StringIO(table))}
    assert "page-cache" in rows["buffered"]["findings"].split()
    assert "sync-iodepth" in rows["syncq"]["findings"].split()
    assert not set(rows["direct"]["findings"].split()) - {"host-busy"}, rows["direct"]


def test_findings_unsteady_bursts_and_an_even_rate(tmp_path: Path) -> None:
    """fio doing I/O for a second, then thinking for one (thinktime_iotime): its IOPS per
    interval swing, so the mean is a poor summary; the same rate held evenly is steady."""
    db, out = _run(
        tmp_path,
        "  - {name: bursts, rw: randread, direct: 1, runtime: 6, rate_iops: 2000,"
        " thinktime: 1s, thinktime_iotime: 1s}\n"
        "  - {name: even, rw: randread, direct: 1, runtime: 6, rate_iops: 2000}\n",
    )
    found = _findings(db, tmp_path)
    assert "unsteady" in found.get(1, set()), found
    assert "unsteady" not in found.get(2, set()), found
    assert "finding unsteady: IOPS per interval vary by" in out


def _loop(backing: Path, *flags: str) -> str:
    """A loop device over ``backing`` (skips where loop devices cannot be made)."""
    import subprocess

    if os.geteuid() != 0 or not shutil.which("losetup"):
        pytest.skip("needs root and losetup: loop devices")
    r = subprocess.run(
        ["losetup", "--find", "--show", *flags, str(backing)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    if r.returncode != 0:
        pytest.skip(f"cannot create a loop device here: {r.stderr.strip()}")
    return r.stdout.strip()


def test_findings_loop_devices_holes_and_their_cache(tmp_path: Path) -> None:
    """A loop device over a sparse file reads holes (unwritten-read) through the page cache
    whatever direct says (page-cache); one with direct I/O over a written file: neither."""
    import subprocess

    sparse, full = tmp_path / "sparse.img", tmp_path / "full.img"
    with sparse.open("wb") as f:
        f.truncate(32 << 20)
    full.write_bytes(os.urandom(32 << 20))
    devices = [_loop(sparse)]
    try:
        devices.append(_loop(full, "--direct-io=on"))
        plan = tmp_path / "plan.yaml"
        plan.write_text(
            "name: holes\n"
            f"targets: [{{device: {devices[0]}}}, {{device: {devices[1]}}}]\n"
            "global: {bs: 4k, runtime: 1, time_based: 1, direct: 1, rw: randread,"
            " ioengine: libaio, iodepth: 4}\n"
            "workloads: [{name: rr}]\n"
        )
        db = tmp_path / "r.db"
        ok(storbench("run", str(plan), db=db, cwd=tmp_path, plugins=None))
        found = _findings(db, tmp_path)
    finally:
        for dev in devices:
            subprocess.run(["losetup", "-d", dev], capture_output=True, timeout=60)
    assert {"unwritten-read", "page-cache"} <= found.get(1, set()), found
    assert not {"unwritten-read", "page-cache"} & found.get(2, set()), found


def test_findings_compressible_on_a_compressing_btrfs(tmp_path: Path) -> None:
    """btrfs mounted with compress=zstd under a scratch file: fio's default (reused) buffers
    are flagged, fresh random buffers (refill_buffers) are not, nor reads; the same writes
    on btrfs without compression are not."""
    if not shutil.which("mkfs.btrfs") or "btrfs" not in Path("/proc/filesystems").read_text():
        pytest.skip("needs btrfs (btrfs-progs: make setup installs it)")
    mounts: list[Path] = []
    devices: list[str] = []
    try:
        for name, options in (("zstd", "compress=zstd"), ("plain", "")):
            image = tmp_path / f"{name}.img"
            with image.open("wb") as f:
                f.truncate(256 << 20)
            devices.append(_loop(image))
            subprocess.run(["mkfs.btrfs", "-q", devices[-1]], check=True, timeout=60)
            mnt = tmp_path / name
            mnt.mkdir()
            subprocess.run(
                ["mount", *(["-o", options] if options else []), devices[-1], str(mnt)],
                check=True,
                timeout=60,
            )
            mounts.append(mnt)
        plan = tmp_path / "plan.yaml"
        plan.write_text(
            "name: squeeze\n"
            f"targets: [{{file: {mounts[0] / 'data.bin'}}}, {{file: {mounts[1] / 'data.bin'}}}]\n"
            "global: {size: 16m, bs: 64k, runtime: 1, time_based: 1, direct: 1}\n"
            "workloads:\n"
            "  - {name: reused, rw: write}\n"
            "  - {name: fresh, rw: write, refill_buffers: 1}\n"
            "  - {name: reads, rw: read}\n"
        )
        db = tmp_path / "r.db"
        ok(storbench("run", str(plan), db=db, cwd=tmp_path, plugins=None))
        doc = json.loads(
            ok(storbench("export", "1", "--format", "json", db=db, cwd=tmp_path, plugins=None))
        )
    finally:
        for mnt in mounts:
            subprocess.run(["umount", str(mnt)], capture_output=True, timeout=60)
        for dev in devices:
            subprocess.run(["losetup", "-d", dev], capture_output=True, timeout=60)
    found = {f["point"]: f for f in doc["findings"] if f["code"] == "compressible"}
    by_point = {m["point"]: (m["target"]["path"], m["workload"]) for m in doc["measurements"]}
    flagged = {by_point[p] for p in found}
    assert flagged == {(str(mounts[0] / "data.bin"), "reused")}, (flagged, by_point)
    (f,) = found.values()
    assert "compress=zstd" in f["evidence"] and f["data"]["compression"].startswith("compress=")


def test_findings_make_a_pair_not_comparable_in_compare(traps: tuple[Path, Path, str]) -> None:
    """The traps run compared with a second run of it: the pairs with a finding that says
    the number is not the storage's are not judged, the compare JSON carries each side's
    findings, the terminal says why."""
    tmp, db, _ = traps
    ok(storbench("run", str(tmp / "plan.yaml"), db=db, cwd=tmp, plugins=None))
    doc = json.loads(
        ok(storbench("compare", "1", "2", "--format", "json", db=db, cwd=tmp, plugins=None))
    )
    points = {p["label"].split()[0]: p for p in doc["comparisons"][0]["points"]}
    cached = points["buffered"]
    assert cached["verdict"] == "not comparable", cached
    assert "page-cache in" in cached["reason"], cached["reason"]
    assert "page-cache" in [f["code"] for f in cached["baseline"]["findings"]]
    assert "page-cache" in [f["code"] for f in cached["other"]["findings"]]
    text = ok(storbench("compare", "1", "2", db=db, cwd=tmp, plugins=None))
    assert "page-cache in run 1" in text, text


def test_findings_prefill_writes_the_holes_before_the_reads(tmp_path: Path) -> None:
    """`prefill: true` on a blank loop device over a sparse file: storbench writes it whole
    before its first point, so its reads read data (no unwritten-read)."""
    import subprocess

    sparse = tmp_path / "sparse.img"
    with sparse.open("wb") as f:
        f.truncate(16 << 20)
    dev = _loop(sparse, "--direct-io=on")
    try:
        plan = tmp_path / "plan.yaml"
        plan.write_text(
            "name: prefilled\n"
            f"targets: [{{device: {dev}, prefill: true}}]\n"
            "global: {bs: 4k, runtime: 1, time_based: 1, direct: 1, rw: randread}\n"
            "workloads: [{name: rr}]\n"
        )
        db = tmp_path / "r.db"
        out = ok(storbench("run", str(plan), db=db, cwd=tmp_path, plugins=None))
        found = _findings(db, tmp_path)
    finally:
        subprocess.run(["losetup", "-d", dev], capture_output=True, timeout=60)
    assert "preconditioned" in out, out
    assert "unwritten-read" not in found.get(1, set()), found
    assert sparse.stat().st_blocks * 512 >= 16 << 20  # written whole


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def fio_server(tmp_path: Path) -> Iterator[int]:
    """A fio server on loopback that storbench reaches as a remote host: it knows nothing of
    that host's memory, so only the run's own direct=1 figures can show its cache."""
    port = _free_port()
    proc = subprocess.Popen(
        ["fio", f"--server=127.0.0.1,{port}"],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
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


CEILING = """\
name: ceiling
hosts: [{{address: 127.0.0.1, port: {port}}}]
targets: [{{directory: {data}}}]
global: {{size: 64m, ioengine: psync, runtime: 2, time_based: 1}}
workloads:
  - {{name: direct-rand, rw: randread, bs: 4k, direct: 1}}
  - {{name: cached-rand, rw: randread, bs: 4k, direct: 0, invalidate: 0}}
  - {{name: device-rand, rw: randread, bs: 4k, direct: 0, time_based: 0}}
  - {{name: direct-seq, rw: read, bs: 128k, direct: 1}}
  - {{name: cached-seq, rw: read, bs: 128k, direct: 0, invalidate: 0}}
"""


def test_findings_page_cache_beyond_the_devices_own_direct_figure(
    tmp_path: Path, fio_server: int
) -> None:
    """A remote host's buffered reads: its memory is unknown here, so the first check is
    silent; reads at many times what the same files gave with direct=1 in the run are
    flagged once the run ends. Buffered reads that fio's invalidate=1 sends to the device,
    each block once, are not, nor sequential ones."""
    data = tmp_path / "data"
    data.mkdir()
    plan = tmp_path / "plan.yaml"
    plan.write_text(CEILING.format(port=fio_server, data=data))
    db = tmp_path / "r.db"
    out = ok(storbench("run", str(plan), db=db, cwd=tmp_path, plugins=None))
    assert "finding page-cache of point 2 (cached-rand)" in out, out
    doc = json.loads(
        ok(storbench("export", "1", "--format", "json", db=db, cwd=tmp_path, plugins=None))
    )
    cache = {f["point"]: f for f in doc["findings"] if f["code"] == "page-cache"}
    assert 3 not in cache and 1 not in cache and 4 not in cache, cache
    found = cache[2]
    assert "direct=1" in found["evidence"] and "point 1" in found["evidence"], found
    iops = {m["point"]: m["read"]["iops"] for m in doc["measurements"]}
    assert iops[2] > 2 * iops[1]
    # the sequential pair is not compared, however far the buffered reads go: the kernel's
    # readahead beats direct=1 reads without a cache hit (engines/fio/ceiling.py)
    assert 5 not in cache, cache
    # stored with the measurement: show --point says it, and a resumed or re-read run
    # keeps it once
    shown = ok(storbench("show", "1", "--point", "2", db=db, cwd=tmp_path, plugins=None))
    assert shown.count("page-cache") == 1, shown
