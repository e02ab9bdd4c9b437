"""A failure drill: a point's actions (plan/actionkeys.py), each at its time into the point's
load, run in a thread of their own while the engine runs the load.

Each action is an event of the run (kind ``action``): when it was planned and when it began
and ended (s after the point's load began, the clock of its time series), what it ran and
whether it did what it should. A Ceph step waits for its effect: an OSD stopped is marked
down by the monitors, one started is up again, one taken out is out (at most the action's
``timeout``). A ``run`` step runs through ``sh -c`` here, or on a host of ``hosts:`` through
the host's ``shell:`` (ssh by default); its event keeps where, its exit status and its
output. Actions the load ended before are recorded as skipped. Ceph steps act on the
cluster of the point's targets and need ``--allow-disruption`` (checked before any load:
:func:`refusal`).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from typing import Any, NamedTuple

from storbench.engines.base import RunEvents
from storbench.execute.monitor import sample_health
from storbench.hosts import procguard
from storbench.hosts.ceph import CephClient, ceph_args
from storbench.plan import Point
from storbench.plan.actionkeys import Action
from storbench.preflight.ceph import CEPH, CONNECT_TIMEOUT, CephCommandError, ceph_json

#: Seconds between two looks at the OSD map while a Ceph step waits for its effect.
POLL_S = 0.5
#: The most output of a step kept with its event.
OUTPUT_CHARS = 2000
#: After a drill's load, how long storbench waits for the cluster to heal (HEALTH_OK and
#: every PG active+clean, held for HOLD_S) before the run goes on, s; and the hold.
HEAL_WAIT_S = 1800.0
HOLD_S = 10.0


def refusal(points: list[Point], allowed: bool) -> str | None:
    """Why the points must not run: a Ceph step without ``--allow-disruption``."""
    if allowed:
        return None
    for p in points:
        step = next((a for a in p.actions if a.ceph), None)
        if step is not None:
            return (
                f"workload {p.workload!r} has a failure drill: `{step.label()}` at "
                f"{step.at_s:g} s disrupts the Ceph cluster it measures"
            )
    return None


def _cluster(point: Point) -> CephClient | None:
    t = next((t for t in point.targets if t.ceph), None)
    return CephClient(t.conf, t.client) if t is not None else None


class Outcome(NamedTuple):
    """What a step did: whether it did what it should, what it printed (or why not), and
    the exit status of its command when one ended."""

    ok: bool
    text: str
    status: int | None = None


def _exec(argv: list[str], timeout: float) -> Outcome:
    """A command, no shell of this machine in between, in a session of its own (the whole
    of it killed at the timeout): exit status 0, its output (stdout and stderr). It dies
    with storbench, even killed by SIGKILL: itself by its parent-death signal, what it
    started by the run's guard (procguard: it carries the run's mark)."""
    if shutil.which(argv[0]) is None:
        return Outcome(False, f"cannot run {argv[0]}: it is not installed here (not on PATH)")
    try:
        proc = subprocess.Popen(
            [*procguard.pdeathsig_prefix(), *argv],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            # marked as the run's (the guard kills it with storbench), without its secrets
            env=procguard.environment(),
        )
    except OSError as e:
        return Outcome(False, f"cannot run {argv[0]}: {e.strerror or e}")
    try:
        raw, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.communicate(timeout=5)  # a process that left the group may hold the pipe
        proc.kill()
        proc.wait()
        return Outcome(False, f"did not end within {timeout:g} s")
    text = raw.decode(errors="replace").strip()
    if proc.returncode != 0:
        return Outcome(
            False, f"exit status {proc.returncode}: {text}"[:OUTPUT_CHARS], proc.returncode
        )
    return Outcome(True, text[-OUTPUT_CHARS:], 0)


def _sh(command: str, timeout: float) -> Outcome:
    """A command through ``sh -c`` on this machine."""
    return _exec(["sh", "-c", command], timeout)


def _ceph(cluster: CephClient, *args: str, timeout: float) -> Outcome:
    cmd = [CEPH, *ceph_args(cluster), "--connect-timeout", str(CONNECT_TIMEOUT), *args]
    return _exec(cmd, timeout)


def _osd_state(cluster: CephClient, osd: int) -> dict[str, int]:
    """The OSD's ``up`` and ``in`` flags in the current OSD map."""
    doc = ceph_json(cluster, "osd", "dump")
    for o in doc.get("osds") or []:
        if int(o.get("osd", -1)) == osd:
            return {"up": int(o.get("up", 0)), "in": int(o.get("in", 0))}
    raise CephCommandError(f"osd.{osd} is not in the cluster's OSD map")


def _wait_osd(cluster: CephClient, osd: int, flag: str, want: int, deadline: float) -> str | None:
    """Wait until the OSD's ``flag`` is ``want``; None, or why it did not happen."""
    while True:
        try:
            if _osd_state(cluster, osd)[flag] == want:
                return None
        except CephCommandError as e:
            if time.monotonic() > deadline:
                return str(e)
        if time.monotonic() > deadline:
            state = {"up": ("down", "up"), "in": ("out", "in")}[flag][want]
            return f"osd.{osd} was not {state} within the action's timeout"
        time.sleep(POLL_S)


def _daemon_command(a: Action, cluster: CephClient) -> str:
    host = ""
    if "{host}" in a.command:
        host = str(ceph_json(cluster, "osd", "find", a.arg).get("host") or "")
    return a.command.replace("{id}", a.arg).replace("{host}", host)


def perform(a: Action, cluster: CephClient | None) -> Outcome:
    """Do one action and wait for its effect: it did, what it printed or why not. A ``run``
    step runs here through ``sh -c``, or on its host through the host's ``shell:``."""
    deadline = time.monotonic() + a.timeout_s
    if a.step == "run":
        return _exec(a.argv(), a.timeout_s)
    if cluster is None:
        return Outcome(False, "the point has no Ceph target")
    try:
        if a.step in ("osd_stop", "osd_start"):
            done = _sh(_daemon_command(a, cluster), a.timeout_s)
            flag, want = "up", int(a.step == "osd_start")
        elif a.step in ("osd_out", "osd_in"):
            done = _ceph(cluster, "osd", a.step.removeprefix("osd_"), a.arg, timeout=a.timeout_s)
            flag, want = "in", int(a.step == "osd_in")
        else:
            verb = a.step.removeprefix("osd_")
            return _ceph(cluster, "osd", verb, a.arg, timeout=a.timeout_s)
        if not done.ok:
            return done
        why = _wait_osd(cluster, int(a.arg), flag, want, deadline)
        return Outcome(why is None, why or done.text, done.status)
    except CephCommandError as e:
        return Outcome(False, str(e))


class Drill:
    """A point's actions in a thread: :meth:`start` as its load begins, :meth:`stop` after."""

    def __init__(
        self,
        point: Point,
        events: RunEvents,
        do: Callable[[Action, CephClient | None], Outcome] = perform,
        should_stop: Callable[[], bool] = lambda: False,
    ) -> None:
        self.point, self.events, self.do = point, events, do
        self.should_stop = should_stop
        self.cluster = _cluster(point)
        self.began = 0.0
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._run, name="storbench-drill", daemon=True)
        self.next = 0  # the first action not yet begun
        #: why the drill did not do what it should because of storbench itself (a step
        #: that raised, the thread's end), or None; the point fails with it
        self.error: str | None = None

    def start(self) -> None:
        self.began = time.time()
        self.thread.start()

    def stop(self) -> None:
        """The load ended: actions not begun are skipped; one in progress is waited for;
        after Ceph steps, the cluster's healing too (:meth:`wait_healed`)."""
        self.done.set()
        self.thread.join()
        if self.cluster is not None and any(a.ceph for a in self.point.actions[: self.next]):
            self.wait_healed(self.cluster)

    def wait_healed(self, cluster: CephClient, timeout: float = HEAL_WAIT_S) -> None:
        """Until HEALTH_OK with every PG active+clean has held HOLD_S (the drill report
        measures the time to it; the run's health monitor records the changes), at most
        ``timeout`` s, or until the run is stopped. The wait is an event of the run."""
        t0 = time.monotonic()
        since: float | None = None
        while not self.should_stop():
            s = sample_health(cluster, [])
            now = time.monotonic()
            since = (since or now) if s.status == "HEALTH_OK" and s.clean else None
            if since is not None and now - since >= HOLD_S:
                outcome = f"healed; waited {now - t0:.0f} s after the load"
                break
            if now - t0 > timeout:
                outcome = f"not healed {timeout:g} s after the load: the run goes on"
                break
            time.sleep(POLL_S * 4)
        else:
            outcome = "stopped before the cluster healed"
        self.events.add(
            "drill",
            f"point {self.point.index + 1}: {outcome}",
            {"point": self.point.index, "outcome": outcome, "waited_s": time.monotonic() - t0},
        )

    def _run(self) -> None:
        """The steps in order. Whatever goes wrong in storbench here is said, never lost
        with the thread: a step that raised is a failed step, and :attr:`error` says why
        (the runner fails the point with it)."""
        try:
            self._steps()
        except BaseException as e:
            self.error = self.error or f"the drill stopped: {type(e).__name__}: {e}"
            with contextlib.suppress(Exception):
                self.events.add(
                    "drill",
                    f"point {self.point.index + 1}: {self.error}",
                    {"point": self.point.index, "outcome": "failed", "error": self.error},
                )
            if not isinstance(e, Exception):
                raise

    def _steps(self) -> None:
        for n, a in enumerate(self.point.actions):
            if self.done.wait(max(0.0, a.at_s - (time.time() - self.began))):
                break
            self.next = n + 1
            started = time.time() - self.began
            try:
                did = self.do(a, self.cluster)
            except Exception as e:
                why = f"storbench failed to do it: {type(e).__name__}: {e}"
                self.error = self.error or f"{a.label()}: {why}"
                did = Outcome(False, why)
            ended = time.time() - self.began
            self._record(a, "done" if did.ok else "failed", did.text, started, ended, did.status)
        for a in self.point.actions[self.next :]:
            self._record(a, "skipped", "the load ended before its time", None, None)

    def _record(
        self,
        a: Action,
        outcome: str,
        text: str,
        started: float | None,
        ended: float | None,
        status: int | None = None,
    ) -> None:
        took = f" in {ended - started:.1f} s" if started is not None and ended is not None else ""
        message = f"point {self.point.index + 1}: {a.label()} at {a.at_s:g} s: {outcome}{took}"
        if outcome != "done" and text:
            message += f" ({text.splitlines()[-1][:200] if text.strip() else ''})"
        data: dict[str, Any] = {
            "point": self.point.index,
            **a.to_dict(),
            "outcome": outcome,
            "started_s": started,
            "ended_s": ended,
            "output": text,
            **({"exit_status": status} if status is not None else {}),
            "began_at": self.began,
        }
        self.events.add("action", message, data)
