"""`serve`: the web view of a results database (storbench.web), imported when it runs."""

from __future__ import annotations

import click

from storbench.cli.app import CONTEXT, cli, db_option


@cli.command(
    "serve",
    context_settings=CONTEXT,
    epilog="""\b
Examples:
  storbench serve                          http://127.0.0.1:8700/, the default database
  storbench serve --db team.db --port 0    any free port (printed)
  storbench serve --host 0.0.0.0           every address of this host: see the warning

\b
Pages: the runs (filter by name, suite, status, dates), a run (its suite's answer, the
summary table a page at a time, charts, test bed), a point (interactive time series, job
file, raw output) and the comparison of two runs (verdicts point by point). Offline: no
request leaves for another site.

\b
No authentication: anyone who can reach the address reads every result, and with it the
test bed (host names, disks, plan files). It listens on loopback (127.0.0.1) unless --host
says otherwise; bind elsewhere only on a network you trust, or behind a proxy that
authenticates.
""",
)
@db_option
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address to listen on. Anything but loopback serves every result, without "
    "authentication, to whoever reaches it.",
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8700,
    show_default=True,
    help="Port to listen on (0: any free port, printed).",
)
@click.option(
    "--write",
    is_flag=True,
    help="Open the database for writing. Default: read-only (SQLite refuses every write "
    "from the server). No page writes today: every request but GET and HEAD is refused.",
)
def serve(db_path: str | None, host: str, port: int, write: bool) -> None:
    """Serve a local web view of the results: runs, points, charts, comparisons."""
    import sys

    from storbench.web import app as web

    application = web.create_app(db_path, write=write, host=host)
    sock = web.bind(host, port)
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    where = application.state.site.views.where
    mode = "read-write" if write else "read-only"
    click.echo(f"storbench serve: http://{shown}:{bound}/  ({where}, {mode}; Ctrl-C stops)")
    if not web.is_loopback(host):
        click.echo(
            f"warning: listening on {host}, not loopback: anyone who reaches it reads every "
            "result (there is no authentication)",
            err=True,
        )
    sys.stdout.flush()
    web.serve(application, sock)
