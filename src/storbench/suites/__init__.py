"""The built-in suites: one plan file each (NAME.yaml), read by plan/sources.py."""

from __future__ import annotations

import os


def names() -> tuple[str, ...]:
    """The suites' names, sorted (light: the command line's help lists them)."""
    files = os.listdir(os.path.dirname(__file__))
    return tuple(sorted(f[:-5] for f in files if f.endswith(".yaml")))


#: What ``plan show SUITE`` shows a suite on when no ``--target`` is given: a placeholder
#: in the form the suite takes (its description says which), never a path of this machine.
PLACEHOLDERS = {"rados": "rados:POOL", "rbd": "rbd:POOL/IMAGE", "s3": "s3://bucket"}
#: ... of the suites of files and devices
PLACEHOLDER = "/path/to/target"
#: ... and the S3 service of the s3 suite when none is given (--endpoint, AWS_ENDPOINT_URL)
PLACEHOLDER_ENDPOINT = "http://s3-host"


def placeholder(name: str) -> str:
    """The placeholder target of suite ``name``."""
    return PLACEHOLDERS.get(name, PLACEHOLDER)
