"""Targets named by a string rather than a plan's mapping: ``--target`` arguments (a path,
``KIND:PATH``, ``rbd:POOL/IMAGE``, ``rados:POOL``, ``s3://BUCKET``) and a Ceph target from its
pool and image."""

from __future__ import annotations

import os
import stat
from typing import Any

import storbench.plan.s3keys as s3keys
from storbench.model.errors import PlanError
from storbench.plan.checks import fix_for, path_problem, shown
from storbench.plan.model import Target
from storbench.plan.rules import CEPH_KINDS, DEFAULT_CEPH_CONF, FS_KINDS, S3_KIND


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
