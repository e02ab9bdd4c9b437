"""A real single-host Ceph cluster for the tests: 1 mon, 1 mgr, N OSDs, one replicated pool.

Built from Debian's packages (``ceph-mon ceph-mgr ceph-osd ceph-common``, see
scripts/setup-system.sh), without systemd or containers:

- every file (config, monmap, daemon data, logs, sockets, pid files) lives under ``base_dir``;
- every daemon binds to 127.0.0.1 only, with ``auth = none``;
- the monitor listens on two ports the kernel hands out free at start (v2 and v1), and the
  cluster has its own fsid, so a stale cluster (one a killed test session left behind) can
  never be mistaken for this one: its clients only know this cluster's ports;
- the daemons run in the foreground (``-f``) as children of this process, each in its own
  session (Ctrl-C in the terminal does not reach them: :meth:`CephCluster.stop` ends them) and,
  when ``setpriv`` exists, with a parent-death signal, so they die with the test process even
  when it is killed outright. :meth:`CephCluster.stop` signals only the pids it started.

Waits are bounded (``timeout`` seconds per step) and fail with :class:`CephClusterError`, whose
message holds the tail of the daemon log that explains the wait.

Usage (tests/integration/ceph/conftest.py has the session fixture)::

    cluster = CephCluster(tmp_dir, num_osd=2)
    cluster.start()                  # ~10 s for 1-2 memstore OSDs on 2 cores
    subprocess.run(["rados", "-p", cluster.pool, "ls"], env=cluster.env())
    cluster.stop()                   # < 1 s; removes base_dir
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: command -> Debian package that provides it (what scripts/setup-system.sh installs).
REQUIRED_COMMANDS = {
    "ceph": "ceph-common",
    "rados": "ceph-common",
    "ceph-mon": "ceph-mon",
    "monmaptool": "ceph-base",
    "ceph-mgr": "ceph-mgr",
    "ceph-osd": "ceph-osd",
}

#: Longest path of a unix socket (sun_path is 108 bytes with the terminating NUL).
_MAX_SOCKET_PATH = 107


class CephClusterError(RuntimeError):
    """The cluster could not be brought up (or a wait on it timed out)."""


def missing_packages() -> list[str]:
    """Debian packages whose commands the harness needs and cannot find (sorted, unique)."""
    path = os.environ.get("PATH", "") + ":/usr/sbin:/sbin:/usr/bin"
    return sorted(
        {pkg for cmd, pkg in REQUIRED_COMMANDS.items() if not shutil.which(cmd, path=path)}
    )


def _free_ports(n: int) -> list[int]:
    """``n`` distinct TCP ports on 127.0.0.1 that are free right now (the kernel picks them)."""
    socks = []
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def tail(path: Path, lines: int = 25) -> str:
    """The last ``lines`` lines of a file ('' when it does not exist)."""
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - 64 * 1024))
            text = f.read().decode(errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


@dataclass
class Daemon:
    name: str  # mon.a, mgr.x, osd.0
    proc: subprocess.Popen[bytes]
    log: Path  # the daemon's own log file
    out: Path  # its stdout/stderr
    stopped: bool = False  # stopped on purpose (stop_osd): its exit is no failure


@dataclass
class CephCluster:
    """A throwaway single-host cluster under ``base_dir`` (see the module docstring).

    ``objectstore`` is ``memstore`` (data in RAM, fast to create; ``osd_gb`` is only the
    capacity it reports) or ``bluestore`` (a sparse file of ``osd_gb`` GiB per OSD), or a
    sequence with one of those per OSD (a mixed cluster, as inventories meet them). Beware:
    memstore's used-bytes counter (16.2.15) can wrap below zero after a few write/delete
    cycles (``kb_used`` 18014398509481963): the OSD is then "full" and the cluster HEALTH_ERR;
    sessions that write and delete a lot want bluestore. The pool
    ``pool`` is created with ``pool_size`` replicas (min_size 1) and ``pg_num`` PGs; a pool of
    size 2 needs ``num_osd >= 2`` (the CRUSH failure domain is the OSD).
    """

    base_dir: Path | str
    num_osd: int = 1
    objectstore: str | tuple[str, ...] = "memstore"
    osd_gb: int = 4
    pool: str = "bench"
    pool_size: int = 1
    pg_num: int = 8
    timeout: float = 90.0
    die_with_parent: bool = True
    #: seconds each step of start() took: config, mon, mgr, osds, pool, clean, total
    timings: dict[str, float] = field(default_factory=dict)
    fsid: str = field(default_factory=lambda: str(uuid.uuid4()))
    mon_ports: tuple[int, int] = (0, 0)  # (v2, v1), chosen by start()
    #: also start radosgw (client.rgw.a, beast on a free loopback port; Debian's radosgw)
    #: and create an S3 user: see rgw_endpoint and rgw_keys
    rgw: bool = False
    rgw_port: int = 0  # chosen by start() when rgw
    rgw_keys: tuple[str, str] = ("", "")  # (access key, secret) of the S3 user
    _daemons: dict[str, Daemon] = field(default_factory=dict)
    _started: bool = False
    _stopped: bool = False

    def __post_init__(self) -> None:
        self.base_dir = Path(self.base_dir).resolve()
        stores = self.objectstores
        if len(stores) != self.num_osd or not set(stores) <= {"memstore", "bluestore"}:
            raise ValueError(
                f"objectstore must be memstore or bluestore (or one of them per OSD), "
                f"not {self.objectstore!r}"
            )
        if self.pool_size > self.num_osd:
            raise ValueError(f"pool_size {self.pool_size} needs at least as many OSDs")

    @property
    def objectstores(self) -> tuple[str, ...]:
        """The objectstore of each OSD, by id."""
        if isinstance(self.objectstore, str):
            return (self.objectstore,) * self.num_osd
        return tuple(self.objectstore)

    # ------------------------------------------------------------------ paths and environment

    @property
    def base(self) -> Path:
        assert isinstance(self.base_dir, Path)
        return self.base_dir

    @property
    def conf_path(self) -> Path:
        return self.base / "ceph.conf"

    @property
    def log_dir(self) -> Path:
        return self.base / "log"

    @property
    def mon_host(self) -> str:
        v2, v1 = self.mon_ports
        return f"[v2:127.0.0.1:{v2},v1:127.0.0.1:{v1}]"

    def env(self) -> dict[str, str]:
        """The environment for ceph/rados/rbd/fio commands aimed at this cluster."""
        return {**os.environ, "CEPH_CONF": str(self.conf_path)}

    def log(self, daemon: str) -> Path:
        """The log file of ``mon.a``, ``mgr.x``, ``osd.N`` (or ``cluster``)."""
        return self.log_dir / f"{daemon}.log"

    # ------------------------------------------------------------------ running commands

    def run(
        self, *args: str, timeout: float = 30.0, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        """Run a command with ``CEPH_CONF`` pointing here (argument list, never a shell)."""
        try:
            res = subprocess.run(
                list(args),
                env=self.env(),
                capture_output=True,
                text=True,
                timeout=timeout,
                stdin=subprocess.DEVNULL,
            )
        except subprocess.TimeoutExpired as e:
            raise CephClusterError(
                f"`{' '.join(args)}` did not finish within {timeout:g} s" + self._context("mon.a")
            ) from e
        if check and res.returncode != 0:
            raise CephClusterError(
                f"`{' '.join(args)}` exited {res.returncode}: {res.stderr.strip() or res.stdout}"
                + self._context("mon.a")
            )
        return res

    def ceph(self, *args: str, timeout: float = 30.0) -> Any:
        """``ceph ARGS -f json``, decoded."""
        out = self.run("ceph", "--connect-timeout", "10", *args, "-f", "json", timeout=timeout)
        return json.loads(out.stdout) if out.stdout.strip() else None

    # ------------------------------------------------------------------ bring-up

    def start(self) -> CephCluster:
        """Config, mon, mgr, OSDs, pool; returns when every PG of every pool is active+clean."""
        if self._started:
            raise CephClusterError("start() called twice")
        self._started = True
        t_start = time.monotonic()
        step = time.monotonic()

        def lap(name: str) -> None:
            nonlocal step
            now = time.monotonic()
            self.timings[name] = round(now - step, 3)
            step = now

        if self.base.exists() and any(self.base.iterdir()):
            raise CephClusterError(f"{self.base} is not empty (a stale cluster?); pick a new dir")
        for sub in ("run", "log", "crash", "mon", "mgr", "osd"):
            (self.base / sub).mkdir(parents=True, exist_ok=True)
        longest = self.base / "run" / f"osd.{self.num_osd - 1}.asok"
        if len(str(longest)) > _MAX_SOCKET_PATH:
            raise CephClusterError(f"base_dir too long for admin sockets ({longest})")
        v2, v1, rgw_port = _free_ports(3)
        self.mon_ports = (v2, v1)
        self.rgw_port = rgw_port if self.rgw else 0
        self.conf_path.write_text(self._config())
        lap("config")

        self.run(
            "monmaptool",
            "--create",
            "--fsid",
            self.fsid,
            "--addv",
            "a",
            self.mon_host,
            "--enable-all-features",
            "--clobber",
            str(self.base / "monmap"),
        )
        self.run("ceph-mon", "--mkfs", "-i", "a", "--monmap", str(self.base / "monmap"))
        self._spawn("mon.a", ["ceph-mon", "-f", "-i", "a"])
        self._wait("the monitor to form a quorum", "mon.a", self._mon_up)
        lap("mon")

        (self.base / "mgr" / "ceph-x").mkdir()
        self._spawn("mgr.x", ["ceph-mgr", "-f", "-i", "x"])
        lap("mgr")

        mkfs: list[tuple[int, subprocess.Popen[bytes]]] = []
        for _ in range(self.num_osd):
            osd_uuid = str(uuid.uuid4())
            osd_id = int(self.run("ceph", "osd", "new", osd_uuid).stdout.strip())
            (self.base / "osd" / f"ceph-{osd_id}").mkdir()
            with open(self.log_dir / f"osd.{osd_id}.mkfs.out", "wb") as out:
                mkfs.append(
                    (
                        osd_id,
                        subprocess.Popen(
                            ["ceph-osd", "-i", str(osd_id), "--mkfs", "--osd-uuid", osd_uuid],
                            env=self.env(),
                            stdout=out,
                            stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL,
                        ),
                    )
                )
        try:
            for osd_id, p in mkfs:  # mkfs of all OSDs in parallel (bluestore: ~1 s each)
                try:
                    rc = p.wait(timeout=self.timeout)
                except subprocess.TimeoutExpired:
                    rc = -9
                if rc != 0:
                    raise CephClusterError(
                        f"ceph-osd --mkfs for osd.{osd_id} exited {rc}"
                        + self._context(f"osd.{osd_id}", self.log_dir / f"osd.{osd_id}.mkfs.out")
                    )
        finally:
            for _, p in mkfs:  # none outlives a failure
                if p.poll() is None:
                    p.kill()
                    p.wait()
        for osd_id, _ in mkfs:
            self.start_osd(osd_id, wait=False)
        self.wait_osds_up(self.num_osd)
        lap("osds")

        self.create_pool(self.pool, self.pool_size, 1, self.pg_num, wait=False)
        lap("pool")
        self.wait_clean()
        lap("clean")
        if self.rgw:
            self._start_rgw()
            lap("rgw")
        self.timings["total"] = round(time.monotonic() - t_start, 3)
        return self

    @property
    def rgw_endpoint(self) -> str:
        return f"http://127.0.0.1:{self.rgw_port}"

    def _start_rgw(self) -> None:
        """radosgw in the foreground, answering HTTP, with an S3 user of random keys."""
        (self.base / "rgw" / "ceph-rgw.a").mkdir(parents=True)
        self._spawn("client.rgw.a", ["radosgw", "-f", "-n", "client.rgw.a"])

        def answers() -> bool:
            try:
                socket.create_connection(("127.0.0.1", self.rgw_port), 0.5).close()
                return True
            except OSError:
                return False

        self._wait("radosgw to answer", "client.rgw.a", answers)
        keys = ("RGW" + uuid.uuid4().hex[:17].upper(), uuid.uuid4().hex + uuid.uuid4().hex[:8])
        self.run(
            "radosgw-admin",
            "user",
            "create",
            "--uid=storbench",
            "--display-name=storbench tests",
            f"--access-key={keys[0]}",
            f"--secret-key={keys[1]}",
            timeout=60,
        )
        self.rgw_keys = keys

    def _config(self) -> str:
        b = self.base
        gib = self.osd_gb * 1024**3
        return (
            f"""\
# storbench test cluster (tests/cephcluster.py); everything under {b}
[global]
fsid = {self.fsid}
mon host = {self.mon_host}
public network = 127.0.0.0/8
public addr = 127.0.0.1
cluster addr = 127.0.0.1
ms bind ipv4 = true
ms bind ipv6 = false
auth cluster required = none
auth service required = none
auth client required = none
client mount timeout = 30
keyring = {b}/keyring
run dir = {b}/run
log file = {b}/log/$name.log
mon cluster log file = {b}/log/cluster.log
crash dir = {b}/crash
mon data = {b}/mon/$cluster-$id
mgr data = {b}/mgr/$cluster-$id
osd data = {b}/osd/$cluster-$id
osd pool default size = {self.pool_size}
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
osd crush chooseleaf type = 0
mon allow pool size one = true
mon allow pool delete = true
mon warn on pool no redundancy = false
mon data avail warn = 2
mon data avail crit = 1
mon warn on insecure global id reclaim allowed = false
mgr initial modules = iostat
# (admin sockets and pid files are set per daemon type below: a client given one in [global]
# would race every other ceph command for the same client.admin.asok)
# OSDs report PG states to the mgr every second (default 5): active+clean is seen sooner
mgr stats period = 1
[mon]
pid file = {b}/run/$name.pid
admin socket = {b}/run/$name.asok
# propose map changes after 0.1 s instead of 1 s: pool and OSD commands return sooner
paxos propose interval = 0.1
mon osd full ratio = .97
mon osd nearfull ratio = .95
mon osd backfillfull ratio = .96
[mgr]
pid file = {b}/run/$name.pid
admin socket = {b}/run/$name.asok
[osd]
pid file = {b}/run/$name.pid
admin socket = {b}/run/$name.asok
osd objectstore = {self.objectstores[0]}
osd memory target = 1073741824
memstore device bytes = {gib}
bluestore block path = {b}/osd/$cluster-$id.block
bluestore block create = true
bluestore block size = {gib}
bluestore block db create = false
bluestore block wal create = false
bluestore fsck on mount = false
osd op num shards = 2
osd op num threads per shard = 2
# SIGTERM (stop_osd) unmounts the store for real: memstore writes its data to disk and the
# OSD comes back with it (with the default fast shutdown it comes back empty)
osd fast shutdown = false
# recover at full speed (the default sleeps 0.1 s between recovery ops on a "rotational" OSD)
osd recovery sleep = 0
"""
            + self._rgw_config()
            + "".join(
                f"[osd.{i}]\nosd objectstore = {store}\n"
                for i, store in enumerate(self.objectstores)
                if store != self.objectstores[0]
            )
        )

    def _rgw_config(self) -> str:
        if not self.rgw:
            return ""
        b = self.base
        # radosgw's defaults ask for cephx (ms_mon_client_mode secure); with auth none only
        # crc works (ceph-lab's bringup.sh found it)
        return f"""[client.rgw.a]
ms mon client mode = crc
rgw frontends = beast endpoint=127.0.0.1:{self.rgw_port}
rgw data = {b}/rgw/$cluster-$id
rgw dns name = localhost
# objects larger than 1 MiB are refused (EntityTooLarge): a test of an object size the
# service refuses
rgw max put size = 1048576
pid file = {b}/run/$name.pid
admin socket = {b}/run/$name.asok
"""

    def _spawn(self, name: str, argv: list[str]) -> None:
        out_path = self.log_dir / f"{name}.out"
        prefix: list[str] = []
        setpriv = shutil.which("setpriv")
        if self.die_with_parent and setpriv:
            # the daemon gets SIGKILL when this process dies, whatever killed it
            prefix = [setpriv, "--pdeathsig", "KILL", "--"]
        with open(out_path, "ab") as out:
            proc = subprocess.Popen(
                prefix + argv,
                env=self.env(),
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                cwd=self.base,
            )
        self._daemons[name] = Daemon(name, proc, self.log(name), out_path)

    # ------------------------------------------------------------------ waits

    def _context(self, daemon: str, *extra: Path) -> str:
        """Tail of a daemon's log (and its stdout/stderr) to put into an error message."""
        parts = []
        d = self._daemons.get(daemon)
        if d is not None and d.proc.poll() is not None:
            parts.append(f"{daemon} exited with status {d.proc.returncode}")
        for p in (*extra, self.log(daemon), self.log_dir / f"{daemon}.out"):
            t = tail(p)
            if t.strip():
                parts.append(f"--- last lines of {p}:\n{t}")
        return ("\n" + "\n".join(parts)) if parts else ""

    def _check_alive(self) -> None:
        for d in self._daemons.values():
            if not d.stopped and d.proc.poll() is not None:
                raise CephClusterError(f"{d.name} died" + self._context(d.name))

    def _wait(
        self, what: str, daemon: str, cond: Callable[[], bool], timeout: float | None = None
    ) -> None:
        """Poll ``cond`` every 0.25 s until it is true; CephClusterError after ``timeout``."""
        limit = self.timeout if timeout is None else timeout
        end = time.monotonic() + limit
        last_error = ""
        while True:
            self._check_alive()
            try:
                if cond():
                    return
                last_error = ""
            except (CephClusterError, ValueError, KeyError) as e:
                last_error = str(e).splitlines()[0]
            if time.monotonic() > end:
                msg = f"timed out after {limit:g} s waiting for {what}"
                if last_error:
                    msg += f" (last error: {last_error})"
                raise CephClusterError(msg + self._context(daemon))
            time.sleep(0.25)

    def _mon_up(self) -> bool:
        res = self.run("ceph", "--connect-timeout", "3", "mon", "stat", timeout=10, check=False)
        return res.returncode == 0

    def wait_osds_up(self, n: int, timeout: float | None = None) -> None:
        """Until at least ``n`` OSDs are up (and in)."""

        def up() -> bool:
            st = self.ceph("osd", "stat")
            return st["num_up_osds"] >= n and st["num_in_osds"] >= n

        self._wait(f"{n} OSD(s) up", "osd.0", up, timeout)

    def pg_summary(self) -> tuple[int, int, dict[str, int]]:
        """(sum of pg_num over all pools, PGs the mgr reports, PG count by state)."""
        pools = self.ceph("osd", "pool", "ls", "detail") or []
        want = sum(int(p["pg_num"]) for p in pools)
        st = self.ceph("pg", "stat")
        s = st.get("pg_summary", st)
        by_state = {x["name"]: int(x["num"]) for x in s.get("num_pg_by_state", [])}
        return want, int(s["num_pgs"]), by_state

    def wait_clean(self, timeout: float | None = None) -> None:
        """Until every PG of every pool is active+clean.

        ``ceph pg stat`` can briefly omit the PGs of a pool just created (FIELD-NOTES): the
        count it reports must equal the sum of ``pg_num`` over ``ceph osd pool ls detail``
        before its active+clean count means anything. The mgr's own pool
        (``device_health_metrics``) appears shortly after the mgr becomes active; it is
        waited for too, so that no pool turns up (and peers) after this returns.
        """

        def clean() -> bool:
            names = {p["pool_name"] for p in self.ceph("osd", "pool", "ls", "detail") or []}
            if "device_health_metrics" not in names:
                return False
            want, have, by_state = self.pg_summary()
            return want == have and by_state.get("active+clean", 0) == have

        self._wait("all PGs active+clean", "mgr.x", clean, timeout)

    # ------------------------------------------------------------------ pools and OSDs

    def create_pool(
        self,
        name: str,
        size: int,
        min_size: int,
        pg_num: int,
        *,
        application: str = "rbd",
        wait: bool = True,
    ) -> None:
        """A replicated pool; with ``wait`` returns when all PGs are active+clean."""
        self.run("ceph", "osd", "pool", "create", name, str(pg_num), str(pg_num), "replicated")
        self.run("ceph", "osd", "pool", "set", name, "size", str(size), "--yes-i-really-mean-it")
        self.run("ceph", "osd", "pool", "set", name, "min_size", str(min_size))
        self.run("ceph", "osd", "pool", "application", "enable", name, application)
        if wait:
            self.wait_clean()

    def delete_pool(self, name: str) -> None:
        self.run("ceph", "osd", "pool", "delete", name, name, "--yes-i-really-really-mean-it")

    def stop_osd(self, osd_id: int, timeout: float | None = None) -> None:
        """Stop ``osd.ID`` the way an admin would (SIGTERM: it tells the mon it goes down, and
        memstore saves its data to disk for the next start); returns once the mon has it down.
        """
        d = self._daemons[f"osd.{osd_id}"]
        d.stopped = True
        if d.proc.poll() is None:
            d.proc.send_signal(signal.SIGTERM)
            try:
                d.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                d.proc.kill()
                d.proc.wait()

        def down() -> bool:
            tree = self.ceph("osd", "tree")
            return any(n["id"] == osd_id and n.get("status") == "down" for n in tree["nodes"])

        self._wait(f"osd.{osd_id} marked down", "mon.a", down, timeout)

    def start_osd(self, osd_id: int, *, wait: bool = True) -> None:
        """Start ``osd.ID`` (again); with ``wait``, until the mon has it up."""
        name = f"osd.{osd_id}"
        old = self._daemons.get(name)
        if old is not None and old.proc.poll() is None:
            raise CephClusterError(f"{name} is running already")
        self._spawn(name, ["ceph-osd", "-f", "-i", str(osd_id)])
        if wait:

            def up() -> bool:
                tree = self.ceph("osd", "tree")
                return any(n["id"] == osd_id and n.get("status") == "up" for n in tree["nodes"])

            self._wait(f"{name} up", name, up)

    def health(self) -> tuple[str, dict[str, Any]]:
        """(``HEALTH_OK``/``HEALTH_WARN``/``HEALTH_ERR``, the checks of ``ceph health detail``)."""
        h = self.ceph("health", "detail")
        return h["status"], h.get("checks", {})

    def pids(self) -> dict[str, int]:
        """The daemons this cluster started and still runs: name -> pid."""
        return {n: d.proc.pid for n, d in self._daemons.items() if d.proc.poll() is None}

    # ------------------------------------------------------------------ teardown

    def stop(self) -> None:
        """Stop the daemons this object started (its own pids only) and remove ``base_dir``.

        Idempotent; safe to call from a finalizer and again from atexit. OSDs get SIGKILL at
        once (their state is deleted anyway; a memstore OSD would write its whole store to
        disk on SIGTERM), then mgr and mon get SIGTERM with 10 s of grace, then SIGKILL.
        """
        if self._stopped:
            return
        self._stopped = True
        osds = [d for n, d in self._daemons.items() if n.startswith("osd.")]
        rest = [d for n, d in self._daemons.items() if not n.startswith("osd.")]
        self._signal([d for d in rest if d.name.startswith("client.rgw")], signal.SIGTERM, 5)
        self._signal(osds, signal.SIGKILL, grace=10)
        self._signal([d for d in rest if d.name.startswith("mgr.")], signal.SIGTERM, grace=10)
        self._signal([d for d in rest if d.name.startswith("mon.")], signal.SIGTERM, grace=10)
        shutil.rmtree(self.base, ignore_errors=True)

    @staticmethod
    def _signal(daemons: Iterable[Daemon], sig: int, grace: float) -> None:
        live = [d for d in daemons if d.proc.poll() is None]
        for d in live:
            with contextlib.suppress(ProcessLookupError):
                d.proc.send_signal(sig)
        end = time.monotonic() + grace
        for d in live:
            try:
                d.proc.wait(timeout=max(0.0, end - time.monotonic()))
            except subprocess.TimeoutExpired:
                d.proc.kill()
                d.proc.wait()

    def __enter__(self) -> CephCluster:
        try:
            return self.start()
        except BaseException:
            self.stop()  # a bring-up that failed half-way leaves nothing running
            raise

    def __exit__(self, *exc: object) -> None:
        self.stop()


# ---------------------------------------------------------------------------- command line


def serve(argv: list[str] | None = None) -> int:
    """``python tests/cephcluster.py up BASE_DIR [options]``: a cluster for shell scripts.

    Brings the cluster up, prints ``CEPH_CONF=...`` and ``ready``, then reads commands from
    stdin, one per line, and answers each with ``ok [result]`` or ``error: message``::

        create_pool NAME SIZE MIN_SIZE PG_NUM | delete_pool NAME | stop_osd ID | start_osd ID
        wait_clean | health | timings | quit

    End of stdin, ``quit``, SIGTERM, SIGINT or SIGHUP stop the cluster and remove BASE_DIR.
    tests/data/rados/record.sh uses it (as a coprocess).
    """
    import argparse
    import sys

    ap = argparse.ArgumentParser(prog="cephcluster.py", description=serve.__doc__)
    ap.add_argument("command", choices=["up"])
    ap.add_argument("base_dir")
    ap.add_argument("--num-osd", type=int, default=1)
    ap.add_argument("--objectstore", default="memstore", help="one, or one per OSD: a,b")
    ap.add_argument("--osd-gb", type=int, default=4)
    ap.add_argument("--pool", default="bench")
    ap.add_argument("--pool-size", type=int, default=1)
    ap.add_argument("--pg-num", type=int, default=8)
    args = ap.parse_args(argv)
    stores = tuple(args.objectstore.split(","))
    cluster = CephCluster(
        args.base_dir,
        num_osd=args.num_osd,
        objectstore=stores[0] if len(stores) == 1 else stores,
        osd_gb=args.osd_gb,
        pool=args.pool,
        pool_size=args.pool_size,
        pg_num=args.pg_num,
    )

    def on_signal(signum: int, _frame: object) -> None:
        raise SystemExit(128 + signum)

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, on_signal)
    try:
        cluster.start()
        print(f"CEPH_CONF={cluster.conf_path}", flush=True)
        print("ready", flush=True)
        for line in sys.stdin:
            words = line.split()
            if not words:
                continue
            cmd, rest = words[0], words[1:]
            try:
                result: Any = None
                if cmd == "quit":
                    print("ok", flush=True)
                    break
                if cmd == "create_pool":
                    name, size, min_size, pg_num = rest
                    cluster.create_pool(name, int(size), int(min_size), int(pg_num))
                elif cmd == "delete_pool":
                    cluster.delete_pool(rest[0])
                elif cmd == "stop_osd":
                    cluster.stop_osd(int(rest[0]))
                elif cmd == "start_osd":
                    cluster.start_osd(int(rest[0]))
                elif cmd == "wait_clean":
                    cluster.wait_clean()
                elif cmd == "health":
                    result = cluster.health()[0]
                elif cmd == "timings":
                    result = json.dumps(cluster.timings)
                else:
                    raise ValueError(f"unknown command {cmd!r}")
                print("ok" if result is None else f"ok {result}", flush=True)
            except (CephClusterError, ValueError, KeyError) as e:
                print(f"error: {' '.join(str(e).split())[:2000]}", flush=True)
    except CephClusterError as e:
        print(f"error: {e}", file=sys.stderr, flush=True)
        return 1
    finally:
        cluster.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(serve())
