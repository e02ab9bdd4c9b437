"""A workload's ``actions:``: steps at set times into each of its points' load (a failure
drill), read and checked. What runs them: storbench.drills.

Each action is a mapping with ``at`` (seconds into the point's load, from the moment its
engine starts: the clock of its time series) and one step::

    actions:
      - {at: 30s, osd_stop: 1}        # stop osd.1's daemon, wait until the mon has it down
      - {at: 90s, osd_start: 1}       # start it again, wait until it is up
      - {at: 40s, osd_out: 1}         # ceph osd out 1 (osd_in: back in)
      - {at: 10s, osd_set: noout}     # ceph osd set noout (osd_unset: unset it)
      - {at: 20s, run: "sync", timeout: 60}   # a command on this machine, through sh -c

The Ceph steps act on the cluster of the workload's targets and run only when the run is
started with ``--allow-disruption``; commands are the plan's own.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from storbench.errors import suggestion
from storbench.plan.checks import control_char
from storbench.plan.yamlpos import _describe
from storbench.units import UnitError, parse_time

#: Ceph steps (``--allow-disruption``) and what they take.
CEPH_STEPS = ("osd_stop", "osd_start", "osd_out", "osd_in", "osd_set", "osd_unset")
STEPS = (*CEPH_STEPS, "run")
#: The OSD flags ``osd_set``/``osd_unset`` may set (``ceph osd set``'s that a drill uses).
OSD_FLAGS = ("noout", "nobackfill", "norecover", "norebalance", "nodown", "noup", "noin")
DEFAULT_TIMEOUT_S = 300.0
#: How an OSD's daemon is stopped and started where the plan does not say (``osd_daemons:``):
#: systemd on this machine, as Debian's and Proxmox's packages install it. ``{id}`` is the
#: OSD's id, ``{host}`` the host Ceph places it on (``ceph osd find``).
OSD_DAEMONS = {"stop": "systemctl stop ceph-osd@{id}", "start": "systemctl start ceph-osd@{id}"}
FIX = "e.g. `actions: [{at: 30s, osd_stop: 1}, {at: 90s, osd_start: 1}]`"


@dataclass(frozen=True)
class Action:
    at_s: float
    step: str  # one of STEPS
    arg: str  # the OSD id, the flag or the command
    timeout_s: float = DEFAULT_TIMEOUT_S
    command: str = ""  # osd_stop/osd_start: the command that does it (``osd_daemons:``)

    @property
    def ceph(self) -> bool:
        return self.step in CEPH_STEPS

    def label(self) -> str:
        return f"{self.step} {self.arg}" if self.step != "run" else f"run `{self.arg}`"

    def to_dict(self) -> dict[str, Any]:
        return {
            "at_s": self.at_s,
            "step": self.step,
            "arg": self.arg,
            "timeout_s": self.timeout_s,
            **({"command": self.command} if self.command else {}),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Action:
        return cls(
            float(d["at_s"]),
            str(d["step"]),
            str(d["arg"]),
            float(d["timeout_s"]),
            str(d.get("command") or ""),
        )


def actions(value: Any, daemons: Mapping[str, str] | None = None) -> list[Action]:
    """The actions of ``actions:`` (checked by :func:`problem` first), in time order, an
    OSD's stop and start with their commands from ``daemons`` (``osd_daemons:``)."""
    how = {**OSD_DAEMONS, **(daemons or {})}
    out = []
    for item in value or []:
        step = next(k for k in item if k in STEPS)
        timeout = parse_time(item["timeout"]) if "timeout" in item else DEFAULT_TIMEOUT_S
        arg = str(item[step]).strip()
        command = how[step.removeprefix("osd_")] if step in ("osd_stop", "osd_start") else ""
        out.append(Action(parse_time(item["at"]), step, arg, timeout, command))
    return sorted(out, key=lambda a: a.at_s)


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
        if k not in (*STEPS, "at", "timeout"):
            hint = suggestion(str(k), (*STEPS, "at", "timeout"), f"steps: {', '.join(STEPS)}")
            return f"unknown key {str(k)!r}", hint or FIX
    if len(steps) != 1:
        return f"needs exactly one step ({', '.join(STEPS)}), not {len(steps)}", FIX
    for key in ("at", "timeout"):
        if key in item:
            try:
                secs = parse_time(item[key]) if not isinstance(item[key], bool) else -1.0
            except (UnitError, ValueError):
                return f"`{key}` is not a time: {item[key]!r}", "e.g. `at: 30s`"
            if secs < (0 if key == "at" else 1):
                return f"`{key}` must be {'0' if key == 'at' else '1 s'} or more", FIX
    if "at" not in item:
        return "needs `at`: when it runs, in seconds into the point's load", FIX
    return _step_problem(steps[0], item[steps[0]])


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
