"""Real fio outputs recorded under tests/data/fio (their README says how), read the way
several tests need them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent / "data" / "fio"


def client_entries(name: str) -> dict[int, list[dict[str, Any]]]:
    """Each server's (by port) entries of a recorded fio client output (``NAME.stdout``), in
    order: its status reports, then its final entry; fio's "All clients" entry left out."""
    text = (DATA / f"{name}.stdout").read_text()
    doc = json.JSONDecoder().raw_decode(text, text.rindex('{\n  "fio version"'))[0]
    out: dict[int, list[dict[str, Any]]] = {}
    for e in doc["client_stats"]:
        if e["jobname"] != "All clients":
            out.setdefault(int(e["port"]), []).append(e)
    return out
