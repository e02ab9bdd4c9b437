"""A drill's ``run`` steps on a host of the plan, through its ``shell:`` (here ssh): a host
in a network namespace with a real OpenSSH server and a ``fio --server`` (tests/sshlab.py);
``storbench run`` loads the host's directory through fio while its actions ssh into it.
Needs root, iproute2, fio and OpenSSH; skipped otherwise.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the harness modules
from sshlab import SSH_PORT, SshHost, ssh_lab

pytestmark = [pytest.mark.integration, pytest.mark.root]


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SshHost]:
    with ssh_lab(tmp_path_factory, fio_server=True) as lab:
        yield lab


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
