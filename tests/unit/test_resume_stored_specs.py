"""Issue 25: what `resume` runs -- a point as the database gives it back -- is checked by
the rules of a plan (plan/stored.py). Every point a plan makes passes (the suites and
plans using every key a point carries: hosts with ssh and shells, drills, steady state,
preconditioning, intervals, repetitions, S3 and Ceph targets); each crafted spec, a real
point's spec changed in one thing, is refused naming the key; a run that came from another
database runs no command of its own. The end to end cases, with real fio, are
tests/integration/test_resume_refuses_commands.py."""

from __future__ import annotations

import copy
import functools
import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from storbench.model.errors import PlanError
from storbench.plan import Point, load_plan, parse_plan
from storbench.plan.stored import check

DATA = Path(__file__).resolve().parents[1] / "data"
SUITES = {
    "quick": ["{d}/a.dat"],
    "qualify": ["{d}/a.dat"],
    "profiles": ["{d}/a.dat", "{d}/b.dat"],
    "matrix": ["{d}/a.dat"],
    "soak": ["{d}/a.dat"],
    "rados": ["rados:bench"],
    "rbd": ["rbd:bench/img"],
    "s3": ["s3://bucket"],
    "capacity": ["{d}/a.dat"],
}
SETS = {"soak": ["duration=60", "size=1g"], "rbd": ["size=1g"], "s3": [], "rados": []}

HOSTS = """\
targets: [{{file: {d}/a.dat, precondition: sequential}}, {{device: /dev/sb-no-such-disk}}]
interval: 500ms
hosts:
  - {{address: local}}
  - {{address: 192.0.2.10, port: 8766, name: vm1, ssh: root@vm1, agent: /opt/sb agent,
     shell: [pct, exec, "101", --, sh, -c]}}
workloads:
  - name: w
    rw: randread
    bs: 4k
    size: 1m
    runtime: 10
    iodepth: [1, 2]
    clients: [1, 2]
    actions: [{{at: 1, run: sync}}, {{at: 2, run: "echo hi", host: vm1, timeout: 20}}]
"""
STEADY = """\
targets: [{{file: {d}/a.dat}}, {{device: /dev/sb-no-such-disk, precondition: {{purge: discard}}}}]
steady_state: {{round: 5s, window: 3, rounds: 6}}
precondition: workload
repeat: 2
workloads: [{{name: w, rw: randwrite, bs: 4k, size: 1m, runtime: 1, write_iolog: /var/tmp/w.log}}]
"""
DRILL = """\
targets: [{{rbd: bench/img, size: 1g, conf: {d}/ceph.conf, clientname: admin}}]
osd_daemons: {{stop: "ssh {{host}} systemctl stop ceph-osd@{{id}}"}}
workloads:
  - name: w
    rw: randwrite
    bs: 4k
    runtime: 60
    time_based: 1
    actions: [{{at: 5, osd_stop: 1}}, {{at: 20, osd_start: 1}}, {{at: 30, osd_set: noout}}]
"""
RADOS = """\
targets: [{{rados: bench}}]
workloads:
  - {{name: w, engine: rados-bench, mode: write, runtime: 2, clients: [1, 2]}}
  - {{name: r, engine: rados-bench, mode: seq, runtime: 2, clients: [1, 2]}}
"""
S3 = """\
targets: [{{s3: bucket, endpoint: "http://127.0.0.1:7480", prefix: sb/, keep_objects: true}}]
workloads: [{{name: put, rw: write, bs: 64k, objects: 8, runtime: 2}}]
"""
PLANS = {"hosts": HOSTS, "steady": STEADY, "drill": DRILL, "rados": RADOS, "s3": S3}


def stored(p: Point) -> dict[str, Any]:
    """A point as the database keeps it (its JSON)."""
    return json.loads(json.dumps(p.to_dict()))


def points(name: str, d: Path) -> list[Point]:
    if name in SUITES:
        targets = [t.format(d=d) for t in SUITES[name]]
        sets = SETS.get(name, ["size=1g"])
        plan = load_plan(name, targets=targets, sets=sets, endpoint="http://127.0.0.1:7480")
    else:
        plan = parse_plan(PLANS[name].format(d=d), f"{name}.yaml")
    return plan.expand()


@pytest.mark.parametrize("name", [*SUITES, *(f"plan-{k}" for k in PLANS)])
def test_resume_every_point_a_plan_makes_passes_the_check(tmp_path: Path, name: str) -> None:
    made = points(name.removeprefix("plan-"), tmp_path)
    assert made
    for p in made:
        assert check(stored(p), p.index) == p


def test_resume_commands_of_a_run_from_elsewhere_are_refused(tmp_path: Path) -> None:
    """A drill's `run` step, an OSD's own stop command, a host reached over ssh: a plan's
    own (checked as such), and refused when the run came from another database."""
    says = {
        "hosts": "its drill step run `sync`",
        "drill": "its drill step osd_stop 1 runs `ssh {host} systemctl stop ceph-osd@{id}`",
    }
    for name, text in says.items():
        for p in points(name, tmp_path):
            check(stored(p), p.index)
            with pytest.raises(PlanError, match="came from another database") as e:
                check(stored(p), p.index, foreign=True)
            assert text in e.value.message
    ssh = next(p for p in points("hosts", tmp_path) if len(p.hosts) == 2)
    ssh.actions = []
    with pytest.raises(PlanError, match="its host vm1 logs in with ssh to root@vm1"):
        check(stored(ssh), ssh.index, foreign=True)
    for name in ("quick", "plan-steady"):
        for p in points(name.removeprefix("plan-"), tmp_path):
            check(stored(p), p.index, foreign=True)


def test_resume_of_a_run_from_elsewhere_signs_nothing_with_your_credentials(
    tmp_path: Path,
) -> None:
    """An archive names the S3 endpoint or the Ceph pool: resuming it here would sign its
    requests with this user's keys, or write that pool with this host's keyring."""
    says = {"s3": "is the S3 endpoint http://127.0.0.1:7480", "rados": "writes to the Ceph pool"}
    for name, text in says.items():
        made = points(name, tmp_path)
        assert made
        for p in made:
            check(stored(p), p.index)
            with pytest.raises(PlanError, match="signs nothing for it") as e:
                check(stored(p), p.index, foreign=True)
            assert text in e.value.message


def change(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    """Set ``value`` at ``path`` (dotted; ``-`` deletes) of a spec."""

    def apply(spec: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        node: Any = spec
        for k in parents:
            node = node[int(k)] if isinstance(node, list) else node[k]
        if value == "-":
            del node[last]
        else:
            node[last] = value

    return apply


CRAFTED: dict[str, tuple[str, Callable[[dict[str, Any]], None], str]] = {
    "exec_prerun": ("quick", change("params.exec_prerun", "touch x"), "`exec_prerun` runs a"),
    "exec_postrun": ("quick", change("params.exec_postrun", "x"), "`exec_postrun` runs a"),
    "ioengine-exec": ("quick", change("params.ioengine", "exec"), "`exec` runs a command"),
    "read_iolog": ("quick", change("params.read_iolog", "/x"), "`read_iolog` replays"),
    "filename": ("quick", change("params.filename", "/etc/passwd"), "`filename` comes from"),
    "allow_mounted_write": (
        "quick",
        change("params.allow_mounted_write", 1),
        "write to a mounted device",
    ),
    "relative-log": ("quick", change("params.write_iolog", "w.log"), "absolute path"),
    "unknown-option": ("quick", change("params.not_an_option", 1), "unknown fio option"),
    "option-newline": ("quick", change("params.bs", "4k\nexec_prerun=x"), "control character"),
    "iodepth": ("quick", change("params.iodepth", 10**9), "`iodepth` must be 1 to 65536"),
    "runtime-nan": ("quick", change("params.runtime", float("nan")), "`params.runtime` is nan"),
    "params-list": ("quick", change("params.bs", ["4k"]), "`params.bs` is ['4k'], not one"),
    "extra-command": ("quick", change("extra.exec_prerun", "x"), "`exec_prerun` runs a"),
    "extra-unknown": ("quick", change("extra.dataset", "x"), "`dataset` is no fio option"),
    "engine": ("quick", change("params.engine", "shell"), "`engine` cannot be 'shell'"),
    "spec-key": ("quick", change("run_this", "x"), "`run_this` is 'x'"),
    "spec-not-dict": ("quick", lambda s: s.clear(), "`index` is empty"),
    "index": ("quick", change("index", 7), "`index` is 7"),
    "index-text": ("quick", change("index", "0"), "`index` is '0'"),
    "target-key": ("quick", change("target.shell", "x"), "`target` is"),
    "target-kind": ("quick", change("target.kind", "pipe"), "unknown target key 'pipe'"),
    "target-relative": ("quick", change("target.path", "a.dat"), "`path` is 'a.dat'"),
    "target-newline": ("quick", change("target.path", "/tmp/a\nb"), "control character"),
    "target-dollar": ("quick", change("target.path", "/tmp/$HOME"), "holds `$`"),
    "target-path-list": ("quick", change("target.path", ["/x"]), "`target.path` is ['/x'], not"),
    "steady-metric-list": ("plan-steady", change("steady.metric", ["iops"]), "`steady.metric`"),
    "host-agent-text": ("plan-hosts", change("hosts.1.agent", "sh -c x"), "`hosts` is"),
    "target-missing": ("quick", change("target", "-"), "not a whole point"),
    "workload-name": ("quick", change("workload", "w\nx"), "control character"),
    "est": ("quick", change("est_seconds", "soon"), "`est_seconds` is 'soon'"),
    "interval": ("quick", change("interval_ms", 1), "`interval` must be from 500 ms"),
    "purge-file": ("quick", change("purge", "discard"), "only a `device:` target is purged"),
    "precondition": ("quick", change("precondition", "format"), "precondition"),
    "steady": ("plan-steady", change("steady.window", 0), "`steady_state.window`"),
    "host-port": ("plan-hosts", change("hosts.1.port", "22"), "`hosts` is"),
    "host-address": ("plan-hosts", change("hosts.1.address", "a b"), "not an IPv4 address"),
    "host-ssh-option": (
        "plan-hosts",
        change("hosts.1.ssh", "-oProxyCommand=x"),
        "`ssh` must be a destination, not an option",
    ),
    "host-agent-newline": ("plan-hosts", change("hosts.1.agent", ["a\nb"]), "control character"),
    "action-shell": ("plan-hosts", change("actions.1.shell", []), "not an empty one"),
    "action-late": ("plan-hosts", change("actions.1.at_s", 99.0), "past the point's end"),
    "action-unsorted": ("plan-hosts", change("actions.0.at_s", 9.0), "`at_s` is 9.0"),
    "action-step": ("plan-hosts", change("actions.0.step", "reboot"), "unknown key 'reboot'"),
    "action-timeout": ("plan-hosts", change("actions.0.timeout_s", 1e20), "`timeout` must be"),
    "osd-id": ("plan-drill", change("actions.0.arg", "1; reboot"), "takes an OSD id"),
    "rados-unread": ("plan-rados", change("extra.dataset", None), "no `mode: write` point"),
    "s3-endpoint": ("s3", change("target.endpoint", "http://u:p@x"), "must not hold credentials"),
    "s3-credentials": ("s3", change("target.credentials", "cmd:x"), "is not env"),
}


@pytest.mark.parametrize("case", sorted(CRAFTED))
def test_resume_refuses_a_crafted_spec_naming_what_no_plan_may_say(
    tmp_path: Path, case: str
) -> None:
    name, changed, says = CRAFTED[case]
    made = points(name.removeprefix("plan-"), tmp_path)
    p = made[-1] if case == "rados-unread" else made[1] if name == "plan-hosts" else made[0]
    spec = copy.deepcopy(stored(p))
    changed(spec)
    with pytest.raises(PlanError) as e:
        check(spec, p.index)
    assert e.value.file == f"point {p.index + 1}"
    assert says in e.value.message, e.value.message
    assert e.value.fix


def test_resume_of_imported_fio_output_is_checked_like_every_other_origin(tmp_path: Path) -> None:
    """A fio output whose job options ran a command: `import` stores them as the point's
    options (what the file says), `resume` never runs an imported run, and were its kind
    edited to a run's, the same check refuses its point."""
    fio_doc = json.loads((DATA / "fio" / "psync-randread-json.json").read_text())
    options = fio_doc["jobs"][0]["job options"]
    options.update(filename=f"{tmp_path}/t.dat", exec_prerun=f"touch {tmp_path}/PWNED")
    (tmp_path / "out.json").write_text(json.dumps(fio_doc))
    db = tmp_path / "r.db"
    env = {**os.environ, "STORBENCH_DB": str(db)}
    run = functools.partial(subprocess.run, capture_output=True, text=True, env=env, timeout=120)
    assert (
        run([sys.executable, "-m", "storbench", "import", str(tmp_path / "out.json")]).returncode
        == 0
    )
    with sqlite3.connect(db) as con:
        (spec,) = con.execute("SELECT spec FROM points").fetchone()
        con.execute("UPDATE runs SET kind='run', status='interrupted'")
        con.execute("DELETE FROM measurements")
    with pytest.raises(PlanError, match="`exec_prerun` runs a command"):
        check(json.loads(spec), 0)
    r = run([sys.executable, "-m", "storbench", "resume", "1"])
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert "run 1 cannot be resumed: its point 1" in r.stderr, r.stderr
    assert not (tmp_path / "PWNED").exists()


def test_resume_a_capacity_search_step_passes_and_a_forged_one_is_refused(
    tmp_path: Path,
) -> None:
    """A search's next step (execute/searches.py) is a point a plan makes; an offered rate
    without an objective, or an objective no `slo:` gives, is not."""
    from storbench.execute.searches import Searches

    (probe,) = points("capacity", tmp_path)
    step = Searches(1)._step(probe, 1000.0)
    assert step.offered_iops == 1000 and step.params["rate_iops"] == 1000
    assert check(stored(step), step.index) == step
    forged = stored(step)
    del forged["slo"]
    with pytest.raises(PlanError, match="`offered_iops` is 1000, not a step a search makes"):
        check(forged, step.index)
    forged = stored(step)
    forged["slo"]["latency_ns"] = -1.0
    with pytest.raises(PlanError, match="`slo` is"):
        check(forged, step.index)
