"""Loading a plan: YAML with line numbers and limits, then every check, into a Plan."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap
from ruamel.yaml.error import MarkedYAMLError, YAMLError

import storbench.plan.enginekeys as enginekeys
import storbench.plan.schema as schema
from storbench import hooks
from storbench.model.errors import PlanError, suggestion
from storbench.plan.checks import shown
from storbench.plan.model import Host, Plan, Target, Workload, combinations, fmt_count
from storbench.plan.options import OptionReader
from storbench.plan.precondkeys import Precondition, precondition, with_prefill
from storbench.plan.reading import Reading
from storbench.plan.rules import (
    MAX_DEPTH,
    MAX_POINTS,
    MAX_YAML_VALUES,
    TOP_KEYS,
)
from storbench.plan.slokeys import slo
from storbench.plan.soakkeys import soak_limits
from storbench.plan.steadykeys import steady_state
from storbench.plan.targets import TargetReader
from storbench.plan.untilcheck import check_until
from storbench.plan.untilkeys import rounds, until
from storbench.plan.workloads import WorkloadReader
from storbench.plan.yamlpos import _describe, _line, _position, _too_deep


class Loader:
    """One plan's text, checked and read into a :class:`Plan`. The loader reads the YAML,
    the plan's own keys and what spans its parts (engines, point counts); the parts read the
    rest over the :class:`Reading` they share: ``options`` (options.py), ``workloads``
    (workloads.py, given the options' reader) and ``targets`` (targets.py: the targets and
    hosts). ``ceph_conf`` (``--ceph-conf``) and ``endpoint`` (``--endpoint``) go to the
    targets' reader."""

    def __init__(
        self,
        text: str,
        source: str,
        ceph_conf: str | None = None,
        max_points: int = MAX_POINTS,
        endpoint: str | None = None,
    ) -> None:
        self.text = text
        self.source = source
        self.max_points = max_points
        self.reading = Reading(source)
        self.options = OptionReader(self.reading)
        self.workloads = WorkloadReader(self.reading, self.options)
        self.targets = TargetReader(self.reading, ceph_conf=ceph_conf, endpoint=endpoint)

    def yaml_error(self, e: MarkedYAMLError) -> PlanError:
        """One message for a YAML syntax error, at the line the fix belongs on."""
        problem = (e.problem or e.context or "invalid YAML").strip()
        context = (e.context or "").strip()
        mark = e.problem_mark or e.context_mark
        fix = "check indentation, colons and quoting on this line and the one above"
        unclosed = {
            "flow sequence": ("this `[` is never closed", "close the list with `]`"),
            "flow mapping": ("this `{` is never closed", "close the mapping with `}`"),
            "quoted scalar": (
                "this quoted string is never closed",
                "end the string with the quote character it starts with",
            ),
        }
        for what, (msg, how) in unclosed.items():
            if what in context and e.context_mark is not None:
                # the unclosed bracket or quote: its line is where the fix goes
                mark = e.context_mark
                problem = f"{msg} ({problem} on line {_line(e)})"
                fix = how + (" and separate the items with commas" if "`" in how else "")
                break
        else:
            if "duplicate key" in problem:
                first = e.context_mark.line + 1 if e.context_mark else None
                fix = "remove one of the two (a key may appear once in a mapping" + (
                    f" that starts on line {first})" if first else ")"
                )
            elif "\\t" in problem or "\t" in problem:
                fix = "indent with spaces, not tabs"
            elif "mapping values are not allowed" in problem:
                fix = (
                    "indent this line like the other keys of its block (or quote a value that "
                    "contains ': ')"
                )
            elif "expected <block end>" in problem or "block mapping" in context:
                fix = "indent this line like the other keys of its block"
        line = mark.line + 1 if mark else None
        col = mark.column + 1 if mark else None
        return PlanError(
            f"malformed YAML: {problem}", file=self.source, line=line, column=col, fix=fix
        )

    def document(self, sets: list[str]) -> CommentedMap:
        """The plan's top-level mapping, ``--set`` applied, its keys known."""
        doc = self.parse_yaml(self.text, file=self.source)
        if doc is None:
            raise PlanError(
                "plan is empty",
                file=self.source,
                fix="a plan needs at least `workloads:` (see `storbench plan --help`)",
            )
        if not isinstance(doc, CommentedMap):
            raise PlanError(
                f"a plan must be a mapping (key: value lines) at the top level, not "
                f"{_describe(doc)}",
                file=self.source,
                line=1,
                fix="start with `name:`, `targets:` and `workloads:` keys "
                "(see `storbench plan --help`)",
            )
        self.apply_sets(doc, sets)

        for key in doc:  # each unknown key an error of its own (kept: the others read on)
            if key not in TOP_KEYS:
                fix = suggestion(str(key), TOP_KEYS, f"top-level keys: {', '.join(TOP_KEYS)}")
                self.reading.keep(self.reading.err(f"unknown key {str(key)!r}", doc, key, fix=fix))
        return doc

    def load(self, sets: list[str], target_args: list[str]) -> Plan:
        """The plan, every check passed. The parts that can be read on their own -- each
        top-level key, ``global``, each workload, each target, ``hosts`` -- are all read
        and their errors raised together (Reading.kept); what spans them is checked after."""
        doc = self.document(sets)
        stem = Path(self.source.removeprefix("suite:")).stem
        values = self.reading.read_keys(
            schema.PLAN, doc, doc, None, origin=True, unset={"name": stem}, keep=True
        )
        name, report = values["name"], values["report"]
        repeat, rule = rounds(values["repeat"]), until(values["repeat"])
        if report is None and values["slo"] is not None:
            report = "capacity"  # a plan that searches answers with the search's answer
        if report is None and rule is not None:
            report = "until"  # B against A, as known as the rule made it
        workloads, targets, hosts = self.read_parts(doc, values, target_args)
        self.reading.raise_kept()  # what follows spans the parts: each read without error
        if not targets and not (hosts and all(h.targets is not None for h in hosts)):
            raise self.reading.err(
                "the plan has no targets",
                doc,
                "targets" if "targets" in doc else None,
                fix="add `targets:` (e.g. `- file: /mnt/test/storbench.dat`) or pass --target PATH"
                + (" (or give every host its own `targets:`)" if hosts else ""),
            )
        self.check_engines(workloads, targets, hosts, doc)
        self.workloads.check_clients(workloads, hosts, doc)
        self.workloads.check_action_hosts(workloads, hosts, doc)
        if hosts:
            pairs = [(t, h.local) for h in hosts for t in (h.targets or targets)]
        else:
            pairs = [(t, True) for t in targets]
        pairs = list(dict.fromkeys(pairs))
        self.targets.check_local([t for t, local in pairs if local])
        not_s3 = [t for t, _ in pairs if t.kind != "s3"]
        if report == "s3" and not_s3:
            raise self.reading.err(
                f"the s3 suite measures S3 buckets, not the {not_s3[0].kind} {not_s3[0].path}",
                doc,
                "report",
                fix="--target s3://BUCKET (with AWS_ENDPOINT_URL set), or a plan with "
                "`- s3: BUCKET` and `endpoint:`",
            )
        self.workloads.check_sizes(pairs, workloads, doc)
        self.workloads.check_blocks(workloads, [t for t, _ in pairs], doc)
        pre = self.preconditions(targets, values, doc)
        if hosts:
            self.workloads.check_no_output_files(workloads, doc)
        plan = Plan(
            name=name.strip(),
            source=self.source,
            text=self.text,
            targets=targets,
            workloads=workloads,
            repeat=repeat,
            description=values["description"] or "",
            report=report,
            overrides=list(sets),
            hosts=hosts,
            max_points=self.max_points,
            interval_ms=schema.interval_ms(values["interval"]),
            steady_state=steady_state(values["steady_state"]),
            soak=soak_limits(values["soak"]),
            preconditions={t: p.mode for t, p in pre.items()},
            purges={t: p.purge for t, p in pre.items() if p.purge},
            slo=slo(values["slo"]),
            until=rule,
            metrics=None if values["metrics"] is None else str(values["metrics"]),
            labels={str(k): str(v) for k, v in (values["labels"] or {}).items()},
        )
        self.targets.check_precondition(plan, doc)
        self.targets.check_purge(plan, doc)
        self.workloads.check_steady(plan, doc)
        self.workloads.check_slo(plan, doc)
        check_until(plan, doc, self.reading)
        self.check_count(plan, doc)  # before anything expands the plan (check_reads does)
        self.check_points(plan, doc)
        return plan

    def read_parts(
        self, doc: CommentedMap, values: dict[str, Any], target_args: list[str]
    ) -> tuple[list[Workload], list[Target], list[Host]]:
        """The workloads (with ``global``), the targets (or ``--target``'s) and the hosts,
        each read on its own with its errors kept (Reading.kept): a part is left out where
        an error before it would only make its own errors wrong."""
        kept = self.reading.kept
        global_opts = (
            kept(lambda: self.options.read(doc.get("global"), doc, "global", "global"), None)
            if "global" in doc
            else {}
        )
        # the workloads are read with the global options, not without them (their errors
        # would be of options the global ones give), and not when an unknown top-level key
        # may be what was meant for them (`workload:`)
        opts = global_opts
        if opts is not None and ("workloads" in doc or not self.reading.errors):
            workloads = kept(lambda: self.workloads.read(doc, opts), [])
        else:
            workloads = []
        if not self.reading.errors:  # what it checks spans the plan's keys and workloads
            kept(lambda: self.workloads.apply_duration(values, workloads, doc), None)
        before = len(self.reading.errors)
        targets = kept(
            lambda: self.targets.from_args(target_args) if target_args else self.targets.read(doc),
            [],
        )
        # hosts are read against the targets (as many each): not when a target was refused
        whole = len(self.reading.errors) == before
        hosts = (
            kept(lambda: self.targets.hosts(doc, targets), []) if "hosts" in doc and whole else []
        )
        return workloads, targets, hosts

    def parse_yaml(self, text: str, *, file: str | None, set_arg: str | None = None) -> Any:
        """The YAML document of a plan (``file``) or a ``--set`` value (``set_arg``), refused
        when it nests deeper than :data:`MAX_DEPTH` (ruamel's scanner slows down with the
        square of the depth and its composer recurses once per level) or holds more than
        :data:`MAX_YAML_VALUES` values once its aliases are expanded."""
        where = {"file": file} if set_arg is None else {"file": f"--set {shown(set_arg)}"}
        deep = _too_deep(text)
        if deep is not None:
            raise PlanError(
                f"the YAML is nested more than {MAX_DEPTH} levels deep",
                line=deep if set_arg is None else None,
                fix="a plan needs a few levels of `[`, `{` and indentation; remove the rest",
                **where,
            )
        try:
            if set_arg is None:
                doc = YAML(typ="rt").load(io.StringIO(text))
            else:
                doc = YAML(typ="safe", pure=True).load(text)
        except YAMLError as e:
            if set_arg is not None:
                raise PlanError(
                    f"--set {shown(set_arg)}: the value is not valid YAML",
                    fix="quote it, or write a list as [1,32]",
                ) from None
            if isinstance(e, MarkedYAMLError):
                raise self.yaml_error(e) from None
            raise PlanError(
                f"malformed YAML: {e}", fix="check indentation, colons and quoting", **where
            ) from None
        except RecursionError:
            raise PlanError(
                "the YAML is nested too deeply",
                fix=f"a plan needs a few levels; at most {MAX_DEPTH}",
                **where,
            ) from None
        except TypeError:  # a list or mapping as a key inside a key
            raise PlanError(
                "malformed YAML: a list or mapping is used as a key",
                fix="keys are plain words such as `bs:`",
                **where,
            ) from None
        except (ValueError, OverflowError) as e:  # !!int abc, 2001-02-30, 5000-digit numbers
            raise PlanError(
                f"malformed YAML: a value YAML reads as a number, date or tagged value is "
                f"invalid ({e})",
                fix='quote it to make it a string, e.g. name: "2001-02-30"',
                **where,
            ) from None
        self.check_yaml(doc, where)
        return doc

    def check_yaml(self, doc: Any, where: dict[str, str | None]) -> None:
        """Refuse a document deeper than MAX_DEPTH, holding more than MAX_YAML_VALUES values
        once its aliases (``*name``) are expanded (a "billion laughs"), referring to itself,
        or with a list or mapping as a key. Without recursion, each node visited once."""
        sizes: dict[int, int] = {}  # expanded size of each finished collection
        open_: set[int] = set()  # collections being visited (their ancestors): a cycle
        stack: list[tuple[Any, int, bool]] = [(doc, 0, False)]
        distinct = 0  # values of the document as written (each alias's target counted once)

        def children(node: Any) -> list[Any]:
            return list(node.values()) if isinstance(node, dict) else list(node)

        def fail(msg: str, node: Any, key: Any = None, fix: str = "") -> PlanError:
            line, col = _position(node, key)
            if where["file"] != self.source:
                line = col = None
            return PlanError(msg, line=line, column=col, fix=fix, **where)

        while stack:
            node, depth, done = stack.pop()
            if not isinstance(node, dict | list | tuple | set | frozenset):
                continue
            nid = id(node)
            if done:
                open_.discard(nid)
                kids = children(node)
                size = 1 + sum(sizes.get(id(c), 1) for c in kids)
                sizes[nid] = size
                distinct += 1 + sum(1 for c in kids if id(c) not in sizes)
                if size > MAX_YAML_VALUES:
                    aliased = distinct <= MAX_YAML_VALUES
                    raise fail(
                        f"the plan holds more than {MAX_YAML_VALUES:,} values"
                        + (" once its YAML aliases (*name) are expanded" if aliased else ""),
                        node,
                        fix="a plan needs a few dozen values; do not repeat aliases of aliases",
                    )
                continue
            if nid in sizes:
                continue
            if nid in open_:
                raise fail(
                    "the YAML refers to itself through an alias (*name)",
                    node,
                    fix="remove the alias",
                )
            if depth > MAX_DEPTH:
                raise fail(
                    f"the YAML is nested more than {MAX_DEPTH} levels deep",
                    node,
                    fix="a plan needs a few levels; remove the rest",
                )
            if isinstance(node, dict):
                for k in node:
                    if isinstance(k, dict | list | tuple | set | frozenset):
                        raise fail(
                            "a key is a list or mapping",
                            node,
                            k,
                            fix="keys are plain words such as `bs:`",
                        )
            open_.add(nid)
            stack.append((node, depth, True))
            stack.extend((c, depth + 1, False) for c in children(node) if id(c) not in sizes)

    def preconditions(
        self, targets: list[Target], values: dict[str, Any], doc: CommentedMap
    ) -> dict[Target, Precondition]:
        """Each target's preconditioning: its own ``precondition``, else the plan's, with
        ``prefill`` (its own, else the plan's) made sequential preconditioning."""
        top = precondition(values["precondition"])
        out = {}
        for t in targets:
            pre = self.targets.preconditions.get(t, top)
            own = t in self.targets.prefills
            prefill = self.targets.prefills[t] if own else values["prefill"]
            given = pre if (t in self.targets.preconditions or values["precondition"]) else None
            made, why = with_prefill(given, prefill)
            if why:
                node, key = (
                    self.targets.precondition_at[t]
                    if own and t in self.targets.precondition_at
                    else (doc, "prefill")
                )
                raise self.reading.err(
                    f"target {t.label}: {why}",
                    node,
                    key,
                    fix="leave `prefill` out, or `precondition` (prefill is sequential "
                    "preconditioning)",
                )
            out[t] = made if made is not None else pre
        return out

    def check_count(self, plan: Plan, doc: CommentedMap) -> None:
        """Refuse a plan of more than ``max_points`` points before it is expanded."""
        count = plan.point_count()
        if count <= self.max_points:
            return
        slots = len(plan.host_slots()) if plan.hosts else len(plan.targets)
        combos = sum(combinations(wl) for wl in plan.workloads)
        parts = [f"repeat {fmt_count(plan.repeat)}"] if plan.repeat > 1 else []
        parts.append(f"{slots} target{'s' if slots != 1 else ''}")
        parts.append(f"{fmt_count(combos)} combination{'s' if combos != 1 else ''} of axes")
        if "repeat" in doc and plan.repeat * slots > self.max_points:
            at: tuple[Any, Any] = (doc, "repeat")
        else:
            biggest = max(range(len(plan.workloads)), key=lambda i: combinations(plan.workloads[i]))
            at = (doc.get("workloads"), biggest)
        raise self.reading.err(
            f"the plan expands to {fmt_count(count)} points ({' × '.join(parts)}), more than "
            f"the limit of {self.max_points:,}",
            *at,
            fix="shrink the axes or `repeat`, or raise the limit: --max-points "
            + (str(count) if count < 10**12 else "N"),
            origin_key="repeat" if at[1] == "repeat" else None,
        )

    def check_engines(
        self, workloads: list[Workload], targets: list[Target], hosts: list[Host], doc: Any
    ) -> None:
        """Each workload's engine runs where the plan says (on `hosts:`, or only here) and
        measures the kinds of targets the plan gives."""
        where = doc.get("workloads")
        all_targets = [t for h in hosts for t in (h.targets or targets)] or targets
        for i, wl in enumerate(workloads):
            decl = enginekeys.of(wl.options)
            problem = decl.no_hosts if hosts else None
            for t in all_targets:
                problem = problem or decl.target_problem(t)
            if problem is not None:
                why, fix = problem
                raise self.reading.err(f"workload {wl.name!r}: {why}", where, i, fix=fix)

    def check_points(self, plan: Plan, doc: Any) -> None:
        """What only the expanded points show, as each engine checks it (rados bench: every
        seq/rand point reads objects a write before it left). Expands the plan only when an
        engine of it checks points."""
        engines = [enginekeys.of(wl.options) for wl in plan.workloads]
        if all(d.point_problem is enginekeys.no_point_problem for d in engines):
            return
        for p in plan.expand():
            problem = enginekeys.of(p.params).point_problem(p)
            if problem is not None:
                wl = next(w for w in plan.workloads if w.name == p.workload)
                why, fix = problem
                raise self.reading.err(
                    f"workload {wl.name!r}: {why}",
                    doc.get("workloads"),
                    plan.workloads.index(wl),
                    fix=fix,
                )

    def apply_sets(self, doc: CommentedMap, sets: list[str]) -> None:
        for arg in sets:
            key, sep, raw = arg.partition("=")
            key = key.strip()
            if not sep or not key:
                raise PlanError(
                    f"--set {arg!r} is not key=value",
                    fix="e.g. --set runtime=2 or --set iodepth=[1,32]",
                )
            value = self.parse_yaml(raw, file=None, set_arg=arg) if raw.strip() else None
            self.reading.set_keys[key] = arg
            if key in TOP_KEYS:
                if key in ("targets", "workloads", "global"):
                    raise PlanError(
                        f"--set cannot replace `{key}`",
                        fix="use --target PATH for targets; edit the plan file for workloads",
                    )
                doc[key] = value
                continue
            default = enginekeys.default()
            if key in default.target_options:
                raise PlanError(
                    f"--set {shown(arg)}: `{key}` comes from the target, not the workload",
                    fix=f"pass --target {shown(raw.strip()) or 'PATH'} instead",
                )
            every = enginekeys.every_engine()
            if not any(d.accepts(key) for d in every):
                known = {n for d in every for n in (*d.names(), *d.options())}
                words = "; ".join(
                    f"{d.option_word}s: {d.options_listed}" for d in every if d.options_listed
                )
                raise PlanError(
                    f"--set {shown(arg)}: {key!r} is not a {default.option_word} or plan key",
                    fix=suggestion(
                        key, known | set(TOP_KEYS), f"plan keys: {', '.join(TOP_KEYS)}; {words}"
                    ),
                )
            glob = doc.get("global") if isinstance(doc.get("global"), dict) else {}
            workloads = [wl for wl in doc.get("workloads") or [] if isinstance(wl, dict)]
            # a key goes to the workloads whose engine has it (a plan may mix engines; an
            # engine nobody registered is the loader's to refuse, later)
            names = [
                str(wl.get("engine", glob.get("engine", hooks.DEFAULT_ENGINE))) for wl in workloads
            ]
            theirs = [
                enginekeys.engine_keys(n) if n in hooks.engine_names() else default for n in names
            ]
            fitting = [wl for wl, d in zip(workloads, theirs, strict=True) if d.accepts(key)]
            if workloads and not fitting:
                raise PlanError(
                    f"--set {shown(arg)}: no workload of the plan has `{key}`",
                    file=self.source,
                    fix=self.options.not_taken(theirs[0], key, "")[1],
                )
            if glob:
                glob.pop(key, None)
            for wl in fitting:
                wl[key] = value
