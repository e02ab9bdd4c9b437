"""Plan safety through the real command line (issue 17, points 4-6): a plan that would inject
into fio's job file, run a command, write a file storbench did not create, run forever or
expand without bound gets one message with a fix, exit 2, and nothing is recorded or written.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_cli_errors import (
    GOOD,
    HAVE_FIO,
    assert_one_error,
    db_path,
    recorded_runs,
    storbench,
    write_plan,
)

INJECTED = GOOD.replace("rw: randread", "rw: write") + (
    '    buffer_pattern: "0xdeadbeef\\nfilename={tmp}/victim"\n'
)


@pytest.mark.parametrize("command", [("run",), ("plan", "check"), ("plan", "show")])
def test_cli_plan_injection_is_refused(tmp_path: Path, command: tuple[str, ...]) -> None:
    victim = tmp_path / "victim"
    victim.write_bytes(b"precious\n")
    plan = write_plan(tmp_path, INJECTED)
    r = storbench(tmp_path, *command, str(plan))
    assert_one_error(r, where=f"{plan}:11", says=("`buffer_pattern`", "newline"), fix=("remove",))
    assert r.stdout == ""
    assert victim.read_bytes() == b"precious\n"
    assert not db_path(tmp_path).exists()
    assert not (tmp_path / "scratch.dat").exists()


def test_cli_plan_injection_through_set_and_target(tmp_path: Path) -> None:
    plan = write_plan(tmp_path, GOOD)
    # YAML's escape: a newline typed into a double-quoted value folds into a blank
    r = storbench(tmp_path, "run", str(plan), "--set", 'buffer_pattern="a\\nfilename=/tmp/v"')
    assert_one_error(r, says=("newline",))
    r = storbench(tmp_path, "run", str(plan), "--target", f"{tmp_path}/a\nfilename=/tmp/v")
    assert_one_error(r, says=("--target", "newline"))
    assert not db_path(tmp_path).exists()


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ("exec_prerun: touch {tmp}/ran", "runs a command"),
        ("ioengine: exec", "runs a command"),
        ("read_iolog: {tmp}/trace", "replays"),
        ("write_iolog: trace.log", "absolute"),
    ],
)
def test_cli_plan_options_refused(tmp_path: Path, line: str, says: str) -> None:
    plan = write_plan(tmp_path, GOOD + f"    {line}\n")
    r = storbench(tmp_path, "run", str(plan))
    assert_one_error(r, where=f"{plan}:11", says=(says,))
    assert not (tmp_path / "ran").exists()
    assert not db_path(tmp_path).exists()


@pytest.mark.skipif(not HAVE_FIO, reason="fio is not installed")
@pytest.mark.parametrize(
    ("line", "existing"),
    [
        ("write_iolog: {tmp}/mine.log", "mine.log"),
        ("write_bw_log: {tmp}/mine", "mine_bw.1.log"),
        ("write_lat_log: {tmp}/mine", "mine_clat.1.log"),
        ("mem: mmap:{tmp}/buffers", "buffers"),
    ],
)
def test_cli_file_writing_option_never_overwrites_a_file(
    tmp_path: Path, line: str, existing: str
) -> None:
    # fio appends to write_iolog, truncates the logs it writes and the mmap file it uses:
    # like a target, a file storbench did not create is never handed to fio
    mine = tmp_path / existing
    mine.write_bytes(b"someone's data\n")
    plan = write_plan(tmp_path, GOOD + f"    {line}\n")
    r = storbench(tmp_path, "run", str(plan))
    assert_one_error(r, says=(str(mine), "not created by storbench"), fix=("remove it",))
    assert mine.read_bytes() == b"someone's data\n"
    assert recorded_runs(tmp_path) == 0


@pytest.mark.skipif(not HAVE_FIO, reason="fio is not installed")
def test_cli_file_writing_option_needs_an_existing_directory(tmp_path: Path) -> None:
    plan = write_plan(tmp_path, GOOD + "    write_bw_log: {tmp}/no/such/dir/w\n")
    r = storbench(tmp_path, "run", str(plan))
    assert_one_error(r, says=(f"{tmp_path}/no/such/dir", "does not exist"), fix=("create",))
    assert recorded_runs(tmp_path) == 0


def test_cli_negative_runtime_is_refused_by_plan_check(tmp_path: Path) -> None:
    # it passed as "planned 0s" and then ran forever
    plan = write_plan(tmp_path, GOOD)
    r = storbench(tmp_path, "plan", "check", str(plan), "--set", "runtime=-1")
    assert_one_error(r, says=("`runtime` must be 0 or more",), fix=("--set runtime=",))
    assert "planned" not in r.stdout


@pytest.mark.parametrize(
    ("change", "line", "says"),
    [
        (("size: 1m", "size: 0"), 9, "`size` must be more than 0"),
        (("size: 1m", "size: -1"), 9, "`size` must be more than 0"),
        (("bs: 4k", "bs: 2m"), 7, "larger than `size`"),
        (("iodepth: 1", "numjobs: 100000"), 8, "`numjobs` must be 1 to 4088"),
    ],
)
def test_cli_values_that_would_record_a_failed_point(
    tmp_path: Path, change: tuple[str, str], line: int, says: str
) -> None:
    plan = write_plan(tmp_path, GOOD.replace(*change))
    r = storbench(tmp_path, "run", str(plan))
    assert_one_error(r, where=f"{plan}:{line}", says=(says,))
    assert not db_path(tmp_path).exists()
    assert not (tmp_path / "scratch.dat").exists()


def test_cli_file_target_that_is_a_directory(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    plan = write_plan(tmp_path, GOOD.replace("{tmp}/scratch.dat", "{tmp}/d"))
    r = storbench(tmp_path, "run", str(plan))
    assert_one_error(r, where=f"{plan}:3", says=("is a directory",), fix=("directory:",))
    r = storbench(tmp_path, "plan", "check", "quick", "--target", f"file:{tmp_path}/d")
    assert_one_error(r, says=("is a directory",))
    assert not db_path(tmp_path).exists()


def test_cli_huge_repeat_is_refused_at_once(tmp_path: Path) -> None:
    # plan check used to expand a billion points until killed (~60 MB/s)
    plan = write_plan(tmp_path, GOOD + "repeat: 1000000000\n")
    r = storbench(tmp_path, "plan", "check", str(plan))  # 60 s timeout in storbench()
    assert_one_error(
        r,
        where=f"{plan}:11",
        says=("1,000,000,000 points", "100,000"),
        fix=("--max-points",),
    )


def test_cli_max_points_raises_the_limit(tmp_path: Path) -> None:
    plan = write_plan(tmp_path, GOOD + "repeat: 3\n")
    r = storbench(tmp_path, "plan", "check", str(plan), "--max-points", "2")
    assert_one_error(r, says=("3 points", "more than the limit of 2"), fix=("--max-points 3",))
    r = storbench(tmp_path, "plan", "show", str(plan), "--max-points", "3")
    assert r.returncode == 0, r.stderr
    r = storbench(tmp_path, "run", "--dry-run", str(plan), "--max-points", "3")
    assert r.returncode == 0, r.stderr
    r = storbench(tmp_path, "plan", "check", "--help")
    assert "--max-points" in r.stdout


def test_cli_deeply_nested_yaml(tmp_path: Path) -> None:
    plan = write_plan(tmp_path, "name: " + "[" * 100000)
    r = storbench(tmp_path, "plan", "check", str(plan))
    assert_one_error(r, where=f"{plan}:1", says=("nested",))
