"""Hosts with ``ssh:``: storbench starts its agent there over ssh for the run, takes that
host's inventory and tuning, and stops it on every exit path (sshagents.py). The host is a
network namespace with a real OpenSSH server and no fio server of its own (tests/sshlab.py);
the agent it runs is this storbench (the namespace shares this file system). Needs root,
iproute2, fio and OpenSSH; skipped otherwise.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the harness modules
from sshlab import FIO_PORT, SSH_PORT, SshHost, listening, ssh_lab
from waiting import wait_until

pytestmark = [pytest.mark.integration, pytest.mark.root]

AGENT = [sys.executable, "-m", "storbench", "agent"]


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SshHost]:
    with ssh_lab(tmp_path_factory, fio_server=False) as lab:
        key = (lab.work / "host_key.pub").read_text().split()
        (lab.work / "known").write_text(f"[{lab.address}]:{SSH_PORT} {key[0]} {key[1]}\n")
        yield lab


def ssh_env(host: SshHost, known: str = "known") -> dict[str, str]:
    """$STORBENCH_SSH: the test's key and known_hosts (the user's own ssh config otherwise)."""
    words = ["ssh", "-i", str(host.work / "id"), "-p", str(SSH_PORT)]
    words += ["-o", f"UserKnownHostsFile={host.work / known}", "-o", "GlobalKnownHostsFile=none"]
    return {"STORBENCH_SSH": shlex.join(words)}


def sb(
    *args: str, db: Path, env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "storbench", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "STORBENCH_DB": str(db), **(env or {})},
    )


def plan(tmp_path: Path, host: SshHost, *, runtime: int = 2, agent: list[str] = AGENT) -> Path:
    path = tmp_path / "ssh.yaml"
    path.write_text(
        f"""\
name: ssh-hosts
hosts:
  - address: {host.address}
    name: nshost
    ssh: root@{host.address}
    agent: {json.dumps(agent)}
    targets:
      - directory: {host.work / "data"}
workloads:
  - name: load
    rw: randread
    bs: 4k
    size: 4m
    ioengine: psync
    runtime: {runtime}
    time_based: 1
"""
    )
    return path


def sessions() -> list[str]:
    """The command lines of agent sessions still running on this machine (any namespace)."""
    r = subprocess.run(["pgrep", "-af", "agent .*--session"], capture_output=True, text=True)
    return [ln for ln in r.stdout.splitlines() if "pgrep" not in ln]


def servers(host: SshHost) -> list[str]:
    """fio or iperf3 servers of the host's address still running (any namespace)."""
    pattern = f"(server={host.address},|-B {host.address} )"  # fio's, iperf3's
    r = subprocess.run(["pgrep", "-af", "--", pattern], capture_output=True, text=True)
    return [ln for ln in r.stdout.splitlines() if "pgrep" not in ln]


def assert_host_clean(host: SshHost) -> None:
    """No agent session and none of its servers left: fio, counters, iperf3."""
    end = time.monotonic() + 20
    while time.monotonic() < end and (
        sessions() or servers(host) or listening(host.address, FIO_PORT)
    ):
        time.sleep(0.2)
    assert not sessions(), sessions()
    assert not servers(host), servers(host)
    for port in (FIO_PORT, FIO_PORT + 1000, FIO_PORT + 2000):
        assert not listening(host.address, port), f"{host.address}:{port} still listens"


def test_ssh_host_gets_an_agent_for_the_run_with_its_inventory_and_loses_it_after(
    tmp_path: Path, host: SshHost
) -> None:
    db = tmp_path / "r.db"
    assert not listening(host.address, FIO_PORT)  # nothing there before the run
    r = sb("run", str(plan(tmp_path, host)), db=db, env=ssh_env(host))
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"host nshost: started storbench's agent over ssh (root@{host.address}" in r.stdout
    assert f"host nshost: stopped storbench's agent there (root@{host.address})" in r.stdout
    assert_host_clean(host)
    doc = json.loads(sb("export", "latest", "--format", "json", db=db).stdout)
    (m,) = doc["measurements"]
    assert m["status"] == "ok" and m["read"]["total_ios"] > 0
    # the agent there ran its fio itself and streamed its reports (its run service)
    assert m["aggregate"]["live_hosts"] is True, m["aggregate"]
    (entry,) = doc["run"]["inventory"]["hosts"]
    assert entry["label"] == "nshost" and entry["agent"]["ssh"] == f"root@{host.address}"
    # the host's own inventory, as it saw itself (this machine's kernel and sysctls: a
    # namespace shares them)
    remote = entry["host"]
    assert remote["kernel"] == os.uname().release + " " + os.uname().version
    dirty = Path("/proc/sys/vm/dirty_ratio").read_text().strip()
    assert remote["tuning"]["sysctl"]["vm.dirty_ratio"] == dirty
    (target,) = entry["targets"]
    assert target["path"] == str(host.work / "data") and target["kind"] == "directory"
    assert target["fstype"], target  # what the host said of its file system
    shown = sb("show", "latest", db=db)
    assert f"    over ssh (root@{host.address}): " in shown.stdout, shown.stdout
    kinds = [(e["kind"], e["data"]) for e in doc["events"] if e["kind"] == "ssh-agent"]
    assert [d.get("started", False) for _, d in kinds] == [True, False], kinds
    assert [d.get("stopped", False) for _, d in kinds] == [False, True], kinds


def test_ssh_host_with_an_unknown_host_key_is_refused_and_nothing_runs(
    tmp_path: Path, host: SshHost
) -> None:
    (host.work / "empty").write_text("")
    db = tmp_path / "r.db"
    r = sb("run", str(plan(tmp_path, host)), db=db, env=ssh_env(host, known="empty"))
    assert r.returncode == 2, r.stdout + r.stderr
    err = " ".join(r.stderr.split())
    assert "1 of 1 ssh host did not start storbench's agent; nothing was run" in err
    assert "its SSH host key is not known" in err
    assert f"accept it once with `ssh root@{host.address}`" in err
    assert (host.work / "empty").read_text() == ""  # never accepted for the user
    runs = sb("runs", db=db)
    assert "ssh-hosts" not in runs.stdout
    assert_host_clean(host)


def test_ssh_host_without_storbench_is_refused_with_the_agent_key_to_fix_it(
    tmp_path: Path, host: SshHost
) -> None:
    db = tmp_path / "r.db"
    p = plan(tmp_path, host, agent=["/nonexistent/storbench", "agent"])
    r = sb("run", str(p), db=db, env=ssh_env(host))
    assert r.returncode == 2, r.stdout + r.stderr
    err = " ".join(r.stderr.split())
    assert "`/nonexistent/storbench agent` is not there" in err
    assert "give its path with the host's `agent:`" in err


def test_ssh_host_agent_stops_when_the_controller_is_killed(tmp_path: Path, host: SshHost) -> None:
    db = tmp_path / "r.db"
    proc = subprocess.Popen(
        [sys.executable, "-m", "storbench", "run", str(plan(tmp_path, host, runtime=60))],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "STORBENCH_DB": str(db), **ssh_env(host)},
    )
    try:
        end = time.monotonic() + 60
        seen = ""
        assert proc.stdout is not None
        while "[1/1]" not in seen and time.monotonic() < end:
            line = proc.stdout.readline()
            assert line, f"storbench ended before its point: {seen}"
            seen += line
        assert "[1/1]" in seen, seen
        # the point runs on the host: its agent's session and fio server are up
        wait_until(
            "the host's agent and fio server",
            lambda: listening(host.address, FIO_PORT) and sessions(),
        )
        os.kill(proc.pid, signal.SIGKILL)  # no finally of storbench runs
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert_host_clean(host)  # ssh saw its input end, the agent its own: servers stopped
