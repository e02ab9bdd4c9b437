"""The plan key ``metrics:`` and ``run --metrics``: the address (``ADDR:PORT``) the run's
live figures are served on for Prometheus (execute/metrics.py serves them; hosts/binding.py
says which addresses it may listen on)."""

from __future__ import annotations

from storbench.model.errors import UserError, clipped

__all__ = ["parse_address"]


def parse_address(text: str, option: str = "--metrics") -> tuple[str, int]:
    """``ADDR:PORT`` (``[::1]:9464`` for IPv6; ``:PORT`` or ``PORT`` alone: loopback) as
    (host, port); a UserError naming the fix otherwise. Port 0: any free port."""
    fix = f"give {option} ADDR:PORT, e.g. 127.0.0.1:9464 (port 0: any free one)"
    if text.count(":") > 1 and "]" not in text:
        raise UserError(f"{option} {clipped(text)!r}: an IPv6 address needs brackets", fix=fix)
    host, sep, port = text.strip().rpartition(":")
    if not sep:
        host, port = "", text.strip()
    host = host.strip("[]") or "127.0.0.1"
    try:
        number = int(port)
    except ValueError:
        raise UserError(f"{option} {clipped(text)!r}: no port number", fix=fix) from None
    if not 0 <= number <= 65535:
        raise UserError(f"{option} {clipped(text)!r}: port out of range", fix=fix)
    return host, number
