"""Where a storbench server may listen without being told ``--any-address``: one rule for the
servers it starts that have no authentication (``serve``'s web view, ``agent``'s fio server).

Each names its *scope* -- the addresses it listens on by itself -- and what whoever reaches
it gets. All addresses (0.0.0.0, ::) are refused for both, and so is any address outside the
scope: ``serve`` shows every result and the test bed, so it keeps to loopback; ``agent``
runs any job it is sent on a benchmark network, so it keeps off public (globally routable)
addresses.
"""

from __future__ import annotations

import ipaddress
import socket
from typing import Literal

from storbench.model.errors import clipped

Scope = Literal["loopback", "private"]
_ALL = ("", "*", "0.0.0.0", "::", "[::]")


def refusal(address: str, any_address: bool, *, scope: Scope, exposes: str) -> str | None:
    """Why a server of ``scope`` must not listen on ``address``, or None; ``exposes``: what
    whoever reaches it gets (said in the reason)."""
    if any_address:
        return None
    if address in _ALL:
        return (
            f"listening on all addresses ({address or 'empty'}) exposes it on every network "
            f"of this host: {exposes}"
        )
    try:
        infos = socket.getaddrinfo(address, None)
    except (OSError, UnicodeError):  # UnicodeError: a label longer than DNS allows
        return f"{clipped(address)!r} is not an address or a name this host can resolve"
    for info in infos:
        ip = ipaddress.ip_address(str(info[4][0]).split("%")[0])
        shown = address if address == str(ip) else f"{address} ({ip})"
        if ip.is_unspecified:
            return f"{shown} means all addresses of this host"
        if scope == "loopback" and not ip.is_loopback:
            return f"{shown} is not loopback: {exposes}"
        if scope == "private" and ip.is_global:
            return f"{shown} is a public address: {exposes}"
    return None
