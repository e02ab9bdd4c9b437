"""The s3 suite's answer (analysis/objects.py) as seed 003 §5.2 lays it out: per target and
concurrency, a row per object size with each operation's requests/s, MiB/s, p50 and p99,
then where throughput stops growing. Tables every presenter draws (terminal, Markdown, HTML)."""

from __future__ import annotations

from typing import Any

from storbench.analysis.objects import ObjectSize, S3Answer, S3Row
from storbench.model.units import fmt_iops, fmt_ns, fmt_rate
from storbench.report.fmt import AnswerTable

FIGURES = ("req/s", "MiB/s", "p50", "p99")


def _limit(r: S3Row) -> str:
    if r.limit_bs is None:
        return f"{r.op}: bytes/s still grew at the largest object ({r.sizes[-1].bs})"
    return (
        f"{r.op}: bytes/s stop growing at {r.limit_bs} objects "
        f"({fmt_rate(r.limit_bytes_per_s)} MiB/s, 95 % of the best)"
    )


def _cells(s: ObjectSize, op: str) -> list[str]:
    # a DELETE moves no object's bytes (fio counts bs per request): no MiB/s for it
    rate = "-" if op == "DELETE" else fmt_rate(s.bytes_per_s)
    return [fmt_iops(s.requests_per_s), rate, fmt_ns(s.p50_ns), fmt_ns(s.p99_ns)]


def s3_tables(answer: S3Answer) -> list[AnswerTable]:
    """One table per target and concurrency: object sizes down, each operation's figures
    across."""
    groups: dict[tuple[str, str, str], list[S3Row]] = {}
    for r in answer.rows:
        rest = ", ".join(f"{k}={v}" for k, v in r.fixed.items() if k not in ("rw", "numjobs"))
        groups.setdefault((r.target, str(r.concurrency), rest), []).append(r)
    out = []
    for (target, jobs, rest), rows in groups.items():
        sizes: list[Any] = list(dict.fromkeys(s.bs for r in rows for s in r.sizes))
        by = {(r.op, s.bs): s for r in rows for s in r.sizes}
        ops = list(dict.fromkeys(r.op for r in rows))
        body = []
        for bs in sizes:
            cells = [str(bs)]
            for op in ops:
                s = by.get((op, bs))
                cells += _cells(s, op) if s is not None else ["-"] * len(FIGURES)
            body.append(cells)
        title = f"{target}: {jobs} concurrent request(s) per client" + (f", {rest}" if rest else "")
        out.append(
            AnswerTable(
                title,
                ["object size", *(f"{op} {f}" for op in ops for f in FIGURES)],
                body,
                right=set(range(1, 1 + len(ops) * len(FIGURES))),
                # where bytes/s stop growing: along two sizes or more, of what moves bytes
                notes=[_limit(r) for r in rows if r.op != "DELETE" and len(r.sizes) > 1],
            )
        )
    return out
