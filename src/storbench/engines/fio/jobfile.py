"""The exact job file of a point: its options, its target's options (files, devices, directories,
rbd, rados objects) and the values fio must never misread.
"""

from __future__ import annotations

import os
import re
from typing import Any

from storbench import __version__
from storbench.engines.fio.files import PATH_OPTIONS
from storbench.hosts import s3creds
from storbench.model.errors import PlanError
from storbench.model.units import UnitError, parse_size
from storbench.plan import (
    Point,
    Target,
    job_section_name,
    job_value_problem,
    name_problem,
    path_problem,
    s3keys,
)


def _fmt_value(value: Any) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def target_options(point: Point, run_id: int | None = None) -> dict[str, Any]:
    return _target_opts(point.target, run_id)


def rados_object_prefix(run_id: int | None, host: int | None = None) -> str:
    """The name prefix of the objects fio's rados engine writes for a run (one object per
    fio file; fio leaves them behind, the runner removes them at the end). On several hosts
    each host has objects of its own (``h<i>.``, i the host's index in the point), as each
    VM of seed 003 has its own image: otherwise all of them would write the same objects."""
    run = f"storbench-r{run_id}." if run_id is not None else "storbench."
    return run + (f"h{host}." if host is not None else "")


def _target_opts(t: Target, run_id: int | None = None, host: int | None = None) -> dict[str, Any]:
    if t.kind in ("file", "device"):
        return {"filename": t.path}
    if t.kind == "directory":
        # a name prefix of storbench's own: preflight refuses when such files exist already
        return {"directory": t.path, "filename_format": "storbench.$jobname.$jobnum.$filenum"}
    client = {"clientname": t.client} if t.client else {}
    if t.kind == "rbd":
        # librbd reads the ceph.conf of $CEPH_CONF (the rbd engine has no conf option):
        # see ceph_env()
        return {"pool": t.pool, "rbdname": t.image, **client}
    if t.kind == "rados":
        # the rados engine needs conf= (fio 3.33 crashes without it); each fio file is an
        # object named by filename_format
        return {
            "pool": t.pool,
            "conf": t.conf,
            **client,
            "filename_format": rados_object_prefix(run_id, host) + "$jobname.$jobnum.$filenum",
        }
    if t.kind == "s3":
        return s3_options(t)
    raise ValueError(f"fio cannot drive a {t.kind} target")


def s3_run_tag(token: str | None) -> str | None:
    """The part of a run's S3 object names that is the run's own: the first 12 letters and
    digits of its random token (store/runs.py keeps it with the run), never its id, which
    every database starts at 1: two runs "run 1" of two databases on one bucket would
    write, read and delete each other's objects."""
    tag = re.sub(r"[^A-Za-z0-9]", "", token or "")[:12]
    return tag or None


def s3_object_prefix(t: Target, tag: str | None, host: int | None = None) -> str:
    """Where a run's objects go: ``/BUCKET/PREFIX`` then the run's tag (:func:`s3_run_tag`)
    and host, as fio's http engine takes it (its path-style URL is http_host + this; each
    I/O is the object ``<file>_<offset>_<length>``, fio 3.33's engines/http.c)."""
    run = f"r{tag}." if tag else ""
    return f"/{t.path}/{t.prefix or ''}{run}" + (f"h{host}." if host is not None else "")


def s3_options(t: Target) -> dict[str, Any]:
    """fio's http engine in S3 mode on a bucket: the keys by reference to the environment
    fio runs in (``fio_env``), never in the job file; each job's objects of its own."""
    assert t.endpoint is not None  # the plan loader gives every s3 target one
    https = "off"
    if t.endpoint.startswith("https://"):
        https = "insecure" if t.insecure else "on"
    return {
        "http_host": s3keys.host_port(t.endpoint),
        "https": https,
        "http_s3_region": t.region or s3keys.DEFAULT_REGION,
        "http_s3_keyid": "${" + s3creds.KEY_ID_VAR + "}",
        "http_s3_key": "${" + s3creds.SECRET_VAR + "}",
    }


def s3_dataset(params: dict[str, Any]) -> str:
    """The block size part of an s3 point's object names (``b64k``)."""
    bs = str(params.get("bs", params.get("blocksize", "4k")))
    return "b" + (re.sub(r"[^A-Za-z0-9]", "", bs) or "x")


def s3_name_format(t: Target, tag: str | None, host: int | None, params: dict[str, Any]) -> str:
    """fio's ``filename_format`` for a job on bucket ``t``: the objects of a run (its tag),
    a host and a block size (engines/fio/s3objects.py says why)."""
    return s3_object_prefix(t, tag, host) + s3_dataset(params) + ".$jobnum.$filenum"


READ_RW = ("read", "randread", "rw", "readwrite", "randrw")

#: fio's http engine reads a missing object (HTTP 404) as zeroes and counts the GET a
#: success (fio 3.33 engines/http.c, fio_http_queue). So the objects storbench writes for
#: GETs (the prefill, s3objects.py) carry fio's verify header (a checksum of the object's
#: random bytes), and a GET checks it: an object that is not there reads as zeroes, "bad
#: magic header 0", an error fio counts (``total_err``) and goes on after
#: (``continue_on_error=verify``), so every failed GET is counted. Measured on versitygw,
#: 64 KiB GETs at 2 jobs: 2,563 and 2,173 GET/s with the check, 2,816 and 2,234 without.
S3_PREFILL_CHECK = {"verify": "crc32c", "do_verify": 0}
S3_GET_CHECK = {"verify": "crc32c", "continue_on_error": "verify"}
#: A plan that sets one of these on a point decides verification itself.
_VERIFY_KEYS = ("verify", "do_verify", "continue_on_error", "verify_only")


def s3_get_check(params: dict[str, Any]) -> dict[str, Any]:
    """The options that make an s3 point's failed GETs errors (:data:`S3_GET_CHECK`): for a
    point that only reads (``read``, ``randread``) and sets no verification of its own.
    A mixed point (``randrw``) is not checked: its own PUTs write objects without the
    header, and fio verifies mixed jobs in a phase of their own."""
    rw = str(params.get("rw", params.get("readwrite", "read"))).split(":")[0]
    if rw not in ("read", "randread") or any(k in params for k in _VERIFY_KEYS):
        return {}
    return dict(S3_GET_CHECK)


def reads(point: Point) -> bool:
    """Whether a fio point reads (rw read, randread or a mix)."""
    return str(point.params.get("rw", point.params.get("readwrite", "read"))).split(":")[0] in (
        READ_RW
    )


def rados_object_size(point: Point) -> int:
    """The size of each object fio's rados engine writes for a point (one object per fio
    file): ``filesize`` (its upper bound), else ``size`` / ``nrfiles``; 0 when unsaid."""
    try:
        if "filesize" in point.params:
            return parse_size(str(point.params["filesize"]).split("-")[-1])
        size = parse_size(point.params.get("size", 0) or 0)
    except UnitError:
        return 0
    return size // max(1, int(point.params.get("nrfiles", 1)))


def rados_objects(
    point: Point, run_id: int | None, host: int | None = None
) -> list[tuple[str, int]]:
    """The objects (name, bytes) fio's rados engine uses for a point, as fio names them (one
    per job and file, see :func:`_target_opts`); empty for other points. Before fio reads
    them they must hold data: fio creates them empty and "reads" zero bytes at full speed
    from an empty object."""
    if point.target.kind != "rados" or point.engine != "fio":
        return []
    size = rados_object_size(point)
    if not size:
        return []
    files = int(point.params.get("nrfiles", 1))
    name = rados_object_prefix(run_id, host) + job_section_name(point.workload)
    jobs = int(point.params.get("numjobs", 1))
    return [(f"{name}.{j}.{f}", size) for j in range(jobs) for f in range(files)]


def ceph_env(targets: list[Target]) -> dict[str, str] | None:
    """The environment fio runs in for these targets: ``CEPH_CONF`` set to the rbd
    target's ceph.conf (librbd reads no other), an s3 target's keys (storbench.hosts.s3creds: the
    job file reads them from there), or None (fio's own environment)."""
    confs = {t.conf for t in targets if t.kind == "rbd" and t.conf}
    s3 = {t.credentials or "env" for t in targets if t.kind == "s3"}
    if not confs and not s3:
        return None
    if len(confs) > 1:
        raise ValueError(f"one fio process cannot use two ceph.conf files: {sorted(confs)}")
    if len(s3) > 1:
        raise ValueError(f"one fio process cannot use two sets of S3 keys: {sorted(s3)}")
    env = {**os.environ, **({"CEPH_CONF": confs.pop()} if confs else {})}
    return {**env, **s3creds.resolve(s3.pop()).env()} if s3 else env


def job_file(
    point: Point, *, run_id: int | None = None, total: int | None = None, tag: str | None = None
) -> str:
    """The exact fio job file of a point (what `storbench plan show` prints and fio runs);
    ``tag`` names the run's S3 objects (:func:`s3_run_tag`).

    A point on several hosts has one job file per host (fio runs a job file only on the
    ``--client`` it follows); this returns them one after the other, each opening with its
    comment line naming the host — what is stored as the point's job file.
    """
    if point.hosts:
        return "\n".join(
            host_job_file(point, i, run_id=run_id, total=total, tag=tag)
            for i in range(len(point.hosts))
        )
    head = _job_head(point, run_id, total)
    return _job_text(point, point.target, head, run_id=run_id, tag=tag)


def host_job_file(
    point: Point,
    i: int,
    *,
    run_id: int | None = None,
    total: int | None = None,
    tag: str | None = None,
) -> str:
    """The job file that host ``i`` of a multi-host point runs: the same workload on that
    host's own target."""
    h = point.hosts[i]
    head = _job_head(point, run_id, total) + f", host {h.label} ({i + 1}/{len(point.hosts)})"
    # one entry per host per status report: group_reporting whatever the plan says
    force = {"group_reporting": None}
    return _job_text(point, h.target, head, force=force, run_id=run_id, host=i, tag=tag)


def _job_head(point: Point, run_id: int | None, total: int | None) -> str:
    head = f"; storbench {__version__}"
    if run_id is not None:
        head += f" run {run_id}"
    where = f"{point.index + 1}/{total}" if total else f"{point.index + 1}"
    return head + f", point {where}, key {point.key}, repetition {point.repetition + 1}"


#: What fio's option names look like (``read-req-num-512-blocks`` has dashes).
_OPTION_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_-]*")
#: Options whose value fio splits at `:` into several paths (``\:`` keeps one): escaped.
_COLON_LISTS = ("filename", "directory")
#: Options whose value is a path fio opens: no `$` and no blanks at the ends either.
_PATHS = (*_COLON_LISTS, "conf", *PATH_OPTIONS)


#: The only values with ``${`` a job file may hold: an s3 target's keys, which fio reads
#: from the environment storbench gives it (s3creds), so that no job file holds them.
_ENV_REFERENCES = {
    ("http_s3_keyid", "${" + s3creds.KEY_ID_VAR + "}"),
    ("http_s3_key", "${" + s3creds.SECRET_VAR + "}"),
}


def _job_line(key: str, value: Any) -> str:
    """One ``key=value`` line of a job file, or an error: the loader refuses such values with
    the plan's line (plan/); this is the last line of defence for a point that did not
    come through it, so that nothing a value holds becomes a line or an option of its own."""
    if not _OPTION_NAME.fullmatch(key):
        raise PlanError(
            f"refusing to write fio job option {key!r}: not an option name",
            fix="name fio options as `fio --cmdhelp=all` lists them",
        )
    if value is None:
        return key
    text = _fmt_value(value)
    if (key, text) in _ENV_REFERENCES:  # storbench's own: the keys, from fio's environment
        return f"{key}={text}"
    problem = path_problem(text) if key in _PATHS else job_value_problem(text)
    if problem:
        raise PlanError(
            f"refusing to write `{key}` into a fio job file: its value {problem}",
            fix="correct the plan (`storbench plan check PLAN` names the line)",
        )
    if key in _COLON_LISTS:
        text = text.replace(":", "\\:")
    return f"{key}={text}"


def _comment_line(text: str) -> str:
    """A comment line of a job file: one line, well below fio's 8191 bytes."""
    problem = name_problem(text)
    if problem or len(text.encode()) > 1024:
        raise PlanError(
            f"refusing to write a fio job-file comment that {problem or 'is too long'}",
            fix="give hosts and targets short names on one line",
        )
    return text


def _job_text(
    point: Point,
    target: Target,
    head: str,
    force: dict[str, Any] | None = None,
    *,
    run_id: int | None = None,
    host: int | None = None,
    tag: str | None = None,
) -> str:
    lines = [_comment_line(head), f"[{job_section_name(point.workload)}]"]
    opts: dict[str, Any] = {**_target_opts(target, run_id, host), **point.params, **point.extra}
    if target.kind == "s3":
        opts["filename_format"] = s3_name_format(target, tag, host, point.params)
        opts.update(s3_get_check(opts))
    opts.setdefault("group_reporting", None)
    opts.update(force or {})
    lines += [_job_line(str(k), v) for k, v in opts.items()]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------- running
