"""storbench starts light: ``storbench --help`` and ``storbench COMMAND --help`` import none of
the heavy libraries (rich, ruamel.yaml, numpy, scipy, matplotlib, jinja2, botocore,
sqlalchemy, psycopg), so that the help and the start of every command cost a fraction of
what they did (0.4 s before).

A behavioural test, not a timing one: each case runs the click app in a fresh interpreter
(``-c``) and prints the heavy modules that ended up in ``sys.modules``. What a command does
once it runs imports what it needs; ``bench/show`` prints the times.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from storbench.cli import COMMANDS, cli

SRC = Path(__file__).resolve().parents[2] / "src"
HEAVY = (
    "rich",
    "ruamel",
    "numpy",
    "scipy",
    "matplotlib",
    "jinja2",
    "botocore",
    "sqlalchemy",  # and psycopg: only a database given by URL (PostgreSQL) loads them
    "psycopg",
)

#: runs the command line on its arguments (standalone_mode=False: --help returns), then
#: prints the heavy top-level packages it imported, one line
PROGRAM = f"""
import sys
from storbench.cli import COMMANDS, cli
code = 0
try:
    cli.main(sys.argv[1:], prog_name="storbench", standalone_mode=False)
except SystemExit as e:
    code = e.code or 0
loaded = sorted({{name.split(".")[0] for name in sys.modules}} & set({HEAVY!r}))
print("HEAVY=" + ",".join(loaded), file=sys.stderr)
sys.exit(code)
"""


def _commands() -> list[tuple[str, ...]]:
    """Every command and subcommand, as the command line lists them."""
    import click

    out: list[tuple[str, ...]] = [()]
    ctx = click.Context(cli)
    for name in cli.list_commands(ctx):
        cmd = cli.get_command(ctx, name)
        out.append((name,))
        if isinstance(cmd, click.Group):
            out += [(name, sub) for sub in cmd.list_commands(click.Context(cmd))]
    return out


def _heavy_after(*args: str) -> tuple[list[str], subprocess.CompletedProcess[str]]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), *filter(None, [env.get("PYTHONPATH")])])
    r = subprocess.run(
        [sys.executable, "-c", PROGRAM, *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    line = [x for x in r.stderr.splitlines() if x.startswith("HEAVY=")]
    assert line, r.stderr
    return [m for m in line[-1].removeprefix("HEAVY=").split(",") if m], r


def test_cli_startup_lists_every_command_it_checks() -> None:
    """The cases below come from the command line itself: a new command is checked too."""
    names = {c[0] for c in _commands() if c}
    assert {"run", "show", "compare", "report", "chart", "plan", "agent"} <= names


def test_cli_startup_table_of_commands_names_every_command() -> None:
    """The group imports a command's module when asked for it (storbench.cli.COMMANDS):
    every command the modules define is in that table, under its own name."""
    import importlib

    import click

    for module in ("plans", "reports", "results", "running"):
        importlib.import_module(f"storbench.cli.{module}")
    ctx = click.Context(cli)
    assert set(cli.commands) <= set(COMMANDS)
    for name in COMMANDS:
        command = cli.get_command(ctx, name)
        assert command is not None and command.name == name


@pytest.mark.parametrize("command", _commands(), ids=lambda c: " ".join(c) or "storbench")
def test_cli_startup_help_imports_no_heavy_module(command: tuple[str, ...]) -> None:
    heavy, r = _heavy_after(*command, "--help")
    assert r.returncode == 0, r.stderr
    assert "Usage: storbench" in r.stdout
    assert heavy == [], f"`storbench {' '.join(command)} --help` imported {heavy}"


def test_cli_startup_check_sees_a_heavy_import() -> None:
    """The harness itself: a command that does its work (here `suites`, which reads the
    suites' YAML) is seen importing ruamel.yaml and rich."""
    heavy, r = _heavy_after("suites")
    assert r.returncode == 0, r.stderr
    assert {"ruamel", "rich"} <= set(heavy)


def test_cli_startup_sqlite_database_loads_no_postgresql_driver(tmp_path: Path) -> None:
    """A command on the default kind of database (a file: SQLite) does not pay for
    PostgreSQL's libraries: SQLAlchemy and psycopg are imported only for a URL."""
    heavy, r = _heavy_after("runs", "--db", str(tmp_path / "results.db"))
    assert r.returncode == 0, r.stderr
    assert not {"sqlalchemy", "psycopg"} & set(heavy), heavy
