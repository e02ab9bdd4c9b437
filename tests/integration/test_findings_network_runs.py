"""``network-bound`` reproduced for real: an S3 server (versitygw) in a network namespace
joined to this one by a veth pair whose both ends are shaped to 100 Mbit/s (tc tbf), with
an iperf3 server beside it. 4 MiB PUTs and GETs at full speed move what the shaped link
carries and are flagged; a rate-capped GET far below it is not; with no iperf3 server
there, the veth's link speed (10 Gbit/s) is the figure and the shaped GETs are not flagged
(the link speed is all storbench knows then). Needs root, iproute2 (ip, tc), iperf3,
versitygw and fio's http engine (scripts/setup-system.sh installs them); skipped otherwise.

Everything made here is named with a per-module token: namespace
``storbench-test-net-TOKEN``, veth pair ``sbnTOKENh``/``sbnTOKENn``, address 10.A.B.2 (A, B
random; the route to it points at the veth only). The fixture's finalizer stops every
process it started and deletes the namespace and the veth pair, even when a test fails,
then checks that none is left.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import secrets
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from storbench.engines import fio

pytestmark = [pytest.mark.integration, pytest.mark.root]

VERSITYGW = "/usr/local/lib/storbench/bin/versitygw"
RATE = "100mbit"  # far below what this machine moves over a veth (several Gbit/s)


def ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", *args], capture_output=True, text=True, check=check, timeout=10)


def _wait_port(address: str, port: int, proc: subprocess.Popen[bytes], what: str) -> None:
    end = time.monotonic() + 10
    while True:
        try:
            socket.create_connection((address, port), 0.2).close()
            return
        except OSError:
            assert proc.poll() is None, f"{what} exited ({proc.returncode})"
            assert time.monotonic() < end, f"{what} did not listen on {address}:{port}"
            time.sleep(0.05)


def _stop(proc: subprocess.Popen[bytes] | None) -> None:
    if proc is not None and proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


@dataclass
class ShapedS3:
    ns: str
    address: str
    endpoint: str
    key_id: str
    secret: str
    root: Path
    veth: str  # this namespace's end of the pair

    def env(self, db: Path) -> dict[str, str]:
        return {
            **os.environ,
            "STORBENCH_DB": str(db),
            "AWS_ACCESS_KEY_ID": self.key_id,
            "AWS_SECRET_ACCESS_KEY": self.secret,
            "COLUMNS": "200",
        }

    @contextlib.contextmanager
    def iperf3(self) -> Iterator[None]:
        """An iperf3 server at the endpoint's port 5201 (what storbench looks for)."""
        cmd = ["ip", "netns", "exec", self.ns, "iperf3", "-s", "-B", self.address]
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            _wait_port(self.address, 5201, proc, "iperf3")
            yield
        finally:
            _stop(proc)


def _skip_without_the_tools() -> None:
    if os.geteuid() != 0:
        pytest.skip("network namespaces and tc need root")
    missing = [c for c in ("ip", "tc", "iperf3") if shutil.which(c) is None]
    if missing:
        pytest.skip(f"needs {', '.join(missing)} (iproute2, iperf3: make setup installs them)")
    if not os.access(VERSITYGW, os.X_OK) or "http" not in fio.available_engines():
        pytest.skip("needs versitygw and fio's http engine (scripts/build-*.sh)")


@contextlib.contextmanager
def _shaped_namespace(
    name: str, tag: str, near: str = "", rate: str | None = RATE
) -> Iterator[tuple[str, str, str]]:
    """A namespace ``storbench-test-NAME-TOKEN`` joined to this one by a veth pair
    ``sbTAGTOKENh``/``...n`` shaped to ``rate`` both ways (None: not shaped): (namespace,
    this end, its address 10.A.B.2); ``near``: give this end the address 10.A.B.1 too.
    Deleted on leaving, and checked gone."""
    token = secrets.token_hex(2)
    ns, here, there = f"storbench-test-{name}-{token}", f"sb{tag}{token}h", f"sb{tag}{token}n"
    net = f"10.{random.randint(200, 250)}.{random.randint(1, 250)}"
    made_ns = made_link = False
    try:
        ip("netns", "add", ns)
        made_ns = True
        ip("link", "add", here, "type", "veth", "peer", "name", there)
        made_link = True
        ip("link", "set", there, "netns", ns)
        ip("-n", ns, "link", "set", "lo", "up")
        ip("-n", ns, "link", "set", there, "up")
        ip("-n", ns, "addr", "add", f"{net}.2/32", "dev", there)
        ip("-n", ns, "route", "add", "default", "dev", there)
        if near:
            ip("addr", "add", f"{net}.1/32", "dev", here)
        ip("link", "set", here, "up")
        ip("route", "add", f"{net}.2/32", "dev", here)
        tbf = ["root", "tbf", "rate", str(rate), "burst", "64kb", "latency", "50ms"]
        for cmd in (
            ()
            if rate is None
            else (
                ["tc", "qdisc", "add", "dev", here, *tbf],  # into the namespace
                ["ip", "netns", "exec", ns, "tc", "qdisc", "add", "dev", there, *tbf],
            )
        ):
            shaped_ok = subprocess.run(cmd, capture_output=True, text=True, timeout=10)
            if shaped_ok.returncode != 0:
                pytest.skip(f"tc cannot shape a veth here: {shaped_ok.stderr.strip()}")
        yield ns, here, f"{net}.2"
    finally:
        if made_link:
            ip("link", "del", here, check=False)  # both ends, the route and the address
        if made_ns:
            ip("netns", "del", ns, check=False)
        assert ns not in ip("netns", "list", check=False).stdout, "namespace left behind"
        assert f"sb{tag}{token}" not in ip("link", "show", check=False).stdout, "veth left"


@pytest.fixture(scope="module")
def shaped(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ShapedS3]:
    _skip_without_the_tools()
    root = tmp_path_factory.mktemp("s3")
    (root / "bench").mkdir()
    with _shaped_namespace("net", "n") as (ns, here, address):
        s3 = ShapedS3(
            ns,
            address,
            f"http://{address}:7070",
            "AKID" + secrets.token_hex(6),
            secrets.token_hex(16),
            root,
            here,
        )
        proc = subprocess.Popen(
            ["ip", "netns", "exec", ns, VERSITYGW, "--port", f"{address}:7070", "posix", str(root)],
            env={**os.environ, "ROOT_ACCESS_KEY": s3.key_id, "ROOT_SECRET_KEY": s3.secret},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            _wait_port(address, 7070, proc, "versitygw")
            yield s3
        finally:
            _stop(proc)


def _run(s3: ShapedS3, tmp_path: Path, workloads: str) -> tuple[dict, str]:
    plan = tmp_path / "plan.yaml"
    plan.write_text(
        f"name: shaped\ntargets:\n  - s3: bench\n    endpoint: {s3.endpoint}\n"
        f"global: {{time_based: 1}}\nworkloads:\n{workloads}"
    )
    db = tmp_path / "r.db"
    run = [sys.executable, "-m", "storbench"]
    env = s3.env(db)
    r = subprocess.run(
        [*run, "run", str(plan)], capture_output=True, text=True, env=env, timeout=180
    )
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stdout + r.stderr
    out = subprocess.run(
        [*run, "export", "1", "--format", "json"], capture_output=True, text=True, env=env
    )
    shown = subprocess.run([*run, "show", "1"], capture_output=True, text=True, env=env)
    return json.loads(out.stdout), r.stdout + shown.stdout


def _flagged(doc: dict) -> dict[int, dict]:
    return {f["point"]: f for f in doc["findings"] if f["code"] == "network-bound"}


def test_findings_network_bound_s3_behind_a_shaped_link(tmp_path: Path, shaped: ShapedS3) -> None:
    """PUTs and GETs of 4 MiB objects at full speed move what the 100 Mbit/s link carries
    (iperf3 measured it before the first point): network-bound, each by its own direction;
    a GET capped at 1 MiB/s (8 % of it): not."""
    with shaped.iperf3():
        doc, text = _run(
            shaped,
            tmp_path,
            "  - {name: put, rw: write, bs: 4m, objects: 4, numjobs: 2, runtime: 3}\n"
            "  - {name: get, rw: read, bs: 4m, objects: 4, numjobs: 2, runtime: 3}\n"
            "  - {name: slow, rw: read, bs: 64k, objects: 4, rate: 1m, runtime: 2}\n",
        )
    (base,) = [n for n in doc["run"]["inventory"]["network"] if n.get("kind") == "endpoint"]
    assert base["address"] == shaped.address and base["port"] == 5201
    assert base["targets"] == ["s3://bench/storbench/"]
    for way in ("to_host_bits_per_s", "from_host_bits_per_s"):  # the shaped rate, or near it
        assert 60e6 < base[way] <= 101e6, base
    flagged = _flagged(doc)
    assert set(flagged) == {1, 2}, doc["findings"]
    put, get = flagged[1], flagged[2]
    assert put["data"]["write_share_pct"] >= 90 and "read_share_pct" not in put["data"]
    assert get["data"]["read_share_pct"] >= 90 and "write_share_pct" not in get["data"]
    assert put["data"]["write_capacity_bits_per_s"] == round(base["to_host_bits_per_s"])
    assert get["data"]["read_capacity_bits_per_s"] == round(base["from_host_bits_per_s"])
    assert get["data"]["source"] == "iperf3" and get["data"]["address"] == shaped.address
    assert f"iperf3 measured toward this client from {shaped.address}" in get["evidence"]
    assert "the S3 endpoint of s3://bench/storbench/" in get["evidence"]
    # what was flagged moved what the network carries: the PUT's and GET's own figures
    put_bits = doc["measurements"][0]["write"]["bw_bytes"] * 8
    assert put["data"]["write_bits_per_s"] == pytest.approx(put_bits, rel=1e-6)
    assert "finding network-bound: writes moved" in text and "faster path" in text
    assert f"network to storage endpoint {shaped.address} (s3://bench/storbench/):" in text


def test_findings_network_link_speed_when_no_iperf3_answers(
    tmp_path: Path, shaped: ShapedS3
) -> None:
    """No iperf3 server at the endpoint: no baseline (and no delay: nothing listens), the
    veth's link speed (10 Gbit/s) is the figure, and GETs at the shaped 100 Mbit/s are
    1 % of it: not flagged."""
    t0 = time.monotonic()
    doc, _ = _run(
        shaped,
        tmp_path,
        "  - {name: get, rw: read, bs: 4m, objects: 2, numjobs: 2, runtime: 2}\n",
    )
    assert time.monotonic() - t0 < 60
    network = doc["run"]["inventory"].get("network") or []
    assert [n for n in network if n.get("kind") == "endpoint"] == []
    assert _flagged(doc) == {}
    (said,) = [e["message"] for e in doc["events"] if e["kind"] == "network"]
    assert said.startswith(f"the network toward {shaped.address} (the S3 endpoint of s3://")
    assert f"10.00 Gbit/s each way, the link speed of {shaped.veth}" in said
    assert doc["measurements"][0]["read"]["bw_bytes"] * 8 < 1.1e8  # the shaping held


def _agent(ns: str, address: str, work: Path) -> subprocess.Popen[bytes]:
    """``storbench agent`` in namespace ``ns`` at ``address``, its fio server and its
    iperf3 server listening (the caller stops it: :func:`_stop`)."""
    agent = [sys.executable, "-m", "storbench", "agent", "--bind", address, "--foreground"]
    proc = subprocess.Popen(
        ["ip", "netns", "exec", ns, *agent, "--pid-file", str(work / "agent.pid")],
        cwd=work,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_port(address, 8765, proc, "the host's agent (fio server)")
        _wait_port(address, 10765, proc, "the host's agent (iperf3 server)")
    except BaseException:
        _stop(proc)
        raise
    return proc


@dataclass
class ShapedHost:
    """A remote host (``storbench agent`` in a namespace) whose only network is a 100
    Mbit/s veth pair, and an S3 endpoint on this side of that pair."""

    address: str  # the host's
    endpoint: str  # the S3 endpoint's URL, on this namespace's end of the pair
    key_id: str
    secret: str


@pytest.fixture(scope="module")
def shaped_host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ShapedHost]:
    _skip_without_the_tools()
    root = tmp_path_factory.mktemp("s3host")
    (root / "bench").mkdir()
    work = tmp_path_factory.mktemp("agent")
    procs: list[subprocess.Popen[bytes]] = []
    with _shaped_namespace("nethost", "m", near="yes") as (ns, _, address):
        near = address.rsplit(".", 1)[0] + ".1"  # the endpoint's, on this end of the pair
        host = ShapedHost(
            address, f"http://{near}:7070", "AKID" + secrets.token_hex(6), secrets.token_hex(16)
        )
        try:
            procs.append(
                subprocess.Popen(
                    [VERSITYGW, "--port", f"{near}:7070", "posix", str(root)],
                    env={
                        **os.environ,
                        "ROOT_ACCESS_KEY": host.key_id,
                        "ROOT_SECRET_KEY": host.secret,
                    },
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            )
            _wait_port(near, 7070, procs[-1], "versitygw")
            procs.append(_agent(ns, address, work))
            yield host
        finally:
            for proc in reversed(procs):
                _stop(proc)


def test_findings_network_bound_on_a_remote_host_by_its_baseline(
    tmp_path: Path, shaped_host: ShapedHost
) -> None:
    """A host of ``hosts:`` GETs and PUTs 4 MiB objects over its 100 Mbit/s link: the
    baseline this controller measured to it (iperf3 to its agent, over the same link) is
    the figure, and both are flagged on that host; a GET capped at 1 MiB/s is not."""
    plan = tmp_path / "plan.yaml"
    plan.write_text(
        f"name: hostnet\nhosts: [{{address: {shaped_host.address}, name: nshost}}]\n"
        f"targets:\n  - s3: bench\n    endpoint: {shaped_host.endpoint}\n"
        "global: {time_based: 1}\nworkloads:\n"
        "  - {name: put, rw: write, bs: 4m, objects: 4, numjobs: 2, runtime: 6}\n"
        "  - {name: get, rw: read, bs: 4m, objects: 4, numjobs: 2, runtime: 6}\n"
        "  - {name: slow, rw: read, bs: 64k, objects: 4, rate: 1m, runtime: 2}\n"
    )
    db = tmp_path / "r.db"
    env = {
        **os.environ,
        "STORBENCH_DB": str(db),
        "AWS_ACCESS_KEY_ID": shaped_host.key_id,
        "AWS_SECRET_ACCESS_KEY": shaped_host.secret,
        "COLUMNS": "200",
    }
    run = [sys.executable, "-m", "storbench"]
    r = subprocess.run(
        [*run, "run", str(plan)], capture_output=True, text=True, env=env, timeout=240
    )
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stdout + r.stderr
    out = subprocess.run(
        [*run, "export", "1", "--format", "json"], capture_output=True, text=True, env=env
    )
    doc = json.loads(out.stdout)
    (base,) = [n for n in doc["run"]["inventory"]["network"] if n.get("host") == "nshost"]
    for way in ("to_host_bits_per_s", "from_host_bits_per_s"):  # the shaped rate, or near it
        assert 60e6 < base[way] <= 101e6, base
    flagged = _flagged(doc)
    assert set(flagged) == {1, 2}, doc["findings"]
    put, get = flagged[1], flagged[2]
    assert put["host"] == get["host"] == "nshost"
    assert put["data"]["write_share_pct"] >= 90 and "read_share_pct" not in put["data"]
    assert get["data"]["read_share_pct"] >= 90 and "write_share_pct" not in get["data"]
    assert get["data"]["read_capacity_bits_per_s"] == round(base["to_host_bits_per_s"])
    assert put["data"]["write_capacity_bits_per_s"] == round(base["from_host_bits_per_s"])
    assert get["data"]["source"] == "controller"
    assert "iperf3 measured from the controller to nshost" in get["evidence"]
    assert "the host's own path to the storage was not measured" in get["evidence"]


@dataclass
class TwoHosts:
    """Two remote hosts (``storbench agent`` each in its own namespace): ``slow`` behind a
    veth pair shaped to 100 Mbit/s, ``fast`` behind one not shaped; the S3 endpoint both
    reach sits on this namespace's end of the shaped pair (``fast`` reaches it over its
    own pair: this namespace routes between them)."""

    slow: str  # the shaped host's address
    fast: str  # its neighbour's
    endpoint: str
    key_id: str
    secret: str


@pytest.fixture(scope="module")
def two_hosts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TwoHosts]:
    _skip_without_the_tools()
    root = tmp_path_factory.mktemp("s3two")
    (root / "bench").mkdir()
    procs: list[subprocess.Popen[bytes]] = []
    with contextlib.ExitStack() as made:
        slow_ns, _, slow = made.enter_context(_shaped_namespace("netslow", "s", near="yes"))
        fast_ns, _, fast = made.enter_context(_shaped_namespace("netfast", "f", rate=None))
        near = slow.rsplit(".", 1)[0] + ".1"
        lab = TwoHosts(
            slow, fast, f"http://{near}:7070", "AKID" + secrets.token_hex(6), secrets.token_hex(16)
        )
        try:
            procs.append(
                subprocess.Popen(
                    [VERSITYGW, "--port", f"{near}:7070", "posix", str(root)],
                    env={
                        **os.environ,
                        "ROOT_ACCESS_KEY": lab.key_id,
                        "ROOT_SECRET_KEY": lab.secret,
                    },
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            )
            _wait_port(near, 7070, procs[-1], "versitygw")
            for ns, address in ((slow_ns, slow), (fast_ns, fast)):
                procs.append(_agent(ns, address, tmp_path_factory.mktemp("agent")))
            yield lab
        finally:
            for proc in reversed(procs):
                _stop(proc)


def test_findings_network_bound_on_the_shaped_host_not_its_neighbour(
    tmp_path: Path, two_hosts: TwoHosts
) -> None:
    """One point on two hosts: each host's bytes/s against the baseline this controller
    measured to that host. The host behind the 100 Mbit/s link moves what it carries and
    is flagged, by its own figures; its neighbour, whose link is not shaped, is not. The
    load is capped at 20 MiB/s a job (2 jobs: 335 Mbit/s a host) so that the neighbour's
    figure is known whatever this machine's speed, far below what iperf3 moves over an
    unshaped veth pair, and far above what the shaped link carries. Shown by ``show`` and
    ``export --format json``."""
    lab = two_hosts
    plan = tmp_path / "plan.yaml"
    plan.write_text(
        f"name: twohosts\nhosts:\n  - {{address: {lab.slow}, name: slowhost}}\n"
        f"  - {{address: {lab.fast}, name: fasthost}}\n"
        f"targets:\n  - s3: bench\n    endpoint: {lab.endpoint}\n"
        "global: {time_based: 1, rate: 20m, numjobs: 2, runtime: 5, objects: 4, bs: 4m}\n"
        "workloads:\n  - {name: put, rw: write}\n  - {name: get, rw: read}\n"
    )
    env = {
        **os.environ,
        "STORBENCH_DB": str(tmp_path / "r.db"),
        "AWS_ACCESS_KEY_ID": lab.key_id,
        "AWS_SECRET_ACCESS_KEY": lab.secret,
        "COLUMNS": "200",
    }
    run = [sys.executable, "-m", "storbench"]
    r = subprocess.run(
        [*run, "run", str(plan)], capture_output=True, text=True, env=env, timeout=300
    )
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stdout + r.stderr
    out = subprocess.run(
        [*run, "export", "1", "--format", "json"], capture_output=True, text=True, env=env
    )
    shown = subprocess.run([*run, "show", "1"], capture_output=True, text=True, env=env)
    doc = json.loads(out.stdout)
    base = {n["host"]: n for n in doc["run"]["inventory"]["network"] if n.get("host")}
    for way in ("to_host_bits_per_s", "from_host_bits_per_s"):
        assert 60e6 < base["slowhost"][way] <= 101e6, base  # the shaped rate, or near it
        assert base["fasthost"][way] > 1e9, base  # a veth pair: several Gbit/s
    net = [f for f in doc["findings"] if f["code"] == "network-bound"]
    assert {(f["point"], f["host"]) for f in net} == {(1, "slowhost"), (2, "slowhost")}, net
    put, get = sorted(net, key=lambda f: f["point"])
    assert put["data"]["write_share_pct"] >= 90 and "read_share_pct" not in put["data"]
    assert get["data"]["read_share_pct"] >= 90 and "write_share_pct" not in get["data"]
    slow = base["slowhost"]
    assert get["data"]["read_capacity_bits_per_s"] == round(slow["to_host_bits_per_s"])
    assert put["data"]["write_capacity_bits_per_s"] == round(slow["from_host_bits_per_s"])
    assert get["data"]["source"] == "controller" and get["data"]["address"] == lab.slow
    # the slow host's own bytes/s were judged, not the point's sum over both hosts
    (m_get,) = [m for m in doc["measurements"] if m["point"] == 2]
    slow_bits = m_get["hosts"]["slowhost"]["read"]["bw_bytes"] * 8
    assert get["data"]["read_bits_per_s"] == pytest.approx(slow_bits, rel=1e-6)
    assert m_get["read"]["bw_bytes"] * 8 > 2 * slow_bits  # the neighbour moved more
    assert shown.returncode == 0, shown.stderr
    assert "network-bound on slowhost" in shown.stdout
    assert "iperf3 measured from the controller to slowhost" in shown.stdout
    assert "network-bound on fasthost" not in shown.stdout + r.stdout
