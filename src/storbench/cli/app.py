"""The command group, its consoles and the options several commands share."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click
from rich.console import Console

from storbench import __version__
from storbench.errors import UserError
from storbench.plan import (
    MAX_POINTS,
)
from storbench.report import safe
from storbench.runner import (
    HEALTH_INTERVAL,
)
from storbench.store import default_db_path

F = TypeVar("F", bound=Callable[..., Any])


def _console(stderr: bool = False) -> Console:
    """A console that prints every string as text (report/safe.py): names, paths and fio's
    messages are never read as markup or emoji codes, and control characters show as \\x1b."""
    c = safe.console(stderr)
    if not c.is_terminal and "COLUMNS" not in os.environ:
        c = safe.console(stderr, width=160)  # logs: no 80-column wrap
    return c


out = _console()
err = _console(stderr=True)

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


def chart_kinds() -> list[str]:
    from storbench.report.charts import KINDS

    return list(KINDS)


def db_option(f: F) -> F:
    return click.option(
        "--db",
        "db_path",
        envvar="STORBENCH_DB",
        metavar="PATH",
        help=f"Results database (SQLite). Default: $STORBENCH_DB, else {default_db_path()}. "
        "$STORBENCH_DB_TIMEOUT: seconds to wait for another process's lock (30).",
    )(f)


def output_option(f: F) -> F:
    return click.option(
        "-o",
        "--output",
        type=click.Path(dir_okay=False, writable=True),
        default=None,
        metavar="FILE",
        help="Write to FILE instead of standard output.",
    )(f)


def health_interval_option(f: F) -> F:
    return click.option(
        "--health-interval",
        type=click.FloatRange(min=0),
        default=HEALTH_INTERVAL,
        show_default=True,
        metavar="SECONDS",
        help="Ceph targets: sample the cluster's health this often during the run (each "
        "sample is one `ceph status`); 0: only at the start.",
    )(f)


def plan_options(f: F) -> F:
    f = click.option(
        "--set",
        "sets",
        multiple=True,
        metavar="KEY=VALUE",
        help="Override a value in every workload (read as YAML: "
        "--set runtime=2, --set iodepth=[1,32]), or a plan key: --set name=ssd-a "
        "(the run's name), --set report=matrix (the answer reports show), --set repeat=3. "
        "Repeatable.",
    )(f)
    f = click.option(
        "--target",
        "-t",
        "targets",
        multiple=True,
        metavar="PATH",
        help="Measure PATH instead of the plan's targets: a file (created by "
        "storbench), a block device, or a directory; prefix with file:, "
        "device: or directory: to be explicit. Ceph: rbd:POOL/IMAGE (an image; "
        "created, filled and removed at the end when missing) or rados:POOL. S3: "
        "s3://BUCKET[/PREFIX] (see --endpoint). Repeatable.",
    )(f)
    f = click.option(
        "--max-points",
        type=click.IntRange(min=1),
        default=MAX_POINTS,
        show_default=True,
        metavar="N",
        help="Refuse a plan that expands to more than N points (counted before expanding).",
    )(f)
    f = click.option(
        "--ceph-conf",
        "ceph_conf",
        metavar="PATH",
        type=click.Path(dir_okay=False),
        help="The ceph.conf of rbd and rados targets that name none. "
        "Default: $CEPH_CONF, else /etc/ceph/ceph.conf.",
    )(f)
    f = click.option(
        "--endpoint",
        metavar="URL",
        help="The S3 service (http[s]://HOST[:PORT]) of s3 targets that name none, such as "
        "--target s3://BUCKET. Default: $AWS_ENDPOINT_URL_S3, else $AWS_ENDPOINT_URL.",
    )(f)
    return f


@click.group(
    context_settings=CONTEXT,
    epilog="""\b
Examples:
  storbench run quick --target ./scratch.dat        a 30 s first look at a disk
  storbench run qualify --target /dev/sdb --destroy-data /dev/sdb
  storbench run rados -t rados:bench --ceph-conf /etc/ceph/ceph.conf
  storbench plan show my-plan.yaml                  what would run, job file by job file
  storbench runs                                    what is recorded
  storbench show latest                             the last run's table
  storbench compare latest~1 latest                 A vs B: changes, verdicts, summary
  storbench report latest --format markdown         the seeds' tables, for GitHub
  storbench export latest --format csv -o run.csv

Run `storbench COMMAND --help` for a command's options.""",
)
@click.version_option(__version__, "-V", "--version", prog_name="storbench")
def cli() -> None:
    """storbench: storage benchmarks from a plan file, recorded and comparable.

    Runs fio (or rados bench, for Ceph pools) for every point of a plan (a YAML file or a
    built-in suite), stores each result with the engine's raw output and job file or command
    in a SQLite database, and prints the tables.
    """


def write_output(path: str, text: str | bytes) -> None:
    try:
        if isinstance(text, bytes):
            Path(path).write_bytes(text)
        else:
            Path(path).write_text(text)
    except OSError as e:
        raise UserError(
            f"cannot write {path}: {e.strerror}",
            fix="check that the directory exists and is writable",
        ) from None


def emit(output: str | None, text: str, wrote: str) -> None:
    """``text`` to the file ``output`` (then ``wrote ... to OUTPUT`` on stderr), or to
    stdout when there is none."""
    if output:
        write_output(output, text)
        err.print(f"wrote {wrote} to {output}", markup=False)
    else:
        sys.stdout.write(text)
