"""Targets and hosts of a plan: files, devices, directories, Ceph images and pools, and the
hosts that run the points."""

from __future__ import annotations

import os
import stat
from typing import Any

from ruamel.yaml.comments import CommentedMap

import storbench.plan.s3keys as s3keys
import storbench.plan.schema as schema
from storbench.model.errors import PlanError, suggestion
from storbench.model.units import parse_size
from storbench.plan.actionkeys import AGENT, shell_prefix, words
from storbench.plan.checks import fix_for, path_problem, shown
from storbench.plan.model import Host, Target
from storbench.plan.precondkeys import precondition
from storbench.plan.rules import (
    CEPH_KINDS,
    CEPH_TARGET_KEYS,
    DEFAULT_CEPH_CONF,
    FS_KINDS,
    HOST_KEYS,
    LOCAL,
    S3_KIND,
    TARGET_KEYS,
    TARGET_KINDS,
)
from storbench.plan.yamlpos import _describe

_TARGETS_EXAMPLE = "targets:\n  - file: /mnt/test/storbench.dat\n  - device: /dev/sdb"


class _TargetRules:
    """The loader's reading of targets and hosts (a mixin of plan.load._Loader)."""

    def targets(self, doc: CommentedMap) -> list[Target]:
        return self.target_list(doc.get("targets"), doc, "targets")

    def target_list(self, node: Any, parent: Any, key: Any) -> list[Target]:
        """The targets listed under ``parent[key]`` (none when it is left out)."""
        if node is None:
            return []
        if not isinstance(node, list):
            raise self.err(
                f"`targets` must be a list, not {_describe(node)}",
                parent,
                key,
                fix=f"start each target with `- `, e.g.\n{_TARGETS_EXAMPLE}",
            )
        out: list[Target] = []
        for i, item in enumerate(node):
            kind = self.target_kind(item, node, i)
            if kind in CEPH_KINDS:
                out.append(self.ceph_target(kind, item, node, i))
            elif kind == S3_KIND:
                out.append(self.s3_target(item, node, i))
            else:
                out.append(self.fs_target(kind, item, node, i))
            pre = self.read_keys(schema.TARGET_MORE, item, node, i, only=("precondition",))
            if pre["precondition"] is not None:
                self.preconditions[out[-1]] = precondition(pre["precondition"])
                self.precondition_at[out[-1]] = (item, "precondition")
        return out

    def target_kind(self, item: Any, node: Any, i: int) -> str:
        """What target ``node[i]`` is: a mapping of known keys with exactly one kind."""
        if not isinstance(item, dict):
            raise self.err(
                f"each target must be a mapping such as `- file: PATH`, not {_describe(item)}",
                node,
                i,
                fix=f"say what it is: file, device or directory, e.g.\n{_TARGETS_EXAMPLE}",
            )
        for k in item:
            if k not in TARGET_KEYS:
                raise self.err(
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
            raise self.err(
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
            raise self.err(
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
            raise self.err(f"the {kind} path {problem}", item, kind, fix=fix_for(problem))
        if kind == "device" and not os.path.isabs(path):
            raise self.err(
                f"a device path must be absolute, not {path!r} (fio runs in a directory "
                "of its own)",
                item,
                kind,
                fix="e.g. `- device: /dev/sdb`",
            )
        self.read_keys(schema.TARGET_MORE, item, node, i, only=("name",))
        target = Target(
            kind=kind, path=os.path.abspath(path), name=str(name) if name is not None else None
        )
        self.target_at.setdefault(target, (item, kind))
        return target

    def refuse_keys(self, item: Any, kind: str, keys: tuple[str, ...], whose: str) -> None:
        """A key of another kind of target in ``item`` (a ``kind``) is an error."""
        for k in keys:
            if k in item:
                raise self.err(
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
            raise self.err(message, item, key, fix=fix)
        endpoint = s3keys.endpoint_of(item, self.endpoint)
        if endpoint is None:
            raise self.err(
                "an s3 target needs an `endpoint` (or --endpoint, or $AWS_ENDPOINT_URL)",
                item,
                "s3",
                fix=s3keys.ENDPOINT_EXAMPLE,
            )
        if "endpoint" not in item:
            env_problem = s3keys.endpoint_problem(endpoint)
            if env_problem is not None:
                where = "--endpoint" if self.endpoint else "$AWS_ENDPOINT_URL"
                raise self.err(f"{where}: {env_problem[0]}", item, "s3", fix=env_problem[1])
        self.read_keys(schema.TARGET_MORE, item, node, i, only=("name",))
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
        self.target_at.setdefault(target, (item, "s3"))
        return target

    def ceph_target(self, kind: str, item: Any, node: Any, i: int) -> Target:
        """``- rbd: POOL/IMAGE`` (optional ``size`` of the image to create) or
        ``- rados: POOL``, each with optional ``conf`` (ceph.conf) and ``clientname``."""
        path = item[kind]
        if not isinstance(path, str):
            path = str(path) if isinstance(path, int) else ""
        self.refuse_keys(item, f"{kind} target", s3keys.KEYS, "s3 targets")
        self.read_keys(schema.TARGET_MORE, item, node, i, only=("size", "conf", "clientname"))
        size = parse_size(item["size"]) if "size" in item else None
        client = item.get("clientname")
        if isinstance(client, str) and client.startswith("client."):
            client = client[len("client.") :]
        name = item.get("name")
        for k in ("conf", "clientname"):
            problem = path_problem(item[k].strip()) if k in item else None
            if problem:
                raise self.err(f"`{k}` {problem}", item, k, fix=fix_for(problem))
        self.read_keys(schema.TARGET_MORE, item, node, i, only=("name",))
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
            raise self.err(
                f"not {article} {kind} target: {_describe(item[kind])}", item, kind, fix=str(e)
            ) from None

    def hosts(self, doc: CommentedMap, targets: list[Target]) -> list[Host]:
        node = doc.get("hosts")
        example = (
            "hosts:\n  - address: 192.0.2.10\n  - address: 192.0.2.11\n    port: 8766\n"
            "    targets:\n      - device: /dev/vdb"
        )
        if not isinstance(node, list) or not node:
            raise self.err(
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
                raise self.err(
                    f"each host must be a mapping such as `- address: 192.0.2.10`, not "
                    f"{_describe(item)}",
                    node,
                    i,
                    fix=f"write `address:` (and optionally port, name, targets), e.g.\n{example}",
                )
            for k in item:
                if k not in HOST_KEYS:
                    raise self.err(
                        f"unknown host key {str(k)!r}",
                        item,
                        k,
                        fix=suggestion(str(k), HOST_KEYS, f"a host has: {', '.join(HOST_KEYS)}"),
                    )
            values = self.read_keys(schema.HOST, item, node, i)
            address, port = values["address"].strip(), values["port"]
            own = (
                tuple(self.target_list(item["targets"], item, "targets"))
                if item.get("targets") is not None
                else None
            )
            if own is not None and not own:
                raise self.err(
                    "`targets` of a host is empty",
                    item,
                    "targets",
                    fix="list this host's targets, or remove `targets:` to use the plan's",
                )
            host = _host(values, own)
            ident = (address, port if address != LOCAL else 0)
            if ident in seen:
                first = f"host {seen[ident] + 1}"
                raise self.err(
                    f"host {host.label} is listed twice (as {first} and host {i + 1})",
                    node,
                    i,
                    fix="list each fio server once (a different `port:` for a second server "
                    "on the same machine)",
                )
            if host.label in labels:
                raise self.err(
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
            raise self.err(
                f"host {odd[0].label} has {odd[1]} target(s), the other hosts {others}: every "
                "host needs the same number of targets (point i uses each host's i-th target)",
                node,
                hosts.index(odd[0]),
                fix="list the same number of targets under each host (or none, to use the "
                "plan's `targets:`)",
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


def default_ceph_conf() -> str:
    """``$CEPH_CONF``, else /etc/ceph/ceph.conf (what the ceph tools read by default)."""
    return os.environ.get("CEPH_CONF") or DEFAULT_CEPH_CONF


def ceph_target(kind: str, path: str, conf: str | None = None, **kw: Any) -> Target:
    """An rbd (``POOL/IMAGE``) or rados (``POOL``) target; raises ValueError with the fix
    when the name cannot be one."""
    path = path.strip()
    parts = path.split("/")
    want = 2 if kind == "rbd" else 1
    if (
        len(parts) != want
        or not all(parts)
        or any(c.isspace() for c in path)
        or path_problem(path) is not None
    ):
        raise ValueError(
            "rbd:POOL/IMAGE (e.g. rbd:bench/storbench)"
            if kind == "rbd"
            else "rados:POOL (e.g. rados:bench)"
        )
    conf = os.path.abspath(conf) if conf else os.path.abspath(default_ceph_conf())
    problem = path_problem(conf)
    if problem:
        raise ValueError(f"the ceph.conf path {conf!r} {problem}: {fix_for(problem)}")
    client = kw.get("client")
    if client is not None and path_problem(client):
        raise ValueError(f"the client name {client!r} {path_problem(client)}")
    return Target(kind, path, conf=conf, **kw)


def parse_target_arg(arg: str, ceph_conf: str | None = None, endpoint: str | None = None) -> Target:
    """``--target`` value: ``file:PATH``, ``device:PATH``, ``directory:PATH``,
    ``rbd:POOL/IMAGE``, ``rados:POOL`` or a bare path (a block device or a path under /dev is
    a device, an existing directory a directory, anything else a file). ``ceph_conf``
    (``--ceph-conf``) is the ceph.conf of Ceph targets (default: :func:`default_ceph_conf`).
    ``s3://BUCKET[/PREFIX]``: a bucket of the service ``endpoint`` (``--endpoint``) or else
    ``$AWS_ENDPOINT_URL`` names."""
    if arg.startswith("s3://"):
        return s3_target_arg(arg, endpoint)
    for kind in CEPH_KINDS:
        if arg.startswith(kind + ":"):
            try:
                return ceph_target(kind, arg[len(kind) + 1 :], ceph_conf)
            except ValueError as e:
                article = "an" if kind == "rbd" else "a"
                raise PlanError(
                    f"--target {shown(arg)}: not {article} {kind} target", fix=str(e)
                ) from None
    for kind in (*FS_KINDS, "dir"):
        if arg.startswith(kind + ":"):
            path = arg[len(kind) + 1 :]
            if not path:
                raise PlanError(
                    f"--target {shown(arg)}: no path after {kind}:", fix=f"--target {kind}:/path"
                )
            _check_target_arg(arg, path)
            kind = "directory" if kind == "dir" else kind
            return Target(kind, os.path.abspath(path))
    if not arg.strip():
        raise PlanError("--target needs a path", fix="--target ./scratch.dat or --target /dev/sdb")
    _check_target_arg(arg, arg)
    # absolute: fio runs in a temporary directory of its own
    path = os.path.abspath(arg)
    try:
        mode = os.stat(arg).st_mode
    except OSError:
        if path.startswith("/dev/"):
            return Target("device", path)  # preflight says it does not exist
        return Target("file", path)
    if stat.S_ISBLK(mode):
        return Target("device", path)
    if stat.S_ISDIR(mode):
        return Target("directory", path)
    return Target("file", path)


def _check_target_arg(arg: str, path: str) -> None:
    problem = path_problem(path)
    if problem:
        raise PlanError(f"--target {shown(arg)}: the path {problem}", fix=fix_for(problem))


def s3_target_arg(arg: str, given: str | None = None) -> Target:
    """``--target s3://BUCKET[/PREFIX]``: the endpoint ``given`` (``--endpoint``) or the
    environment's, the keys from the environment."""
    bucket, _, prefix = arg[len("s3://") :].partition("/")
    item = {"s3": bucket, **({"prefix": prefix} if prefix else {})}
    found = s3keys.problem(item)
    if found is not None:
        raise PlanError(f"--target {shown(arg)}: {found[1][0]}", fix=found[1][1])
    endpoint = s3keys.endpoint_of(item, given)
    problem = s3keys.endpoint_problem(endpoint) if endpoint else None
    if endpoint is None or problem is not None:
        where = "--endpoint" if given else "$AWS_ENDPOINT_URL"
        raise PlanError(
            f"--target {shown(arg)}: "
            + (f"{where}: {problem[0]}" if problem else "no endpoint for the bucket"),
            fix="--endpoint http://HOST:PORT (the S3 service; or export AWS_ENDPOINT_URL), or "
            "write a plan with `- s3: BUCKET` and `endpoint:`",
        )
    return Target(
        kind=S3_KIND,
        path=bucket,
        endpoint=endpoint,
        region=s3keys.DEFAULT_REGION,
        prefix=prefix or s3keys.DEFAULT_PREFIX,
        credentials="env",
        create_bucket=False,
        insecure=False,
        keep_objects=False,
    )
