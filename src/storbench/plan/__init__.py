"""Plans: YAML loading with line numbers, validation, and expansion into points.

A plan names targets, workloads and repetitions. In a workload every key is a fio option
(checked against the option names fio 3.33 knows); a list value makes that option a matrix
axis, a scalar applies to every point. ``global:`` holds options for every workload.

``hosts:`` runs every point on several hosts at once through fio's client/server mode: each
host is a fio server (``storbench agent``) at an address and port, or ``local`` (storbench
starts a private loopback server itself). A host may list its own targets (each VM's own
``/dev/vdb``); the others use the plan's ``targets:``. Every host has the same number of
targets: point *i* of the matrix uses each host's *i*-th target. ``clients`` is a reserved
workload key (never passed to fio): ``clients: [1, 2, 3]`` is an axis that runs the point
on the first 1, 2, 3 hosts.

What a plan says never reaches fio's job file as anything but the value it is (fio 3.33 reads
a job file line by line, ends a line at its first ``;`` or ``#``, cuts lines at 8191 bytes and
replaces ``${VAR}`` from the environment): values holding such characters are refused here,
with the line and a fix, and again where the job file is written (engines/fio/jobfile.py). Options
that run commands or replay I/O on files storbench cannot check are refused; options that
write files of their own must name them by absolute path (preflight refuses existing ones).
A plan is counted before it is expanded (``max_points``), and its YAML may not nest deeply
or expand through aliases without bound.

Modules: ``rules`` (the vocabulary: kinds, keys, limits), ``enginekeys`` (what an engine
declares: its keys, the kinds of their values, what it refuses), ``checks`` (single
values: names, paths, job values), ``yamlpos`` (where in the YAML), ``load`` (the loader;
its parts ``options``, ``workloads`` and ``targets`` over the ``reading`` they share;
``targetargs``: ``--target`` arguments), ``model`` (Target, Point, Plan and
the expansion), ``sources`` (files, suites), ``stored`` (a stored point checked by the same
rules before ``resume`` runs it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from storbench import hooks

if TYPE_CHECKING:
    from storbench.plan.checks import (  # noqa: F401
        job_value_problem,
        name_problem,
        path_problem,
    )
    from storbench.plan.model import (  # noqa: F401
        Plan,
        Point,
        PointHost,
        Target,
        job_section_name,
        local_points,
        point_key,
    )
    from storbench.plan.rules import (  # noqa: F401
        DEFAULT_CEPH_CONF,
        MAX_POINTS,
    )
    from storbench.plan.sources import (  # noqa: F401
        load_plan,
        parse_plan,
        suite_names,
        suite_text,
    )
    from storbench.plan.targetargs import (  # noqa: F401
        parse_target_arg,
    )

#: what the package gives, by the module that has it, imported when first asked for: the
#: model (Point, Target) alone does not load the YAML loader (``show``, ``compare`` and the
#: store read points, never a plan file)
_WHERE = {
    "job_value_problem": "storbench.plan.checks",
    "name_problem": "storbench.plan.checks",
    "path_problem": "storbench.plan.checks",
    "Plan": "storbench.plan.model",
    "Point": "storbench.plan.model",
    "PointHost": "storbench.plan.model",
    "Target": "storbench.plan.model",
    "job_section_name": "storbench.plan.model",
    "local_points": "storbench.plan.model",
    "point_key": "storbench.plan.model",
    "DEFAULT_CEPH_CONF": "storbench.plan.rules",
    "MAX_POINTS": "storbench.plan.rules",
    "load_plan": "storbench.plan.sources",
    "parse_plan": "storbench.plan.sources",
    "suite_names": "storbench.plan.sources",
    "suite_text": "storbench.plan.sources",
    "parse_target_arg": "storbench.plan.targetargs",
}


__getattr__, __dir__ = hooks.lazy_package(__name__, _WHERE)
