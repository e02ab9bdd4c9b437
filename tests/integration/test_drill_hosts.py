"""A drill's ``run`` steps on a host of the plan, through its ``shell:`` (here ssh): a
network namespace joined to this (root) namespace by a veth pair, with its own 10.x address,
a real OpenSSH server (``sshd -D -e``, its host key, config and authorized key made here) and
a ``fio --server``; ``storbench run`` loads the host's directory through fio while its
actions ssh into it. Needs root, iproute2, fio and OpenSSH (client and ``sshd``: package
openssh-server, which ``make setup`` installs); skipped otherwise.

Named like test_hosts_netns.py's with a per-module token: namespace
``storbench-test-TOKEN-ssh``, veth pair ``sbtTOKENsh``/``sbtTOKENsn``, address 10.A.B.2
(routed to the veth pair only). The fixture's finalizer kills sshd and the fio server and
deletes the namespace (the veth pair and route with it), even when a test fails.
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
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.root]

PREFIX = "storbench-test"
SSH_PORT = 2222
FIO_PORT = 8765
SSHD_CONFIG = """\
Port {port}
ListenAddress {address}
HostKey {dir}/host_key
PidFile none
AuthorizedKeysFile {dir}/authorized_keys
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
UsePAM no
StrictModes no
"""


def _sshd() -> str | None:
    return shutil.which("sshd") or shutil.which("sshd", path="/usr/sbin:/sbin")


def ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", *args], capture_output=True, text=True, check=check, timeout=10)


def wait_port(address: str, port: int, proc: subprocess.Popen[bytes], what: str) -> None:
    end = time.monotonic() + 10
    while time.monotonic() < end:
        with contextlib.suppress(OSError), socket.create_connection((address, port), 0.2):
            return
        assert proc.poll() is None, f"{what} {address}:{port} exited ({proc.returncode})"
        time.sleep(0.05)
    raise AssertionError(f"{what} {address}:{port} did not listen")


@dataclass
class SshHost:
    address: str
    netns: str
    work: Path  # the host's directory target, keys and sshd config
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def start(self, cmd: list[str], port: int, what: str, log: Path | None = None) -> None:
        out = open(log, "wb") if log else subprocess.DEVNULL  # noqa: SIM115 (the process's)
        try:
            proc = subprocess.Popen(
                ["ip", "netns", "exec", self.netns, *cmd],
                cwd=self.work,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=out,
                start_new_session=True,  # its group: the server and what it starts
            )
        finally:
            if log:
                out.close()  # type: ignore[union-attr]
        self.procs.append(proc)
        wait_port(self.address, port, proc, what)

    def shell(self) -> list[str]:
        """ssh to the namespace's sshd as root with the test's key: the plan's ``shell:``."""
        return [
            *("ssh", "-i", str(self.work / "id"), "-o", f"UserKnownHostsFile={self.work}/known"),
            *("-o", "StrictHostKeyChecking=accept-new", "-o", "BatchMode=yes"),
            *("-p", str(SSH_PORT), f"root@{self.address}"),
        ]

    def kill(self) -> None:
        for proc in self.procs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
        self.procs.clear()


def _keys(work: Path) -> None:
    for name in ("host_key", "id"):
        subprocess.run(
            ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "storbench-test", "-f", name],
            cwd=work,
            check=True,
            timeout=30,
        )
    (work / "authorized_keys").write_text((work / "id.pub").read_text())
    (work / "authorized_keys").chmod(0o600)


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SshHost]:
    if os.geteuid() != 0:
        pytest.skip("network namespaces need root")
    if not all(shutil.which(t) for t in ("ip", "fio", "ssh", "ssh-keygen")):
        pytest.skip("needs iproute2, fio and the OpenSSH client")
    sshd = _sshd()
    if sshd is None:
        pytest.skip("needs OpenSSH's sshd (package openssh-server: `make setup` installs it)")
    token = secrets.token_hex(2)
    ns, host_if, ns_if = f"{PREFIX}-{token}-ssh", f"sbt{token}sh", f"sbt{token}sn"
    address = f"10.{random.randint(200, 250)}.{random.randint(1, 250)}.2"
    work = tmp_path_factory.mktemp("sshhost")
    (work / "data").mkdir()
    _keys(work)
    config = work / "sshd_config"
    config.write_text(SSHD_CONFIG.format(port=SSH_PORT, address=address, dir=work))
    privsep = Path("/run/sshd")  # sshd's privilege separation directory (the package's)
    made_privsep = not privsep.exists()
    privsep.mkdir(mode=0o755, exist_ok=True)
    lab = SshHost(address, ns, work)
    try:
        ip("netns", "add", ns)
        ip("link", "add", host_if, "type", "veth", "peer", "name", ns_if)
        ip("link", "property", "add", "dev", host_if, "altname", ns, check=False)
        ip("link", "set", ns_if, "netns", ns)
        ip("-n", ns, "link", "set", "lo", "up")
        ip("-n", ns, "link", "set", ns_if, "up")
        ip("-n", ns, "addr", "add", f"{address}/32", "dev", ns_if)
        ip("-n", ns, "route", "add", "default", "dev", ns_if)
        ip("link", "set", host_if, "up")
        ip("route", "add", f"{address}/32", "dev", host_if)
        lab.start([sshd, "-D", "-e", "-f", str(config)], SSH_PORT, "sshd", work / "sshd.log")
        lab.start(["fio", f"--server={address},{FIO_PORT}"], FIO_PORT, "fio server")
        yield lab
    finally:
        lab.kill()
        ip("link", "del", host_if, check=False)  # both ends, and the route
        ip("netns", "del", ns, check=False)
        if made_privsep:
            with contextlib.suppress(OSError):
                privsep.rmdir()
        assert ns not in ip("netns", "list", check=False).stdout, "namespace left behind"
        assert host_if not in ip("link", "show", check=False).stdout, "veth pair left behind"


def sb(*args: str, db: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "storbench", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "STORBENCH_DB": str(db)},
    )


def _plan(tmp_path: Path, host: SshHost, actions: str) -> Path:
    path = tmp_path / "drill.yaml"
    path.write_text(
        f"""\
name: drill-hosts
hosts:
  - address: {host.address}
    name: nshost
    shell: {json.dumps(host.shell())}
    targets:
      - directory: {host.work / "data"}
workloads:
  - name: load
    rw: randread
    bs: 4k
    size: 4m
    ioengine: psync
    runtime: 3
    time_based: 1
    actions:
{actions}"""
    )
    return path


def _actions(db: Path) -> list[dict]:
    r = sb("export", "latest", "--format", "json", db=db)
    assert r.returncode == 0, r.stderr
    return [e for e in json.loads(r.stdout)["events"] if e["kind"] == "action"]


def test_drill_host_step_runs_over_ssh_and_its_event_says_where(
    tmp_path: Path, host: SshHost
) -> None:
    marker = tmp_path / f"marker-{secrets.token_hex(4)}"
    cmd = f'touch {marker} && echo "via $SSH_CONNECTION"'
    plan = _plan(tmp_path, host, f"      - {{at: 1s, run: {json.dumps(cmd)}, host: nshost}}\n")
    db = tmp_path / "r.db"
    shown = sb("plan", "show", str(plan), db=db)
    assert shown.returncode == 0, shown.stderr
    assert f"action at 1 s: run on nshost `{cmd}` (runs ssh -i" in shown.stdout
    r = sb("run", str(plan), db=db)
    assert r.returncode == 0, r.stdout + r.stderr
    assert marker.exists()
    (ev,) = _actions(db)
    d = ev["data"]
    assert d["outcome"] == "done" and d["exit_status"] == 0, ev
    assert d["host"] == "nshost" and d["shell"] == host.shell()
    # it ran in the namespace's sshd: the connection's server end is the host's address
    # (before it, ssh's own words: the host key added to the test's known_hosts)
    last = d["output"].splitlines()[-1]
    assert last.startswith("via ") and last.endswith(f" {host.address} {SSH_PORT}"), d
    assert ev["message"].startswith(f"point 1: run on nshost `{cmd}` at 1 s: done in ")
    report = sb("report", "latest", "--format", "markdown", db=db)
    assert f"action: run on nshost `{cmd}`" in report.stdout.replace("\\", "")


def test_drill_host_step_that_fails_is_a_failed_step_and_the_run_goes_on(
    tmp_path: Path, host: SshHost
) -> None:
    plan = _plan(
        tmp_path,
        host,
        '      - {at: 1s, run: "echo broken >&2; exit 7", host: nshost}\n'
        '      - {at: 2s, run: "true", host: nshost}\n',
    )
    db = tmp_path / "r.db"
    r = sb("run", str(plan), db=db)
    assert r.returncode == 0, r.stdout + r.stderr  # a failed step fails no point: as before
    failed, ok = _actions(db)
    assert failed["data"]["outcome"] == "failed" and failed["data"]["exit_status"] == 7
    assert failed["data"]["output"] == "exit status 7: broken"
    assert failed["message"].startswith("point 1: run on nshost `echo broken >&2; exit 7` at")
    assert ": failed in " in failed["message"]
    assert failed["message"].endswith("(exit status 7: broken)")
    assert ok["data"]["outcome"] == "done" and ok["data"]["host"] == "nshost"
    (point,) = json.loads(sb("export", "latest", "--format", "json", db=db).stdout)["measurements"]
    assert point["status"] == "ok"
