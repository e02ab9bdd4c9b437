"""Plans: YAML loading with line numbers, validation, and expansion into points.

A plan names targets, workloads and repetitions. In a workload every key is a fio option
(checked against the option names fio 3.33 knows); a list value makes that option a matrix
axis, a scalar applies to every point. ``global:`` holds options for every workload.
"""

from __future__ import annotations

import hashlib
import io
import itertools
import json
import os
import re
import stat
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import MarkedYAMLError, YAMLError

from storbench.errors import NotFoundError, PlanError, did_you_mean
from storbench.units import UnitError, parse_size, parse_time

TARGET_KINDS = ("file", "device", "directory")
TOP_KEYS = ("name", "description", "targets", "workloads", "global", "repeat", "report")
TARGET_KEYS = (*TARGET_KINDS, "name")
REPORTS = ("qualify", "profiles", "matrix")
#: Options that come from the target, not from a workload.
TARGET_OPTIONS = ("filename", "directory", "filename_format", "opendir")
SIZE_OPTIONS = ("size", "io_size", "io_limit", "bs", "blocksize", "filesize", "ba")
TIME_OPTIONS = ("runtime", "ramp_time", "startdelay")
INT_OPTIONS = (
    "iodepth",
    "numjobs",
    "rwmixread",
    "rwmixwrite",
    "nrfiles",
    "direct",
    "iodepth_batch",
    "iodepth_batch_complete_min",
    "iodepth_low",
)
RW_VALUES = (
    "read",
    "write",
    "trim",
    "randread",
    "randwrite",
    "randtrim",
    "rw",
    "readwrite",
    "randrw",
    "trimwrite",
    "randtrimwrite",
)
WRITE_RW = (
    "write",
    "randwrite",
    "rw",
    "readwrite",
    "randrw",
    "trimwrite",
    "randtrimwrite",
    "trim",
    "randtrim",
)

Scalar = str | int | float | bool | None


@cache
def fio_option_names() -> frozenset[str]:
    """Every option name and alias fio 3.33 accepts (packaged; see scripts/fio-options.sh)."""
    text = resources.files("storbench.engines").joinpath("fio-options.txt").read_text()
    return frozenset(ln.strip() for ln in text.splitlines() if ln.strip() and ln[0] != "#")


@cache
def suite_names() -> tuple[str, ...]:
    files = resources.files("storbench.suites").iterdir()
    return tuple(sorted(f.name[:-5] for f in files if f.name.endswith(".yaml")))


def suite_text(name: str) -> str:
    return resources.files("storbench.suites").joinpath(f"{name}.yaml").read_text()


@dataclass(frozen=True)
class Target:
    """What is measured: a file, a block device or a directory (on the local host)."""

    kind: str
    path: str
    name: str | None = None

    @property
    def label(self) -> str:
        return self.name or self.path

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"kind": self.kind, "path": self.path}
        if self.name:
            d["name"] = self.name
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Target:
        return cls(kind=d["kind"], path=d["path"], name=d.get("name"))


@dataclass
class Workload:
    name: str
    options: dict[str, Any]  # global options, then the workload's own; lists are axes
    line: int | None = None


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

    @property
    def writes(self) -> bool:
        return workload_writes(self.params)

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
        )


def workload_writes(params: dict[str, Any]) -> bool:
    """Whether a workload writes: fio's default rw is read; verify/trim writes count too."""
    rw = str(params.get("rw", params.get("readwrite", "read"))).split(":")[0]
    return rw in WRITE_RW


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

    def expand(self) -> list[Point]:
        """The matrix as an ordered list of points.

        Repetitions run as rounds (the whole matrix, then again), so slow drift of the
        target spreads over every point instead of biasing the last ones. With ``repeat`` > 1
        each round gets its own ``randseed`` (unless the plan sets one), so repetitions touch
        independent random offsets yet stay reproducible.
        """
        points: list[Point] = []
        for rep in range(self.repeat):
            for target in self.targets:
                for wl in self.workloads:
                    axis_names = [k for k, v in wl.options.items() if isinstance(v, list)]
                    axis_values = [wl.options[k] for k in axis_names]
                    for combo in itertools.product(*axis_values):
                        params = dict(wl.options)
                        params.update(zip(axis_names, combo, strict=True))
                        extra: dict[str, Any] = {}
                        if self.repeat > 1 and not {"randseed", "randrepeat"} & params.keys():
                            extra["randseed"] = 0x5B00 + rep
                        points.append(
                            Point(
                                index=len(points),
                                key=point_key(target, wl.name, params),
                                repetition=rep,
                                target=target,
                                workload=wl.name,
                                params=params,
                                axes=dict(zip(axis_names, combo, strict=True)),
                                extra=extra,
                                est_seconds=estimate_seconds(params),
                            )
                        )
        return points


def point_key(target: Target, workload: str, params: dict[str, Any]) -> str:
    blob = json.dumps([target.kind, target.path, workload, params], sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def estimate_seconds(params: dict[str, Any]) -> float | None:
    """Planned duration of a point: ramp_time + runtime (an upper bound unless time_based)."""
    try:
        runtime = parse_time(params["runtime"]) if "runtime" in params else None
        ramp = parse_time(params.get("ramp_time", 0))
    except UnitError:
        return None
    if runtime is None:
        return None
    return ramp + runtime


# ---------------------------------------------------------------------------- loading


def resolve_plan_source(spec: str) -> tuple[str, str]:
    """(source name, YAML text) of a plan file path or a built-in suite name."""
    path = Path(spec)
    if path.is_file():
        try:
            return str(path), path.read_text()
        except OSError as e:
            raise PlanError(
                f"cannot read plan file: {e.strerror}",
                file=str(path),
                fix="check the file's permissions",
            ) from None
        except UnicodeDecodeError:
            raise PlanError("plan file is not UTF-8 text", file=str(path)) from None
    if spec in suite_names():
        return f"suite:{spec}", suite_text(spec)
    if path.exists():
        raise PlanError(f"{spec} is not a regular file", fix="give a plan file (YAML) or a suite")
    near = did_you_mean(spec, suite_names())
    hint = f'did you mean the suite "{near}"? ' if near else ""
    raise NotFoundError(
        f"no plan file or built-in suite named {spec!r}",
        fix=f"{hint}built-in suites: {', '.join(suite_names())}; or give a path to a plan file",
    )


def load_plan(
    spec: str, *, sets: list[str] | None = None, targets: list[str] | None = None
) -> Plan:
    """Load a plan file or suite, apply ``--set`` overrides and ``--target`` replacements."""
    source, text = resolve_plan_source(spec)
    return parse_plan(text, source, sets=sets or [], targets=targets or [])


def parse_plan(
    text: str, source: str, *, sets: list[str] | None = None, targets: list[str] | None = None
) -> Plan:
    return _Loader(text, source).load(sets or [], targets or [])


def parse_target_arg(arg: str) -> Target:
    """``--target`` value: ``file:PATH``, ``device:PATH``, ``directory:PATH`` or a bare path
    (a block device is a device, an existing directory a directory, anything else a file)."""
    for kind in (*TARGET_KINDS, "dir"):
        if arg.startswith(kind + ":"):
            path = arg[len(kind) + 1 :]
            if not path:
                raise PlanError(
                    f"--target {arg}: no path after {kind}:", fix=f"--target {kind}:/path"
                )
            kind = "directory" if kind == "dir" else kind
            return Target(kind, path if kind == "device" else os.path.abspath(path))
    try:
        mode = os.stat(arg).st_mode
    except OSError:
        return Target("file", os.path.abspath(arg))
    if stat.S_ISBLK(mode):
        return Target("device", arg)
    if stat.S_ISDIR(mode):
        return Target("directory", os.path.abspath(arg))
    return Target("file", os.path.abspath(arg))


class _Loader:
    def __init__(self, text: str, source: str) -> None:
        self.text = text
        self.source = source
        self.set_keys: dict[str, str] = {}  # key -> the --set argument that set it

    # -- error helpers
    def err(
        self,
        msg: str,
        node: Any = None,
        key: Any = None,
        fix: str | None = None,
        origin_key: str | None = None,
    ) -> PlanError:
        if origin_key is not None and origin_key in self.set_keys:
            return PlanError(msg, file=f"--set {self.set_keys[origin_key]}", fix=fix)
        line, col = _position(node, key)
        return PlanError(msg, file=self.source, line=line, column=col, fix=fix)

    def load(self, sets: list[str], target_args: list[str]) -> Plan:
        yaml = YAML(typ="rt")
        try:
            doc = yaml.load(io.StringIO(self.text))
        except MarkedYAMLError as e:
            mark = e.problem_mark or e.context_mark
            line = mark.line + 1 if mark else None
            col = mark.column + 1 if mark else None
            problem = e.problem or e.context or "invalid YAML"
            raise PlanError(
                f"malformed YAML: {problem}",
                file=self.source,
                line=line,
                column=col,
                fix="check indentation, colons and quoting near there",
            ) from None
        except YAMLError as e:
            raise PlanError(f"malformed YAML: {e}", file=self.source) from None
        if doc is None:
            raise PlanError(
                "plan is empty",
                file=self.source,
                fix="a plan needs at least `workloads:` (see `storbench plan --help`)",
            )
        if not isinstance(doc, CommentedMap):
            raise PlanError(
                "a plan must be a mapping (key: value lines) at the top level",
                file=self.source,
                line=1,
            )
        self.apply_sets(doc, sets)

        for key in doc:
            if key not in TOP_KEYS:
                near = did_you_mean(str(key), TOP_KEYS)
                fix = (
                    f'did you mean "{near}"?' if near else f"top-level keys: {', '.join(TOP_KEYS)}"
                )
                raise self.err(f"unknown key {key!r}", doc, key, fix=fix)

        name = doc.get("name")
        if name is None:
            name = Path(self.source.removeprefix("suite:")).stem
        if not isinstance(name, str) or not name.strip():
            raise self.err("`name` must be a non-empty string", doc, "name", origin_key="name")
        description = doc.get("description") or ""
        if not isinstance(description, str):
            raise self.err("`description` must be a string", doc, "description")
        repeat = doc.get("repeat", 1)
        if isinstance(repeat, bool) or not isinstance(repeat, int) or repeat < 1:
            raise self.err(
                f"`repeat` must be a whole number ≥ 1, not {repeat!r}",
                doc,
                "repeat",
                fix="repeat: 3",
                origin_key="repeat",
            )
        report = doc.get("report")
        if report is not None and report not in REPORTS:
            raise self.err(
                f"unknown report {report!r}", doc, "report", fix=f"one of: {', '.join(REPORTS)}"
            )

        global_opts = (
            self.options(doc.get("global"), doc, "global", "global") if "global" in doc else {}
        )
        workloads = self.workloads(doc, global_opts)
        targets = [parse_target_arg(a) for a in target_args] if target_args else self.targets(doc)
        if not targets:
            raise self.err(
                "the plan has no targets",
                doc,
                "targets" if "targets" in doc else None,
                fix="add `targets:` (e.g. `- file: /mnt/test/storbench.dat`) or pass --target PATH",
            )
        self.check_sizes(targets, workloads, doc)
        return Plan(
            name=name.strip(),
            source=self.source,
            text=self.text,
            targets=targets,
            workloads=workloads,
            repeat=repeat,
            description=description,
            report=report,
            overrides=list(sets),
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
            try:
                value = YAML(typ="safe").load(raw) if raw.strip() else None
            except YAMLError:
                raise PlanError(
                    f"--set {arg}: the value is not valid YAML",
                    fix="quote it, or write a list as [1,32]",
                ) from None
            self.set_keys[key] = arg
            if key in TOP_KEYS:
                if key in ("targets", "workloads", "global"):
                    raise PlanError(
                        f"--set cannot replace `{key}`",
                        fix="use --target PATH for targets; edit the plan file for workloads",
                    )
                doc[key] = value
                continue
            if key not in fio_option_names() and key != "name":
                near = did_you_mean(key, fio_option_names() | set(TOP_KEYS))
                raise PlanError(
                    f"--set {arg}: {key!r} is not a fio option or plan key",
                    fix=f'did you mean "{near}"?'
                    if near
                    else "see `fio --cmdhelp=all` for fio's options",
                )
            if isinstance(doc.get("global"), dict):
                doc["global"].pop(key, None)
            for wl in doc.get("workloads") or []:
                if isinstance(wl, dict):
                    wl[key] = value

    def options(self, node: Any, parent: Any, key: Any, where: str) -> dict[str, Any]:
        if not isinstance(node, dict):
            raise self.err(f"`{where}` must be a mapping of fio options", parent, key)
        out: dict[str, Any] = {}
        for opt, value in node.items():
            opt_s = str(opt)
            if opt_s in TARGET_OPTIONS:
                raise self.err(
                    f"{where}: `{opt_s}` comes from the target, not the workload",
                    node,
                    opt,
                    fix="name files and devices under `targets:` (or pass --target PATH)",
                )
            if opt_s not in fio_option_names():
                near = did_you_mean(opt_s, fio_option_names())
                fix = f'did you mean "{near}"?' if near else "see `fio --cmdhelp=all`"
                raise self.err(
                    f"{where}: unknown fio option {opt_s!r}", node, opt, fix=fix, origin_key=opt_s
                )
            out[opt_s] = self.option_value(opt_s, value, node, opt, where)
        return out

    def option_value(self, opt: str, value: Any, node: Any, key: Any, where: str) -> Any:
        if isinstance(value, list):
            if not value:
                raise self.err(
                    f"{where}: `{opt}` is an empty list",
                    node,
                    key,
                    fix="give at least one value, or a single value",
                    origin_key=opt,
                )
            if len(set(map(str, value))) != len(value):
                raise self.err(f"{where}: `{opt}` lists a value twice", node, key, origin_key=opt)
            return [self.scalar(opt, v, node, key, where) for v in value]
        return self.scalar(opt, value, node, key, where)

    def scalar(self, opt: str, value: Any, node: Any, key: Any, where: str) -> Scalar:
        if isinstance(value, dict | list):
            raise self.err(
                f"{where}: `{opt}` must be a value or a list of values, "
                f"not a {'mapping' if isinstance(value, dict) else 'nested list'}",
                node,
                key,
                origin_key=opt,
            )
        if isinstance(value, bool):
            value = int(value)
        try:
            if opt in SIZE_OPTIONS and value is not None and not _compound(value):
                parse_size(value)
            elif opt in TIME_OPTIONS and value is not None:
                parse_time(value)
        except UnitError as e:
            raise self.err(f"{where}: `{opt}`: {e}", node, key, origin_key=opt) from None
        if opt in INT_OPTIONS and not (
            isinstance(value, int) or (isinstance(value, str) and value.isdigit())
        ):
            raise self.err(
                f"{where}: `{opt}` must be a whole number, not {value!r}", node, key, origin_key=opt
            )
        if opt in ("rw", "readwrite") and str(value).split(":")[0] not in RW_VALUES:
            near = did_you_mean(str(value), RW_VALUES)
            raise self.err(
                f"{where}: `{opt}` cannot be {value!r}",
                node,
                key,
                fix=f'did you mean "{near}"?' if near else f"one of: {', '.join(RW_VALUES)}",
                origin_key=opt,
            )
        if isinstance(value, str | int | float) or value is None:
            return value
        return str(value)

    def workloads(self, doc: CommentedMap, global_opts: dict[str, Any]) -> list[Workload]:
        node = doc.get("workloads")
        if node is None:
            raise self.err(
                "the plan has no `workloads:`",
                doc,
                None,
                fix="add a list of workloads, e.g.\n"
                "  workloads:\n    - name: rand4k\n      rw: randread\n"
                "      bs: 4k",
            )
        if not isinstance(node, list) or not node:
            raise self.err("`workloads` must be a non-empty list", doc, "workloads")
        out: list[Workload] = []
        seen: set[str] = set()
        for i, item in enumerate(node):
            if not isinstance(item, dict):
                raise self.err("each workload must be a mapping of fio options", node, i)
            item = dict(item) if not isinstance(item, CommentedMap) else item
            raw_name = item.get("name", f"w{i + 1}")
            if not isinstance(raw_name, str | int) or not str(raw_name).strip():
                raise self.err("workload `name` must be a non-empty string", item, "name")
            name = str(raw_name).strip()
            if name in seen:
                raise self.err(
                    f"two workloads are named {name!r}",
                    item,
                    "name",
                    fix="give each workload its own name",
                )
            seen.add(name)
            opts = {k: v for k, v in item.items() if k != "name"}
            where = f"workload {name!r}"
            own = self.options(_submap(item, opts), node, i, where)
            merged = {**{k: v for k, v in global_opts.items() if k not in own}, **own}
            out.append(Workload(name=name, options=merged, line=_position(node, i)[0]))
        return out

    def targets(self, doc: CommentedMap) -> list[Target]:
        node = doc.get("targets")
        if node is None:
            return []
        if not isinstance(node, list):
            raise self.err(
                "`targets` must be a list",
                doc,
                "targets",
                fix="targets:\n    - file: /mnt/test/storbench.dat",
            )
        out: list[Target] = []
        for i, item in enumerate(node):
            if not isinstance(item, dict):
                raise self.err("each target must be a mapping such as `- file: PATH`", node, i)
            for k in item:
                if k not in TARGET_KEYS:
                    near = did_you_mean(str(k), TARGET_KEYS)
                    raise self.err(
                        f"unknown target key {k!r}",
                        item,
                        k,
                        fix=f'did you mean "{near}"?'
                        if near
                        else f"a target is one of: {', '.join(TARGET_KINDS)}",
                    )
            kinds = [k for k in TARGET_KINDS if k in item]
            if len(kinds) != 1:
                raise self.err("a target needs exactly one of file, device, directory", node, i)
            kind = kinds[0]
            path = item[kind]
            if not isinstance(path, str) or not path.strip():
                raise self.err(f"`{kind}` needs a path", item, kind)
            name = item.get("name")
            path = path.strip()
            if kind != "device":
                path = os.path.abspath(path)
            out.append(Target(kind=kind, path=path, name=str(name) if name is not None else None))
        return out

    def check_sizes(
        self, targets: list[Target], workloads: list[Workload], doc: CommentedMap
    ) -> None:
        """A file or directory target that storbench creates needs a size to lay out."""
        for t in targets:
            if t.kind == "device":
                continue
            for wl in workloads:
                if (
                    "size" not in wl.options
                    and "filesize" not in wl.options
                    and not (t.kind == "file" and os.path.exists(t.path))
                ):
                    raise self.err(
                        f"workload {wl.name!r} has no `size` for {t.kind} target {t.path}",
                        doc.get("workloads"),
                        workloads.index(wl),
                        fix="add e.g. `size: 1g` to the workload (or --set size=1g)",
                    )


def _compound(value: Any) -> bool:
    """fio values such as bs=4k,8k (read,write), bssplit or percentages: not checked here."""
    return isinstance(value, str) and any(c in value for c in ",:%/-")


def _submap(node: CommentedMap | dict[str, Any], keys: dict[str, Any]) -> Any:
    if isinstance(node, CommentedMap):
        sub = CommentedMap()
        for k in keys:
            sub[k] = node[k]
            pos = node.lc.key(k) if k in node.lc.data else None
            if pos:
                sub.lc.add_kv_line_col(k, list(node.lc.data[k]))
        return sub
    return keys


def _position(node: Any, key: Any = None) -> tuple[int | None, int | None]:
    """1-based (line, column) of a key in a mapping / index in a sequence, or of the node."""
    try:
        if key is not None and isinstance(node, CommentedMap) and key in node.lc.data:
            line, col = node.lc.key(key)
            return line + 1, col + 1
        if key is not None and isinstance(node, CommentedSeq) and isinstance(key, int):
            line, col = node.lc.item(key)
            return line + 1, col + 1
        if isinstance(node, CommentedMap | CommentedSeq):
            return node.lc.line + 1, node.lc.col + 1
    except (AttributeError, KeyError, IndexError, TypeError):
        pass
    return None, None


_SAFE_NAME = re.compile(r"[^A-Za-z0-9_.-]+")


def job_section_name(workload: str) -> str:
    """A workload name made safe for a fio job section header."""
    return _SAFE_NAME.sub("_", workload)[:60] or "job"
