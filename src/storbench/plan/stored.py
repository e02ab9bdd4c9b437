"""A point as a results database gives it back, checked by the rules of a plan before it
runs again.

``resume`` runs the points of a run that have no measurement from their stored specs (the
``points`` table), not from a plan, and a spec may have come from anywhere: a plan run on
this machine, an archive (``import``), another database (``merge``), or a hand edit of the
database. So each is read back here as a plan would say it -- its target and hosts as
plan entries, its options as a workload's, its actions, steady state, interval and
preconditioning as the plan's keys -- through the plan loader's own parts (Reading,
OptionReader, TargetReader, WorkloadReader and the Loader's checks that span them), and
what they read must be the point again: a spec that holds anything no plan makes (a key
the point does not have, a value in another form) is refused as well. One check, at
resume, whatever the spec's origin (:func:`check`).

A plan's commands are its author's: drill ``run`` steps, the commands that stop and start
an OSD, the ssh destinations and agents of hosts. So are the endpoints it acts on with the
user's credentials: an S3 endpoint its requests are signed for with the user's keys, a
Ceph pool written with the user's keyring. A run that came from another database (an
archive or a merge: its provenance says so) brings someone else's, which storbench never
runs or signs for (:func:`commands`).
"""

from __future__ import annotations

import dataclasses
import functools
import math
import types
import typing
from typing import Any

from ruamel.yaml.comments import CommentedMap

import storbench.plan.actionkeys as ak
import storbench.plan.enginekeys as enginekeys
import storbench.plan.schema as schema
from storbench import hooks
from storbench.model.errors import PlanError
from storbench.plan.load import Loader
from storbench.plan.model import Host, Plan, Point, PointHost, Target, Workload, slot_target
from storbench.plan.precondkeys import problem as precondition_problem
from storbench.plan.rules import CEPH_KINDS, LOAD_AXES, LOCAL, S3_KIND
from storbench.plan.steadykeys import FIELDS, steady_state
from storbench.plan.steadykeys import problem as steady_problem
from storbench.plan.yamlpos import _describe

#: The fix of a point whose spec no plan makes (after the rule's own fix, if any).
STORED_FIX = (
    "resume runs a run's stored points as they are: measure the rest with a plan of your "
    "own (`storbench run PLAN`); what the run measured stays as it is"
)
_SCALARS = (str, int, float, bool, type(None))


def check(spec: Any, idx: int, *, foreign: bool = False) -> Point:
    """The point stored as ``spec`` at index ``idx`` of its run, when a plan could have
    made it; :class:`PlanError` naming the key, the value and the fix otherwise (its
    ``file`` says "point N"). ``foreign``: the run came from another database, so it may
    run no command of its own (:func:`commands`)."""
    point = StoredPoint(spec, idx).point()
    found = commands(point) if foreign else []
    if found:
        raise PlanError(
            f"{found[0]}: the run came from another database (someone else's plan), and "
            "storbench runs no command of it and signs nothing for it with your credentials",
            file=f"point {idx + 1}",
            fix="if you trust it, put the point in a plan of your own (`storbench show "
            "RUN` shows the run's plan) and run that",
        )
    return point


def commands(p: Point) -> list[str]:
    """What of point ``p`` runs commands of its plan's author or acts on an endpoint it
    named with the user's credentials (module comment)."""
    out = []
    for a in p.actions:
        if a.step == "run":
            out.append(f"its drill step {a.label()}")
        elif a.command and a.command != ak.OSD_DAEMONS.get(a.step.removeprefix("osd_")):
            out.append(f"its drill step {a.label()} runs `{a.command}`")
    for h in p.hosts:
        if h.ssh:
            out.append(f"its host {h.label} logs in with ssh to {h.ssh} and runs {list(h.agent)}")
    for t in dict.fromkeys([p.target, *(h.target for h in p.hosts)]):
        if t.kind == S3_KIND:
            out.append(
                f"its target {t.label} is the S3 endpoint {t.endpoint}, whose requests would be "
                "signed with your keys"
            )
        elif t.kind in CEPH_KINDS:
            out.append(
                f"its target {t.label} writes to the Ceph pool {t.pool} with your cluster's keyring"
            )
    return out


def target_entry(t: Target) -> dict[str, Any]:
    """Target ``t`` as a plan's ``targets:`` entry says it."""
    entry: dict[str, Any] = {t.kind: t.path}
    if t.kind in CEPH_KINDS:
        entry.update(conf=t.conf, clientname=t.client, size=t.size)
    elif t.kind == S3_KIND:
        entry.update(
            endpoint=t.endpoint,
            region=t.region,
            prefix=t.prefix,
            credentials=t.credentials,
            create_bucket=t.create_bucket,
            insecure=t.insecure,
            keep_objects=t.keep_objects,
        )
    entry["name"] = t.name
    return {k: v for k, v in entry.items() if v is not None}


def host_entry(h: PointHost) -> dict[str, Any]:
    """Host ``h`` of a point as a plan's ``hosts:`` entry says it (its own target)."""
    entry: dict[str, Any] = {"address": h.address}
    if not h.local:
        entry["port"] = h.port
    if h.label != (LOCAL if h.local else f"{h.address}:{h.port}"):
        entry["name"] = h.label
    if h.ssh:
        entry["ssh"] = h.ssh
        entry["agent"] = list(h.agent)
    entry["targets"] = [target_entry(h.target)]
    return entry


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


class StoredPoint:
    """One stored spec read back as a plan would say it (module comment): its errors are
    the loader's, at ``point N``."""

    def __init__(self, spec: Any, idx: int) -> None:
        self.spec = spec
        self.idx = idx
        self.loader = Loader("", f"point {idx + 1}")
        self.reading = self.loader.reading

    def err(self, msg: str, fix: str | None = STORED_FIX) -> PlanError:
        return self.reading.err(msg, fix=fix)

    def point(self) -> Point:
        """The point, every check passed."""
        p = self.shape()
        where = f"workload {p.workload!r}"
        self.reading.read_keys(schema.WORKLOAD, {"name": p.workload}, None, None, only=("name",))
        targets = [h.target for h in p.hosts] or [p.target]
        for t in targets:
            self.same(f"target {t.label}", t, self.loader.targets.target(target_entry(t), [], 0))
        hosts: list[Host] = []
        if p.hosts:
            hosts = self.loader.targets.hosts({"hosts": [host_entry(h) for h in p.hosts]}, [])
            self.check_hosts(p, hosts)
        decl = self.options(p, where)
        plan = Plan(
            name="",
            source=self.reading.source,
            text="",
            targets=targets,
            workloads=[Workload(p.workload, p.params, None, p.actions)],
            hosts=hosts,
            interval_ms=p.interval_ms,
            steady_state=p.steady,
            preconditions={t: p.precondition for t in targets},
            purges={t: p.purge for t in targets if p.purge},
        )
        self.spans(p, plan, decl)
        self.keys(p)
        return p

    def shape(self) -> Point:
        """The spec as a :class:`Point`, when it is one as storbench writes it: the point
        read from it writes the spec again, key for key."""
        spec = self.spec
        if not isinstance(spec, dict):
            raise self.err(f"the stored point is {_describe(spec)}, not a point")
        for key, kinds in (("index", int), ("repetition", int), ("key", str), ("workload", str)):
            value = spec.get(key)
            if isinstance(value, bool) or not isinstance(value, kinds):
                raise self.err(f"`{key}` is {_describe(value)}")
        if spec["index"] != self.idx or spec["repetition"] < 0:
            raise self.err(f"`index` is {spec['index']} and `repetition` {spec['repetition']}")
        for key in ("params", "axes", "extra"):
            value = spec.get(key, {})
            if not isinstance(value, dict):
                raise self.err(f"`{key}` is {_describe(value)}, not a mapping of names to values")
            for k, v in value.items():
                finite = not isinstance(v, float) or math.isfinite(v)
                if not isinstance(k, str) or not isinstance(v, _SCALARS) or not finite:
                    raise self.err(f"`{key}.{k}` is {_short(v)}, not one value a plan gives")
        est = spec.get("est_seconds")
        if est is not None and (
            isinstance(est, bool) or not isinstance(est, int | float) or not 0 <= est < math.inf
        ):
            raise self.err(f"`est_seconds` is {_describe(est)}")
        try:
            p = Point.from_dict(spec)
            again = p.to_dict()
        except (KeyError, TypeError, ValueError, AttributeError, OverflowError) as e:
            raise self.err(
                f"the stored point is not a whole point ({type(e).__name__}: {e})"
            ) from None
        for key in dict.fromkeys([*spec, *again]):
            if spec.get(key) != again.get(key):
                raise self.err(
                    f"`{key}` is {_short(spec.get(key))}, which is not what storbench "
                    f"stores of a point ({_short(again.get(key))})"
                )
        wrong = typed(p, "")
        if wrong is not None:
            raise self.err(f"`{wrong[0]}` is {_short(wrong[1])}, not {wrong[2]}")
        return p

    def same(self, what: str, stored: Any, read: Any) -> None:
        """What a plan's reader made of a stored part is that part again."""
        if stored == read:
            return
        fields = getattr(stored, "__dataclass_fields__", {})
        diff = next((f for f in fields if getattr(stored, f) != getattr(read, f)), None)
        if diff is None:
            raise self.err(f"{what} is not one a plan makes")
        raise self.err(
            f"{what}: `{diff}` is {_short(getattr(stored, diff))}, where a plan that says "
            f"so makes {_short(getattr(read, diff))}"
        )

    def check_hosts(self, p: Point, hosts: list[Host]) -> None:
        """Each host of the point is the host its plan entry makes (as Plan.expand does)."""
        for h, read in zip(p.hosts, hosts, strict=True):
            made = PointHost(
                read.label, read.address, read.port, h.target, read.ssh or "", read.agent
            )
            self.same(f"host {h.label}", h, made)
        shown = slot_target([h.target for h in p.hosts])
        if (p.target.kind, p.target.path) != (shown.kind, shown.path):
            raise self.err(
                f"the point's target {p.target.label} is not its first host's ({shown.label})"
            )

    def options(self, p: Point, where: str) -> enginekeys.EngineKeys:
        """The point's options as a workload's (those its engine sets for its target as the
        engine sets them), and what it adds (``extra``) as options too."""
        engine = p.params.get("engine", hooks.DEFAULT_ENGINE)
        if engine not in hooks.engine_names():
            self.loader.options.scalar("engine", engine, None, None, where)
        decl = enginekeys.engine_keys(str(engine))
        added: dict[str, Any] = {}
        made = decl.expander([p.target], 2)(p.target, added, p.repetition)
        own = {k: v for k, v in p.params.items() if not (k in added and added[k] == v)}
        self.loader.options.read(own, None, None, where, engine=str(engine))
        self.loader.workloads.check_engine_keys(decl, p.workload, p.params, p.params, None, 0)
        for k, v in p.extra.items():
            refused = decl.refuse(k)
            if refused is not None:
                raise self.err(f"{where}: {refused[0]}", refused[1])
            if k not in made and not decl.accepts(k):
                raise self.err(f"{where}: `{k}` is no {decl.option_word} storbench adds")
            self.loader.options.scalar(k, v, None, None, where, [decl])
        return decl

    def spans(self, p: Point, plan: Plan, decl: enginekeys.EngineKeys) -> None:
        """What spans the point's parts, as the loader checks it of a plan."""
        wls, doc = plan.workloads, CommentedMap()
        self.loader.check_engines(wls, plan.targets, plan.hosts, doc)
        if p.actions:
            self.actions(p)
        self.loader.workloads.check_actions(p.workload, p.actions, p.params, {})
        pairs = [(h.target, h.local) for h in p.hosts] or [(p.target, True)]
        self.loader.workloads.check_sizes(pairs, wls, doc)
        self.loader.workloads.check_blocks(wls, plan.targets, doc)
        if plan.hosts:
            self.loader.workloads.check_no_output_files(wls, doc)
        self.loader.targets.check_local([t for t, local in pairs if local])
        self.loader.targets.check_precondition(plan, doc)
        self.loader.targets.check_purge(plan, doc)
        self.loader.workloads.check_steady(plan, doc)
        problem = decl.point_problem(p)
        if problem is not None:
            raise self.err(f"workload {p.workload!r}: {problem[0]}", problem[1])

    def actions(self, p: Point) -> None:
        """The point's drill steps as ``actions:`` (and ``osd_daemons:``) say them."""
        items: list[dict[str, Any]] = []
        daemons: dict[str, str] = {}
        for a in p.actions:
            arg: Any = a.arg
            if a.step in ("osd_stop", "osd_start", "osd_out", "osd_in") and arg.isdigit():
                arg = int(arg)
            items.append({"at": a.at_s, a.step: arg, "timeout": a.timeout_s})
            if a.host:
                items[-1]["host"] = a.host
                why = ak.shell_problem(list(a.shell), {})
                if why is not None:
                    raise self.err(f"action {a.label()}: {why[0]}", why[1])
            if a.command:
                daemons[a.step.removeprefix("osd_")] = a.command
        for check, value in ((ak.problem, items), (ak.daemons_problem, daemons or None)):
            why = check(value, {})
            if why is not None:
                raise self.err(f"workload {p.workload!r}: {why[0]}", why[1])
        for a, read in zip(p.actions, ak.actions(items, daemons), strict=True):
            self.same(f"action {a.label()}", a, dataclasses.replace(read, shell=a.shell))

    def keys(self, p: Point) -> None:
        """The plan's keys a point carries: interval, steady state, preconditioning."""
        values = self.reading.read_keys(
            schema.PLAN, {"interval": f"{p.interval_ms}ms"}, None, None, only=("interval",)
        )
        if schema.interval_ms(values["interval"]) != p.interval_ms:
            raise self.err(f"`interval_ms` is {p.interval_ms}")
        if p.steady is not None:
            given = {k: getattr(p.steady, f) for k, f in FIELDS.items()}
            why = steady_problem(given, {})
            if why is not None:
                raise self.err(why[0], why[1])
            self.same("`steady`", p.steady, steady_state(given))
        pre = {"mode": p.precondition, **({"purge": p.purge} if p.purge else {})}
        why = precondition_problem(pre, {})
        if why is not None:
            raise self.err(why[0], why[1])
        if p.stop_at is not None and (p.stop_at not in LOAD_AXES or p.stop_at not in p.axes):
            raise self.err(f"`stop_at` is {_short(p.stop_at)}, not an axis of load it sweeps")
        self.search(p)

    def search(self, p: Point) -> None:
        """A capacity search's step: its objective as ``slo:`` allows one, and what it
        offers as the search sets it (a whole rate, fio's rate_iops with it)."""
        if p.slo is not None:
            o = p.slo
            pct = o.percentile
            if not (
                _finite(o.latency_ns, 0, 3.6e12)
                and (pct is None or _finite(pct, 0, 100))
                and _finite(o.resolution, 0.0009, 0.5)
                and (pct is None or 0 < pct < 100)
            ):
                raise self.err(f"`slo` is {_short(o.to_dict())}, not an objective `slo:` gives")
        offered = p.offered_iops
        if offered is not None and (
            p.slo is None
            or isinstance(offered, bool)
            or not isinstance(offered, int)
            or offered < 1
            or "rate_iops" not in p.params
        ):
            raise self.err(f"`offered_iops` is {_short(offered)}, not a step a search makes")


def typed(value: Any, where: str, hint: Any = None) -> tuple[str, Any, str] | None:
    """The first field of dataclass ``value`` (a Point and what it holds) whose value is
    not of the type the dataclass declares -- (where, the value, the type) -- or None: a
    spec's JSON may hold a list where a path goes, which the Point takes as it is."""
    if hint is None or dataclasses.is_dataclass(hint):
        if not dataclasses.is_dataclass(value) or isinstance(value, type):
            return (where, value, getattr(hint, "__name__", "a mapping")) if hint else None
        hints = _hints(type(value))
        for f in dataclasses.fields(value):
            found = typed(getattr(value, f.name), f"{where}.{f.name}".lstrip("."), hints[f.name])
            if found is not None:
                return found
        return None
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is Any:
        return None
    if origin in (types.UnionType, typing.Union):
        if value is None and type(None) in args:
            return None
        kinds = [a for a in args if a is not type(None)]
        tried = [typed(value, where, a) for a in kinds]
        if None in tried:
            return None
        return tried[0] if len(kinds) == 1 else (where, value, " or ".join(map(_name, args)))
    if origin in (list, tuple, dict):
        if not isinstance(value, origin):
            return where, value, _name(hint)
        items = value.items() if isinstance(value, dict) else enumerate(value)
        inner = args[-1] if origin is dict else args[0]
        for k, v in items:
            if origin is dict and not isinstance(k, str):
                return where, k, "a name"
            found = typed(v, f"{where}[{k!r}]", inner)
            if found is not None:
                return found
        return None
    if hint is float:
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        ok = ok and math.isfinite(value)
    elif hint is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    else:
        ok = isinstance(value, hint)
    return None if ok else (where, value, _name(hint))


_hints = functools.cache(typing.get_type_hints)


def _name(hint: Any) -> str:
    return "null" if hint is type(None) else getattr(hint, "__name__", str(hint))


def _finite(value: Any, low: float, high: float) -> bool:
    """Whether ``value`` is a number (not a bool) from ``low`` to ``high``."""
    return (
        not isinstance(value, bool)
        and isinstance(value, int | float)
        and math.isfinite(value)
        and low <= value <= high
    )
