"""Where a plan comes from: a file or a built-in suite, and ``--target`` arguments."""

from __future__ import annotations

import errno
import os
from functools import cache
from importlib import resources
from pathlib import Path

from storbench.model.errors import NotFoundError, PlanError, suggestion
from storbench.plan.load import Loader
from storbench.plan.model import Plan
from storbench.plan.rules import MAX_DEPTH, MAX_POINTS
from storbench.suites import names as suite_names


@cache
def suite_text(name: str) -> str:
    return resources.files("storbench.suites").joinpath(f"{name}.yaml").read_text()


# ---------------------------------------------------------------------------- values


def resolve_plan_source(spec: str) -> tuple[str, str]:
    """(source name, YAML text) of a plan file path or a built-in suite name."""
    path = Path(spec)
    try:
        os.stat(path)
    except PermissionError:  # a directory on the way may not be searched
        raise PlanError(
            "cannot read the plan file: permission denied",
            file=spec,
            fix="check the permissions of the file and of the directories above it",
        ) from None
    except OSError as e:
        if e.errno == errno.ENAMETOOLONG:
            raise PlanError(
                "cannot read the plan file: its name is too long",
                file=spec[:80] + "...",
                fix="give the path of a plan file, or a built-in suite: "
                + ", ".join(suite_names()),
            ) from None
        # missing: a suite name, or reported below
    except ValueError:
        pass  # a NUL in the name: reported below
    if path.is_file():
        try:
            return str(path), path.read_text()
        except OSError as e:
            raise PlanError(
                f"cannot read the plan file: {e.strerror}",
                file=str(path),
                fix=f"check its permissions (ls -l {path}); storbench needs to read it",
            ) from None
        except UnicodeDecodeError as e:
            raise PlanError(
                f"the plan file is not UTF-8 text (byte {e.start})",
                file=str(path),
                fix="give a YAML plan file saved as UTF-8",
            ) from None
    if spec in suite_names():
        return f"suite:{spec}", suite_text(spec)
    suites = ", ".join(suite_names())
    if path.is_dir():
        raise PlanError(
            "is a directory, not a plan file",
            file=spec,
            fix=f"give the path of a plan file (YAML) inside it, or a built-in suite: {suites}",
        )
    if path.exists():
        raise PlanError(
            "is not a regular file",
            file=spec,
            fix=f"give a plan file (YAML) or a built-in suite: {suites}",
        )
    if os.sep in spec or spec.endswith((".yaml", ".yml")):
        where = path.parent if str(path.parent) not in ("", ".") else Path(".")
        why = "no such file" if where.is_dir() else f"no such directory {where}"
        raise NotFoundError(
            f"cannot read the plan file: {why}",
            file=spec,
            fix=f"check the path, or give a built-in suite: {suites}",
        )
    hint = suggestion(spec, suite_names(), "")
    raise NotFoundError(
        f"no plan file or built-in suite named {spec!r}",
        fix=f"{hint + ' ' if hint else ''}built-in suites: {suites}; "
        "or give the path of a plan file",
    )


def load_plan(
    spec: str,
    *,
    sets: list[str] | None = None,
    targets: list[str] | None = None,
    ceph_conf: str | None = None,
    max_points: int = MAX_POINTS,
    endpoint: str | None = None,
) -> Plan:
    """Load a plan file or suite, apply ``--set`` overrides and ``--target`` replacements;
    ``ceph_conf`` (``--ceph-conf``) is the ceph.conf of Ceph targets that name none,
    ``endpoint`` (``--endpoint``) the S3 service of s3 targets that name none; a plan of
    more than ``max_points`` points (``--max-points``) is refused."""
    source, text = resolve_plan_source(spec)
    return parse_plan(
        text,
        source,
        sets=sets or [],
        targets=targets or [],
        ceph_conf=ceph_conf,
        max_points=max_points,
        endpoint=endpoint,
    )


def parse_plan(
    text: str,
    source: str,
    *,
    sets: list[str] | None = None,
    targets: list[str] | None = None,
    ceph_conf: str | None = None,
    max_points: int = MAX_POINTS,
    endpoint: str | None = None,
) -> Plan:
    try:
        loader = Loader(text, source, ceph_conf, max_points, endpoint)
        return loader.load(sets or [], targets or [])
    except RecursionError:  # the YAML checks below should make this unreachable
        raise PlanError(
            "the plan is nested too deeply",
            file=source,
            fix=f"a plan needs a few levels; at most {MAX_DEPTH}",
        ) from None
