"""A host reached over SSH, for tests: a network namespace joined to this (root) namespace by
a veth pair, with its own 10.x address and a real OpenSSH server (``sshd -D -e``, its host
key, config and authorized key made here), optionally a ``fio --server`` in it. Needs root,
iproute2, fio and OpenSSH (client and ``sshd``: package openssh-server, which ``make setup``
installs); :func:`ssh_lab` skips otherwise.

Named like test_hosts_netns.py's with a token: namespace ``storbench-test-TOKEN-ssh``, veth
pair ``sbtTOKENsh``/``sbtTOKENsn``, address 10.A.B.2 (routed to the veth pair only). Leaving
:func:`ssh_lab` kills sshd and the servers and deletes the namespace (the veth pair and
route with it), even when a test fails.
"""

from __future__ import annotations

import contextlib
import os
import random
import secrets
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

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


@contextlib.contextmanager
def ssh_lab(tmp_path_factory: pytest.TempPathFactory, *, fio_server: bool) -> Iterator[SshHost]:
    """A namespace with sshd (and ``fio --server`` on FIO_PORT when ``fio_server``)."""
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
        if fio_server:
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


def listening(address: str, port: int) -> bool:
    """Whether something accepts TCP connections at ``address``:``port``."""
    with contextlib.suppress(OSError), socket.create_connection((address, port), 0.5):
        return True
    return False
