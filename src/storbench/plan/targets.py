"""Targets and hosts of a plan: files, devices, directories, Ceph images and pools, and the
hosts that run the points; what each target must be (a local one's kind, its
preconditioning and purge). ``--target`` arguments are read in targetargs.py."""

from __future__ import annotations

import functools
import os
import stat
from typing import Any

from ruamel.yaml.comments import CommentedMap

import storbench.plan.enginekeys as enginekeys
import storbench.plan.s3keys as s3keys
import storbench.plan.schema as schema
from storbench.model.errors import PlanError, suggestion
from storbench.model.units import parse_size
from storbench.plan.actionkeys import AGENT, shell_prefix, words
from storbench.plan.checks import fix_for, path_problem, shown
from storbench.plan.model import Host, Plan, Target
from storbench.plan.precondkeys import Precondition, precondition
from storbench.plan.reading import Reading
from storbench.plan.rules import (
    CEPH_KINDS,
    CEPH_TARGET_KEYS,
    HOST_KEYS,
    LOCAL,
    S3_KIND,
    TARGET_KEYS,
    TARGET_KINDS,
)
from storbench.plan.targetargs import ceph_target, parse_target_arg
from storbench.plan.yamlpos import _describe

_TARGETS_EXAMPLE = "targets:\n  - file: /mnt/test/storbench.dat\n  - device: /dev/sdb"


class TargetReader:
    """The targets and hosts of a plan, or the targets of ``--target`` arguments, and where
    each was given (``at``: (node, key) in the plan, or the argument); each target's own
    ``precondition:`` (``preconditions``; the plan's applies to the others) and where it is
    (``precondition_at``). ``ceph_conf`` (``--ceph-conf``): the ceph.conf of Ceph targets
    that name none; ``endpoint`` (``--endpoint``): the S3 service of s3 targets that name
    none."""

    def __init__(
        self, reading: Reading, *, ceph_conf: str | None = None, endpoint: str | None = None
    ) -> None:
        self.reading = reading
        self.ceph_conf = ceph_conf
        self.endpoint = endpoint
        self.at: dict[Target, tuple[Any, Any] | str] = {}
        self.preconditions: dict[Target, Precondition] = {}
        self.precondition_at: dict[Target, tuple[Any, Any]] = {}
        self.prefills: dict[Target, bool] = {}

    def read(self, doc: CommentedMap) -> list[Target]:
        """The plan's ``targets:``."""
        return self.target_list(doc.get("targets"), doc, "targets")

    def from_args(self, args: list[str]) -> list[Target]:
        """The targets of ``--target`` arguments (which replace the plan's)."""
        targets = []
        for a in args:  # each on its own: its error kept
            t = self.reading.kept(
                functools.partial(parse_target_arg, a, self.ceph_conf, self.endpoint), None
            )
            if t is not None:
                self.at[t] = a
                targets.append(t)
        return targets

    def target_list(self, node: Any, parent: Any, key: Any, keep: bool = True) -> list[Target]:
        """The targets listed under ``parent[key]`` (none when it is left out); ``keep``:
        each target's error is kept and the others read on (Reading.kept), else raised."""
        if node is None:
            return []
        if not isinstance(node, list):
            raise self.reading.err(
                f"`targets` must be a list, not {_describe(node)}",
                parent,
                key,
                fix=f"start each target with `- `, e.g.\n{_TARGETS_EXAMPLE}",
            )
        out: list[Target] = []
        for i, item in enumerate(node):  # each target on its own: its error kept
            if not keep:
                out.append(self.target(item, node, i))
                continue
            target = self.reading.kept(functools.partial(self.target, item, node, i), None)
            if target is not None:
                out.append(target)
        return out

    def target(self, item: Any, node: Any, i: int) -> Target:
        """Target ``node[i]``, with its own ``precondition`` and ``prefill`` noted."""
        kind = self.target_kind(item, node, i)
        if kind in CEPH_KINDS:
            target = self.ceph_target(kind, item, node, i)
        elif kind == S3_KIND:
            target = self.s3_target(item, node, i)
        else:
            target = self.fs_target(kind, item, node, i)
        pre = self.reading.read_keys(
            schema.TARGET_MORE, item, node, i, only=("precondition", "prefill")
        )
        if pre["precondition"] is not None:
            self.preconditions[target] = precondition(pre["precondition"])
            self.precondition_at[target] = (item, "precondition")
        if pre["prefill"] is not None:
            self.prefills[target] = pre["prefill"]
            self.precondition_at.setdefault(target, (item, "prefill"))
        return target

    def target_kind(self, item: Any, node: Any, i: int) -> str:
        """What target ``node[i]`` is: a mapping of known keys with exactly one kind."""
        if not isinstance(item, dict):
            raise self.reading.err(
                f"each target must be a mapping such as `- file: PATH`, not {_describe(item)}",
                node,
                i,
                fix=f"say what it is: file, device or directory, e.g.\n{_TARGETS_EXAMPLE}",
            )
        for k in item:
            if k not in TARGET_KEYS:
                raise self.reading.err(
                    f"unknown target key {str(k)!r}",
                    item,
                    k,
                    fix=suggestion(
                        str(k),
                        TARGET_KEYS,
                        f"a target is one of: {', '.join(TARGET_KINDS)} (and an optional name)",
                    ),
                )
        kinds = [k for k in TARGET_KINDS if k in item]
        if len(kinds) != 1:
            raise self.reading.err(
                f"a target needs exactly one of {', '.join(TARGET_KINDS)}"
                + (f", not {' and '.join(kinds)}" if kinds else ""),
                node,
                i,
                fix=f"one `- KIND: PATH` line per target, e.g.\n{_TARGETS_EXAMPLE}",
            )
        return kinds[0]

    def fs_target(self, kind: str, item: Any, node: Any, i: int) -> Target:
        """``- file:``, ``- device:`` or ``- directory:`` PATH, with an optional ``name``."""
        path = item[kind]
        self.refuse_keys(item, kind, CEPH_TARGET_KEYS, "Ceph targets (rbd, rados)")
        self.refuse_keys(item, kind, s3keys.KEYS, "s3 targets")
        if not isinstance(path, str) or not path.strip():
            raise self.reading.err(
                f"`{kind}` needs a path, not {_describe(path)}",
                item,
                kind,
                fix=f"e.g. `- {kind}: "
                + {"file": "/mnt/test/storbench.dat", "device": "/dev/sdb"}.get(kind, "/mnt/test")
                + "`",
            )
        name = item.get("name")
        path = path.strip()
        problem = path_problem(path)
        if problem:
            raise self.reading.err(f"the {kind} path {problem}", item, kind, fix=fix_for(problem))
        if kind == "device" and not os.path.isabs(path):
            raise self.reading.err(
                f"a device path must be absolute, not {path!r} (fio runs in a directory "
                "of its own)",
                item,
                kind,
                fix="e.g. `- device: /dev/sdb`",
            )
        self.reading.read_keys(schema.TARGET_MORE, item, node, i, only=("name",))
        target = Target(
            kind=kind, path=os.path.abspath(path), name=str(name) if name is not None else None
        )
        self.at.setdefault(target, (item, kind))
        return target

    def refuse_keys(self, item: Any, kind: str, keys: tuple[str, ...], whose: str) -> None:
        """A key of another kind of target in ``item`` (a ``kind``) is an error."""
        for k in keys:
            if k in item:
                raise self.reading.err(
                    f"`{k}` belongs to {whose}, not to a {kind}",
                    item,
                    k,
                    fix="remove it"
                    + (" (a workload's `size:` sets fio's size)" if k == "size" else ""),
                )

    def s3_target(self, item: Any, node: Any, i: int) -> Target:
        """``- s3: BUCKET`` with its endpoint (or the environment's), region, prefix, where
        its credentials are, and whether to create the bucket (plan/s3keys.py)."""
        self.refuse_keys(item, "s3 target", CEPH_TARGET_KEYS, "Ceph targets (rbd, rados)")
        found = s3keys.problem(item)
        if found is not None:
            key, (message, fix) = found
            raise self.reading.err(message, item, key, fix=fix)
        endpoint = s3keys.endpoint_of(item, self.endpoint)
        if endpoint is None:
            raise self.reading.err(
                "an s3 target needs an `endpoint` (or --endpoint, or $AWS_ENDPOINT_URL)",
                item,
                "s3",
                fix=s3keys.ENDPOINT_EXAMPLE,
            )
        if "endpoint" not in item:
            env_problem = s3keys.endpoint_problem(endpoint)
            if env_problem is not None:
                where = "--endpoint" if self.endpoint else "$AWS_ENDPOINT_URL"
                raise self.reading.err(f"{where}: {env_problem[0]}", item, "s3", fix=env_problem[1])
        self.reading.read_keys(schema.TARGET_MORE, item, node, i, only=("name",))
        name = item.get("name")
        target = Target(
            kind=S3_KIND,
            path=item["s3"],
            name=str(name) if name is not None else None,
            endpoint=endpoint,
            region=item.get("region", s3keys.DEFAULT_REGION),
            prefix=item.get("prefix", s3keys.DEFAULT_PREFIX),
            credentials=(item.get("credentials") or "env").strip(),
            create_bucket=bool(item.get("create_bucket", False)),
            insecure=bool(item.get("insecure", False)),
            keep_objects=bool(item.get("keep_objects", False)),
        )
        self.at.setdefault(target, (item, "s3"))
        return target

    def ceph_target(self, kind: str, item: Any, node: Any, i: int) -> Target:
        """``- rbd: POOL/IMAGE`` (optional ``size`` of the image to create) or
        ``- rados: POOL``, each with optional ``conf`` (ceph.conf) and ``clientname``."""
        path = item[kind]
        if not isinstance(path, str):
            path = str(path) if isinstance(path, int) else ""
        self.refuse_keys(item, f"{kind} target", s3keys.KEYS, "s3 targets")
        self.reading.read_keys(
            schema.TARGET_MORE, item, node, i, only=("size", "conf", "clientname")
        )
        size = parse_size(item["size"]) if "size" in item else None
        client = item.get("clientname")
        if isinstance(client, str) and client.startswith("client."):
            client = client[len("client.") :]
        name = item.get("name")
        for k in ("conf", "clientname"):
            problem = path_problem(item[k].strip()) if k in item else None
            if problem:
                raise self.reading.err(f"`{k}` {problem}", item, k, fix=fix_for(problem))
        self.reading.read_keys(schema.TARGET_MORE, item, node, i, only=("name",))
        try:
            return ceph_target(
                kind,
                path,
                item.get("conf") or self.ceph_conf,
                name=str(name) if name is not None else None,
                client=client.strip() if isinstance(client, str) else None,
                size=size,
            )
        except ValueError as e:
            article = "an" if kind == "rbd" else "a"
            raise self.reading.err(
                f"not {article} {kind} target: {_describe(item[kind])}", item, kind, fix=str(e)
            ) from None

    def hosts(self, doc: CommentedMap, targets: list[Target]) -> list[Host]:
        node = doc.get("hosts")
        example = (
            "hosts:\n  - address: 192.0.2.10\n  - address: 192.0.2.11\n    port: 8766\n"
            "    targets:\n      - device: /dev/vdb"
        )
        if not isinstance(node, list) or not node:
            raise self.reading.err(
                f"`hosts` must be a non-empty list, not {_describe(node)}",
                doc,
                "hosts",
                fix=f"one `- address: ADDRESS` per host (a fio server, `storbench agent`; "
                f"`local` for this machine), e.g.\n{example}",
                origin_key="hosts",
            )
        out: list[Host] = []
        seen: dict[tuple[str, int], int] = {}
        labels: dict[str, int] = {}
        for i, item in enumerate(node):
            if not isinstance(item, dict):
                raise self.reading.err(
                    f"each host must be a mapping such as `- address: 192.0.2.10`, not "
                    f"{_describe(item)}",
                    node,
                    i,
                    fix=f"write `address:` (and optionally port, name, targets), e.g.\n{example}",
                )
            for k in item:
                if k not in HOST_KEYS:
                    raise self.reading.err(
                        f"unknown host key {str(k)!r}",
                        item,
                        k,
                        fix=suggestion(str(k), HOST_KEYS, f"a host has: {', '.join(HOST_KEYS)}"),
                    )
            values = self.reading.read_keys(schema.HOST, item, node, i)
            address, port = values["address"].strip(), values["port"]
            own = (
                tuple(self.target_list(item["targets"], item, "targets", keep=False))
                if item.get("targets") is not None
                else None
            )
            if own is not None and not own:
                raise self.reading.err(
                    "`targets` of a host is empty",
                    item,
                    "targets",
                    fix="list this host's targets, or remove `targets:` to use the plan's",
                )
            host = _host(values, own)
            ident = (address, port if address != LOCAL else 0)
            if ident in seen:
                first = f"host {seen[ident] + 1}"
                raise self.reading.err(
                    f"host {host.label} is listed twice (as {first} and host {i + 1})",
                    node,
                    i,
                    fix="list each fio server once (a different `port:` for a second server "
                    "on the same machine)",
                )
            if host.label in labels:
                raise self.reading.err(
                    f"two hosts are named {host.label!r}",
                    node,
                    i,
                    fix="give each host its own `name:`",
                )
            seen[ident] = i
            labels[host.label] = i
            out.append(host)
        self.check_target_counts(out, targets, node)
        return out

    def check_target_counts(self, hosts: list[Host], targets: list[Target], node: Any) -> None:
        """Every host has as many targets: point i uses each host's i-th target."""
        counts = [(h, len(h.targets) if h.targets is not None else len(targets)) for h in hosts]
        if len({c for _, c in counts}) > 1:
            odd = min(counts, key=lambda hc: [c for _, c in counts].count(hc[1]))
            others = max((c for _, c in counts), key=[c for _, c in counts].count)
            raise self.reading.err(
                f"host {odd[0].label} has {odd[1]} target(s), the other hosts {others}: every "
                "host needs the same number of targets (point i uses each host's i-th target)",
                node,
                hosts.index(odd[0]),
                fix="list the same number of targets under each host (or none, to use the "
                "plan's `targets:`)",
            )

    def check_local(self, targets: list[Target]) -> None:
        """What a local target is must match its kind: a ``file:`` that is a directory, a
        ``device:`` that is no block device or a ``directory:`` that is a file would record a
        failed point (a missing one is for preflight to report: it may appear before the
        run). Targets of remote hosts are not on this machine: nothing to look at here."""
        for t in targets:
            if t.ceph:
                continue
            try:
                mode = os.stat(t.path).st_mode
            except OSError:
                continue
            at = self.at.get(t)
            arg = isinstance(at, str)  # given as --target
            if t.kind == "file" and stat.S_ISDIR(mode):
                msg = f"`file:` target {t.path} is a directory"
                fix = (
                    f"--target directory:{t.path}" if arg else f"`- directory: {t.path}`"
                ) + " (fio makes files of its own in it), or name a file inside it"
            elif t.kind == "device" and not stat.S_ISBLK(mode):
                what = (
                    "a directory"
                    if stat.S_ISDIR(mode)
                    else "a character device"
                    if stat.S_ISCHR(mode)
                    else "a file"
                )
                msg = f"{t.path} is not a block device but {what}: `device:` must be one"
                fix = "name a block device (lsblk lists them)" + (
                    ", or a file with `file:`" if not stat.S_ISDIR(mode) else ""
                )
            elif t.kind == "directory" and not stat.S_ISDIR(mode):
                msg = f"`directory:` target {t.path} is not a directory"
                fix = "name a directory, or a file with `file:`"
            else:
                continue
            if isinstance(at, str):
                raise PlanError(f"--target {shown(at)}: {msg}", fix=fix)
            raise self.reading.err(msg, *(at or (None, None)), fix=fix)

    def check_precondition(self, plan: Plan, doc: CommentedMap) -> None:
        """Preconditioning fills a target with writes: not a pool (``rados:``), and not
        before an engine that writes its own data (rados bench's objects)."""
        pre = [t for t, mode in plan.preconditions.items() if mode != "none"]
        bad = next((t for t in pre if t.kind == "rados"), None)
        if (
            bad is None
            and pre
            and any(enginekeys.of(w.options).no_precondition for w in plan.workloads)
        ):
            bad = pre[0]
        if bad is not None:
            at = self.at.get(bad)
            node, key = at if isinstance(at, tuple) else (doc, "precondition")
            raise self.reading.err(
                f"target {bad.label}: `precondition` fills a device, file or image with "
                "writes; a rados pool (or rados bench) has no capacity to fill",
                node,
                key,
                fix="leave `precondition` out for it (or `precondition: none`)",
            )

    def check_purge(self, plan: Plan, doc: CommentedMap) -> None:
        """A purge erases a whole block device of this machine (storbench runs blkdiscard
        here): only a ``device:`` target, and never with a remote host among ``hosts:``."""
        own = {t: p.purge for t, p in self.preconditions.items() if p.purge}
        remote = next((h for h in plan.hosts if not h.local), None)
        for t, how in {**plan.purges, **own}.items():
            at = self.precondition_at.get(t)
            where: dict[str, Any] = (
                {"node": at[0], "key": at[1]}
                if at
                else {"node": doc, "key": "precondition", "origin_key": "precondition"}
            )
            if t.kind != "device":
                raise self.reading.err(
                    f"target {t.label}: `purge: {how}` erases a whole block device "
                    f"(blkdiscard): only a `device:` target is purged, never a `{t.kind}:` one",
                    fix="remove `purge` (only a `device:` target may have it)",
                    **where,
                )
            if remote is not None:
                raise self.reading.err(
                    f"target {t.label}: `purge: {how}` runs blkdiscard on this machine; "
                    f"storbench never purges a target of a remote host ({remote.label})",
                    fix="remove `purge`, or run storbench on the machine that holds the device",
                    **where,
                )


def _host(values: dict[str, Any], own: tuple[Target, ...] | None) -> Host:
    """A host of ``hosts:`` from its checked keys (``own``: its own targets)."""
    address, name = values["address"].strip(), values["name"]
    ssh = values["ssh"].strip() if values["ssh"] is not None else None
    agent = words(values["agent"]) if values["agent"] is not None else AGENT
    return Host(
        address=address,
        port=values["port"],
        name=str(name).strip() if name is not None else None,
        targets=own,
        shell=shell_prefix(values["shell"], address, ssh),
        ssh=ssh,
        agent=agent if ssh else (),
    )
