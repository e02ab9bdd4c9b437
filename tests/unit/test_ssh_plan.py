"""A host's ``ssh:`` and ``agent:`` (plan/actionkeys.py), what a point keeps of them (so that
``resume`` starts the agents again), the remote command storbench sends, and the test-bed
differences of two runs' remote hosts (analysis/testbed.py)."""

from __future__ import annotations

import shlex

import pytest

from storbench.analysis.testbed import differences
from storbench.hosts.sshagents import _remote_command, explain, ssh_hosts
from storbench.model.errors import PlanError
from storbench.plan import PointHost, parse_plan

PLAN = """\
name: p
hosts:
  - {{address: 10.0.0.11, name: vm01{extra}}}
  - address: 10.0.0.12
targets:
  - directory: /srv/bench
workloads:
  - {{name: w, rw: randread, bs: 4k, size: 4m, runtime: 1}}
"""


def plan(extra: str) -> list:
    return parse_plan(PLAN.format(extra=extra), "p.yaml").expand()


def test_ssh_plan_host_keeps_its_destination_and_agent_through_a_stored_point(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("STORBENCH_SSH", "ssh -i /k/id -p 2222")
    (point,) = plan(", ssh: root@vm01, agent: /opt/sb/bin/storbench agent")
    vm01, other = point.hosts
    assert (vm01.ssh, vm01.agent) == ("root@vm01", ("/opt/sb/bin/storbench", "agent"))
    assert (other.ssh, other.agent) == ("", ())
    again = PointHost.from_dict(vm01.to_dict())  # what `resume` reads back
    assert again == vm01
    assert "ssh" not in other.to_dict()  # hosts without ssh are stored as before
    # the remote command line: one string for the remote shell, quoted
    cmd = _remote_command(vm01, ["directory:/srv/my bench"])
    assert shlex.split(cmd) == [
        *("/opt/sb/bin/storbench", "agent", "--bind", "10.0.0.11", "--port", "8765"),
        *("--session", "--inventory-target", "directory:/srv/my bench"),
    ]
    assert list(ssh_hosts([point])) == ["vm01"]


def test_ssh_plan_default_agent_and_drill_shell_go_through_the_same_ssh(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("STORBENCH_SSH", "ssh -i /k/id")
    text = PLAN.format(extra=", ssh: ssh://root@vm01:2222").replace(
        "runtime: 1}", 'runtime: 3, actions: [{at: 1s, run: "sync", host: vm01}]}'
    )
    (point,) = parse_plan(text, "p.yaml").expand()
    assert point.hosts[0].agent == ("storbench", "agent")
    (action,) = point.actions
    assert action.argv() == [
        *("ssh", "-i", "/k/id", "-o", "BatchMode=yes", "-o", "ConnectTimeout=10"),
        *("ssh://root@vm01:2222", "sync"),
    ]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (", ssh: -oProxyCommand=evil", "`ssh` must be a destination, not an option"),
        (", ssh: 'root@vm01 -p 22'", "`ssh` must be one destination, without spaces"),
        (", ssh: [root@vm01]", "`ssh` must be an SSH destination, not a list"),
        (", agent: storbench agent", "`agent` goes with `ssh:`"),
        (", ssh: vm01, agent: []", "`agent` must be a command prefix"),
    ],
)
def test_ssh_plan_refuses_what_ssh_would_misread(extra: str, message: str) -> None:
    with pytest.raises(PlanError, match=message):
        plan(extra)


def test_ssh_plan_refuses_a_host_address_that_reads_as_an_option() -> None:
    """With ``ssh:`` or the default shell, the address reaches ssh (and fio's --client) as
    an argument: one starting with '-' would be an option of theirs."""
    text = PLAN.format(extra=", ssh: vm01").replace("10.0.0.12", "-oProxyCommand=evil")
    with pytest.raises(PlanError, match="starts with '-': no host name does"):
        parse_plan(text, "p.yaml")


def test_ssh_plan_local_host_takes_no_ssh() -> None:
    text = PLAN.format(extra="").replace("address: 10.0.0.12", "address: local\n    ssh: vm02")
    with pytest.raises(PlanError, match="the `local` host is this machine: it takes no `ssh`"):
        parse_plan(text, "p.yaml")


def test_ssh_agents_explain_says_what_to_do_for_each_failure() -> None:
    agent = ("storbench", "agent")
    # OpenSSH's own words (ssh 9.2, as seen by tests/integration/test_ssh_hosts.py)
    unknown = "No ED25519 host key is known for [10.9.9.2]:2222 and you have requested strict "
    unknown += "checking.\r\nHost key verification failed.\r\n"
    assert "host key is not known" in explain("root@h", 255, unknown, agent)
    assert "`ssh root@h`" in explain("root@h", 255, unknown, agent)
    denied = "root@10.9.9.2: Permission denied (publickey).\r\n"
    assert "could not log in as root@h" in explain("root@h", 255, denied, agent)
    refused = "ssh: connect to host 10.9.9.2 port 2222: Connection refused\r\n"
    assert explain("root@h", 255, refused, agent).startswith("ssh cannot reach root@h")
    missing = "bash: line 1: storbench: command not found\n"
    assert "`storbench agent` is not there" in explain("root@h", 127, missing, agent)
    said = "storbench: error: will not bind the fio server to 8.8.8.8: a public address\n"
    assert explain("root@h", 2, said, agent).endswith(f"({said.strip()})")


def test_ssh_testbed_differences_of_remote_hosts_by_label() -> None:
    def inv(dirty: str, kernel: str) -> dict:
        host = {"kernel": kernel, "tuning": {"sysctl": {"vm.dirty_ratio": dirty}}}
        return {"hosts": [{"label": "vm01", "hostname": "x", "host": host}]}

    diff = differences(inv("20", "6.1"), inv("40", "6.1"))
    assert diff == [("hosts[vm01].host.tuning.sysctl.vm.dirty_ratio", "20", "40")]
