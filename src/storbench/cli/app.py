"""The command group, its consoles and the options several commands share."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

from storbench import __version__, hooks
from storbench.model.constants import CHART_KINDS, HEALTH_INTERVAL, MAX_POINTS, default_db_path
from storbench.model.errors import UserError

if TYPE_CHECKING:
    from rich.console import Console

F = TypeVar("F", bound=Callable[..., Any])


class _Console:
    """The console of stdout or stderr, made on first use: the commands' modules import
    ``out`` and ``err`` at their top, yet ``--help`` (which prints through click) never
    loads rich. ``out.print(...)`` and any other attribute go to the console itself;
    ``out.console`` is the console, for what needs a real one (a Live display)."""

    def __init__(self, stderr: bool) -> None:
        self._stderr = stderr
        self._made: Console | None = None

    @property
    def console(self) -> Console:
        if self._made is None:
            self._made = _console(self._stderr)
        return self._made

    def __getattr__(self, name: str) -> Any:
        return getattr(self.console, name)


def _console(stderr: bool = False) -> Console:
    """A console that prints every string as text (report/safe.py): names, paths and fio's
    messages are never read as markup or emoji codes, and control characters show as \\x1b."""
    from storbench.report import safe

    c = safe.console(stderr)
    if not c.is_terminal and "COLUMNS" not in os.environ:
        c = safe.console(stderr, width=160)  # logs: no 80-column wrap
    return c


out = _Console(stderr=False)
err = _Console(stderr=True)

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


def chart_kinds() -> list[str]:
    return list(CHART_KINDS)


def db_option(f: F) -> F:
    return click.option(
        "--db",
        "db_path",
        envvar="STORBENCH_DB",
        metavar="PATH|URL",
        help="Results database: a file (SQLite) or a PostgreSQL URL, "
        f"postgresql://USER@HOST/DBNAME (password from ~/.pgpass or PGPASSWORD). Default: "
        f"$STORBENCH_DB, else {default_db_path()}. "
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


def metrics_options(f: F) -> F:
    """``--metrics ADDR:PORT`` and ``--metrics-any-address`` (run, resume)."""
    f = click.option(
        "--metrics-any-address",
        "metrics_any_address",
        is_flag=True,
        help="Let --metrics listen on an address other than loopback (it has no "
        "authentication: whoever reaches it reads the run's figures).",
    )(f)
    return click.option(
        "--metrics",
        "metrics",
        metavar="ADDR:PORT",
        help="Serve the run's live figures for Prometheus on ADDR:PORT (/metrics) while it "
        "runs: per point, host and direction the latest interval's IOPS, bytes/s and "
        "latency, progress, steady-state rounds, findings. Loopback only unless "
        "--metrics-any-address; port 0: any free one.",
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


class LazyGroup(click.Group):
    """A group that imports a command's module when the command is asked for (to run it,
    or for ``--help``, which lists them all): ``lazy`` maps each name to "module:attribute".
    ``storbench show`` imports the module of ``show``, not those of ``run`` or ``report``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy: dict[str, str] = {}

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *self.lazy})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in self.lazy:
            command = hooks.resolve(self.lazy[cmd_name])
            if cmd_name not in self.commands:  # not added by the module's own decorator
                self.add_command(command, cmd_name)
        return self.commands.get(cmd_name)


@click.group(
    cls=LazyGroup,
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
    from pathlib import Path

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
