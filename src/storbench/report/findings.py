"""A run's findings (model/findings.py) as every presenter words them: the lines of the
terminal (``show``), Markdown's table; the HTML report's and the web view's
templates draw the same :class:`~storbench.report.model.FindingRow` s."""

from __future__ import annotations

from collections.abc import Sequence

from storbench.model.findings import CODES
from storbench.report.model import FindingRow
from storbench.report.safe import md_table

#: what the findings' heading says of them
HEADING = "findings: what to check before trusting these numbers"
#: where each code is explained
EXPLAINED = 'README "Can I trust this number?"'


def _repetitions(row: FindingRow) -> str:
    if len(row.points) <= 1:
        return ""
    return f" (points {', '.join(map(str, row.points))})"


def title(row: FindingRow) -> str:
    """``point 3 (rand4k ...): page-cache`` and the host, for a point on many hosts."""
    host = f" on {row.finding.host}" if row.finding.host else ""
    return f"point {row.point} ({row.label}){_repetitions(row)}: {row.finding.code}{host}"


def finding_lines(rows: Sequence[FindingRow], indent: str = "  ") -> list[str]:
    """The terminal's findings: a heading, then per finding its point and code, the
    evidence and the fix; nothing without findings."""
    if not rows:
        return []
    lines = [f"{HEADING} (codes: {EXPLAINED}):"]
    for row in rows:
        lines.append(f"{indent}{title(row)}")
        lines.append(f"{indent}  {row.finding.evidence}")
        lines.append(f"{indent}  fix: {row.finding.advice}")
    return lines


def findings_markdown(rows: Sequence[FindingRow]) -> str:
    """Markdown's findings table, "" without findings."""
    if not rows:
        return ""
    cells = []
    for row in rows:
        f = row.finding
        what = CODES[f.code].title if f.code in CODES else ""
        host = f" on {f.host}" if f.host else ""
        cells.append(
            [
                f"{row.point}{_repetitions(row)} {row.label}",
                f"{f.code}{host}" + (f" ({what})" if what else ""),
                f.evidence,
                f.advice,
            ]
        )
    head = f"### Findings\n\nWhat to check before trusting these numbers (codes: {EXPLAINED}).\n\n"
    return head + md_table(["point", "finding", "evidence", "fix"], cells, right=set())
