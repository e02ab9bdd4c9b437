"""Repetitions until the verdict is known (``repeat: {until: significant}``) on real
devices whose speed is known in advance: blank loop devices whose writes a cgroup throttles
(tests/throttled.py), one slower than the other, or both alike. The run alternates A and B,
stops each pair when its verdict is known, and says how many repetitions it took."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.integration

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from throttled import recorded, sb, throttled_devices  # noqa: E402
from waiting import wait_until  # noqa: E402

PLAN = """\
name: ab
targets: [{{device: {a}}}, {{device: {b}}}]
global: {{bs: 4k, runtime: 1, time_based: 1, direct: 1, ioengine: libaio, iodepth: 4,
  size: 32m}}
repeat: {{until: significant, max: {most}, equal: {equal}}}
workloads:
  - {{name: w, rw: randwrite}}
"""


def _run(tmp_path: Path, rates: list[int], most: int, equal: str) -> tuple[dict[str, Any], str]:
    """The run's export and what it printed, then its Markdown and HTML reports."""
    with throttled_devices(tmp_path, rates, ops=("write",)) as (devs, group):
        plan = tmp_path / "ab.yaml"
        plan.write_text(PLAN.format(a=devs[0], b=devs[1], most=most, equal=equal))
        db = tmp_path / "r.db"
        r = sb(group, db, "run", str(plan))
        text = r.stdout + r.stderr
        assert r.returncode == 0, text
        md = sb(group, db, "report", "latest", "--format", "markdown")
        html = sb(group, db, "report", "latest", "-o", str(tmp_path / "r.html"))
        assert md.returncode == 0 and html.returncode == 0, md.stderr + html.stderr
        text += md.stdout + (tmp_path / "r.html").read_text()
        return _exported(group, db), text


def _exported(group: Path, db: Path) -> dict[str, Any]:
    exported = sb(group, db, "export", "latest", "--format", "json")
    assert exported.returncode == 0, exported.stderr
    return json.loads(exported.stdout)


def _order(doc: dict[str, Any]) -> list[str]:
    """Which device each measurement ran on, in the order they ran."""
    rows = sorted(doc["measurements"], key=lambda m: m["started_at"])
    return [m["target"] for m in rows]


def test_until_stops_once_the_faster_device_is_known_better(tmp_path: Path) -> None:
    doc, text = _run(tmp_path, [500, 1000], most=8, equal="2%")
    (m,) = doc["answer"]["comparison"]["points"]
    assert m["verdict"] == "better", m
    until = m["repeat_until"]
    assert until["state"] == "significant" and until["n"] < 8, until
    assert until["p"] < until["level"] < 0.05, until
    assert 1.8 < until["ratio"] < 2.2, until  # B takes twice A's writes
    order = _order(doc)
    assert len(order) == 2 * until["n"]  # it stopped when it knew
    assert "repeated until known" in text and "significant: p" in text, text
    assert text.count("repeated until known") >= 3  # the run's output, Markdown, HTML


def test_until_two_alike_devices_are_known_equal_alternating(tmp_path: Path) -> None:
    doc, text = _run(tmp_path, [800, 800], most=12, equal="5%")
    (m,) = doc["answer"]["comparison"]["points"]
    until = m["repeat_until"]
    assert m["verdict"] == "equal" and until["state"] == "equal", (m, text)
    assert 0.95 <= until["ratio_low"] <= until["ratio_high"] <= 1.05, until
    order = _order(doc)
    a, b = order[0], order[-1]
    # the plan's rounds (A then B), then the pair again, A, B, A, B...
    assert order == [a, b] * (len(order) // 2), order
    assert f"{until['n']} each" in text, text


def test_until_not_known_at_the_most_runs_abab_to_it(tmp_path: Path) -> None:
    """Alike devices and a margin tighter than their noise: the pair runs A, B, A, B...
    to the most repetitions, and the verdict says it is not known. Alike devices still
    differ by chance in up to α = 5 % of tries (the rule's promise, not a defect), so a
    try that ends known is checked and followed by another, three at the most."""
    for attempt in range(3):
        where = tmp_path / f"try{attempt}"
        where.mkdir()
        doc, text = _run(where, [800, 800], most=4, equal="0.1%")
        (m,) = doc["answer"]["comparison"]["points"]
        until = m["repeat_until"]
        order = _order(doc)
        assert len(order) == 2 * until["n"] and order == order[:2] * until["n"], order
        if until["state"] == "max":
            break
        assert until["state"] == "significant" and until["n"] < 4, until  # by chance
    assert until["state"] == "max" and until["n"] == 4, (until, text)
    assert m["verdict"] == "no significant difference", m
    assert "not known at the most repetitions" in text, text


def _interrupted(tmp_path: Path) -> dict[str, Any] | None:
    """The run's export after Ctrl-C once five repetitions were recorded and `resume`;
    None when the pair was known (by chance) before there were five."""
    with throttled_devices(tmp_path, [800, 800], ops=("write",)) as (devs, group):
        plan = tmp_path / "ab.yaml"
        plan.write_text(PLAN.format(a=devs[0], b=devs[1], most=4, equal="0.1%"))
        db = tmp_path / "r.db"
        procs = group / "cgroup.procs"
        proc = subprocess.Popen(
            [sys.executable, "-m", "storbench", "run", str(plan)],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env={**os.environ, "STORBENCH_DB": str(db)},
            preexec_fn=lambda: procs.write_text(f"{os.getpid()}\n"),
        )
        try:
            wait_until(
                "five recorded, or the run's end",
                lambda: recorded(db) >= 5 or proc.poll() is not None,
                timeout=300,
            )
            if proc.poll() is not None:
                out, _ = proc.communicate(timeout=120)
                assert proc.returncode == 0 and recorded(db) == 4, out
                return None
            proc.send_signal(signal.SIGINT)
            out, _ = proc.communicate(timeout=120)
        finally:
            if proc.poll() is None:
                proc.kill()
        assert proc.returncode == 130, out
        assert recorded(db) < 8, out
        r = sb(group, db, "resume", "latest")
        assert r.returncode == 0, r.stdout + r.stderr
        return _exported(group, db)


def test_until_interrupted_goes_on_with_its_pairs_on_resume(tmp_path: Path) -> None:
    """Ctrl-C once five repetitions are recorded: `resume` runs what was cut and the
    pair's further repetitions, to the verdict (mostly the most, 4 each; alike devices
    known different by chance, at most α = 5 % of tries, stop where they are known)."""
    for attempt in range(3):
        where = tmp_path / f"try{attempt}"
        where.mkdir()
        doc = _interrupted(where)
        if doc is not None:
            break
    assert doc is not None, "known before five repetitions in three tries"
    (m,) = doc["answer"]["comparison"]["points"]
    until = m["repeat_until"]
    assert until["n"] >= 3 and (until["state"] != "max" or until["n"] == 4), until
    order = _order(doc)
    assert len(order) == 2 * until["n"] and order == order[:2] * until["n"], order
