"""``compare --fail-if … --junit FILE``: the gate's outcomes (analysis/gate.py) as JUnit XML,
the format CI systems (GitLab, Jenkins, GitHub's test reporters) display: one test suite
per comparison, one test case per point and rule, a ``<failure>`` for a broken rule (the
change and the rule in its message), ``<skipped>`` for a point the rule could not judge."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterable

from storbench.analysis.gate import Outcome


def junit_xml(outcomes: Iterable[Outcome]) -> str:
    """The outcomes as a JUnit XML document (text, UTF-8, with its declaration)."""
    suites: dict[str, list[Outcome]] = {}
    for o in outcomes:
        suites.setdefault(o.comparison, []).append(o)
    root = ET.Element("testsuites", name="storbench compare")
    total = failures = skipped = 0
    for name, cases in suites.items():
        broken = sum(o.broken for o in cases)
        passed_over = sum(o.skipped is not None for o in cases)
        suite = ET.SubElement(
            root,
            "testsuite",
            name=name,
            tests=str(len(cases)),
            failures=str(broken),
            skipped=str(passed_over),
            errors="0",
        )
        for o in cases:
            case = ET.SubElement(suite, "testcase", classname=o.rule.text, name=o.point)
            change = "-" if o.change_pct is None else f"{o.change_pct:+.2f} %"
            if o.broken:
                failure = ET.SubElement(case, "failure", message=o.said(), type="regression")
                failure.text = f"{o.comparison}: {o.point}: {o.rule.figure} changed {change}"
            elif o.skipped is not None:
                ET.SubElement(case, "skipped", message=o.skipped)
            else:
                ET.SubElement(case, "system-out").text = f"{o.rule.figure} changed {change}"
        total, failures, skipped = total + len(cases), failures + broken, skipped + passed_over
    root.set("tests", str(total))
    root.set("failures", str(failures))
    root.set("skipped", str(skipped))
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"
