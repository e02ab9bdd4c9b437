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
  storbench serve --host 0.0.0.0 --any-address   every address of this host: think twice

\b
Pages: the runs (filter by name, suite, status, dates), a run (its suite's answer, the
summary table a page at a time, charts, test bed), a point (interactive time series, job
file, raw output) and the comparison of two runs (verdicts point by point). Offline: no
request leaves for another site.

\b
No authentication: anyone who can reach the address reads every result, and with it the
test bed (host names, disks, plan files). It listens on loopback (127.0.0.1); `serve`
refuses 0.0.0.0 and any address but loopback unless told --any-address (as `agent` does):
bind elsewhere only on a network you trust, or behind a proxy that authenticates. Others
can reach a loopback server through ssh: ssh -L 8700:127.0.0.1:8700 bench-host.
""",
)
@db_option
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address to listen on. Anything but loopback serves every result, without "
    "authentication, to whoever reaches it: refused unless --any-address.",
)
@click.option(
    "--any-address",
    is_flag=True,
    help="Allow listening on all addresses (0.0.0.0) or any but loopback. Think twice.",
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
def serve(db_path: str | None, host: str, any_address: bool, port: int, write: bool) -> None:
    """Serve a local web view of the results: runs, points, charts, comparisons."""
    import sys

    from storbench.model.errors import UserError, clipped
    from storbench.web import app as web

    reason = web.bind_refusal(host, any_address)
    if reason:
        raise UserError(
            f"will not serve the results on {clipped(host)}: {reason}",
            fix="serve on loopback (the default) and reach it through ssh -L "
            "8700:127.0.0.1:8700 HOST; --any-address overrides this",
        )
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
