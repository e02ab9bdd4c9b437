"""Many hosts on real fio servers: network namespaces joined to this (root) namespace by veth
pairs, each with its own 10.x address and its own ``fio --server``; and 16 servers on
loopback for scale. Needs root and iproute2 (``ip netns``); skipped otherwise.

Everything made here is named with a per-session token: namespaces
``storbench-test-TOKEN-N``, veth pairs ``sbtTOKENNh``/``sbtTOKENNn`` (interface names are
capped at 15 characters; the host end also gets the altname ``storbench-test-TOKEN-N``),
addresses 10.A.B.N with A, B random (routes to them point at the veth pairs only: no 10.x
address is added to this namespace). The fixture's finalizer kills every server it started
and deletes the namespaces (which removes the veth pairs and routes), even when a test fails,
then checks that ``ip netns list`` shows none of them.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import secrets
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from storbench.engines import fio
from storbench.hosts import counters as hostcounters
from storbench.model import histpack
from storbench.model.metrics import OVERLAP_MIN, merge_bins, percentiles_from_bins
from storbench.store import Store

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the harness modules
from stored_runs import stored_text
from waiting import files_now, size_of, wait_until

pytestmark = [pytest.mark.integration, pytest.mark.root]

PREFIX = "storbench-test"
N_NS = 3


def sb(
    *args: str, db: Path, timeout: float = 120, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "storbench", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "STORBENCH_DB": str(db), **(env or {})},
    )


def q(db: Path, sql: str, *params: object) -> list[tuple[object, ...]]:
    con = sqlite3.connect(db)
    try:
        return con.execute(sql, params).fetchall()
    finally:
        con.close()


def ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", *args], capture_output=True, text=True, check=check, timeout=10)


def wait_listening(address: str, port: int, proc: subprocess.Popen[bytes]) -> None:
    end = time.monotonic() + 10
    while time.monotonic() < end:
        if fio.server_listening(address, port, timeout=0.2):
            return
        assert proc.poll() is None, f"fio server {address}:{port} exited ({proc.returncode})"
        time.sleep(0.05)
    raise AssertionError(f"fio server {address}:{port} did not listen")


@dataclass
class Server:
    address: str
    port: int
    workdir: Path
    netns: str | None = None
    proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        # the fio storbench runs (its own build, with the http engine, when it is there)
        cmd = [fio.fio_path() or "fio", f"--server={self.address},{self.port}"]
        if self.netns:
            cmd = ["ip", "netns", "exec", self.netns, *cmd]
        # its own process group: the server, its per-connection process and the job
        self.proc = subprocess.Popen(
            cmd,
            cwd=self.workdir,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        wait_listening(self.address, self.port, self.proc)

    def kill(self) -> None:
        """fio dies on that host: SIGKILL to the whole process group."""
        if self.proc is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)
            self.proc = None


@dataclass
class Lab:
    servers: list[Server]
    namespaces: list[str] = field(default_factory=list)
    token: str = ""
    net: tuple[int, int] = (0, 0)  # the A, B of its 10.A.B.N addresses

    def hosts_yaml(self, target: str = "directory") -> str:
        lines = ["hosts:"]
        for s in self.servers:
            path = s.workdir / "data" if target == "directory" else s.workdir / "sb.dat"
            lines += [
                f"  - address: {s.address}",
                f"    port: {s.port}",
                "    targets:",
                f"      - {target}: {path}",
            ]
        return "\n".join(lines) + "\n"


def _free_loopback_ports(n: int) -> list[int]:
    ports: list[int] = []
    socks = []
    try:
        while len(ports) < n:
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            socks.append(s)
            ports.append(s.getsockname()[1])
    finally:
        for s in socks:
            s.close()
    return ports


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    if os.geteuid() != 0:
        pytest.skip("network namespaces need root")
    if shutil.which("ip") is None or shutil.which("fio") is None:
        pytest.skip("needs iproute2 and fio")
    token = secrets.token_hex(2)
    a, b = random.randint(200, 250), random.randint(1, 250)
    lab = Lab(servers=[], token=token, net=(a, b))
    try:
        for i in range(N_NS):
            ns = f"{PREFIX}-{token}-{i}"
            host_if, ns_if = f"sbt{token}{i}h", f"sbt{token}{i}n"
            addr = f"10.{a}.{b}.{i + 2}"
            ip("netns", "add", ns)
            lab.namespaces.append(ns)
            ip("link", "add", host_if, "type", "veth", "peer", "name", ns_if)
            ip("link", "property", "add", "dev", host_if, "altname", ns, check=False)
            ip("link", "set", ns_if, "netns", ns)
            ip("-n", ns, "link", "set", "lo", "up")
            ip("-n", ns, "link", "set", ns_if, "up")
            ip("-n", ns, "addr", "add", f"{addr}/32", "dev", ns_if)
            ip("-n", ns, "route", "add", "default", "dev", ns_if)
            ip("link", "set", host_if, "up")
            ip("route", "add", f"{addr}/32", "dev", host_if)
            work = tmp_path_factory.mktemp(f"host{i}")
            (work / "data").mkdir()
            server = Server(addr, 8765, work, netns=ns)
            lab.servers.append(server)
        for s in lab.servers:
            s.start()
        yield lab
    finally:
        for s in lab.servers:
            s.kill()
        for i, ns in enumerate(lab.namespaces):
            ip("link", "del", f"sbt{token}{i}h", check=False)  # both ends, and the route
            ip("netns", "del", ns, check=False)
        left = ip("netns", "list", check=False).stdout
        links = ip("link", "show", check=False).stdout
        assert f"{PREFIX}-{token}" not in left, f"namespaces left behind: {left}"
        assert f"sbt{token}" not in links, "veth pairs left behind"


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "results.db"


def plan_file(
    tmp_path: Path, lab: Lab, workload: str, target: str = "directory", local: str = ""
) -> Path:
    """A plan on the lab's hosts (each on its own target), then ``local`` (more hosts)."""
    path = tmp_path / "plan.yaml"
    path.write_text(f"name: hosts\n{lab.hosts_yaml(target)}{local}workloads:\n{workload}")
    return path


def export(db: Path) -> list[dict]:
    r = sb("export", "latest", "--format", "json", db=db)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)["measurements"]


def test_three_hosts_aggregate_is_the_hosts_combined_and_clients_scale(
    tmp_path: Path, db: Path, lab: Lab
) -> None:
    plan = plan_file(
        tmp_path,
        lab,
        """\
  - name: rr
    rw: randread
    bs: 4k
    size: 8m
    ioengine: psync
    time_based: 1
    runtime: 2
    clients: [1, 3]
""",
    )
    shown = sb("plan", "show", str(plan), db=db)
    assert shown.returncode == 0, shown.stderr
    for s in lab.servers:  # every host's own job file, on its own directory
        assert f"host {s.address}:{s.port}" in shown.stdout
        assert f"directory={s.workdir / 'data'}" in shown.stdout

    r = sb("run", str(plan), db=db)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "per host" in r.stdout and "adding clients" in r.stdout
    one, three = export(db)
    assert one["clients"] == 1 and list(one["hosts"]) == [f"{lab.servers[0].address}:8765"]
    assert three["clients"] == 3 and len(three["hosts"]) == 3
    hosts = three["hosts"].values()
    assert all(h["status"] == "ok" for h in hosts)
    agg = three["aggregate"]
    # totals are the hosts' sums; rates over the window in which all ran
    assert three["read"]["total_ios"] == sum(h["read"]["total_ios"] for h in hosts)
    assert three["read"]["io_bytes"] == sum(h["read"]["io_bytes"] for h in hosts)
    # how well the three started together depends on the machine's load (no timing
    # assertion): the hosts ran at the same time, and the flag says what the overlap is
    assert agg["aggregate"] == "window" and agg["overlap"] > 0
    assert agg["low_overlap"] == (agg["overlap"] < OVERLAP_MIN)
    assert three["read"]["runtime_s"] == pytest.approx(agg["window_s"])
    summed = sum(h["read"]["iops"] for h in hosts)
    if not agg["low_overlap"]:  # rates over the common window: close to the sum of rates
        assert three["read"]["iops"] == pytest.approx(summed, rel=0.15)
    assert agg["sum_of_host_rates"]["read"]["iops"] == pytest.approx(summed)
    for h in hosts:
        assert 0 <= h["start_s"] < h["end_s"]
        assert h["end_s"] - h["start_s"] == pytest.approx(h["read"]["runtime_s"], abs=0.002)

    # p99 of the aggregate from the hosts' merged histograms (stored per host)
    (mid,) = q(db, "SELECT id FROM measurements WHERE point_idx = 1")[0]
    rows = q(
        db,
        "SELECT host, bins FROM histograms WHERE measurement_id=? AND direction='read'"
        " AND metric='clat'",
        mid,
    )
    per_host = {h: histpack.decode(b) for h, b in rows if h}  # packed (schema 7)
    assert len(per_host) == 3
    merged = merge_bins(per_host.values())
    assert merged is not None
    assert three["read"]["clat_ns"]["p99"] == percentiles_from_bins(merged)["99"]

    # each host's time series: its intervals add up to its own measurement
    for host, h in three["hosts"].items():
        ios = q(
            db,
            "SELECT SUM(ios), COUNT(*) FROM intervals WHERE point_idx = 1 AND host = ?"
            " AND direction = 'read' AND ramp = 0",
            host,
        )[0]
        assert ios[0] == h["read"]["total_ios"] and ios[1] >= 2, (host, ios)

    csv_text = sb("export", "latest", "--format", "csv", db=db).stdout
    assert len(csv_text.splitlines()) == 1 + 2 + 4  # header, 2 aggregates, 1 + 3 hosts
    shown = sb("show", "latest", db=db)
    assert shown.returncode == 0
    for s in lab.servers:
        assert f"fio server {s.address}:8765" in shown.stdout
    # storbench cannot remove files fio made on remote hosts: they stay, with fio's prefix
    for s in lab.servers:
        assert {p.name for p in (s.workdir / "data").iterdir()} == {f"{s.address}.storbench.rr.0.0"}


def test_unreachable_or_silent_host_stops_everything_before_any_io(
    tmp_path: Path, db: Path, lab: Lab
) -> None:
    refused = lab.servers[0].address  # nothing listens on port 8799 there
    silent = socket.socket()  # accepts connections, never answers fio's probe
    silent.bind(("127.0.0.1", 0))
    silent.listen(4)
    port = silent.getsockname()[1]
    plan = tmp_path / "plan.yaml"
    plan.write_text(
        f"""\
hosts:
  - address: {lab.servers[1].address}
  - address: {refused}
    port: 8799
  - address: 127.0.0.1
    port: {port}
targets:
  - directory: {tmp_path}
workloads:
  - name: w
    rw: randwrite
    size: 1m
    runtime: 1
"""
    )
    t0 = time.monotonic()
    r = sb("run", str(plan), db=db, env={"STORBENCH_HOST_TIMEOUT": "2"})
    silent.close()
    assert r.returncode == 2, r.stdout + r.stderr
    assert "2 of 3 hosts failed preflight; nothing was run" in r.stderr
    assert f"host {refused}:8799: cannot connect to {refused}:8799 (Connection refused)" in r.stderr
    assert f"host 127.0.0.1:{port}: no answer from 127.0.0.1:{port} within 2 s" in r.stderr
    assert "storbench agent" in r.stderr and "Traceback" not in r.stderr
    assert time.monotonic() - t0 < 15
    assert not db.exists() or q(db, "SELECT COUNT(*) FROM runs") == [(0,)]
    assert list(tmp_path.glob("*storbench*")) == []


def test_remote_files_need_destroy_data_naming_host_and_path(
    tmp_path: Path, db: Path, lab: Lab
) -> None:
    plan = plan_file(
        tmp_path,
        lab,
        "  - name: w\n    rw: write\n    bs: 64k\n    size: 1m\n",
        target="file",
    )
    r = sb("run", str(plan), db=db)
    assert r.returncode == 2
    for s in lab.servers:
        assert f"--destroy-data {s.address}:8765:{s.workdir / 'sb.dat'}" in r.stderr
    assert "3 of 3 hosts failed preflight" in r.stderr
    flags = [f"--destroy-data={s.address}:8765:{s.workdir / 'sb.dat'}" for s in lab.servers]
    r = sb("run", str(plan), *flags, db=db)
    assert r.returncode == 0, r.stdout + r.stderr
    for s in lab.servers:
        assert (s.workdir / "sb.dat").stat().st_size == 1 << 20  # fio made it; it stays


def _jobs(data: Path) -> list[str]:
    """The processes that hold a file of ``data`` open (each lab host has its own): fio's
    job on that host, while it runs, whoever its parent is by then."""
    found = []
    for pid in os.listdir("/proc"):
        with contextlib.suppress(OSError, ValueError):
            if not pid.isdigit():
                continue
            fds = Path(f"/proc/{pid}/fd")
            if any(os.readlink(fd).startswith(f"{data}/") for fd in fds.iterdir()):
                found.append(pid)
    return found


def _reads_of(data: Path) -> int:
    """The read calls of the job on ``data`` (:func:`_jobs`) so far."""
    total = 0
    for pid in _jobs(data):
        with contextlib.suppress(OSError, ValueError, IndexError):
            io = Path(f"/proc/{pid}/io").read_text()
            total += int(io.split("syscr:")[1].split()[0])
    return total


def _kill_when_running(server: Server, data: Path) -> threading.Thread:
    """Kill ``server`` once its fio job has read for a status interval and a half (a
    status report carries reads: the client keeps them), whatever the machine's load."""

    def go() -> None:
        wait_until("the victim's fio job reading", lambda: _reads_of(data) >= 1000)
        time.sleep(1.5)  # the job's status reports come each second (the plan's interval)
        server.kill()

    t = threading.Thread(target=go, daemon=True)
    t.start()
    return t


KILL_PLAN = """\
  - name: k
    rw: randread
    size: 4m
    ioengine: psync
    time_based: 1
    runtime: 5
    bs: [4k, 8k]
"""


def test_server_killed_mid_point_leaves_it_partial_and_the_run_goes_on(
    tmp_path: Path, db: Path, lab: Lab
) -> None:
    victim = lab.servers[1]
    for p in (victim.workdir / "data").glob("*"):
        p.unlink()
    scratch = tmp_path / "local.dat"  # the controller is a host too: its own fio server
    local = f"  - address: local\n    targets:\n      - file: {scratch}\n"
    plan = plan_file(tmp_path, lab, KILL_PLAN, local=local)
    try:
        killer = _kill_when_running(victim, victim.workdir / "data")
        r = sb("run", str(plan), db=db)
        killer.join(timeout=30)
        assert r.returncode == 1, r.stdout + r.stderr
        label = f"{victim.address}:8765"
        first, second = export(db)
        assert first["status"] == "partial"
        assert f"host {label}: its fio server went away during the point" in first["error"]
        assert first["aggregate"]["failed_hosts"] == [label]
        dead = first["hosts"][label]
        assert dead["status"] == "failed" and dead["read"]["total_ios"] > 0  # kept
        alive = [h for lab_, h in first["hosts"].items() if lab_ != label]
        assert all(h["status"] == "ok" and h["read"]["total_ios"] > 0 for h in alive)
        assert first["read"]["total_ios"] == sum(h["read"]["total_ios"] for h in alive)
        # the run went on: the next point ran on the other hosts, this one refused
        assert second["status"] == "partial"
        assert f"host {label}: cannot connect" in second["error"]
        assert q(db, "SELECT status FROM runs") == [("completed",)]
        assert "partial" in r.stdout.lower() and label in r.stdout
        assert first["hosts"]["local"]["status"] == "ok"
        assert first["hosts"]["local"]["target"] == {"kind": "file", "path": str(scratch)}
        assert not scratch.exists()  # storbench made the local scratch file, and removed it

        # --fail-fast stops at the partial point
        victim.start()
        for p in (victim.workdir / "data").glob("*"):
            p.unlink()
        killer = _kill_when_running(victim, victim.workdir / "data")
        r = sb("run", str(plan), "--fail-fast", db=db)
        killer.join(timeout=30)
        assert r.returncode == 1
        assert q(db, "SELECT COUNT(*) FROM measurements WHERE run_id=2") == [(1,)]
        assert q(db, "SELECT status FROM runs WHERE id=2") == [("failed",)]
    finally:
        if victim.proc is None:
            victim.start()


def test_storbench_killed_mid_point_stops_the_hosts_jobs(
    tmp_path: Path, db: Path, lab: Lab
) -> None:
    """SIGKILL of storbench during a point on hosts: fio's client is interrupted as
    storbench dies (not killed with it), tells every host's server to quit the job, and the
    jobs end at once, not at the end of their 60 s; the servers go on listening."""
    for s in lab.servers:
        for p in (s.workdir / "data").glob("*"):
            p.unlink()
    workload = "  - {name: long, rw: randread, size: 4m, ioengine: psync, runtime: 60, "
    plan = plan_file(tmp_path, lab, workload + "time_based: 1, bs: 4k}\n")
    proc = subprocess.Popen(
        [sys.executable, "-m", "storbench", "run", str(plan)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "STORBENCH_DB": str(db)},
    )
    try:
        for s in lab.servers:
            wait_until(f"{s.address}'s job reading", lambda s=s: _reads_of(s.workdir / "data"))
        proc.kill()
        proc.wait(timeout=30)
        for s in lab.servers:  # 30 s: well before the job's own end
            wait_until(
                f"{s.address}'s job ending",
                lambda s=s: not _jobs(s.workdir / "data"),
                timeout=30,
            )
            assert s.proc is not None and s.proc.poll() is None  # the server lives on
    finally:
        if proc.poll() is None:
            proc.kill()


def test_agent_starts_and_stops_a_fio_server_and_refuses_all_addresses(
    tmp_path: Path, lab: Lab
) -> None:
    ns, addr = lab.namespaces[0], lab.servers[0].address
    pid_file = tmp_path / "agent.pid"
    base = ["ip", "netns", "exec", ns, sys.executable, "-m", "storbench", "agent"]

    def agent(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*base, *args], capture_output=True, text=True, timeout=30)

    r = agent("--bind", "0.0.0.0", "--port", "8770", "--pid-file", str(pid_file))
    assert r.returncode == 2 and "all addresses" in r.stderr and "--any-address" in r.stderr
    r = agent("--bind", addr, "--port", "8765", "--pid-file", str(pid_file))
    assert r.returncode == 2 and "already listens" in r.stderr  # the lab's own server

    r = agent("--bind", addr, "--port", "8770", "--pid-file", str(pid_file))
    try:
        assert r.returncode == 0, r.stderr
        assert f"listening on {addr}:8770" in r.stdout and "authentication" in r.stderr
        pid = int(pid_file.read_text())
        assert fio.server_listening(addr, 8770)
        (probe,) = fio.probe_servers([(addr, 8770)], ["psync"])
        assert probe.error is None and probe.fio_version == fio.fio_version()
        again = agent("--bind", addr, "--port", "8770", "--pid-file", str(pid_file))
        assert again.returncode == 2 and f"already runs (pid {pid}" in again.stderr
        if shutil.which("iperf3"):  # the network baseline's server, beside the fio server
            assert f"iperf3 server on {addr}:10770" in r.stdout
            end = time.monotonic() + 10
            while not fio.server_listening(addr, 10770, timeout=0.2):
                assert time.monotonic() < end, "the agent's iperf3 did not listen"
                time.sleep(0.05)
    finally:
        stop = agent("--stop", "--pid-file", str(pid_file))
    assert stop.returncode == 0 and "stopped the fio server" in stop.stdout
    assert not pid_file.exists() and not fio.server_listening(addr, 8770)
    end = time.monotonic() + 5
    while fio.server_listening(addr, 10770, timeout=0.2):  # --stop stops it too
        assert time.monotonic() < end, "iperf3 outlived the agent"
        time.sleep(0.05)


def test_sixteen_servers_in_one_point(tmp_path: Path, db: Path) -> None:
    if shutil.which("fio") is None:
        pytest.skip("needs fio")
    servers = [Server("127.0.0.1", p, tmp_path) for p in _free_loopback_ports(16)]
    try:
        for s in servers:
            s.start()
        hosts = "".join(f"  - address: 127.0.0.1\n    port: {s.port}\n" for s in servers)
        plan = tmp_path / "plan.yaml"
        plan.write_text(
            f"hosts:\n{hosts}targets:\n  - directory: {tmp_path}\nworkloads:\n"
            "  - name: n\n    ioengine: 'null'\n    rw: randread\n    bs: 4k\n    size: 1g\n"
            "    time_based: 1\n    runtime: 2\n"
        )
        r = sb("run", str(plan), db=db)
        assert r.returncode == 0, r.stdout + r.stderr
        (m,) = export(db)
        assert len(m["hosts"]) == 16 and all(h["status"] == "ok" for h in m["hosts"].values())
        assert m["read"]["total_ios"] == sum(h["read"]["total_ios"] for h in m["hosts"].values())
        assert m["aggregate"]["aggregate"] == "window"
        assert 0 < m["aggregate"]["overlap"] <= 1
    finally:
        for s in servers:
            s.kill()


def test_hostload_agent_serves_its_hosts_counters_and_the_run_samples_them(
    tmp_path: Path, db: Path, lab: Lab
) -> None:
    """A host with `storbench agent` is sampled from the controller while its load runs
    (its own /proc, seen from its namespace: its veth, not this machine's interfaces); a
    host with a bare fio server is not, and the run says why."""
    ns, far, bare = lab.namespaces[1], lab.servers[1], lab.servers[2]
    pid_file = tmp_path / "agent.pid"
    base = ["ip", "netns", "exec", ns, sys.executable, "-m", "storbench", "agent"]
    r = subprocess.run(
        [*base, "--bind", far.address, "--port", "8771", "--pid-file", str(pid_file)],
        capture_output=True,
        text=True,
        timeout=30,
    )
    try:
        assert r.returncode == 0, r.stderr
        assert f"counters on {far.address}:9771" in r.stdout
        reading = hostcounters.fetch(far.address, 9771)
        assert len(reading.cpu) == 8 and reading.mem_total > 0
        (veth,) = [i for i in reading.net if i != "lo"]  # the namespace's own interfaces
        assert veth.startswith("sbt") and veth.endswith("n")
        plan = tmp_path / "plan.yaml"
        plan.write_text(
            f"""\
name: sampled
interval: 500ms
hosts:
  - address: {far.address}
    port: 8771
    name: far
    targets:
      - directory: {far.workdir / "data"}
  - address: {bare.address}
    port: {bare.port}
    name: bare
    targets:
      - directory: {bare.workdir / "data"}
workloads:
  - name: rr
    rw: randread
    bs: 4k
    size: 8m
    ioengine: psync
    time_based: 1
    runtime: 3
"""
        )
        run = sb("run", str(plan), db=db)
        assert run.returncode == 0, run.stdout + run.stderr
    finally:
        stop = subprocess.run(
            [*base, "--stop", "--pid-file", str(pid_file)], capture_output=True, text=True
        )
    assert stop.returncode == 0 and not (tmp_path / "agent.counters.pid").exists()
    with pytest.raises(OSError):
        hostcounters.fetch(far.address, 9771, timeout=1)

    store = Store(str(db), write=False)
    assert store.host_samples.hosts(1, 0) == ["", "far"]
    samples = store.host_samples.of_point(1, 0, "far")
    assert len(samples) >= 4, samples  # 3 s at 0.5 s, on this machine's clock
    assert [s.host for s in samples] == ["far"] * len(samples)
    assert all(s.t_ms > 0 and 0 < s.dur_ms < 2000 for s in samples)
    for s in samples:
        shares = (s.cpu_user_pct, s.cpu_system_pct, s.cpu_iowait_pct, s.cpu_idle_pct)
        assert sum(shares) + s.cpu_steal_pct == pytest.approx(100, abs=0.1)
    # the host's own network: its veth moved the fio client's traffic, and nothing of ours
    assert any(veth in s.net for s in samples)
    assert all(set(s.net) <= {veth, "lo"} for s in samples)
    events = [e for e in store.events.of_run(1) if e.kind == "host-samples"]
    assert [e.data["host"] for e in events] == ["bare"]
    assert f"{bare.address}:{bare.port + 1000}" in events[0].message
    assert "storbench agent" in events[0].message
    shown = sb("show", "latest", "--point", "1", db=db)
    assert shown.returncode == 0 and "far CPU busy" in shown.stdout, shown.stdout


VERSITYGW = "/usr/local/lib/storbench/bin/versitygw"


@dataclass
class S3Net:
    endpoint: str
    root: Path  # versitygw's POSIX backend: bucket = directory, object = file
    key_id: str
    secret: str

    def objects(self, bucket: str) -> dict[str, int]:
        base = self.root / bucket
        return {str(f.relative_to(base)): size for f, size in files_now(base, size_of)}


@pytest.fixture
def s3net(lab: Lab, tmp_path: Path) -> Iterator[S3Net]:
    """versitygw in a namespace of its own (10.A.B.100), joined by a veth pair to each lab
    host's namespace and to this one (for the controller's preflight), nothing else."""
    if not os.access(VERSITYGW, os.X_OK) or "http" not in fio.available_engines():
        pytest.skip("needs versitygw and fio's http engine (scripts/build-*.sh)")
    token, (a, b) = lab.token, lab.net
    ns, addr = f"{PREFIX}-{token}-s3", f"10.{a}.{b}.100"
    root = tmp_path / "s3"
    (root / "bench").mkdir(parents=True)
    net = S3Net(f"http://{addr}:7070", root, "AKID" + secrets.token_hex(6), secrets.token_hex(16))
    proc = None
    try:
        ip("netns", "add", ns)
        ip("-n", ns, "link", "set", "lo", "up")
        here, there = f"sbt{token}sh", f"sbt{token}sn"
        ip("link", "add", here, "type", "veth", "peer", "name", there)
        ip("link", "set", there, "netns", ns)
        ip("-n", ns, "addr", "add", f"{addr}/32", "dev", there)
        ip("-n", ns, "link", "set", there, "up")
        ip("link", "set", here, "up")
        ip("route", "add", f"{addr}/32", "dev", here)
        ip("-n", ns, "route", "add", "default", "dev", there)  # back to this namespace
        for i, host_ns in enumerate(lab.namespaces):
            c, s = f"sbt{token}{i}c", f"sbt{token}{i}s"
            ip("link", "add", c, "type", "veth", "peer", "name", s)
            ip("link", "set", c, "netns", host_ns)
            ip("link", "set", s, "netns", ns)
            ip("-n", host_ns, "link", "set", c, "up")
            ip("-n", ns, "link", "set", s, "up")
            ip("-n", ns, "addr", "add", f"{addr}/32", "dev", s)
            ip("-n", host_ns, "route", "add", f"{addr}/32", "dev", c)
            ip("-n", ns, "route", "add", f"{lab.servers[i].address}/32", "dev", s)
        proc = subprocess.Popen(
            ["ip", "netns", "exec", ns, VERSITYGW, "--port", f"{addr}:7070", "posix", str(root)],
            env={**os.environ, "ROOT_ACCESS_KEY": net.key_id, "ROOT_SECRET_KEY": net.secret},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        end = time.monotonic() + 10
        while True:
            try:
                socket.create_connection((addr, 7070), 0.2).close()
                break
            except OSError:
                assert proc.poll() is None and time.monotonic() < end, "versitygw did not start"
                time.sleep(0.05)
        yield net
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(timeout=10)
        ip("link", "del", f"sbt{token}sh", check=False)
        ip("netns", "del", ns, check=False)  # its veth ends, and so their peers
        assert ns not in ip("netns", "list", check=False).stdout


def test_s3_three_hosts_put_and_get_aggregate_exactly(
    tmp_path: Path, db: Path, lab: Lab, s3net: S3Net
) -> None:
    """S3 load from three hosts at once against one server: each host's objects are its
    own (h<i> in their names), the bucket holds what the hosts reported, the point's
    totals are the hosts' sums, and each host's row is kept."""
    hosts = "hosts:\n" + "".join(
        f"  - address: {s.address}\n    port: {s.port}\n    targets:\n"
        f"      - s3: bench\n        endpoint: {s3net.endpoint}\n        keep_objects: true\n"
        for s in lab.servers
    )
    plan = tmp_path / "s3hosts.yaml"
    plan.write_text(
        "name: s3-hosts\n" + hosts + "workloads:\n"
        "  - {name: put, rw: write, bs: 64k, objects: 4, numjobs: 2, clients: 3}\n"
        "  - {name: get, rw: read, bs: 64k, objects: 4, numjobs: 2, clients: 3}\n"
    )
    env = {"AWS_ACCESS_KEY_ID": s3net.key_id, "AWS_SECRET_ACCESS_KEY": s3net.secret}
    r = sb("run", str(plan), db=db, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    put, get = export(db)
    objects = s3net.objects("bench")
    assert len(objects) == 24 and set(objects.values()) == {65536}
    for i in range(3):
        assert sum(1 for k in objects if f".h{i}.b64k." in k) == 8
    assert put["write"]["total_ios"] == 24 and put["write"]["io_bytes"] == sum(objects.values())
    for m, d in ((put, "write"), (get, "read")):
        rows = m["hosts"].values()
        assert len(rows) == 3 and all(h["status"] == "ok" for h in rows)
        assert all(h[d]["total_ios"] == 8 for h in rows)
        assert m[d]["total_ios"] == sum(h[d]["total_ios"] for h in rows) == 24
    assert get["read"]["io_bytes"] == 24 * 65536
    for f in db.parent.glob(db.name + "*"):
        assert s3net.secret.encode() not in f.read_bytes()
    assert s3net.secret not in stored_text(db)  # nor in what the store keeps compressed


def test_network_baseline_before_a_multi_host_run(tmp_path: Path, db: Path, lab: Lab) -> None:
    """iperf3 from the controller to each host and back before any point (seed 003 §3.6.7):
    stored with the run, shown by `show` and the HTML report; a host without an iperf3
    server gets a note naming it, and the run goes on."""
    if shutil.which("iperf3") is None:
        pytest.skip("iperf3 is not installed (`make test` installs it)")
    servers = []
    try:
        for s, ns in list(zip(lab.servers, lab.namespaces, strict=True))[:2]:
            cmd = ["ip", "netns", "exec", ns, "iperf3", "-s", "-B", s.address, "-p", "10765"]
            servers.append(
                subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            )
        for s in lab.servers[:2]:
            end = time.monotonic() + 10
            while not fio.server_listening(s.address, 10765, timeout=0.2):
                assert time.monotonic() < end, "iperf3 did not listen"
                time.sleep(0.05)
        plan = plan_file(
            tmp_path,
            lab,
            "  - {name: rr, rw: randread, bs: 4k, size: 4m, ioengine: psync, runtime: 1,"
            " time_based: 1, clients: 3}\n",
        )
        r = sb("run", str(plan), db=db)
        assert r.returncode == 0, r.stdout + r.stderr
        silent = f"{lab.servers[2].address}:8765"
        assert f"host {silent}: no network baseline: iperf3 at" in r.stderr + r.stdout
        run = json.loads(sb("export", "latest", "--format", "json", db=db).stdout)["run"]
        network = run["inventory"]["network"]
        assert [n["host"] for n in network] == [f"{s.address}:8765" for s in lab.servers[:2]]
        for n in network:
            assert n["to_host_bits_per_s"] > 1e6 and n["from_host_bits_per_s"] > 1e6
        shown = sb("show", "latest", db=db).stdout
        assert f"network to {lab.servers[0].address}:8765:" in shown and "bit/s, back" in shown
        report = tmp_path / "r.html"
        assert sb("report", "latest", "-o", str(report), db=db).returncode == 0
        assert "bits/s)" in report.read_text()
    finally:
        for p in servers:
            p.terminate()
            p.wait(timeout=10)
