"""The web view's application (Starlette): routes, the headers every answer carries, error
pages, and serving it (uvicorn) on a socket bound here, so that a port in use is said in
words and ``--port 0`` prints the port it got.

Every answer carries a Content-Security-Policy allowing scripts, style sheets, images and
requests from the server only (no inline script, no eval, no other origin), and inline
styles, which the charts' SVG (matplotlib) is made of. A request whose Host header names
another host than the one bound is refused (400) while the server is bound to loopback: a
page of another site cannot read the results through a name rebound to 127.0.0.1.

A request the handlers do not expect still gets an error page with those headers (500),
never the bare answer of the server's last resort; the numbers of a path are matched as
digits and read by the handlers, so a number of any length is a 404 page, not int()'s
error.
"""

from __future__ import annotations

import contextlib
import importlib.resources
import ipaddress
import socket
import sqlite3
from collections.abc import AsyncIterator
from typing import Any

from jinja2 import PackageLoader
from starlette.applications import Starlette
from starlette.convertors import Convertor, register_url_convertor
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from storbench.hosts import binding
from storbench.model.errors import NotFoundError, UserError, clipped
from storbench.model.units import when
from storbench.report import html as html_report
from storbench.store import Store
from storbench.web import historypage, live, pages
from storbench.web.views import Views

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'"
)
HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
]
LOOPBACK_NAMES = {"localhost", "127.0.0.1", "::1"}


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _host_of(header: str) -> str:
    """The host of a Host header without its port (``[::1]:8700`` -> ``::1``)."""
    if header.startswith("["):
        return header[1:].split("]", 1)[0]
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


class Digits(Convertor[str]):
    """A path's number as its digits (``{run_id:digits}``): Starlette's ``int`` converts
    while matching the route, and int() refuses more than 4,300 digits (a 500)."""

    regex = "[0-9]+"

    def convert(self, value: str) -> str:
        return value

    def to_string(self, value: str) -> str:
        return str(value)


register_url_convertor("digits", Digits())

#: What a request answers when a handler fails unexpectedly (the error is logged).
FAILED = (
    b"<!doctype html><title>Internal error</title><h1>Internal error</h1>"
    b"<p>storbench serve could not make this page; the server's log says why.</p>"
)


class Guard:
    """ASGI middleware: the headers of every answer; a loopback server answers only
    requests whose Host header names loopback (``allowed``; None: any); a request whose
    handler failed before answering gets an error page (500) with the headers, and the
    error goes on to the server, which logs it."""

    def __init__(self, app: ASGIApp, allowed: set[str] | None) -> None:
        self.app = app
        self.allowed = allowed

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        host = dict(scope["headers"]).get(b"host", b"").decode("latin-1")
        if self.allowed is not None and _host_of(host).lower() not in self.allowed:
            refused = PlainTextResponse("Invalid host header", status_code=400)
            await refused(scope, receive, self._with_headers(send))
            return
        started = False

        async def sending(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, self._with_headers(sending))
        except Exception:
            if not started:
                failed = Response(FAILED, status_code=500, media_type="text/html")
                await failed(scope, receive, self._with_headers(sending))
            raise

    @staticmethod
    def _with_headers(send: Send) -> Send:
        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *HEADERS]
            await send(message)

        return sending


def _error(request: Request, status: int, title: str, text: str, fix: str | None) -> Response:
    s = pages.site(request)
    return s.page("error.html", status, title=title, message=text, fix=fix, code=status)


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    if exc.status_code == 405:
        return _error(
            request,
            405,
            "Method not allowed",
            f"{request.method} is not allowed here: this web view only shows results "
            "(nothing is changed through it).",
            None,
        )
    if exc.status_code == 404:
        return _error(request, 404, "Not found", f"There is no page {request.url.path}.", None)
    return _error(request, exc.status_code, "Error", str(exc.detail), None)


async def _user_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, UserError)
    status = 404 if isinstance(exc, NotFoundError) else 400
    title = "Not found" if status == 404 else "Bad request"
    return _error(request, status, title, exc.message, exc.fix)


def _report_css(request: Request) -> Response:
    """The HTML report's style sheet, which the web view's pages use too."""
    css = importlib.resources.files("storbench.report").joinpath("templates/report.css")
    return Response(css.read_text(), media_type="text/css; charset=utf-8")


def create_app(db_path: str | None, *, write: bool = False, host: str = "127.0.0.1") -> Starlette:
    """The web view of the results database ``db_path`` (None: the default one), read-only
    unless ``write``; ``host``: where it is served (loopback: only loopback Host headers)."""
    store = Store(db_path, write=write)
    if not write and isinstance(store.db, sqlite3.Connection):
        store.db.execute("PRAGMA query_only=ON")  # SQLite refuses any write from here on
    env = html_report.template_env(PackageLoader("storbench.web", "templates"))
    env.globals |= {"point_link": pages.point_link, "when": when}
    site = pages.Site(views=Views(store), env=env, writable=write)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        store.close()

    app = Starlette(
        routes=[
            Route("/", pages.runs_page),
            Route("/runs/{run_id:digits}", pages.run_page),
            Route("/runs/{run_id:digits}/points/{no:digits}", pages.point_page),
            Route("/runs/{run_id:digits}/intervals/{idx:digits}.json", pages.intervals_json),
            Route("/runs/{run_id:digits}/live.json", live.live_json),
            Route("/compare", pages.compare_page),
            Route("/history", historypage.history_page),
            Route("/static/report.css", _report_css),
            Mount("/static", StaticFiles(packages=[("storbench.web", "static")])),
        ],
        exception_handlers={HTTPException: _http_error, UserError: _user_error},
        lifespan=lifespan,
    )
    app.state.site = site
    allowed = {*LOOPBACK_NAMES, host.lower()} if is_loopback(host) else None
    app.add_middleware(Guard, allowed=allowed)
    return app


def bind_refusal(host: str, any_address: bool) -> str | None:
    """Why ``storbench serve`` must not listen on ``host``, or None. There is no
    authentication: whoever reaches the server reads every result and the test bed, so it
    listens on loopback, and on any other address only with ``any_address`` (as
    ``storbench agent`` binds its fio server; hosts/binding.py)."""
    return binding.refusal(
        host,
        any_address,
        scope="loopback",
        exposes="whoever reaches it reads every result, without authentication",
    )


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host``:``port`` (0: a free port); a UserError when it cannot
    be had (in use, no such address)."""
    try:
        family, kind, proto, _, addr = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        sock = socket.socket(family, kind, proto)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(addr)
        sock.listen(128)
    except (OSError, UnicodeError) as e:  # UnicodeError: a label longer than DNS allows
        why = e.strerror if isinstance(e, OSError) and e.strerror else "not a name it resolves"
        raise UserError(
            f"cannot serve on {clipped(host)} port {port}: {why}",
            fix="choose another --port (0: any free one) or --host",
        ) from None
    sock.set_inheritable(True)
    return sock


def serve(app: Any, sock: socket.socket) -> None:
    """Serve ``app`` on ``sock`` until interrupted (Ctrl-C, SIGTERM)."""
    import uvicorn

    config = uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,
        server_header=False,
        proxy_headers=False,
        lifespan="on",
    )
    uvicorn.Server(config).run(sockets=[sock])
