"""docs/plan-keys.md (``storbench plan keys``): every key a plan may hold, from the plan's
own sections (schema.py) and each registered engine's declaration (enginekeys.py)."""

from __future__ import annotations

import storbench.plan.enginekeys as enginekeys
import storbench.plan.schema as schema


def keys_markdown() -> str:
    """The documentation of every plan key, as Markdown (docs/plan-keys.md): the plan's own
    sections, then each registered engine's workload keys as the engine declares them."""
    out = [
        "# Plan keys",
        "",
        "Every key a storbench plan file may hold (made by `storbench plan keys` from",
        "`src/storbench/plan/schema.py` and each engine's declaration, e.g.",
        "`src/storbench/engines/fio/keys.py`; a test keeps this file in step). `storbench plan",
        "check` says what it refuses and why.",
    ]
    engines = [(d.section(), d.doc) for d in enginekeys.every_engine()]
    for section, doc in [*((s, "") for s in schema.SECTIONS), *engines]:
        out += ["", f"## {section.title}", ""]
        if doc:
            out += [doc, ""]
        if not section.keys:
            out.pop()
            continue
        out += ["| key | takes | does | default |", "|---|---|---|---|"]
        for k in section.keys:
            choices = k.choices()
            takes = k.takes + (": " + ", ".join(f"`{v}`" for v in choices) if choices else "")
            cells = [f"`{k.name}`", takes, k.doc, k.default or "-"]
            out.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(out) + "\n"
