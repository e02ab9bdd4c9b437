"""storbench's command line: parse arguments, call the pipeline, print. Nothing else.

One module per group of commands (app.py holds the group, the consoles and the shared
options); the engines add commands of their own (``storbench agent``) through the
registry's ``commands()`` hook.
"""

from __future__ import annotations

import sqlite3
import sys

import click

from storbench import engines, redact
from storbench.cli import plans, reports, results, running, serve  # noqa: F401  (they add commands)
from storbench.cli.app import cli, err
from storbench.cli.results import load_summaries as _load_summaries  # noqa: F401  (tests)
from storbench.errors import PreflightError, UserError

for _engine in engines.all_engines():  # commands of the engines' own: `storbench agent`
    for _command in _engine.commands():
        cli.add_command(_command)


def main() -> None:
    try:
        cli.main(standalone_mode=False, prog_name="storbench")
    except UserError as e:
        said = redact.clean(f"storbench: error: {e}")  # never a key, whatever failed
        err.print(said, markup=False, highlight=False, soft_wrap=True)
        sys.exit(e.exit_status)
    except click.exceptions.Abort:
        err.print("aborted")
        sys.exit(130)
    except click.ClickException as e:
        e.show()
        sys.exit(e.exit_code)
    except click.exceptions.Exit as e:
        sys.exit(e.exit_code)
    except BrokenPipeError:
        sys.exit(0)
    except sqlite3.Error as e:  # the Store says what failed in words; this is the last net
        err.print(
            f"storbench: error: the results database failed (sqlite: {e})\n"
            "  fix: check the database given with --db or STORBENCH_DB",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
        sys.exit(2)


__all__ = ["PreflightError", "cli", "main"]
