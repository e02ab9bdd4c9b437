"""`storbench suites` ends with the command that shows each suite's points and job files:
that command works as printed, without a --target (a placeholder target in the form the
suite takes, said so), and with one it shows the suite on it as before."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from storbench.suites import names


def sb(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("STORBENCH_", "AWS_"))}
    env.update(STORBENCH_DB=str(tmp_path / "r.db"), COLUMNS="200")
    return subprocess.run(
        [sys.executable, "-m", "storbench", *args],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=120,
    )


@pytest.mark.parametrize("suite", names())
def test_plan_show_suite_as_suites_suggests_it_works_without_a_target(
    tmp_path: Path, suite: str
) -> None:
    listed = sb(tmp_path, "suites")
    assert listed.returncode == 0, listed.stderr
    (suggested,) = re.findall(r"storbench (plan show SUITE\b.*)$", listed.stdout, re.M)
    suggested = re.sub(r"\s*\[.*?\]", "", suggested)  # as printed, its options left out
    args = suggested.replace("SUITE", suite).split()
    if suite == "soak":  # its one setting of its own, which its description names
        r = sb(tmp_path, *args)
        assert r.returncode == 2 and "fix: e.g. --set duration=6h" in r.stderr, r.stderr
        args += ["--set", "duration=6h"]
    r = sb(tmp_path, *args)
    assert r.returncode == 0, r.stdout + r.stderr
    placeholder = {"rados": "rados:POOL", "rbd": "rbd:POOL/IMAGE", "s3": "s3://bucket"}
    target = placeholder.get(suite, "/path/to/target")
    head, note = r.stdout.splitlines()[:2]
    assert head.startswith("storbench ") and f"plan {suite} (suite:{suite})" in head
    assert target in head
    assert note.startswith(f"note: no --target given: shown on the placeholder {target}"), note
    assert "--target" in note and "# point 1/" in r.stdout
    assert not (tmp_path / "r.db").exists()  # a dry run
    # with a target: that target, and no note
    given = {"rados": "rados:bench", "rbd": "rbd:bench/img", "s3": "s3://mine"}
    mine = given.get(suite, str(tmp_path / "x.dat"))
    more = ["--endpoint", "http://127.0.0.1:9000"] if suite == "s3" else []
    more += ["--set", "duration=6h"] if suite == "soak" else []
    r = sb(tmp_path, "plan", "show", suite, "--target", mine, *more)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "placeholder" not in r.stdout and target not in r.stdout


def test_plan_check_suite_still_needs_a_target(tmp_path: Path) -> None:
    r = sb(tmp_path, "plan", "check", "quick")  # a check is of the target it will run on
    assert r.returncode == 2 and "the plan has no targets" in r.stderr
