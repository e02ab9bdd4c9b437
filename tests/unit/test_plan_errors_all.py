"""`plan check` (and `run`) report every error of a plan at once, each with its file:line
and fix, as far as they can be found independently: each top-level key, each workload,
each target; the first is the message a plan with that one error gets, the others follow,
and the exit status is 2 with nothing run or recorded."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

PLAN = """\
name: many
colour: blue
repeat: -1
targets:
  - file: {tmp}/a.dat
    speed: fast
  - device: relative/dev
workloads:
  - name: one
    rw: randread
    bs: 4k
    iodeph: 4
  - name: two
    rw: randwrite
    bs: 0
  - name: three
    rw: read
    bs: 4k
"""


def sb(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("STORBENCH_")}
    env.update(STORBENCH_DB=str(tmp_path / "r.db"), COLUMNS="300")
    return subprocess.run(
        [sys.executable, "-m", "storbench", *args],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=120,
    )


def errors(stderr: str) -> list[tuple[str, str]]:
    """Each `storbench: error: WHERE: MESSAGE` with its fix, in order."""
    found = re.findall(r"^storbench: error: (.*)\n  fix: (.*)$", stderr, re.M)
    return [(e, f) for e, f in found]


@pytest.mark.parametrize("command", ["plan check", "run"])
def test_plan_errors_are_reported_all_at_once(tmp_path: Path, command: str) -> None:
    plan = tmp_path / "multi.yaml"
    plan.write_text(PLAN.format(tmp=tmp_path))
    r = sb(tmp_path, *command.split(), "multi.yaml")
    assert r.returncode == 2, r.stdout + r.stderr
    assert "Traceback" not in r.stderr
    got = errors(r.stderr)
    wanted = [
        ("multi.yaml:2:1: unknown key 'colour'", "top-level keys: "),
        (
            "multi.yaml:3:1: `repeat` must be a whole number ≥ 1 or a mapping, not -1",
            "e.g. `repeat: 3`",
        ),
        ("multi.yaml:12:5: workload 'one': unknown fio option 'iodeph'", 'did you mean "iodepth"'),
        ("multi.yaml:15:5: workload 'two': ", ""),
        ("multi.yaml:6:5: unknown target key 'speed'", ""),
        ("multi.yaml:7:5: a device path must be absolute", "/dev/sdb"),
    ]
    assert len(got) == len(wanted), r.stderr
    for (err, fix), (says, fixes) in zip(got, wanted, strict=True):
        assert err.startswith(says) and fixes in fix, (err, fix)
    assert r.stderr.rstrip().endswith(f"storbench: {len(wanted)} errors in the plan")
    assert not (tmp_path / "r.db").exists() and not (tmp_path / "a.dat").exists()


def test_plan_errors_first_is_the_one_error_a_plan_of_it_alone_gets(tmp_path: Path) -> None:
    plan = tmp_path / "multi.yaml"
    plan.write_text(PLAN.format(tmp=tmp_path))
    many = sb(tmp_path, "plan", "check", "multi.yaml").stderr
    plan.write_text(
        f"name: many\ncolour: blue\ntargets:\n  - file: {tmp_path}/a.dat\n"
        + "workloads:\n  - name: one\n    rw: randread\n    bs: 4k\n"
    )
    one = sb(tmp_path, "plan", "check", "multi.yaml")
    assert one.returncode == 2 and one.stderr.count("storbench: error:") == 1
    assert "errors in the plan" not in one.stderr  # one error: said as before
    assert many.startswith(one.stderr)


def test_plan_errors_of_missing_target_directories_are_reported_together(tmp_path: Path) -> None:
    plan = tmp_path / "dirs.yaml"
    plan.write_text(
        f"name: d\ntargets:\n  - file: {tmp_path}/no/a.dat\n  - directory: {tmp_path}/none\n"
        "workloads:\n  - name: w\n    rw: randread\n    bs: 4k\n    size: 1m\n"
    )
    r = sb(tmp_path, "plan", "check", "dirs.yaml")
    assert r.returncode == 2, r.stdout + r.stderr
    assert [e for e, _ in errors(r.stderr)] == [
        f"the directory {tmp_path}/no for {tmp_path}/no/a.dat does not exist; create it first",
        f"directory {tmp_path}/none does not exist",
    ]
