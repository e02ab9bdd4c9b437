"""What ``repeat: {until: significant}`` (plan/untilkeys.py) needs of the rest of the plan:
two sides to tell apart, and points that can run again as they were."""

from __future__ import annotations

from ruamel.yaml.comments import CommentedMap

from storbench.plan.model import Plan
from storbench.plan.reading import Reading
from storbench.plan.untilkeys import FIX, NOT_COMPARED


def check_until(plan: Plan, doc: CommentedMap, reading: Reading) -> None:
    """What the rule needs of the plan: two sides to tell apart (two targets, or an axis of
    two values in every workload), and points that can run again as they were (no capacity
    search, no drill). A climb to its knee may: its points above the knee are skipped on
    both sides' later rounds, and a pair with a skipped side is done."""
    rule = plan.until
    if rule is None:
        return
    at = doc.get("repeat")

    def refuse(message: str, fix: str) -> None:
        raise reading.err(f"`repeat`: {message}", at, "compare", fix=fix)

    if rule.compare == "target" and (plan.hosts or len(plan.targets) != 2):
        refuse(
            f"compares two targets, and the plan has {len(plan.targets)}"
            + (" (and hosts)" if plan.hosts else ""),
            "give two targets (A first), or name an axis of two values: `compare: AXIS`",
        )
    if rule.compare in NOT_COMPARED:
        refuse(
            f"compares {rule.compare}, which changes what is measured: its two values are "
            "never judged one against the other (README: Not comparable)",
            "compare two targets, or an axis that keeps what is measured (bs, iodepth, "
            "numjobs...); compare runs of two engines with `storbench compare` and read "
            "the figures as measured",
        )
    for wl in plan.workloads:
        if rule.compare != "target":
            values = wl.options.get(rule.compare)
            if not isinstance(values, list) or len(values) != 2:
                refuse(
                    f"workload {wl.name!r} has no axis {rule.compare!r} of two values",
                    f"give it `{rule.compare}: [A, B]`, or `compare: target` with two targets",
                )
        why = "a failure drill" if wl.actions else ""
        if plan.slo is not None:
            why = "a capacity search (`slo`)"
        if why:
            refuse(f"workload {wl.name!r} is {why}, which cannot run again as it was", FIX)
