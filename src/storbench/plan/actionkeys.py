"""A workload's ``actions:``: steps at set times into each of its points' load (a failure
drill), read and checked. What runs them: storbench.execute.drills.

Each action is a mapping with ``at`` (seconds into the point's load, from the moment its
engine starts: the clock of its time series) and one step::

    actions:
      - {at: 30s, osd_stop: 1}        # stop osd.1's daemon, wait until the mon has it down
      - {at: 90s, osd_start: 1}       # start it again, wait until it is up
      - {at: 40s, osd_out: 1}         # ceph osd out 1 (osd_in: back in)
      - {at: 10s, osd_set: noout}     # ceph osd set noout (osd_unset: unset it)
      - {at: 20s, run: "sync", timeout: 60}   # a command on this machine, through sh -c
      - {at: 25s, run: "systemctl restart ceph-osd@1", host: vm01}   # on a host of `hosts:`

The Ceph steps act on the cluster of the workload's targets and run only when the run is
started with ``--allow-disruption``; commands are the plan's own. A ``run`` step with
``host:`` (a label of ``hosts:``) runs through that host's ``shell:``, a command prefix the
step's command is appended to as one argument (no local shell in between): by default
``ssh -o BatchMode=yes -o ConnectTimeout=10 ADDRESS``, where that argument is the remote
command line (the remote user's shell runs it); another wrapper ends with ``sh -c`` (``pct
exec 101 -- sh -c``). Keys come from the user's ssh config and agent, never from the plan.
"""

from __future__ import annotations

import math
import os
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from storbench.model.errors import suggestion
from storbench.model.units import UnitError, parse_time
from storbench.plan.checks import control_char, name_problem
from storbench.plan.yamlpos import _describe

#: Ceph steps (``--allow-disruption``) and what they take.
CEPH_STEPS = ("osd_stop", "osd_start", "osd_out", "osd_in", "osd_set", "osd_unset")
STEPS = (*CEPH_STEPS, "run")
#: The OSD flags ``osd_set``/``osd_unset`` may set (``ceph osd set``'s that a drill uses).
OSD_FLAGS = ("noout", "nobackfill", "norecover", "norebalance", "nodown", "noup", "noin")
DEFAULT_TIMEOUT_S = 300.0
#: The longest a step may take (its ``timeout``): a week. Beyond it a wait is no drill, and
#: the clocks of the waits it bounds overflow (``timeout: 1e20`` killed the drill's thread).
MAX_TIMEOUT_S = 7 * 86400.0
#: How an OSD's daemon is stopped and started where the plan does not say (``osd_daemons:``):
#: systemd on this machine, as Debian's and Proxmox's packages install it. ``{id}`` is the
#: OSD's id, ``{host}`` the host Ceph places it on (``ceph osd find``).
OSD_DAEMONS = {"stop": "systemctl stop ceph-osd@{id}", "start": "systemctl start ceph-osd@{id}"}
FIX = "e.g. `actions: [{at: 30s, osd_stop: 1}, {at: 90s, osd_start: 1}]`"
#: How a ``run`` step reaches a host of ``hosts:`` without its own ``shell:`` (the host's
#: address appended); the ``local`` host's: a shell on this machine.
SSH = ("ssh", "-o", "BatchMode=yes", "-o", "ConnectTimeout=10")
LOCAL_SHELL = ("sh", "-c")
SHELL_FIX = "e.g. `shell: [pct, exec, 101, --, sh, -c]`, or `shell: ssh -p 2222 root@vm01`"


def step_label(step: str, arg: str, host: str = "") -> str:
    """``osd_stop 1``, ``run `sync```, ``run on vm01 `sync```."""
    if step != "run":
        return f"{step} {arg}"
    return f"run on {host} `{arg}`" if host else f"run `{arg}`"


@dataclass(frozen=True)
class Action:
    at_s: float
    step: str  # one of STEPS
    arg: str  # the OSD id, the flag or the command
    timeout_s: float = DEFAULT_TIMEOUT_S
    command: str = ""  # osd_stop/osd_start: the command that does it (``osd_daemons:``)
    host: str = ""  # run: the label of the host of ``hosts:`` it runs on ("": here)
    shell: tuple[str, ...] = ()  # run on a host: the prefix its command is appended to

    @property
    def ceph(self) -> bool:
        return self.step in CEPH_STEPS

    def label(self) -> str:
        return step_label(self.step, self.arg, self.host)

    def argv(self) -> list[str]:
        """What a ``run`` step executes: the host's prefix and the command as one argument,
        or ``sh -c COMMAND`` here."""
        return [*(self.shell if self.host else LOCAL_SHELL), self.arg]

    def to_dict(self) -> dict[str, Any]:
        return {
            "at_s": self.at_s,
            "step": self.step,
            "arg": self.arg,
            "timeout_s": self.timeout_s,
            **({"command": self.command} if self.command else {}),
            **({"host": self.host, "shell": list(self.shell)} if self.host else {}),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Action:
        return cls(
            float(d["at_s"]),
            str(d["step"]),
            str(d["arg"]),
            float(d["timeout_s"]),
            str(d.get("command") or ""),
            str(d.get("host") or ""),
            tuple(str(w) for w in d.get("shell") or ()),
        )


def actions(value: Any, daemons: Mapping[str, str] | None = None) -> list[Action]:
    """The actions of ``actions:`` (checked by :func:`problem` first), in time order, an
    OSD's stop and start with their commands from ``daemons`` (``osd_daemons:``; one that
    is refused -- its own error, said with the plan's others -- leaves the defaults)."""
    how = dict(OSD_DAEMONS)
    if daemons_problem(daemons, {}) is None:
        how |= daemons or {}
    out = []
    for item in value or []:
        step = next(k for k in item if k in STEPS)
        timeout = parse_time(item["timeout"]) if "timeout" in item else DEFAULT_TIMEOUT_S
        arg = str(item[step]).strip()
        command = how[step.removeprefix("osd_")] if step in ("osd_stop", "osd_start") else ""
        host = str(item["host"]).strip() if "host" in item else ""  # its shell: workloads.py
        out.append(Action(parse_time(item["at"]), step, arg, timeout, command, host))
    return sorted(out, key=lambda a: a.at_s)


def ssh_words() -> tuple[str, ...]:
    """The ssh command storbench runs: ``$STORBENCH_SSH`` (split like a shell; ``ssh`` when
    unset) with BatchMode (never a prompt) and a connect timeout."""
    given = os.environ.get("STORBENCH_SSH", "").strip()
    try:
        head = tuple(shlex.split(given)) if given else SSH[:1]
    except ValueError:
        head = SSH[:1]  # the run refuses it first (sshagents.ssh_env_problem)
    return (*head, *SSH[1:])


def shell_prefix(value: Any, address: str, ssh: str | None = None) -> tuple[str, ...]:
    """A host's ``shell:`` (checked by :func:`shell_problem`) as words; left out, ssh to the
    host's ``ssh:`` destination or ``address`` (``sh -c`` for the ``local`` host)."""
    if value is None:
        if address == "local":
            return LOCAL_SHELL
        return (*ssh_words(), ssh) if ssh else (*SSH, address)
    return words(value)


def words(value: Any) -> tuple[str, ...]:
    """A command given as text (split like a shell) or as a list of words."""
    return tuple(shlex.split(value) if isinstance(value, str) else (str(w) for w in value))


SSH_TAKES = "SSH destination: `user@host`, a Host of your ssh config, `ssh://user@host:port`"
SSH_DOC = (
    "storbench starts `storbench agent` there over ssh for the run (fio server, iperf3, "
    "counters), gathers that host's inventory and tuning, and stops it when the run ends, "
    "whatever way it ends (the agent exits when the ssh connection closes). ssh runs with "
    "BatchMode: keys, known hosts and options from your ssh config and agent "
    "(`$STORBENCH_SSH` replaces the `ssh` command, e.g. `ssh -i KEY -p 2222`); an unknown "
    "host key is refused, never accepted for you."
)
AGENT_DOC = (
    "With `ssh:`, the command that runs storbench's agent on that host (storbench must be "
    "installed there, with the controller's fio version)."
)
SSH_FIX = (
    "e.g. `ssh: root@vm01`, `ssh: vm01` (a Host of your ssh config) or `ssh: ssh://root@vm01:2222`"
)
AGENT = ("storbench", "agent")
AGENT_SHOWN = " ".join(AGENT)
AGENT_FIX = "e.g. `agent: /opt/storbench/bin/storbench agent` (the default: storbench agent)"


def ssh_problem(value: Any, host: Mapping[Any, Any]) -> tuple[str, str] | None:
    """Why a host's ``ssh:`` is refused, or None."""
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        return f"`ssh` must be an SSH destination, not {_describe(value)}", SSH_FIX
    dest = value.strip()
    if control_char(dest) is not None or any(c.isspace() for c in dest):
        return f"`ssh` must be one destination, without spaces: {dest!r}", SSH_FIX + (
            "; ssh's options go in your ssh config or $STORBENCH_SSH"
        )
    if dest.startswith("-"):
        return f"`ssh` must be a destination, not an option ({dest!r})", SSH_FIX
    if str(host.get("address", "")).strip() == "local":
        return "the `local` host is this machine: it takes no `ssh`", "remove `ssh:` from it"
    return None


def agent_problem(value: Any, host: Mapping[Any, Any]) -> tuple[str, str] | None:
    """Why a host's ``agent:`` is refused, or None."""
    if value is None:
        return None
    if host.get("ssh") is None:
        return "`agent` goes with `ssh:` (storbench starts the agent over ssh)", (
            "add `ssh: DESTINATION` to this host, or remove `agent:`"
        )
    why = shell_problem(value, host)
    if why is not None:
        return why[0].replace("`shell`", "`agent`"), AGENT_FIX
    return None


def shell_problem(value: Any, _: Mapping[Any, Any]) -> tuple[str, str] | None:
    """Why a host's ``shell:`` is refused, or None."""
    if value is None:
        return None
    what = "`shell` must be a command prefix (text or a list of words)"
    if isinstance(value, str) and control_char(value) is not None:
        return f"`shell` holds a control character ({control_char(value)})", SHELL_FIX
    if isinstance(value, str):
        try:
            words: list[Any] = shlex.split(value)
        except ValueError as e:
            return f"`shell` cannot be split into words ({e})", SHELL_FIX
    elif isinstance(value, list):
        words = value
    else:
        return f"{what}, not {_describe(value)}", SHELL_FIX
    if not words:
        return f"{what}, not an empty one", SHELL_FIX
    for w in words:
        if isinstance(w, bool) or not isinstance(w, str | int) or not str(w):
            return f"{what}; a word of it is {_describe(w)}", SHELL_FIX
        if control_char(str(w)) is not None:
            return f"`shell` holds a control character ({control_char(str(w))})", SHELL_FIX
    return None


def daemons_problem(value: Any, _: Mapping[Any, Any]) -> tuple[str, str] | None:
    """Why ``osd_daemons:`` is refused, or None."""
    fix = 'e.g. `osd_daemons: {stop: "ceph orch daemon stop osd.{id}", start: "..."}`'
    if value is None:
        return None
    if not isinstance(value, Mapping) or not value:
        return f"`osd_daemons` must be a mapping (stop:, start:), not {_describe(value)}", fix
    for k, v in value.items():
        if k not in OSD_DAEMONS:
            return f"`osd_daemons` has no key {str(k)!r} (stop, start)", fix
        if not isinstance(v, str) or "{id}" not in v:
            return f"`osd_daemons.{k}` must be a command with `{{id}}` in it", fix
        if control_char(v) is not None:
            return f"`osd_daemons.{k}` holds a control character", fix
    return None


def problem(value: Any, _: Mapping[Any, Any]) -> tuple[str, str] | None:
    """Why ``actions:`` is refused: (message, fix), or None."""
    if value is None:
        return None
    if not isinstance(value, list) or not value:
        return f"`actions` must be a non-empty list, not {_describe(value)}", FIX
    for n, item in enumerate(value, 1):
        why = _item_problem(item)
        if why:
            return f"action {n}: {why[0]}", why[1]
    return None


def _item_problem(item: Any) -> tuple[str, str] | None:
    if not isinstance(item, Mapping):
        return f"must be a mapping (at: and one step), not {_describe(item)}", FIX
    steps = [k for k in item if k in STEPS]
    for k in item:
        if k not in (*STEPS, "at", "timeout", "host"):
            known = (*STEPS, "at", "timeout", "host")
            hint = suggestion(str(k), known, f"steps: {', '.join(STEPS)}")
            return f"unknown key {str(k)!r}", hint or FIX
    if len(steps) != 1:
        return f"needs exactly one step ({', '.join(STEPS)}), not {len(steps)}", FIX
    for key in ("at", "timeout"):
        if key in item:
            try:
                secs = parse_time(item[key]) if not isinstance(item[key], bool) else -1.0
            except (UnitError, ValueError):
                return f"`{key}` is not a time: {item[key]!r}", "e.g. `at: 30s`"
            if key == "timeout" and not 1 <= secs <= MAX_TIMEOUT_S:  # (NaN is neither)
                return (
                    f"`timeout` must be from 1 s to {MAX_TIMEOUT_S:g} s (7 days), the most a "
                    f"step may take, not {item[key]!r}",
                    "e.g. `timeout: 600` (the default is 300 s)",
                )
            if not 0 <= secs < math.inf:
                return f"`{key}` must be a time of 0 or more, not {item[key]!r}", FIX
    if "at" not in item:
        return "needs `at`: when it runs, in seconds into the point's load", FIX
    if "host" in item:
        return _host_problem(steps[0], item["host"]) or _step_problem(steps[0], item[steps[0]])
    return _step_problem(steps[0], item[steps[0]])


def _host_problem(step: str, host: Any) -> tuple[str, str] | None:
    fix = 'e.g. `{at: 20s, run: "systemctl restart ceph-osd@1", host: vm01}`'
    if step != "run":
        return f"`host` goes with a `run` step, not `{step}`", fix + " (`osd_daemons:` for OSDs)"
    if isinstance(host, bool) or not isinstance(host, str | int) or not str(host).strip():
        return f"`host` takes the name of a host of `hosts:`, not {_describe(host)}", fix
    why = name_problem(str(host).strip())
    return (f"`host` {why}", fix) if why else None


def _step_problem(step: str, arg: Any) -> tuple[str, str] | None:
    if step in ("osd_stop", "osd_start", "osd_out", "osd_in"):
        if isinstance(arg, bool) or not isinstance(arg, int) or arg < 0:
            return f"`{step}` takes an OSD id (a whole number), not {_describe(arg)}", FIX
    elif step in ("osd_set", "osd_unset"):
        if arg not in OSD_FLAGS:
            return f"`{step}` takes one of {', '.join(OSD_FLAGS)}, not {arg!r}", FIX
    elif not isinstance(arg, str) or not arg.strip():
        return "`run` takes a command (text)", 'e.g. `run: "sync"`'
    elif control_char(arg) is not None:
        return "`run` holds a control character (write one command on one line)", FIX
    return None
