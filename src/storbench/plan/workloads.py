"""Workloads: their options in order (each engine's keys, as its declaration says: see
enginekeys.py), block sizes, output files and the sizes and client counts that must fit."""

from __future__ import annotations

import dataclasses
import functools
import itertools
import os
from typing import Any

from ruamel.yaml.comments import CommentedMap

import storbench.plan.enginekeys as enginekeys
import storbench.plan.schema as schema
from storbench import hooks
from storbench.model.errors import suggestion
from storbench.model.units import UnitError, fmt_size_short, parse_size, parse_time
from storbench.plan.actionkeys import FIX, Action, actions
from storbench.plan.model import Host, Plan, Target, Workload
from storbench.plan.options import OptionReader
from storbench.plan.reading import Reading
from storbench.plan.rules import LOAD_AXES
from storbench.plan.soakkeys import duration_s
from storbench.plan.yamlpos import _compound, _describe, _position, _submap


class WorkloadReader:
    """The workloads of a plan: each one's name, options (read by ``options``, the global
    ones merged in as its engine takes them) and actions, and the checks of the workloads
    against one another, the targets and the hosts."""

    def __init__(self, reading: Reading, options: OptionReader) -> None:
        self.reading = reading
        self.options = options

    def option_at(self, doc: CommentedMap, i: int, opt: str) -> tuple[Any, Any]:
        """Where workload ``i`` got option ``opt``: its own key, else ``global:``'s."""
        items = doc.get("workloads")
        item = items[i] if isinstance(items, list) else None
        if isinstance(item, dict) and opt in item:
            return item, opt
        glob = doc.get("global")
        if isinstance(glob, dict) and opt in glob:
            return glob, opt
        return items, i

    def check_blocks(
        self, workloads: list[Workload], targets: list[Target], doc: CommentedMap
    ) -> None:
        """Every block size of a workload fits each of its sizes (every combination of the
        axes): fio refuses to run a job whose size is below its block size, and a directory
        target's files (size / nrfiles each) smaller than a block get no I/O at all."""
        directories = any(t.kind == "directory" for t in targets)

        def sizes(wl: Workload, opt: str) -> list[tuple[Any, int]]:
            values = wl.options.get(opt)
            out = []
            for v in values if isinstance(values, list) else [values]:
                if v is None or _compound(v):
                    continue
                try:
                    out.append((v, parse_size(v)))
                except UnitError:
                    continue
            return out

        for i, wl in enumerate(workloads):
            if not enginekeys.of(wl.options).sizes:
                continue
            bs_opt = "bs" if "bs" in wl.options else "blocksize"
            for bs_text, bs in sizes(wl, bs_opt):
                for other in ("size", "filesize"):
                    for text, n in sizes(wl, other):
                        if bs > n:
                            raise self.reading.err(
                                f"workload {wl.name!r}: `{bs_opt}` {bs_text} is larger than "
                                f"`{other}` {text}: fio refuses a job smaller than its block",
                                *self.option_at(doc, i, bs_opt),
                                fix=f"lower `{bs_opt}` or raise `{other}` (each `{bs_opt}` "
                                f"must fit each `{other}` of the axes)",
                                origin_key=bs_opt,
                            )
                if not directories or "filesize" in wl.options:
                    continue
                nrfiles = wl.options.get("nrfiles", wl.options.get("nr_files", 1))
                for files in nrfiles if isinstance(nrfiles, list) else [nrfiles]:
                    for text, n in sizes(wl, "size"):
                        if int(files) > 1 and bs > n // int(files):
                            raise self.reading.err(
                                f"workload {wl.name!r}: `size` {text} over `nrfiles` {files} "
                                f"gives each of the {files} files in a directory target "
                                f"{fmt_size_short(n // int(files))} bytes, less than "
                                f"`{bs_opt}` {bs_text}: fio would do no I/O on them",
                                *self.option_at(doc, i, "nrfiles"),
                                fix="raise `size`, lower `nrfiles`, or give each file a `filesize`",
                                origin_key="nrfiles",
                            )

    def check_no_output_files(self, workloads: list[Workload], doc: CommentedMap) -> None:
        """With ``hosts:`` the options with which an engine writes files of its own (fio's
        write_iolog, write_*_log, mem=mmap:FILE and donorname) write them where storbench
        cannot check them: on each host, or (fio's logs) on this machine as NAME.HOST
        through fio's client."""
        for i, wl in enumerate(workloads):
            written = enginekeys.of(wl.options).file_options(wl.options)
            if written:
                opt = written[0]
                raise self.reading.err(
                    f"workload {wl.name!r}: `{opt}` writes a file, and with `hosts:` fio "
                    "writes it where storbench cannot check that it overwrites nothing (on "
                    "each host, or as NAME.HOST on this machine)",
                    *self.option_at(doc, i, opt),
                    fix="remove it, or run the workload in a plan without `hosts:`",
                    origin_key=opt,
                )

    def read(self, doc: CommentedMap, global_opts: dict[str, Any]) -> list[Workload]:
        node = doc.get("workloads")
        example = "workloads:\n  - name: rand4k\n    rw: randread\n    bs: 4k\n    size: 1g"
        if node is None:
            raise self.reading.err(
                "the plan has no workloads"
                + (" (`workloads:` is empty)" if "workloads" in doc else ""),
                doc,
                "workloads" if "workloads" in doc else None,
                fix=f"add a list of workloads, e.g.\n{example}",
            )
        if not isinstance(node, list) or not node:
            raise self.reading.err(
                f"`workloads` must be a non-empty list, not {_describe(node)}",
                doc,
                "workloads",
                fix=f"start each workload with `- ` under `workloads:`, e.g.\n{example}",
            )
        out: list[Workload] = []
        seen: set[str] = set()
        for i, item in enumerate(node):  # each workload on its own: its error kept
            read = functools.partial(self._workload, doc, node, i, item, global_opts, seen)
            wl = self.reading.kept(read, None)
            if wl is not None:
                out.append(wl)
        return out

    def _workload(
        self,
        doc: CommentedMap,
        node: list[Any],
        i: int,
        item: Any,
        global_opts: dict[str, Any],
        seen: set[str],
    ) -> Workload:
        """Workload ``node[i]``, read with the global options (``seen``: the names so far)."""
        example = "workloads:\n  - name: rand4k\n    rw: randread\n    bs: 4k\n    size: 1g"
        if not isinstance(item, dict):
            raise self.reading.err(
                f"each workload must be a mapping of fio options, not {_describe(item)}",
                node,
                i,
                fix=f"write the workload's options under it, e.g.\n{example}",
            )
        item = dict(item) if not isinstance(item, CommentedMap) else item
        own_keys = {"name": item.get("name", f"w{i + 1}"), "actions": item.get("actions")}
        only = ("name", "actions")  # w1, w2... when the name is left out
        read = self.reading.read_keys(schema.WORKLOAD, item, node, i, only=only, values=own_keys)
        name = str(read["name"]).strip()
        if name in seen:
            raise self.reading.err(
                f"two workloads are named {name!r}",
                item,
                "name",
                fix="give each workload its own name",
            )
        seen.add(name)
        opts = {k: v for k, v in item.items() if k not in ("name", "actions", "stop_at")}
        where = f"workload {name!r}"
        engine = opts.get("engine", global_opts.get("engine", hooks.DEFAULT_ENGINE))
        if engine not in hooks.engine_names():
            self.options.scalar(
                "engine", engine, item if "engine" in item else node, "engine", where
            )
        decl = enginekeys.engine_keys(engine)
        own = self.options.read(_submap(item, opts), node, i, where, engine=engine)
        # global options apply where they mean something: to the workloads whose engine
        # takes them (a plan may mix engines)
        merged = {
            **decl.defaults,
            **{k: v for k, v in global_opts.items() if k not in own and decl.accepts(k)},
            **own,
        }
        if engine == hooks.DEFAULT_ENGINE:
            merged.pop("engine", None)  # the default engine's options are job options
        else:
            merged.setdefault("engine", engine)
        self.check_engine_keys(decl, name, merged, item, node, i)
        steps = actions(read["actions"], doc.get("osd_daemons"))
        stop_at = self.stop_at(item, merged, where) if "stop_at" in item else None
        return Workload(name, merged, _position(node, i)[0], steps, stop_at)

    def stop_at(self, item: Any, opts: dict[str, Any], where: str) -> str:
        """The axis a workload's ``stop_at: knee`` (or ``{AXIS: knee}``) stops climbing on
        (analysis/climb.py): one of the axes that add load, swept upward over 3 values at
        least."""
        value = item["stop_at"]
        swept = [a for a in LOAD_AXES if isinstance(opts.get(a), list)]
        example = "`stop_at: knee` (the one axis of load it sweeps) or `stop_at: {iodepth: knee}`"
        if value == "knee" and len(swept) == 1:
            axis = swept[0]
        elif isinstance(value, dict) and len(value) == 1 and list(value.values()) == ["knee"]:
            axis = str(next(iter(value)))
        else:
            which = f"it sweeps {', '.join(swept)}" if swept else "it sweeps none of them"
            raise self.reading.err(
                f"{where}: `stop_at` is {_describe(value)}: it names an axis of load "
                f"({', '.join(LOAD_AXES)}) to stop climbing at its knee, and {which}",
                item,
                "stop_at",
                fix=f"write {example}",
            )
        values = opts.get(axis)
        if axis not in LOAD_AXES or not isinstance(values, list):
            raise self.reading.err(
                f"{where}: `stop_at` names {axis!r}, which is not an axis of load it sweeps "
                f"({', '.join(swept) or 'none'})",
                item,
                "stop_at",
                fix=f"sweep one of {', '.join(LOAD_AXES)} as a list and name it: {example}",
            )
        order = [load_value(axis, v) for v in values]
        rising = None not in order and all(
            b > a for a, b in itertools.pairwise(order) if a is not None and b is not None
        )
        if len(values) < 3 or not rising:
            raise self.reading.err(
                f"{where}: `stop_at` climbs {axis} {values}: that is not 3 values or more, "
                "each more load than the one before",
                item,
                "stop_at",
                fix=f"list {axis} from the least load to the most, e.g. `{axis}: [1, 4, 16, 64]`",
            )
        return axis

    def check_engine_keys(
        self,
        decl: enginekeys.EngineKeys,
        name: str,
        opts: dict[str, Any],
        item: Any,
        node: Any,
        i: int,
    ) -> None:
        """The keys the workload's engine declares checks for (rados bench: a mode, a
        runtime in whole seconds), read with the global options."""
        if decl.required:
            self.reading.read_keys(
                decl.section(),
                item,
                node,
                i,
                origin=True,
                only=decl.required,
                values=opts,
                where=f"workload {name!r}",
            )

    def check_clients(
        self, workloads: list[Workload], hosts: list[Host], doc: CommentedMap
    ) -> None:
        """``clients`` (the number of hosts a point runs on) needs ``hosts:`` and at most
        as many clients as hosts."""
        for i, wl in enumerate(workloads):
            if "clients" not in wl.options or enginekeys.of(wl.options).no_hosts:
                continue  # not on hosts: `clients` is the engine's own (rados bench's processes)
            values = wl.options["clients"]
            where = (doc.get("workloads"), i)
            if not hosts:
                raise self.reading.err(
                    f"workload {wl.name!r}: `clients` needs `hosts:` (the hosts a point runs on)",
                    *where,
                    fix="list the hosts under `hosts:`, or remove `clients`",
                    origin_key="clients",
                )
            for n in values if isinstance(values, list) else [values]:
                if int(n) > len(hosts):
                    raise self.reading.err(
                        f"workload {wl.name!r}: `clients` {n} but the plan names "
                        f"{len(hosts)} host{'s' if len(hosts) != 1 else ''}",
                        *where,
                        fix=f"at most {len(hosts)}, e.g. `clients: "
                        f"[{', '.join(str(k) for k in range(1, len(hosts) + 1))}]`",
                        origin_key="clients",
                    )

    def check_actions(
        self, name: str, steps: list[Action], opts: dict[str, Any], item: Any
    ) -> None:
        """Every action falls within each point's load (ramp_time + runtime), which must
        then be a fixed time; an engine whose load no drill follows takes none."""
        if not steps:
            return
        where = f"workload {name!r}: `actions`"
        no_drills = enginekeys.of(opts).no_drills
        if no_drills:
            raise self.reading.err(f"{where}: {no_drills}", item, "actions", fix=FIX)
        runtimes = opts.get("runtime")
        if runtimes is None:
            raise self.reading.err(
                f"{where} need a `runtime`: the load the actions happen in",
                item,
                "actions",
                fix="add e.g. `runtime: 120` and `time_based: 1` (or --set duration=120)",
            )
        ramp = (
            0.0 if isinstance(opts.get("ramp_time"), list) else parse_time(opts.get("ramp_time", 0))
        )
        for runtime in runtimes if isinstance(runtimes, list) else [runtimes]:
            end = ramp + parse_time(runtime)
            late = [a for a in steps if a.at_s >= end]
            if late:
                raise self.reading.err(
                    f"{where}: `{late[0].label()}` at {late[0].at_s:g} s is past the point's "
                    f"end ({end:g} s of load)",
                    item,
                    "actions",
                    fix=f"run it before {end:g} s, or make `runtime` longer",
                )

    def check_action_hosts(
        self, workloads: list[Workload], hosts: list[Host], doc: CommentedMap
    ) -> None:
        """A ``run`` step's ``host:`` names a host of ``hosts:``; the step takes its shell."""
        by_label = {h.label: h for h in hosts}
        for wl, node in zip(workloads, doc.get("workloads") or [], strict=False):
            items = node.get("actions") if isinstance(node, dict) else None
            for n, item in enumerate(items or [], 1):
                name = (
                    str(item["host"]).strip() if isinstance(item, dict) and "host" in item else ""
                )
                if not name or name in by_label:
                    continue
                known = ", ".join(by_label) or "none: the plan has no `hosts:`"
                fix = (
                    suggestion(name, list(by_label), "")
                    or "name one of `hosts:` by its `name:` (ADDRESS:PORT when it has none)"
                    if hosts
                    else "list it under `hosts:` (`shell:` says how to reach it; ssh by "
                    "default), or remove `host:` to run the command on this machine"
                )
                raise self.reading.err(
                    f"workload {wl.name!r}: action {n}: `host` {name!r} is not a host of the "
                    f"plan (hosts: {known})",
                    item,
                    "host",
                    fix=fix,
                )
            wl.actions = [
                dataclasses.replace(a, shell=by_label[a.host].shell) if a.host else a
                for a in wl.actions
            ]

    def apply_duration(
        self, values: dict[str, Any], workloads: list[Workload], doc: CommentedMap
    ) -> None:
        """``duration:`` replaces every workload's time (fio runs it ``time_based``); the
        soak suite (``report: soak``) cannot run without one."""
        secs = duration_s(values["duration"])
        nodes = doc.get("workloads") or []
        for wl, node in zip(workloads, nodes, strict=False):
            if secs is not None:
                self._set_duration(wl, secs)
            self.check_actions(wl.name, wl.actions, wl.options, node)
        if secs is None and values["report"] == "soak":
            raise self.reading.err(
                "a soak run needs `duration`: how long its load runs",
                doc,
                "report",
                fix="e.g. --set duration=6h (or 30m, 90s)",
            )

    @staticmethod
    def _set_duration(wl: Workload, secs: int) -> None:
        wl.options.pop("timeout", None)  # fio's alias of runtime
        wl.options["runtime"] = secs
        wl.options.update(enginekeys.of(wl.options).duration)

    def check_slo(self, plan: Plan, doc: CommentedMap) -> None:
        """A capacity search (``slo:``) offers fio one direction's rate, once: fio
        workloads that read, write or trim (not a mix), ``repeat: 1``, no drill, no
        rate of their own."""
        if plan.slo is None:
            return
        fix = "search a workload of one direction with fio, once (`repeat: 1`)"
        if plan.repeat != 1:
            raise self.reading.err(
                "`slo`: a capacity search runs once: `repeat` is not 1", doc, "slo", fix=fix
            )
        for wl in plan.workloads:
            o = wl.options
            rw = str(o.get("rw", o.get("readwrite", "read"))).split(":")[0]
            why = None
            if o.get("engine", hooks.DEFAULT_ENGINE) != "fio":
                why = f"its engine is {o.get('engine')}, and the search sets fio's rate_iops"
            elif rw in ("rw", "readwrite", "randrw", "trimwrite", "randtrimwrite"):
                why = f"it mixes directions (rw={rw}); the search offers one direction's rate"
            elif any(k in o for k in ("rate", "rate_iops", "rate_min", "rate_iops_min")):
                why = "it sets a rate of its own; the search sets the rate of each step"
            elif wl.actions:
                why = "it is a failure drill"
            if why is not None:
                raise self.reading.err(f"`slo`: workload {wl.name!r}: {why}", doc, "slo", fix=fix)

    def check_steady(self, plan: Plan, doc: CommentedMap) -> None:
        """Steady-state rounds rerun a workload for a fixed time each: rados bench's runs
        write and read named object sets, which rounds cannot repeat, and a drill's actions
        happen once in one load. Ceph steps need a Ceph cluster among the targets."""
        drills = [wl for wl in plan.workloads if wl.actions]
        ceph = any(t.ceph for t in plan.targets) or any(
            t.ceph for h in plan.hosts for t in (h.targets or [])
        )
        for wl in drills:
            where = f"workload {wl.name!r}: `actions`"
            if plan.steady_state is not None:
                raise self.reading.err(
                    f"{where} cannot run in steady-state rounds (each round would repeat them)",
                    doc,
                    "steady_state",
                    fix="leave `steady_state` out of a drill's plan",
                )
            step = next((a for a in wl.actions if a.ceph), None)
            if step is not None and not ceph:
                raise self.reading.err(
                    f"{where}: `{step.label()}` acts on a Ceph cluster, and the plan has no "
                    "Ceph target (rbd: or rados:)",
                    doc,
                    "workloads",
                    fix="measure an rbd: or rados: target of the cluster, or use `run:` steps",
                )
        if plan.steady_state is None:
            return
        for wl in plan.workloads:
            no_rounds = enginekeys.of(wl.options).no_rounds
            if no_rounds:
                why, fix = no_rounds
                raise self.reading.err(
                    f"`steady_state` cannot run workload {wl.name!r} in rounds: {why}",
                    doc,
                    "steady_state",
                    fix=fix,
                )

    def check_object_memory(self, wl: Workload, index: int, doc: CommentedMap) -> None:
        """An S3 object is one of fio's buffers: each job holds ``bs`` x ``iodepth`` bytes in
        memory (fio segfaulted at bs=100g under a 4 GB limit). Every job's buffers together
        must fit in half of this machine's memory."""
        memory = _memory_bytes()
        if memory is None:
            return

        def values(key: str, default: int) -> list[int]:
            given = wl.options.get(key, default)
            out = []
            for v in given if isinstance(given, list) else [given]:
                for part in str(v).replace(",", ":").replace("-", ":").split(":"):
                    try:
                        out.append(parse_size(part) if key == "bs" else int(float(part)))
                    except (UnitError, ValueError):
                        continue
            return out or [default]

        bs = max(
            values("bs", 4096) + (values("blocksize", 4096) if "blocksize" in wl.options else [])
        )
        jobs = max(values("numjobs", 1))
        depth = max(values("iodepth", 1))
        need = bs * jobs * depth
        if need > memory // 2:
            raise self.reading.err(
                f"workload {wl.name!r}: S3 objects of {_gib(bs)} x {jobs} job(s) x "
                f"iodepth {depth} need {_gib(need)} of fio's buffers, more than half "
                f"of this machine's memory ({_gib(memory)}): fio holds each object "
                "whole in memory",
                doc.get("workloads"),
                index,
                fix=f"use objects of at most {_gib(memory // 2 // (jobs * depth))} "
                "(`bs`), or fewer jobs",
            )

    def check_sizes(
        self, targets: list[tuple[Target, bool]], workloads: list[Workload], doc: CommentedMap
    ) -> None:
        """A file or directory target that fio or storbench creates needs a size to lay out
        (``targets``: each with whether it is on this machine). An existing local file may do
        without; a file on a remote host is read at its own size when the workload has none
        (storbench cannot see whether it exists: fio says so if it does not)."""
        for t, _ in targets:
            if t.kind == "s3":
                for wl in workloads:
                    self.check_object_memory(wl, workloads.index(wl), doc)
        for t, local in targets:
            if t.kind in ("device", "rbd") or (t.kind == "file" and not local):
                continue  # a device's or image's own size
            for wl in workloads:
                if not enginekeys.of(wl.options).sizes:
                    continue
                if (
                    "size" not in wl.options
                    and "filesize" not in wl.options
                    and not (t.kind == "s3" and "objects" in wl.options)
                    and not (t.kind == "file" and os.path.exists(t.path))
                ):
                    raise self.reading.err(
                        f"workload {wl.name!r} has no `size` for {t.kind} target {t.path}",
                        doc.get("workloads"),
                        workloads.index(wl),
                        fix="add e.g. `size: 1g` to the workload (or --set size=1g)"
                        + (" or `objects: 32` (each job's objects)" if t.kind == "s3" else "")
                        + (
                            " (fio's rados engine writes size/nrfiles per object, at most "
                            "osd_max_object_size: 128 MiB by default)"
                            if t.kind == "rados"
                            else ""
                        ),
                    )


def _memory_bytes() -> int | None:
    """This machine's memory (MemTotal of /proc/meminfo), or None when unknown."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def _gib(n: int) -> str:
    return f"{n / 2**30:,.1f} GiB" if n >= 2**30 else f"{n / 2**20:,.1f} MiB"


def load_value(axis: str, value: Any) -> float | None:
    """A value of an axis of load as a number (``rate``: a size per second), or None."""
    if isinstance(value, bool):
        return None
    try:
        return float(parse_size(str(value))) if axis == "rate" else float(value)
    except (UnitError, ValueError, TypeError):
        return None
