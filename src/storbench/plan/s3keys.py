"""An ``s3:`` target's keys, read and checked: the bucket, the service's endpoint, the region
signed into requests, the objects' name prefix, where the credentials come from (never the
credentials themselves), and whether a bucket that is missing is created::

    targets:
      - s3: bench                         # the bucket
        endpoint: http://10.0.0.5:7480    # http or https, HOST[:PORT], nothing after it
        region: us-east-1                 # default
        prefix: storbench/                # default: object names start with it
        credentials: env                  # env (default) | profile:NAME | file:PATH
        create_bucket: false              # default: a missing bucket is refused
        insecure: false                   # https: accept a certificate that does not verify
        keep_objects: false               # default: the run's objects are deleted at its end

The endpoint may come from the environment (``AWS_ENDPOINT_URL_S3``, else
``AWS_ENDPOINT_URL``: the AWS SDKs' names) when the plan gives none.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from storbench.model import redact
from storbench.plan.checks import control_char, shown
from storbench.plan.yamlpos import _describe

#: The keys an ``s3:`` target takes besides its bucket and name.
KEYS = ("endpoint", "region", "prefix", "credentials", "create_bucket", "insecure", "keep_objects")
DEFAULT_REGION = "us-east-1"
DEFAULT_PREFIX = "storbench/"
#: Environment variables an endpoint comes from when the plan has none (the AWS SDKs').
ENDPOINT_ENV = ("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL")
#: S3's bucket naming rules (path-style requests): 3-63 lower-case letters, digits, dots
#: and hyphens, starting and ending with a letter or digit.
_BUCKET = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")
_REGION = re.compile(r"^[a-z0-9-]{1,40}$")
_PREFIX = re.compile(r"^[A-Za-z0-9!_.*'()/-]{0,200}$")
ENDPOINT_EXAMPLE = "e.g. `endpoint: http://10.0.0.5:7480` (radosgw) or `https://s3.example.com`"

Problem = tuple[str, str]

#: Each key's documentation for plan/schema.py: what it takes, what it does, its default.
KEY_DOCS = {
    "endpoint": (
        "URL (s3)",
        "The S3 service: `http[s]://HOST[:PORT]`.",
        "$AWS_ENDPOINT_URL_S3, else $AWS_ENDPOINT_URL",
    ),
    "region": ("text (s3)", "The region signed into requests.", DEFAULT_REGION),
    "prefix": (
        "text (s3)",
        "Object names start with it (then the run, the workload and the job).",
        DEFAULT_PREFIX,
    ),
    "credentials": (
        "env, profile:NAME, file:PATH (s3)",
        "Where the access key and secret are: the environment (AWS_ACCESS_KEY_ID, "
        "AWS_SECRET_ACCESS_KEY), a profile of ~/.aws/credentials, or a file in that format. "
        "Never the keys themselves; storbench stores and prints neither.",
        "env (then $AWS_PROFILE or `default` in ~/.aws/credentials)",
    ),
    "create_bucket": (
        "true, false (s3)",
        "Create the bucket when it is missing (else a missing bucket is refused).",
        "false",
    ),
    "insecure": (
        "true, false (s3)",
        "https: accept a certificate that does not verify (self-signed).",
        "false",
    ),
    "keep_objects": (
        "true, false (s3)",
        "Keep the objects the run wrote (else they are deleted at its end).",
        "false",
    ),
}


def bucket_problem(value: Any) -> Problem | None:
    fix = "e.g. `- s3: bench` (3-63 lower-case letters, digits, dots and hyphens)"
    if not isinstance(value, str) or not _BUCKET.match(value) or ".." in value:
        return f"`s3` needs a bucket name, not {_describe(value)}", fix
    return None


def endpoint_problem(value: Any) -> Problem | None:
    """Why ``value`` is not an endpoint URL storbench can hand fio (``http[s]://HOST[:PORT]``)."""
    if not isinstance(value, str) or not value.strip():
        return f"`endpoint` must be a URL, not {_describe(value)}", ENDPOINT_EXAMPLE
    shown_url = redact.hide_url_passwords(value)  # never echo a password
    c = control_char(value)
    if c is not None:
        return f"`endpoint` {shown(shown_url)} holds a control character ({c})", ENDPOINT_EXAMPLE
    try:
        u = urlsplit(value.strip())
        port = u.port
    except ValueError as e:
        return f"`endpoint` {shown_url!r} is not a URL ({e})", ENDPOINT_EXAMPLE
    if u.scheme not in ("http", "https") or not u.hostname:
        return f"`endpoint` {shown_url!r} must start with http:// or https:// and a host", (
            ENDPOINT_EXAMPLE
        )
    if u.username or u.password:
        return (
            "`endpoint` must not hold credentials",
            "remove `user:password@`; give them with `credentials:` (env, profile:NAME, file:PATH)",
        )
    if u.path.strip("/") or u.query or u.fragment or port == 0:
        return (
            f"`endpoint` {shown_url!r} must be the service alone (scheme, host, port)",
            "the bucket goes under `s3:` and object names under `prefix:`",
        )
    return None


def credentials_problem(value: Any) -> Problem | None:
    fix = (
        "`credentials: env` (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, the default), "
        "`credentials: profile:NAME` (~/.aws/credentials) or `credentials: file:PATH` "
        "(a file in that format); never the keys themselves"
    )
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        return f"`credentials` must say where the keys are, not {_describe(value)}", fix
    v = value.strip()
    if v == "env" or (v.startswith(("profile:", "file:")) and v.split(":", 1)[1].strip()):
        return None if control_char(v) is None else (f"`credentials` {shown(v)}", fix)
    return f"`credentials` {shown(v)} is not env, profile:NAME or file:PATH", fix


def problem(item: Mapping[Any, Any]) -> tuple[str, Problem] | None:
    """The first of an ``s3:`` target's keys that is wrong (the key, its problem), or None."""
    checks = {
        "s3": lambda v: bucket_problem(v),
        "endpoint": lambda v: endpoint_problem(v),
        "credentials": credentials_problem,
        "region": lambda v: (
            None
            if isinstance(v, str) and _REGION.match(v)
            else (f"`region` must be a region name, not {_describe(v)}", "e.g. `region: us-east-1`")
        ),
        "prefix": lambda v: (
            None
            if isinstance(v, str) and _PREFIX.match(v) and ".." not in v
            else (
                f"`prefix` must be a plain object name prefix, not {_describe(v)}",
                "e.g. `prefix: storbench/` (letters, digits and !_.*'()/-)",
            )
        ),
        "create_bucket": lambda v: (
            None
            if isinstance(v, bool)
            else (f"`create_bucket` is true or false, not {_describe(v)}", "`create_bucket: true`")
        ),
        "insecure": lambda v: (
            None
            if isinstance(v, bool)
            else (f"`insecure` is true or false, not {_describe(v)}", "`insecure: true`")
        ),
    }
    for key, check in checks.items():
        if key in item:
            found = check(item[key])
            if found is not None:
                return key, found
    return None


def endpoint_of(item: Mapping[Any, Any], default: str | None = None) -> str | None:
    """The target's endpoint: its own, else ``default`` (``--endpoint``), else the
    environment's (:data:`ENDPOINT_ENV`)."""
    given = item.get("endpoint")
    if isinstance(given, str) and given.strip():
        return given.strip().rstrip("/")
    if default:
        return default.strip().rstrip("/")
    for name in ENDPOINT_ENV:
        if os.environ.get(name, "").strip():
            return os.environ[name].strip().rstrip("/")
    return None


def host_port(endpoint: str) -> str:
    """What fio's ``http_host`` takes: HOST[:PORT] of the endpoint."""
    u = urlsplit(endpoint)
    host = u.hostname or ""
    host = f"[{host}]" if ":" in host else host
    return f"{host}:{u.port}" if u.port else host
