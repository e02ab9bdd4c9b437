"""`plan check`, `plan show` and `suites`: what a plan would run, without running it."""

from __future__ import annotations

import re
import shlex
import sys
import textwrap
from typing import TYPE_CHECKING

import click

from storbench import __version__, engines
from storbench.cli.app import (
    CONTEXT,
    cli,
    out,
    plan_options,
)
from storbench.model.units import fmt_duration
from storbench.suites import names as suite_names

if TYPE_CHECKING:
    from storbench.plan import Plan, Point


@cli.group(context_settings=CONTEXT)
def plan() -> None:
    """Check a plan or show what it would run, without running it.

    \b
    A plan file:
      name: nvme-vs-sata
      targets:
        - file: /mnt/nvme/storbench.dat
        - device: /dev/sdb
      workloads:
        - name: rand4k
          rw: [randread, randwrite]     # a list makes an axis of the matrix
          bs: 4k
          iodepth: [1, 32]
          size: 10g
          runtime: 60
          ramp_time: 10
          direct: 1
      repeat: 3

    Every workload key is a fio option; `global:` holds options for all workloads.
    `storbench plan keys` lists every other key a plan may hold.
    """


@plan.command("keys", context_settings=CONTEXT)
def plan_keys() -> None:
    """Every key a plan file may hold, what it takes and does, as Markdown."""
    from storbench.plan import keysdoc

    sys.stdout.write(keysdoc.keys_markdown())


@plan.command(
    "check",
    context_settings=CONTEXT,
    epilog="""\b
Examples:
  storbench plan check my-plan.yaml
  storbench plan check matrix --target ./x.dat --set runtime=5
""",
)
@click.argument("plan_ref", metavar="PLAN")
@plan_options
def plan_check(
    plan_ref: str,
    sets: tuple[str, ...],
    targets: tuple[str, ...],
    ceph_conf: str | None,
    max_points: int,
    endpoint: str | None,
) -> None:
    """Validate PLAN (file or suite) without any I/O; fio parses every job when installed.

    Refused with the line and a fix: values that would change fio's job file (control
    characters, `;`, `#`, `${`), options that run commands or replay I/O logs, log files
    that are not absolute paths, negative times, sizes of 0, a `bs` larger than `size`, and
    plans of more than --max-points points (counted before expanding). A local target whose
    directory does not exist is refused as `run` refuses it. Every error of the plan is
    reported at once (each top-level key, workload and target read on its own), each with
    its line and fix.
    """
    from storbench.plan import load_plan
    from storbench.preflight import missing_directories

    p = load_plan(
        plan_ref,
        sets=list(sets),
        targets=list(targets),
        ceph_conf=ceph_conf,
        max_points=max_points,
        endpoint=endpoint,
    )
    points = p.expand()
    missing = missing_directories(points)  # what run's preflight refuses first: each target's
    if missing:
        missing[0].others = list(missing[1:])
        raise missing[0]
    by_engine = engines.of_points(points)
    checked = "; ".join(engine.validate(pts) for engine, pts in by_engine)
    planned = planned_time(points)
    out.print(
        f"{p.source}: OK: {len(points)} points{_until_more(points)}, planned {planned}; {checked}"
    )
    for engine, pts in by_engine:
        for line in engine.advice(pts):
            out.print(f"warning: {line}", style="yellow", markup=False)


@plan.command(
    "show",
    context_settings=CONTEXT,
    epilog="""\b
Examples:
  storbench plan show quick --target ./x.dat
  storbench plan show rados                 on a placeholder target (rados:POOL)
  storbench plan show my-plan.yaml --set iodepth=[1,8,64]
""",
)
@click.argument("plan_ref", metavar="PLAN")
@plan_options
def plan_show(
    plan_ref: str,
    sets: tuple[str, ...],
    targets: tuple[str, ...],
    ceph_conf: str | None,
    max_points: int,
    endpoint: str | None,
) -> None:
    """Print the expanded points of PLAN and the exact fio job file of each (a dry run).

    A built-in suite without --target is shown on a placeholder target in the form the
    suite takes (/path/to/target, rados:POOL, rbd:POOL/IMAGE, s3://bucket), and says so.
    """
    import os

    from storbench import suites as builtin
    from storbench.plan import load_plan
    from storbench.plan.sources import resolve_plan_source

    note = None
    if not targets and resolve_plan_source(plan_ref)[0] == f"suite:{plan_ref}":
        placeholder = builtin.placeholder(plan_ref)
        targets = (placeholder,)
        if placeholder.startswith("s3://") and not (endpoint or os.environ.get("AWS_ENDPOINT_URL")):
            endpoint = builtin.PLACEHOLDER_ENDPOINT
        note = (
            f"note: no --target given: shown on the placeholder {placeholder}; give yours "
            f"with --target (storbench plan show {plan_ref} --target "
            f"{placeholder if placeholder != builtin.PLACEHOLDER else 'PATH'})"
        )
    p = load_plan(
        plan_ref,
        sets=list(sets),
        targets=list(targets),
        ceph_conf=ceph_conf,
        max_points=max_points,
        endpoint=endpoint,
    )
    show_plan(p, p.expand(), note)


def show_plan(p: Plan, points: list[Point], note: str | None = None) -> None:
    header(p, points)
    if note:
        out.print(note, style="yellow", markup=False, highlight=False, soft_wrap=True)
    for pt in points:
        out.print()
        out.print(
            f"# point {pt.index + 1}/{len(points)}: {pt.target.label} {pt.label()}"
            + (f" (repetition {pt.repetition + 1})" if p.repeat > 1 else "")
            + (f" on {', '.join(h.label for h in pt.hosts)}" if pt.hosts else ""),
            style="bold",
            markup=False,
        )
        for line in _modes(pt):
            out.print(f"# {line}", markup=False, highlight=False)
        out.print(
            engines.get(pt.engine).describe(pt, len(points)),
            end="",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )


def _modes(pt: Point) -> list[str]:
    """What runs around a point's job: preconditioning, steady-state rounds, a drill."""
    out = []
    if pt.purge:
        how = "blkdiscard --secure" if pt.purge == "secure" else "blkdiscard"
        out.append(
            f"purged first ({pt.purge}: {how} of the whole device, once per target), only "
            "with --destroy-data naming the device"
        )
    if pt.precondition != "none":
        out.append(f"preconditioned first: {pt.precondition}")
    if pt.steady is not None:
        c = pt.steady
        out.append(
            f"steady state: rounds of {c.round_s:g} s (runtime and time_based replaced), "
            f"window {c.window}, at most {c.max_rounds}, range {c.range_pct:g} %, "
            f"slope {c.slope_pct:g} %, tracking {c.metric}"
        )
    for a in pt.actions:
        how = f" (runs {shlex.join(a.argv())})" if a.host else ""
        out.append(f"action at {a.at_s:g} s: {a.label()}{how}")
    return out


@cli.command(context_settings=CONTEXT)
def suites() -> None:
    """List the built-in suites."""
    import shutil

    from ruamel.yaml import YAML

    from storbench.plan import suite_text

    width = max(60, min(shutil.get_terminal_size((100, 24)).columns, 100))
    for name in suite_names():  # the suites' own files: their descriptions are text
        description = str(YAML(typ="safe").load(suite_text(name)).get("description") or "")
        text = " ".join(description.split())
        # its first sentence, whole: what the suite answers (`plan show NAME` says the rest)
        first = re.split(r"(?<=\.)\s", text, maxsplit=1)[0] if text else ""
        lines = textwrap.wrap(first, width=width - 11) or [""]
        out.print(f"{name:10} {lines[0]}", markup=False, soft_wrap=True)
        for line in lines[1:]:
            out.print(f"{'':10} {line}", markup=False, soft_wrap=True)
    out.print(
        "\nEach suite's points and job files: storbench plan show SUITE [--target TARGET]",
        markup=False,
    )


def planned_time(points: list[Point]) -> str:
    """The points' planned time: "12m", "12m+" when some point's is unknown (it ends with
    its size), "up to 2h" when some run in steady-state rounds (they may stop earlier)."""
    est = [pt.est_seconds for pt in points]
    planned = fmt_duration(sum(e for e in est if e)) + ("+" if None in est else "")
    if any(pt.purge for pt in points):
        planned += " + purge"
    if any(pt.precondition == "sequential" for pt in points):
        planned += " + sequential preconditioning"
    up_to = any(pt.steady or pt.precondition == "workload" for pt in points)
    return f"up to {planned}" if up_to else planned


def header(p: Plan, points: list[Point]) -> None:
    from storbench.report import safe

    planned = planned_time(points)
    targets = ", ".join(dict.fromkeys(pt.target.label for pt in points))
    if p.hosts:
        targets += f" across {len(p.hosts)} host{'s' if len(p.hosts) != 1 else ''}"
    out.print(
        safe.styled(
            f"storbench {__version__}: plan ",
            (p.name, "bold"),
            f" ({p.source}), {len(points)} point{'s' if len(points) != 1 else ''} on "
            f"{targets}, planned {planned}"
            + (", and the steps its capacity search adds" if any(pt.slo for pt in points) else "")
            + _until_more(points),
        )
    )


def _until_more(points: list[Point]) -> str:
    """What repetitions until known may add to the planned points: at most ``max / min``
    times them (every pair to its most)."""
    rule = next((pt.until for pt in points if pt.until), None)
    if rule is None:
        return ""
    most = len(points) * rule.max // rule.min
    return f", up to {most} points as each pair repeats until its verdict is known"
