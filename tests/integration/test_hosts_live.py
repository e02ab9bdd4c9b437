"""Many hosts read while they run: `storbench agent`s on loopback run each host's fio
themselves (their run service, engines/fio/runservice.py) and stream its reports, so a
many-host point's series reach the database while the point runs; a host with a bare
fio server sends the point through fio's client, whose series come at its end."""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import socket
import sqlite3
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from storbench.store import Store

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the harness modules
from waiting import wait_until

pytestmark = pytest.mark.integration


def sb(*args: str, db: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "storbench", *args, "--db", str(db)],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _agent_port() -> int:
    """A port whose agent's neighbours (+1000 counters, +2000 iperf3, +3000 runs) are free."""
    for _ in range(200):
        p = random.randrange(20000, 30000)
        if all(_free(p + k) for k in (0, 1000, 2000, 3000)):
            return p
    raise AssertionError("no free agent ports")


@dataclass
class Agent:
    port: int
    pid_file: Path
    data: Path

    def stop(self) -> None:
        cmd = [sys.executable, "-m", "storbench", "agent", "--stop", "--pid-file"]
        subprocess.run([*cmd, str(self.pid_file)], capture_output=True, timeout=60)


@pytest.fixture
def agents(tmp_path: Path) -> Iterator[list[Agent]]:
    started: list[Agent] = []
    try:
        for i in range(2):
            a = Agent(_agent_port(), tmp_path / f"agent{i}.pid", tmp_path / f"data{i}")
            a.data.mkdir()
            cmd = [sys.executable, "-m", "storbench", "agent", "--port", str(a.port)]
            r = subprocess.run(
                [*cmd, "--pid-file", str(a.pid_file)],
                capture_output=True,
                text=True,
                timeout=60,
            )
            started.append(a)
            assert r.returncode == 0, r.stderr
            assert f"run service on 127.0.0.1:{a.port + 3000}" in r.stdout, r.stdout
        yield started
    finally:
        for a in started:
            a.stop()


def _plan(path: Path, hosts: list[tuple[int, Path]], runtime: int = 6) -> Path:
    lines = ["name: live", "interval: 500ms", "hosts:"]
    for i, (port, data) in enumerate(hosts):
        lines += [f"  - address: 127.0.0.1\n    port: {port}\n    name: h{i}"]
        lines += [f"    targets:\n      - directory: {data}"]
    lines += [
        "workloads:",
        "  - name: rr",
        "    rw: randread",
        "    bs: 4k",
        "    size: 8m",
        "    ioengine: psync",
        "    time_based: 1",
        f"    runtime: {runtime}",
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def _rows(db: Path, sql: str) -> list[tuple[object, ...]]:
    if not db.exists():
        return []
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10)
    try:
        return con.execute(sql).fetchall()
    except sqlite3.OperationalError:  # not created yet
        return []
    finally:
        con.close()


@contextlib.contextmanager
def running(plan: Path, db: Path, *more: str) -> Iterator[subprocess.Popen[str]]:
    """`storbench run PLAN` in the background, its output joined; killed if left running."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "storbench", "run", str(plan), "--db", str(db), *more],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


def _iops_served(address: str) -> dict[str, float] | None:
    """The read IOPS ``storbench run --metrics`` serves now, by host (None: not all three,
    the point's and its two hosts')."""
    try:
        with urllib.request.urlopen(f"http://{address}/metrics", timeout=10) as r:
            text = r.read().decode()
    except OSError:
        return None
    got = {
        s.labels["host"]: s.value
        for family in text_string_to_metric_families(text)
        if family.name == "storbench_iops"
        for s in family.samples
        if s.labels.get("direction") == "read"
    }
    return got if len(got) == 3 else None


def _stat(pid: str) -> tuple[int, int] | None:
    """A live process's parent and session (None: gone, or a zombie)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return None if fields[0] == "Z" else (int(fields[1]), int(fields[3]))


class RunsFio:
    """The fio processes the agents' run services started: each a session's leader, the
    run service its parent (process.start_gated); its job processes share its session,
    which is remembered, so that they are found after their leader is gone."""

    def __init__(self, agents: list[Agent]) -> None:
        self.services = set()
        for a in agents:
            runs = a.pid_file.with_name(a.pid_file.name.replace(".pid", ".runs.pid"))
            self.services.add(int(runs.read_text()))
        self.sessions: set[int] = set()

    def alive(self) -> list[int]:
        found = []
        for entry in os.listdir("/proc"):
            st = _stat(entry) if entry.isdigit() else None
            if st is None:
                continue
            if st[0] in self.services and st[1] == int(entry):
                self.sessions.add(int(entry))  # a fio a run service started, leading
            if st[1] in self.sessions:
                found.append(int(entry))
        return found


def test_hosts_live_series_reach_the_database_while_the_point_runs(
    tmp_path: Path, agents: list[Agent]
) -> None:
    db = tmp_path / "r.db"
    plan = _plan(tmp_path / "p.yaml", [(a.port, a.data) for a in agents])
    fio = RunsFio(agents)
    metrics = f"127.0.0.1:{_agent_port()}"
    with running(plan, db, "--metrics", metrics) as proc:
        # while the point runs: each host's series and the point's own grow, and no
        # measurement is recorded yet
        seen = wait_until(
            "two intervals of each host and of the point while it runs",
            lambda: (
                fio.alive()
                and (rows := _rows(db, "select host, count(*) from intervals group by host"))
                and len(rows) == 3
                and all(n >= 2 for _, n in rows)
                and rows
            ),
            timeout=120,
        )
        # ... and the metrics serve each host's figures and the point's
        served = wait_until("each host's IOPS served", lambda: _iops_served(metrics), 60)
        assert not _rows(db, "select id from measurements"), seen
        assert proc.poll() is None, "the point ended before its series were seen"
        out, _ = proc.communicate(timeout=300)
    assert served.keys() == {"", "h0", "h1"} and all(v > 0 for v in served.values()), served
    assert proc.returncode == 0, out
    store = Store(str(db), write=False)
    (m,) = store.measurements.of_run(1)
    meas = m.measurement
    assert meas.status == "ok" and meas.extra["live_hosts"] is True
    exported = json.loads(sb("export", "1", "--format", "json", db=db).stdout)
    assert exported["measurements"][0]["aggregate"]["live_hosts"] is True
    assert meas.extra["aggregate"] == "window" and set(meas.hosts) == {"h0", "h1"}
    read = meas.direction("read")
    assert read is not None
    series = store.series.of_point(1, m.point_idx, host=None)
    for host in ("h0", "h1"):
        own = [i for i in series if i.host == host]
        # the host's intervals count every I/O its fio reported, one interval per report
        hr = meas.hosts[host].direction("read")
        assert hr is not None and sum(i.ios for i in own) == hr.total_ios
        assert [i.seq for i in own] == list(range(len(own))) and len(own) >= 10
        assert meas.hosts[host].extra["start_s"] >= 0
    point = [i for i in series if i.host == ""]
    assert (
        sum(i.ios for i in point)
        == read.total_ios
        == sum(
            meas.hosts[h].direction("read").total_ios
            for h in ("h0", "h1")  # type: ignore[union-attr]
        )
    )
    # the point's percentiles come from the hosts' histograms merged, never averaged
    assert all(i.p99_ns is not None and i.p99_ns > 0 for i in point if i.ios)
    assert len(fio.sessions) == 2 and not fio.alive()


def test_hosts_live_ctrl_c_and_kill_leave_no_fio_on_the_hosts(
    tmp_path: Path, agents: list[Agent]
) -> None:
    plan = _plan(tmp_path / "p.yaml", [(a.port, a.data) for a in agents], runtime=60)
    fio = RunsFio(agents)
    for sig, db in ((signal.SIGINT, tmp_path / "int.db"), (signal.SIGKILL, tmp_path / "kill.db")):
        with running(plan, db) as proc:
            wait_until("both hosts' fio running", lambda: len(fio.alive()) >= 2, 120)
            wait_until("a first interval", lambda d=db: _rows(d, "select 1 from intervals"), 120)
            proc.send_signal(sig)
            out, _ = proc.communicate(timeout=120)
        # Ctrl-C: the hosts' fio told to stop, the run says so; killed: the connections'
        # end stops them (the agents' run services)
        assert proc.returncode == (130 if sig == signal.SIGINT else -signal.SIGKILL), out
        wait_until(f"no fio of the hosts left after {sig.name}", lambda: not fio.alive(), 60)


def test_hosts_live_a_bare_fio_server_sends_the_point_through_fios_client(
    tmp_path: Path, agents: list[Agent]
) -> None:
    port = _agent_port()
    bare_data = tmp_path / "bare"
    bare_data.mkdir()
    server = subprocess.Popen(
        ["fio", f"--server=127.0.0.1,{port}"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        wait_until("the bare fio server", lambda: not _free(port), 30)
        db = tmp_path / "r.db"
        plan = _plan(tmp_path / "p.yaml", [(agents[0].port, agents[0].data), (port, bare_data)], 2)
        r = sb("run", str(plan), db=db)
        assert r.returncode == 0, r.stdout + r.stderr
    finally:
        os.killpg(server.pid, signal.SIGKILL)
        server.wait()
    store = Store(str(db), write=False)
    (m,) = store.measurements.of_run(1)
    assert m.measurement.status == "ok" and "live_hosts" not in m.measurement.extra
    hosts = {i.host for i in store.series.of_point(1, m.point_idx, host=None)}
    assert hosts == {"", "h0", "h1"}  # at the point's end, from fio's client


def test_hosts_live_an_agent_gone_mid_point_leaves_it_partial(
    tmp_path: Path, agents: list[Agent]
) -> None:
    """A host whose run service dies while the point runs (its fio with it: pdeathsig) is
    a failed host, its reports until then kept as its partial figures; the other host's
    are the point's."""
    db = tmp_path / "r.db"
    plan = _plan(tmp_path / "p.yaml", [(a.port, a.data) for a in agents], runtime=8)
    fio = RunsFio(agents)
    gone = agents[1].pid_file.with_name(agents[1].pid_file.name.replace(".pid", ".runs.pid"))
    with running(plan, db) as proc:
        wait_until(
            "two reports of the second host",
            lambda: fio.alive() and len(_rows(db, "select 1 from intervals where host='h1'")) >= 2,
            120,
        )
        os.kill(int(gone.read_text()), signal.SIGKILL)
        out, _ = proc.communicate(timeout=300)
    assert proc.returncode == 1, out  # a partial point
    assert "host h1: its agent went away during the point" in out, out
    (m,) = Store(str(db), write=False).measurements.of_run(1)
    meas = m.measurement
    assert meas.status == "partial" and meas.extra["failed_hosts"] == ["h1"], meas.error
    assert "h1" in (meas.error or "") and "went away" in (meas.error or "")
    h1 = meas.hosts["h1"]
    assert h1.status == "failed" and h1.extra["partial"] is True
    assert h1.direction("read").total_ios > 0  # type: ignore[union-attr]
    read, h0 = meas.direction("read"), meas.hosts["h0"].direction("read")
    assert read is not None and h0 is not None and read.total_ios == h0.total_ios
    wait_until("no fio of the hosts left", lambda: not fio.alive(), 60)
