"""The objects of an s3 target's points: how they are named, written before a point reads them
(fio's http engine reads a missing object as zeroes and counts it a success), and removed at
the run's end.

fio 3.33's http engine (engines/http.c) makes each I/O one request for the object
``<file name>_<offset>_<length>`` of the job's first file, its URL ``http[s]://http_host``
followed by that name, path-style. storbench names each job's file
``/BUCKET/PREFIX r<tag>.[h<host>.]b<bs>.<job>.<file>`` (jobfile.s3_name_format): the objects
of a run, a host and a block size, so that a GET point of some size reads what a PUT point of
the same size wrote, and objects of several jobs or hosts never collide. ``<tag>`` is the
run's own (jobfile.s3_run_tag: from the random token kept with the run, not its id, which
every database numbers from 1), so that runs of two databases on one bucket never touch
each other's objects, and `resume` and `cleanup` find a run's objects again.

Before a point reads or deletes, the objects it reads or deletes are written by a
*prefill*: the same shape (block size, size, jobs, files) as a sequential write, once per
session (again after a point deleted objects of those names), an event of the run and never
a measurement; a DELETE of an object nobody wrote would measure 404s. At the run's end every
shape a point used is deleted the same way (``rw=trim``: one DELETE per object; fio counts
a 404 as done).
"""

from __future__ import annotations

import dataclasses
import http.client
import os
import re
import socket
import ssl
import time
from typing import Any
from urllib.parse import urlsplit

from storbench.engines.fio.intervals import StatusStream
from storbench.engines.fio.jobfile import (
    S3_PREFILL_CHECK,
    _job_line,
    ceph_env,
    host_job_file,
    job_file,
    s3_dataset,
    s3_object_prefix,
    s3_options,
)
from storbench.engines.fio.keys import S3_FIO_OPTIONS
from storbench.engines.fio.parse import parse_output
from storbench.engines.fio.s3answers import MISSING_LINE, STATUS, answers, explain
from storbench.engines.fio.spawn import _run_fio
from storbench.engines.fio.tool import FIO, FioOutputError, fio_path
from storbench.engines.fio.watchdog import ANSWER_TIMEOUT, Watchdog
from storbench.plan import Point, Target

#: The options that decide which objects a job touches (and how many).
SHAPE = ("bs", "blocksize", "size", "filesize", "io_size", "numjobs", "nrfiles", "offset")


def s3_targets(point: Point) -> list[Target]:
    return (
        [h.target for h in point.hosts if h.target.kind == "s3"]
        if point.hosts
        else ([point.target] if point.target.kind == "s3" else [])
    )


def shape_point(point: Point, rw: str) -> Point:
    """The point's objects as a job of ``rw`` (write: the prefill, each object with the
    verify header GETs check, jobfile.S3_PREFILL_CHECK; trim: their removal): its shape,
    sequential, untimed, no rounds, no actions."""
    params = {k: point.params[k] for k in SHAPE if k in point.params}
    params.update(S3_FIO_OPTIONS, rw=rw)
    if rw == "write":
        params.update(S3_PREFILL_CHECK)
    return dataclasses.replace(
        point, params=params, extra={}, steady=None, actions=[], keep_cut=False
    )


def deletes(point: Point) -> bool:
    """Whether the point DELETEs objects (rw trim, randtrim, trimwrite)."""
    rw = str(point.params.get("rw", point.params.get("readwrite", "read"))).split(":")[0]
    return rw in ("trim", "randtrim", "trimwrite")


def shape_key(point: Point) -> tuple[Any, ...]:
    """What makes two points' objects the same objects."""
    where = tuple((h.target, i) for i, h in enumerate(point.hosts)) or ((point.target, None),)
    shape = tuple((k, str(point.params[k])) for k in SHAPE if k in point.params)
    return where, s3_dataset(point.params), shape


def remove(
    points: list[Point], run_id: int | None, workdir: str, tag: str | None
) -> tuple[int, list[str]]:
    """Delete every object the s3 points of a run may have written or prefilled (each shape
    once, each host's objects from this machine): (DELETE requests made, what failed)."""
    done: set[str] = set()
    sent, failed = 0, []
    for p in points:
        if not s3_targets(p):
            continue
        trim = shape_point(p, "trim")
        slots = [(h.target, i) for i, h in enumerate(p.hosts)] or [(p.target, None)]
        for t, host in slots:
            if t.kind != "s3" or t.keep_objects:
                continue
            key = repr((t, host, shape_key(trim)[1:]))  # the same objects once
            if key in done:
                continue
            done.add(key)
            text = (
                host_job_file(trim, host, run_id=run_id, tag=tag)
                if host is not None
                else job_file(dataclasses.replace(trim, hosts=[]), run_id=run_id, tag=tag)
            )
            path = os.path.join(workdir, f"s3-cleanup-{len(done)}.fio")
            with open(path, "w") as f:
                f.write(text)
            # a status report each second: the watchdog sees the DELETEs complete
            cmd = [fio_path() or FIO, "--output-format=json", "--status-interval=1", path]
            watch = Watchdog.of(trim.params, f"the S3 service at {t.endpoint}")
            stream = StatusStream(0.0, 1000)

            def on_output(
                _: float, text: str, stream: StatusStream = stream, watch: Watchdog = watch
            ) -> None:
                stream.feed(text)
                watch.progress(stream.completed)

            rc, _, _, _, _, stderr = _run_fio(
                cmd,
                workdir,
                path[:-4],
                lambda: False,
                env=ceph_env([t]),
                on_output=on_output,
                stalled=watch,
            )
            stream.close()
            try:
                meas, _ = parse_output(stream.kept()[0], stream.last_document)
            except FioOutputError:
                meas = None
            trims = meas.direction("trim") if meas is not None else None
            sent += trims.total_ios if trims is not None else 0
            if watch.fired or rc != 0 or meas is None or meas.status != "ok":
                why = (meas.error if meas is not None else None) or stderr.strip()[-300:]
                why = watch.fired or explain(why or f"fio exit {rc}", stderr)
                names = s3_object_prefix(t, tag, host) + dataset_of(trim)
                failed.append(f"{t.label} ({dataset_of(trim)}, objects {names}.*): {why}")
    return sent, failed


def dataset_of(point: Point) -> str:
    return s3_dataset(point.params)


#: S3 error codes that mean the service refuses the keys (whatever HTTP status it sends:
#: versitygw answers an unknown access key with 404 XAdminUserNotFound).
KEY_CODES = (
    "InvalidAccessKeyId",
    "SignatureDoesNotMatch",
    "XAdminUserNotFound",
    "AccessDenied",
    "InvalidToken",
    "ExpiredToken",
)


def service_says(t: Target) -> tuple[str, str] | None:
    """What the service answers a signed PUT of a 1-byte probe object (botocore, with the
    target's keys; deleted again when it was written): its S3 error (code, message), or
    None when it took it or did not answer. fio's http engine gives only the HTTP status,
    and a 404 is a missing bucket or (versitygw) an unknown key."""
    import botocore.config
    import botocore.exceptions
    import botocore.session

    from storbench.hosts import s3creds

    creds = s3creds.resolve(t.credentials, t.label)
    config = botocore.config.Config(
        s3={"addressing_style": "path"},
        retries={"max_attempts": 1},
        connect_timeout=ANSWER_TIMEOUT,
        read_timeout=ANSWER_TIMEOUT,
    )
    client = botocore.session.get_session().create_client(
        "s3",
        region_name=t.region or "us-east-1",
        endpoint_url=t.endpoint,
        aws_access_key_id=creds.key_id,
        aws_secret_access_key=creds.secret,
        aws_session_token=creds.token,
        verify=not t.insecure,
        config=config,
    )
    key = f"{t.prefix or ''}storbench-probe-{os.getpid()}-signed"
    try:
        client.put_object(Bucket=t.path, Key=key, Body=b"x")
        client.delete_object(Bucket=t.path, Key=key)
        return None
    except botocore.exceptions.ClientError as e:
        error = e.response.get("Error", {})
        return str(error.get("Code", "?")), str(error.get("Message", ""))
    except botocore.exceptions.BotoCoreError:
        return None
    finally:
        client.close()


TLS_FIX = (
    "give this machine the certificate's CA, or set `insecure: true` on the target for a "
    "self-signed certificate"
)


def tls_refusal(t: Target) -> str | None:
    """Why an https endpoint's certificate does not verify here (fio's http engine says only
    "error -1"), or None: not https, ``insecure``, or the certificate verifies."""
    if t.insecure or not (t.endpoint or "").startswith("https://"):
        return None
    context = ssl.create_default_context()
    try:
        url = urlsplit(t.endpoint or "")
        host, port = url.hostname or "", url.port or 443
        with (
            socket.create_connection((host, port), timeout=5) as raw,
            context.wrap_socket(raw, server_hostname=host),
        ):
            return None
    except ssl.SSLCertVerificationError as e:
        return f"its TLS certificate does not verify ({e.verify_message})"
    except (OSError, ValueError):
        return None


def unanswered(t: Target, timeout: float | None = None) -> str | None:
    """Why the service at ``t``'s endpoint does not answer an HTTP request (a HEAD of the
    bucket, unsigned: any status is an answer) within ``timeout`` seconds, or None when it
    does. Its certificate is not checked here (:func:`tls_refusal` does)."""
    timeout = ANSWER_TIMEOUT if timeout is None else timeout
    url = urlsplit(t.endpoint or "")
    try:
        host, port = url.hostname or "", url.port
    except ValueError as e:
        return str(e)
    conn: http.client.HTTPConnection
    if url.scheme == "https":
        context = ssl._create_unverified_context()  # reachability only: tls_refusal checks
        conn = http.client.HTTPSConnection(host, port, timeout=timeout, context=context)
    else:
        conn = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        conn.request("HEAD", f"/{t.path}")
        conn.getresponse().read()
        return None
    except TimeoutError:
        return f"it accepted the connection but did not answer within {timeout:g} s"
    except (OSError, http.client.HTTPException) as e:
        return f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
    finally:
        conn.close()


def probe(t: Target, workdir: str) -> tuple[str, str, str | None] | None:
    """Whether the bucket takes this run's objects: the service answers at all (within
    :data:`ANSWER_TIMEOUT`), then fio PUTs one 4 KiB object under the target's prefix and
    DELETEs it, each stopped when it takes longer than 3 x :data:`ANSWER_TIMEOUT`.
    (message, fix, HTTP status or None) when it does not, else None."""
    silent = unanswered(t)
    if silent is not None:
        return (
            f"{t.label}: cannot reach {t.endpoint} ({silent})",
            "check the endpoint (scheme, host, port) and that the service runs; "
            "STORBENCH_S3_TIMEOUT=SECONDS waits longer",
            None,
        )
    name = f"/{t.path}/{t.prefix or ''}storbench-probe-{os.getpid()}"
    for rw in ("write", "trim"):
        rc, late, raw, stderr = _probe_job(t, workdir, rw, name)
        if late:
            what = "PUT" if rw == "write" else "DELETE"
            return (
                f"{t.label}: {t.endpoint} did not complete a 4 KiB {what} within "
                f"{3 * ANSWER_TIMEOUT:g} s",
                "check that the service works (its log); STORBENCH_S3_TIMEOUT=SECONDS waits longer",
                None,
            )
        status = re.search(r"failed with HTTP status code (\d+)", stderr + raw)
        if status is not None:
            code = status.group(1)
            message, fix = STATUS.get(code, (f"the service answered HTTP {code}", ""))
            said = service_says(t)
            if said is not None and said[0] in KEY_CODES:
                message, fix = STATUS["403"]
                message = f"the service refuses the keys (HTTP {code} {said[0]}: {said[1]})"
                code = "403"  # never a bucket to create
            elif said is not None and said[0] != "NoSuchBucket":
                message = f"{message} ({said[0]}: {said[1]})"
            return f"{t.label} at {t.endpoint}: {message}", fix, code
        try:
            meas, _ = parse_output(raw)
        except FioOutputError:
            meas = None
        if rc != 0 or meas is None or meas.status != "ok":
            tls = tls_refusal(t)
            if tls is not None:
                return f"{t.label} at {t.endpoint}: {tls}", TLS_FIX, None
            why = (meas.error if meas is not None else None) or stderr.strip() or f"fio exit {rc}"
            return (
                f"{t.label}: cannot reach {t.endpoint} ({why.splitlines()[-1].strip()})",
                "check the endpoint (scheme, host, port) and that the service runs",
                None,
            )
    return None


def _probe_job(t: Target, workdir: str, rw: str, name: str) -> tuple[int | None, bool, str, str]:
    """fio's ``rw`` of one 4 KiB object ``name`` on ``t``, stopped after 3 x
    :data:`ANSWER_TIMEOUT`: (exit status, stopped, stdout, stderr)."""
    opts = {**s3_options(t), **S3_FIO_OPTIONS, "bs": "4k", "size": "4k"}
    opts.update(filename_format=name, rw=rw)
    path = os.path.join(workdir, f"s3-probe-{rw}.fio")
    with open(path, "w") as f:
        f.write("\n".join(["[probe]", *(_job_line(k, v) for k, v in opts.items())]) + "\n")
    cmd = [fio_path() or FIO, "--output-format=json", path]
    deadline = time.monotonic() + 3 * ANSWER_TIMEOUT
    rc, late, _, _, raw, stderr = _run_fio(
        cmd, workdir, path[:-4], lambda: time.monotonic() > deadline, env=ceph_env([t])
    )
    return rc, late, raw, stderr


def missing_gets_unseen(t: Target, workdir: str) -> bool:
    """Whether this machine's fio keeps quiet about a GET that finds no object: a GET of a
    4 KiB object nobody wrote, under ``t``'s prefix. fio's http engine reads it as zeroes
    and counts a success; storbench's own build says so on stderr (s3answers.py), as fio
    does of an error status (a service that answers 403 for a missing object)."""
    name = f"/{t.path}/{t.prefix or ''}storbench-probe-{os.getpid()}-missing"
    _, late, _, stderr = _probe_job(t, workdir, "read", name)
    said = MISSING_LINE.search(stderr) or answers(stderr)
    return not late and not said
