"""storbench's command line: parse arguments, call the pipeline, print. Nothing else.

One module per group of commands (app.py holds the group, the consoles and the shared
options), each imported when one of its commands is asked for (``COMMANDS`` below); the
engines add commands of their own (``storbench agent``) through the registry's
``COMMANDS``.

Start-up is kept light: ``storbench --help`` and ``storbench COMMAND --help`` import click,
the commands' modules and storbench/model/constants.py, and nothing heavy (rich, ruamel.yaml,
numpy, scipy, matplotlib, jinja2, botocore: tests/unit/test_cli_startup.py checks it). The
commands' modules import what a command needs inside the command (what ``show`` prints is
runview.py and pointview.py), and the consoles make themselves on first use (app.py).
"""

from __future__ import annotations

import signal
import sys
from typing import cast

import click

from storbench import engines, hooks
from storbench.cli.app import LazyGroup, cli, err
from storbench.model import redact
from storbench.model.errors import PlanError, PreflightError, UserError

#: every command, by the module that defines it ("module:attribute"), imported when the
#: command is asked for (app.LazyGroup); the engines add commands of their own (`storbench
#: agent`) through engines.COMMANDS
COMMANDS: dict[str, str] = {
    "chart": "storbench.cli.reports:chart_cmd",
    "cleanup": "storbench.cli.running:cleanup",
    "compare": "storbench.cli.reports:compare_cmd",
    "export": "storbench.cli.results:export",
    "history": "storbench.cli.history:history_cmd",
    "import": "storbench.cli.transfer:import_",
    "merge": "storbench.cli.transfer:merge",
    "plan": "storbench.cli.plans:plan",
    "report": "storbench.cli.reports:report_cmd",
    "resume": "storbench.cli.running:resume",
    "run": "storbench.cli.running:run",
    "runs": "storbench.cli.results:runs",
    "serve": "storbench.cli.serve:serve",
    "show": "storbench.cli.results:show",
    "suites": "storbench.cli.plans:suites",
} | engines.COMMANDS
cast(LazyGroup, cli).lazy.update(COMMANDS)


#: Set when SIGTERM stopped this process (its exit status is then 143, not 130).
_terminated: list[int] = []


def _on_term(signum: int, frame: object) -> None:
    """SIGTERM stops storbench as Ctrl-C does: what it started is stopped and what it made
    (temporary directories, a run's status) is tidied on the way out."""
    _terminated.append(signum)
    raise KeyboardInterrupt


def _signals() -> None:
    """Ctrl-C (SIGINT) and SIGTERM always stop storbench cleanly, even when it was started
    with SIGINT ignored (a background job of a shell script). The runner has handlers of
    its own while it measures (execute/runner.py)."""
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, _on_term)


def main() -> None:
    try:
        _signals()
        _load_plugins()
        cli.main(standalone_mode=False, prog_name="storbench")
    except UserError as e:
        for each in (e, *e.others):  # a plan's every error: the first, then the others
            # never a key nor a URL's password, whatever failed
            said = redact.hide_url_passwords(redact.clean(f"storbench: error: {each}"))
            err.print(said, markup=False, highlight=False, soft_wrap=True)
        if e.others:
            what = "the plan" if isinstance(e, PlanError) else "the targets"
            err.print(f"storbench: {1 + len(e.others)} errors in {what}", markup=False)
        sys.exit(e.exit_status)
    except click.exceptions.Abort:
        err.print("aborted")
        sys.exit(143 if _terminated else 130)
    except click.ClickException as e:
        e.show()
        sys.exit(e.exit_code)
    except click.exceptions.Exit as e:
        sys.exit(e.exit_code)
    except BrokenPipeError:
        sys.exit(0)
    except Exception as e:  # the Store says what failed in words; this is the last net
        driver = _database_error(e)
        if driver is None:
            raise
        from storbench.store.location import hide_passwords  # loaded with the database

        text = hide_passwords(redact.clean(" ".join(str(getattr(e, "orig", None) or e).split())))
        err.print(
            f"storbench: error: the results database failed ({driver}: {text})\n"
            "  fix: check the database given with --db or STORBENCH_DB",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
        sys.exit(2)


__all__ = ["PreflightError", "cli", "main"]


def _load_plugins() -> None:
    """The modules STORBENCH_PLUGINS names (storbench.hooks), before any argument is read:
    a plugin's report kinds and formats are then choices like the built-in ones."""
    try:
        hooks.load_plugins()
    except ImportError as e:
        raise UserError(
            f"cannot load the plugin {e.name or ''} that {hooks.PLUGINS_ENV} names ({e})",
            fix=f"put the module on PYTHONPATH, or take it out of {hooks.PLUGINS_ENV}",
        ) from e


def _database_error(e: Exception) -> str | None:
    """Which database's driver ``e`` comes from (sqlite, postgresql), None when from none:
    without importing one for --help (a command that touched a database has imported it)."""
    sqlite3 = sys.modules.get("sqlite3")
    if sqlite3 is not None and isinstance(e, sqlite3.Error):
        return "sqlite"
    for name, base in (("psycopg", "Error"), ("sqlalchemy.exc", "SQLAlchemyError")):
        module = sys.modules.get(name)
        if module is not None and isinstance(e, getattr(module, base)):
            return "postgresql"
    return None
