"""The one seam every report format goes through (hyperfine's ``Exporter`` is the model): a
presenter draws the report model (report/model.py) and returns the text; it never reads the
store, runs an engine or computes an answer. Formats are found by name in
:data:`storbench.hooks.FORMATS`, where the built-in ones (html, markdown, json) are registered
as a plugin registers its own: one module, one object, one line."""

from __future__ import annotations

from typing import Any, Protocol

from storbench import hooks, nogc
from storbench.model.errors import UserError
from storbench.report import model
from storbench.report.model import ComparisonReport, RunReport


class Presenter(Protocol):
    """A report format: ``run`` draws one run, ``comparison`` several (each later one
    against the first)."""

    name: str

    def run(self, report: RunReport) -> str: ...

    def comparison(self, report: ComparisonReport) -> str: ...


def presenter(name: str) -> Presenter:
    """The presenter of format ``name`` (storbench.hooks.FORMATS)."""
    hook = hooks.FORMATS.get(name)
    if hook is None:
        raise UserError(
            f"no report format {name!r}",
            fix=f"use one of: {', '.join(hooks.FORMATS)}",
        )
    found: Presenter = hooks.resolve(hook.presenter)
    return found


def render(draw: Presenter, store: Any, refs: list[str], *, detail: bool = False) -> str:
    """Runs ``refs`` loaded from ``store`` (the model's loader) and drawn by ``draw``: one run,
    or each later one against the first; ``detail``: the comparison with every percentile
    and answer, its sides named by label (the HTML report)."""
    with nogc.paused():  # a big run is millions of objects and no cycles
        if len(refs) > 1:
            return draw.comparison(model.load_comparison(store, refs, detail=detail))
        return draw.run(model.load_run(store, refs[0]))
