"""What a plan is once loaded: targets, hosts, workloads, points and the plan itself, and
its expansion into points."""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

from storbench import hooks
from storbench.model.errors import PlanError
from storbench.model.series import DEFAULT_INTERVAL_MS
from storbench.model.units import UnitError, parse_time
from storbench.plan.actionkeys import Action
from storbench.plan.rules import CEPH_KINDS, DEFAULT_FIO_PORT, LOCAL, MAX_POINTS
from storbench.plan.slokeys import Slo
from storbench.plan.soakkeys import SoakLimits
from storbench.plan.steadykeys import SteadyState
from storbench.plan.untilkeys import Until

#: A target's fields that only an s3 target has.
S3_FIELDS = (
    "endpoint",
    "region",
    "prefix",
    "credentials",
    "create_bucket",
    "insecure",
    "keep_objects",
)


@dataclass(frozen=True)
class Target:
    """What is measured: a file, a block device or a directory (on the local host), an RBD
    image (``path`` is ``POOL/IMAGE``), a RADOS pool (``path`` is the pool) or an S3 bucket
    (``path`` is the bucket)."""

    kind: str
    path: str
    name: str | None = None
    conf: str | None = None  # Ceph targets: the cluster's ceph.conf
    client: str | None = None  # Ceph targets: the client name (fio clientname=, rados --id)
    size: int | None = None  # rbd: the size of the image storbench creates when it is missing
    # s3 (``path`` is the bucket; plan/s3keys.py): the service, the region signed into
    # requests, the objects' name prefix, where the keys come from (never the keys), whether
    # a missing bucket is created, whether https accepts a certificate that does not verify
    endpoint: str | None = None
    region: str | None = None
    prefix: str | None = None
    credentials: str | None = None
    create_bucket: bool | None = None
    insecure: bool | None = None
    keep_objects: bool | None = None

    @property
    def label(self) -> str:
        if self.name:
            return self.name
        if self.kind == "s3":
            return f"s3://{self.path}/{self.prefix or ''}"
        return f"{self.kind}:{self.path}" if self.ceph else self.path

    @property
    def ceph(self) -> bool:
        return self.kind in CEPH_KINDS

    @property
    def pool(self) -> str:
        """The pool of a Ceph target."""
        return self.path.split("/", 1)[0]

    @property
    def image(self) -> str:
        """The image of an rbd target."""
        return self.path.split("/", 1)[1]

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"kind": self.kind, "path": self.path}
        for k in ("name", "conf", "client", "size", *S3_FIELDS):
            if getattr(self, k) is not None:
                d[k] = getattr(self, k)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Target:
        return cls(
            kind=d["kind"],
            path=d["path"],
            name=d.get("name"),
            conf=d.get("conf"),
            client=d.get("client"),
            size=d.get("size"),
            **{k: d[k] for k in S3_FIELDS if d.get(k) is not None},
        )


@dataclass(frozen=True)
class Host:
    """A host of ``hosts:``: a fio server at ``address``:``port``, or ``local`` (the
    controller, where storbench starts a loopback fio server for the run itself)."""

    address: str
    port: int = DEFAULT_FIO_PORT
    name: str | None = None
    targets: tuple[Target, ...] | None = None  # None: the plan's targets
    shell: tuple[str, ...] = ()  # how a drill's run step reaches it (actionkeys.shell_prefix)
    ssh: str | None = None  # an SSH destination: storbench starts its agent there (sshagents)
    agent: tuple[str, ...] = ()  # the agent's command there (with ssh)

    @property
    def local(self) -> bool:
        return self.address == LOCAL

    @property
    def label(self) -> str:
        if self.name:
            return self.name
        return LOCAL if self.local else f"{self.address}:{self.port}"


@dataclass(frozen=True)
class PointHost:
    """One host of a point and the target it measures there."""

    label: str
    address: str
    port: int
    target: Target
    ssh: str = ""  # an SSH destination: storbench starts its agent there for the run
    agent: tuple[str, ...] = ()  # the agent's command there

    @property
    def local(self) -> bool:
        return self.address == LOCAL

    def to_dict(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "address": self.address,
            "port": self.port,
            "target": self.target.to_dict(),
            **({"ssh": self.ssh, "agent": list(self.agent)} if self.ssh else {}),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> PointHost:
        return cls(
            label=d["label"],
            address=d["address"],
            port=int(d["port"]),
            target=Target.from_dict(d["target"]),
            ssh=str(d.get("ssh") or ""),
            agent=tuple(str(w) for w in d.get("agent") or ()),
        )


@dataclass
class Workload:
    name: str
    options: dict[str, Any]  # global options, then the workload's own; lists are axes
    line: int | None = None
    actions: list[Action] = field(default_factory=list)  # a drill's steps (actionkeys.py)
    stop_at: str | None = None  # the axis whose climb stops at its knee (analysis/climb.py)


@dataclass
class Point:
    """One cell of the matrix: one engine invocation with fully resolved parameters."""

    index: int
    key: str  # stable identity: hash of target, workload name and params (not repetition)
    repetition: int
    target: Target
    workload: str
    params: dict[str, Any]  # resolved fio options of the workload (no target options)
    axes: dict[str, Any]  # the swept options and this point's value of each
    extra: dict[str, Any] = field(default_factory=dict)  # options storbench adds (randseed)
    est_seconds: float | None = None
    #: The hosts the point runs on at once (fio client/server), each with its own target;
    #: empty for a plan without ``hosts:`` (fio runs locally). ``target`` then only names
    #: the point's targets for display.
    hosts: list[PointHost] = field(default_factory=list)
    #: how often the engine reports while the point runs (its time series), ms
    interval_ms: int = DEFAULT_INTERVAL_MS
    #: run in rounds until steady state (storbench.analysis.steady), or None: its fixed time
    steady: SteadyState | None = None
    #: recorded even when cut short (Ctrl-C): a soak run's point is what ran until then
    keep_cut: bool = False
    #: steps at set times into its load (a failure drill: storbench.execute.drills)
    actions: list[Action] = field(default_factory=list)
    #: what is done to its target before it is measured: none, sequential, workload
    precondition: str = "none"
    #: how its device is purged first, once per target and session (storbench.execute.purge):
    #: discard, secure, or None
    purge: str | None = None
    #: the axis of load whose climb stops at its knee (``stop_at``, analysis/climb.py)
    stop_at: str | None = None
    #: the latency objective of the capacity search the point is a step of (``slo:``,
    #: analysis/capacity.py), and the I/Os per second the step offers (None: the probe)
    slo: Slo | None = None
    offered_iops: int | None = None
    #: repetitions until the verdict is known (``repeat: {until: significant}``): the rule,
    #: and which side of its comparison the point is (0: A, 1: B)
    until: Until | None = None
    side: int | None = None

    @property
    def writes(self) -> bool:
        if self.precondition == "sequential" or self.purge:  # its target is written before it
            return True
        return bool(hooks.engine_keys(self.engine).writes(self.params))

    @property
    def targets(self) -> list[Target]:
        """What the point measures: each host's own target, or its target without hosts."""
        return [h.target for h in self.hosts] if self.hosts else [self.target]

    @property
    def engine(self) -> str:
        """The name of the engine that runs it (``engine:`` of its workload)."""
        return str(self.params.get("engine", hooks.DEFAULT_ENGINE))

    def label(self) -> str:
        shown = " ".join(f"{k}={v}" for k, v in self.axes.items())
        return f"{self.workload} {shown}".strip()

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "key": self.key,
            "repetition": self.repetition,
            "target": self.target.to_dict(),
            "workload": self.workload,
            "params": self.params,
            "axes": self.axes,
            "extra": self.extra,
            "est_seconds": self.est_seconds,
            **({"hosts": [h.to_dict() for h in self.hosts]} if self.hosts else {}),
            **(
                {"interval_ms": self.interval_ms} if self.interval_ms != DEFAULT_INTERVAL_MS else {}
            ),
            **({"steady": self.steady.to_dict()} if self.steady else {}),
            **({"keep_cut": True} if self.keep_cut else {}),
            **({"actions": [a.to_dict() for a in self.actions]} if self.actions else {}),
            **({"precondition": self.precondition} if self.precondition != "none" else {}),
            **({"purge": self.purge} if self.purge else {}),
            **({"stop_at": self.stop_at} if self.stop_at else {}),
            **({"slo": self.slo.to_dict()} if self.slo else {}),
            **({"offered_iops": self.offered_iops} if self.offered_iops is not None else {}),
            **({"until": self.until.to_dict(), "side": self.side} if self.until else {}),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Point:
        return cls(
            index=d["index"],
            key=d["key"],
            repetition=d["repetition"],
            target=Target.from_dict(d["target"]),
            workload=d["workload"],
            params=d["params"],
            axes=d["axes"],
            extra=d.get("extra", {}),
            est_seconds=d.get("est_seconds"),
            hosts=[PointHost.from_dict(h) for h in d.get("hosts") or []],
            interval_ms=int(d.get("interval_ms", DEFAULT_INTERVAL_MS)),
            steady=SteadyState.from_dict(d["steady"]) if d.get("steady") else None,
            keep_cut=bool(d.get("keep_cut")),
            actions=[Action.from_dict(a) for a in d.get("actions") or []],
            precondition=str(d.get("precondition") or "none"),
            purge=str(d["purge"]) if d.get("purge") else None,
            stop_at=str(d["stop_at"]) if d.get("stop_at") else None,
            slo=Slo.from_dict(d["slo"]) if d.get("slo") else None,
            offered_iops=d.get("offered_iops"),
            until=Until.from_dict(d["until"]) if d.get("until") else None,
            side=int(d["side"]) if d.get("until") else None,
        )


@dataclass
class Plan:
    name: str
    source: str  # file path, or "suite:NAME"
    text: str  # the plan text as read
    targets: list[Target]
    workloads: list[Workload]
    repeat: int = 1
    description: str = ""
    report: str | None = None
    overrides: list[str] = field(default_factory=list)
    hosts: list[Host] = field(default_factory=list)
    max_points: int = MAX_POINTS
    interval_ms: int = DEFAULT_INTERVAL_MS
    steady_state: SteadyState | None = None
    soak: SoakLimits = field(default_factory=SoakLimits)
    #: each target's preconditioning (none, sequential, workload): plan key ``precondition``
    preconditions: dict[Target, str] = field(default_factory=dict)
    #: the targets purged before their preconditioning (discard, secure): ``precondition``'s
    #: ``purge``
    purges: dict[Target, str] = field(default_factory=dict)
    #: the latency objective of a capacity search of every point (``slo:``), or None
    slo: Slo | None = None
    #: repetitions until the verdict is known (``repeat: {until: significant}``), or None
    until: Until | None = None
    #: where the run's live figures are served for Prometheus (``metrics:``), or None
    metrics: str | None = None
    #: the run's labels (``labels:``; ``run --label`` adds to them), name -> text
    labels: dict[str, str] = field(default_factory=dict)

    def point_count(self) -> int:
        """How many points :meth:`expand` makes, counted without making them."""
        slots = len(self.host_slots()) if self.hosts else len(self.targets)
        return self.repeat * slots * sum(combinations(wl) for wl in self.workloads)

    def host_slots(self) -> list[list[tuple[Host, Target]]]:
        """Per target index, each host with its target there (hosts in plan order)."""
        lists = [list(h.targets) if h.targets is not None else self.targets for h in self.hosts]
        count = len(lists[0]) if lists else 0
        return [[(h, ts[i]) for h, ts in zip(self.hosts, lists, strict=True)] for i in range(count)]

    def expand(self) -> list[Point]:
        """The matrix as an ordered list of points.

        Repetitions run as rounds (the whole matrix, then again), so slow drift of the
        target spreads over every point instead of biasing the last ones. With ``repeat`` > 1
        each round gets its own ``randseed`` (unless the plan sets one), so repetitions touch
        independent random offsets yet stay reproducible.

        With ``hosts:`` a point runs on every host (or on the first ``clients`` of them),
        each host on its own target of the same index.
        """
        count = self.point_count()
        if count > self.max_points:  # the loader refuses first, naming the line
            raise PlanError(
                f"the plan expands to {fmt_count(count)} points, more than {self.max_points:,}",
                file=self.source,
                fix="shrink the axes or `repeat`, or raise the limit with --max-points",
            )
        points: list[Point] = []
        expanders: dict[str, Any] = {}  # each engine's, made on its first point
        slots: list[tuple[Target, list[tuple[Host, Target]]]]
        if self.hosts:
            slots = [(slot_target([t for _, t in slot]), slot) for slot in self.host_slots()]
        else:
            slots = [(t, []) for t in self.targets]
        for rep in range(self.repeat):
            for target, slot in slots:
                for wl in self.workloads:
                    axis_names = [k for k, v in wl.options.items() if isinstance(v, list)]
                    axis_values = [wl.options[k] for k in axis_names]
                    for combo in itertools.product(*axis_values):
                        params = dict(wl.options)
                        params.update(zip(axis_names, combo, strict=True))
                        decl = hooks.engine_keys(params.get("engine", hooks.DEFAULT_ENGINE))
                        hosts: list[PointHost] = []
                        if decl.no_hosts is None:  # on the first `clients` hosts
                            clients = int(params.pop("clients", len(slot)))
                            hosts = [
                                PointHost(h.label, h.address, h.port, t, h.ssh or "", h.agent)
                                for h, t in slot[:clients]
                            ]
                        if self.slo is not None:  # its steps judge total latency's
                            params.setdefault("lat_percentiles", 1)
                        if decl.name not in expanders:
                            expanders[decl.name] = decl.expander(self.targets, self.repeat)
                        extra = expanders[decl.name](target, params, rep)
                        points.append(
                            Point(
                                index=len(points),
                                key=point_key(target, wl.name, params, hosts),
                                repetition=rep,
                                target=target,
                                workload=wl.name,
                                params=params,
                                axes=dict(zip(axis_names, combo, strict=True)),
                                extra=extra,
                                est_seconds=_with_precondition(
                                    estimate_seconds(params, self.steady_state),
                                    params,
                                    self.preconditions.get(target, "none"),
                                    self.steady_state,
                                ),
                                hosts=hosts,
                                interval_ms=self.interval_ms,
                                steady=self.steady_state,
                                keep_cut=self.report == "soak",
                                actions=list(wl.actions),
                                precondition=self.preconditions.get(target, "none"),
                                purge=self.purges.get(target),
                                stop_at=wl.stop_at,
                                slo=self.slo,
                                until=self.until,
                                side=self._side(target, wl, params),
                            )
                        )
        return points

    def _side(self, target: Target, wl: Workload, params: dict[str, Any]) -> int | None:
        """Which side of the comparison of ``repeat: {until: ...}`` a point is (0: A, the
        first target or the first value of the axis; 1: B), None without the rule."""
        if self.until is None:
            return None
        if self.until.compare == "target":
            return self.targets.index(target)
        values = wl.options[self.until.compare]
        return [str(v) for v in values].index(str(params[self.until.compare]))


def local_points(points: list[Point]) -> list[Point]:
    """The points as this machine sees them: points without hosts, and for each point with
    a ``local`` host, a copy whose target is that host's (what local checks, scratch files,
    inventory and cleanup work on). Remote hosts' targets are checked by the fio engine
    (engines/fio/remote.py)."""
    out = []
    for p in points:
        if not p.hosts:
            out.append(p)
            continue
        for h in p.hosts:
            if h.local:
                out.append(dataclasses.replace(p, target=h.target, hosts=[]))
    return out


def combinations(wl: Workload) -> int:
    """The points of one workload on one target in one repetition: its axes multiplied."""
    return math.prod(len(v) for v in wl.options.values() if isinstance(v, list))


def fmt_count(n: int) -> str:
    """``1,000,000``; a number too long to print in full (Python refuses ints of more than
    4300 digits) as its order of magnitude."""
    if n.bit_length() > 200:
        return f"about 10^{int(n.bit_length() * math.log10(2))}"
    return f"{n:,}"


def slot_target(targets: list[Target]) -> Target:
    """The target that names a point's per-host targets in tables: the target itself when
    every host measures the same path, else the first one, named after all of them."""
    first = targets[0]
    paths = list(dict.fromkeys(t.label for t in targets))
    if len(paths) == 1:
        return first
    shown = ", ".join(paths[:3]) + (f" (+{len(paths) - 3})" if len(paths) > 3 else "")
    return Target(first.kind, first.path, name=shown)


def point_key(
    target: Target,
    workload: str,
    params: dict[str, Any],
    hosts: list[PointHost] | None = None,
) -> str:
    items: list[Any] = [target.kind, target.path, workload, params]
    if hosts:
        items.append([[h.address, h.port, h.target.kind, h.target.path] for h in hosts])
    blob = json.dumps(items, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def _with_precondition(
    est: float | None, params: dict[str, Any], mode: str, steady: SteadyState | None
) -> float | None:
    """A point's planned time with its ``workload`` preconditioning (its workload until
    steady state, at most SNIA's rounds); ``sequential``'s depends on the target's speed,
    unknown before it runs (the planned time says so: see cli/plans.py)."""
    if mode != "workload" or est is None:
        return est
    return est + (estimate_seconds(params, steady or SteadyState()) or 0.0)


def estimate_seconds(params: dict[str, Any], steady: SteadyState | None = None) -> float | None:
    """Planned duration of a point: ramp_time + runtime (an upper bound unless time_based);
    in steady-state rounds, ramp_time + round for the most rounds it may take."""
    try:
        if steady is not None:
            ramp = parse_time(params.get("ramp_time", 0))
            return steady.max_rounds * (ramp + steady.round_s)
        limit = params.get("runtime", params.get("timeout"))  # timeout: fio's alias
        runtime = parse_time(limit) if limit is not None else None
        ramp = parse_time(params.get("ramp_time", 0))
    except UnitError:
        return None
    if not runtime:  # none, or 0: fio's "no time limit" (the point ends with its size)
        return None
    return ramp + runtime


# ---------------------------------------------------------------------------- loading


_SAFE_NAME = re.compile(r"[^A-Za-z0-9_.-]+")


def job_section_name(workload: str) -> str:
    """A workload name made safe for a fio job section header."""
    return _SAFE_NAME.sub("_", workload)[:60] or "job"
