"""Bad input through the real command line: one message, file:line, a fix, exit 2, nothing recorded.

Each case runs the installed ``storbench`` in a subprocess with ``STORBENCH_DB`` in tmp_path,
so what a user sees (stderr, exit status) and what lands in the database are both checked.
"""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
_HERE = Path(sys.executable).parent / "storbench"
STORBENCH = str(_HERE if _HERE.exists() else REPO / ".venv" / "bin" / "storbench")
HAVE_FIO = shutil.which("fio") is not None

EXAMPLE = """\
name: nvme-vs-sata
targets:
  - file: /mnt/nvme/storbench.dat
  - device: /dev/sdb
workloads:
  - name: rand4k
    rw: [randread, randwrite]
    bs: 4k
    iodepth: [1, 32]
    size: 10g
    runtime: 60
    ramp_time: 10
    direct: 1
repeat: 3
"""

# A small valid plan (if a "bad" case were accepted, `run` would only do 1 s of fio on 1 MiB).
GOOD = """\
name: tiny
targets:
  - file: {tmp}/scratch.dat
workloads:
  - name: a
    rw: randread
    bs: 4k
    iodepth: 1
    size: 1m
    runtime: 1
"""


def storbench(
    tmp_path: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    full_env = {k: v for k, v in os.environ.items() if k not in ("STORBENCH_FIO", "COLUMNS")}
    full_env["STORBENCH_DB"] = str(db_path(tmp_path))
    full_env.update(env or {})
    return subprocess.run(
        [STORBENCH, *args],
        capture_output=True,
        text=True,
        env=full_env,
        cwd=tmp_path,
        timeout=60,
    )


def db_path(tmp_path: Path) -> Path:
    return tmp_path / "results.db"


def recorded_runs(tmp_path: Path) -> int:
    db = db_path(tmp_path)
    if not db.exists():
        return 0
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return int(con.execute("SELECT COUNT(*) FROM runs").fetchone()[0])
    except sqlite3.OperationalError:  # no schema: nothing recorded
        return 0
    finally:
        con.close()


def assert_one_error(
    r: subprocess.CompletedProcess[str],
    *,
    where: str | None = None,
    says: tuple[str, ...] = (),
    fix: tuple[str, ...] = (),
) -> str:
    """Exit 2, exactly one ``storbench: error:`` on stderr, at ``where`` (FILE:LINE), a fix."""
    err = r.stderr
    assert r.returncode == 2, (r.returncode, r.stdout, err)
    assert "Traceback" not in err + r.stdout, err
    assert err.count("storbench: error:") == 1, err
    assert err.startswith("storbench: error: "), err
    assert re.search(r"^  fix: \S", err, re.MULTILINE), err
    if where is not None:
        # FILE:LINE (optionally :COLUMN) right after the prefix
        assert re.match(rf"storbench: error: {re.escape(where)}(:\d+)?: ", err), err
    flat = " ".join(err.split())  # the console may wrap a long line
    message, _, fix_text = flat.partition(" fix: ")
    for s in says:
        assert s in message, (s, err)
    for s in fix:
        assert s in fix_text, (s, err)
    return err


def write_plan(tmp_path: Path, text: str, name: str = "plan.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text.format(tmp=tmp_path))
    return path


# ---------------------------------------------------------------------------- bad plans

BAD_PLANS = {
    # name: (plan text, line, message parts, fix parts)
    "malformed-indentation": (
        GOOD.replace("    bs: 4k", "     bs: 4k"),
        7,
        ("malformed YAML", "mapping values are not allowed"),
        ("indent",),
    ),
    "malformed-unclosed-bracket": (
        GOOD.replace("rw: randread", "rw: [randread, randwrite"),
        6,  # the line of the `[`, not where the parser gave up
        ("malformed YAML", "`[` is never closed"),
        ("]",),
    ),
    "malformed-tab": (
        GOOD.replace("    size: 1m", "\tsize: 1m"),
        9,
        ("malformed YAML",),
        ("spaces, not tabs",),
    ),
    "duplicate-key": (
        GOOD + "    size: 2m\n",
        11,
        ("duplicate key", "size"),
        ("remove one",),
    ),
    "unknown-top-level-key": (
        GOOD.replace("workloads:", "workload:"),
        4,
        ("unknown key 'workload'",),
        ('did you mean "workloads"?',),
    ),
    "unknown-fio-option": (
        GOOD.replace("iodepth:", "iodepht:"),
        8,
        ("unknown fio option 'iodepht'",),
        ('did you mean "iodepth"?',),
    ),
    "repeat-many": (
        GOOD + "repeat: many\n",
        11,
        ("`repeat` must be a whole number", "'many'"),
        ("repeat: 3",),
    ),
    "iodepth-fast": (
        GOOD.replace("iodepth: 1", "iodepth: fast"),
        8,
        ("`iodepth` must be a whole number", "'fast'"),
        ("iodepth: 32",),
    ),
    "bs-4q": (
        GOOD.replace("bs: 4k", "bs: 4q"),
        7,
        ("`bs` is not a size", "'4q'"),
        ("bs: 4k",),
    ),
    "runtime-bad": (
        GOOD.replace("runtime: 1", "runtime: 1 minute"),
        10,
        ("`runtime` is not a time",),
        ("60s",),
    ),
    "rw-randreed": (
        GOOD.replace("rw: randread", "rw: randreed"),
        6,
        ("`rw` cannot be 'randreed'",),
        ('did you mean "randread"?',),
    ),
    "mapping-where-a-value-belongs": (
        GOOD.replace("    bs: 4k", "    bs:\n      read: 4k"),
        7,
        ("`bs` must be a value or a list of values", "not a mapping"),
        ("bs: VALUE",),
    ),
    "mapping-for-repeat": (
        GOOD + "repeat:\n  times: 3\n",
        11,
        ("`repeat` has no key 'times'",),
        ("repeat: 3", "until: significant"),
    ),
    "list-for-repeat": (
        GOOD + "repeat: [3]\n",
        11,
        ("`repeat` must be a whole number ≥ 1 or a mapping", "not a list"),
        ("repeat: 3",),
    ),
    "missing-workloads": (
        "name: x\ntargets:\n  - file: {tmp}/scratch.dat\n",
        1,
        ("no workloads",),
        ("workloads:", "- name:"),
    ),
    "workloads-not-a-list": (
        "name: x\ntargets:\n  - file: {tmp}/scratch.dat\nworkloads:\n  name: a\n  size: 1m\n",
        4,
        ("`workloads` must be a non-empty list",),
        ("- ",),
    ),
    "file-target-without-size": (
        GOOD.replace("    size: 1m\n", ""),
        5,  # the workload
        ("no `size`", "scratch.dat"),
        ("size: 1g",),
    ),
    "no-targets": (
        GOOD.replace("targets:\n  - file: {tmp}/scratch.dat\n", ""),
        1,
        ("no targets",),
        ("targets:", "--target"),
    ),
    "unknown-target-kind": (
        GOOD.replace("  - file:", "  - fiel:"),
        3,
        ("unknown target key 'fiel'",),
        ('did you mean "file"?',),
    ),
    "target-option-in-workload": (
        GOOD + "    filename: /tmp/elsewhere\n",
        11,
        ("`filename` comes from the target",),
        ("targets:",),
    ),
    "top-level-list": (
        "- name: a\n- name: b\n",
        1,
        ("must be a mapping",),
        ("workloads:",),
    ),
}


@pytest.mark.parametrize("case", list(BAD_PLANS))
def test_bad_plan_run(tmp_path: Path, case: str) -> None:
    text, line, says, fix = BAD_PLANS[case]
    plan = write_plan(tmp_path, text)
    r = storbench(tmp_path, "run", str(plan))
    assert_one_error(r, where=f"{plan}:{line}", says=says, fix=fix)
    assert not db_path(tmp_path).exists()  # rejected before the database was opened
    assert not (tmp_path / "scratch.dat").exists()


@pytest.mark.parametrize(
    "case", ["malformed-unclosed-bracket", "unknown-fio-option", "rw-randreed", "no-targets"]
)
@pytest.mark.parametrize("command", [("plan", "check"), ("plan", "show")])
def test_bad_plan_check_and_show(tmp_path: Path, case: str, command: tuple[str, str]) -> None:
    text, line, says, fix = BAD_PLANS[case]
    plan = write_plan(tmp_path, text)
    r = storbench(tmp_path, *command, str(plan))
    assert_one_error(r, where=f"{plan}:{line}", says=says, fix=fix)
    assert r.stdout == ""
    assert not db_path(tmp_path).exists()


def test_no_targets_is_fine_with_a_target_argument(tmp_path: Path) -> None:
    text, *_ = BAD_PLANS["no-targets"]
    plan = write_plan(tmp_path, text)
    r = storbench(tmp_path, "plan", "check", str(plan), "--target", str(tmp_path / "x.dat"))
    assert r.returncode == 0, r.stderr
    assert "OK: 1 points" in r.stdout


# ---------------------------------------------------------------------------- plan files


def test_plan_path_is_a_directory(tmp_path: Path) -> None:
    d = tmp_path / "plans"
    d.mkdir()
    r = storbench(tmp_path, "run", str(d))
    assert_one_error(r, where=str(d), says=("is a directory",), fix=("plan file",))
    assert not db_path(tmp_path).exists()


def test_missing_plan_file(tmp_path: Path) -> None:
    missing = tmp_path / "nope.yaml"
    r = storbench(tmp_path, "run", str(missing))
    assert_one_error(r, where=str(missing), says=("no such file",), fix=("check the path",))
    assert not db_path(tmp_path).exists()


def test_missing_plan_directory(tmp_path: Path) -> None:
    missing = tmp_path / "no-dir" / "p.yaml"
    r = storbench(tmp_path, "plan", "check", str(missing))
    assert_one_error(r, where=str(missing), says=("no such directory",))


def test_unknown_suite_suggests_the_nearest(tmp_path: Path) -> None:
    r = storbench(tmp_path, "run", "quik", "--target", str(tmp_path / "x.dat"))
    assert_one_error(
        r, says=("no plan file or built-in suite named 'quik'",), fix=('did you mean "quick"?',)
    )
    assert not db_path(tmp_path).exists()


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a chmod 000 file anyway")
def test_unreadable_plan_file(tmp_path: Path) -> None:
    plan = write_plan(tmp_path, GOOD)
    plan.chmod(0)
    try:
        r = storbench(tmp_path, "run", str(plan))
    finally:
        plan.chmod(0o644)
    assert_one_error(r, where=str(plan), says=("cannot read",), fix=("permissions",))
    assert not db_path(tmp_path).exists()


def test_plan_not_utf8(tmp_path: Path) -> None:
    plan = tmp_path / "latin1.yaml"
    plan.write_bytes(b"name: caf\xe9\n")
    r = storbench(tmp_path, "plan", "check", str(plan))
    assert_one_error(r, where=str(plan), says=("not UTF-8",))


# ---------------------------------------------------------------------------- --set / --target


@pytest.mark.parametrize(
    ("arg", "says", "fix"),
    [
        ("iodepht=4", ("'iodepht' is not a fio option or plan key",), ('did you mean "iodepth"?',)),
        ("workload=x", ("not a fio option or plan key",), ('did you mean "workloads"?',)),
        ("runtime", ("is not key=value",), ("--set runtime=2",)),
        ("bs=4q", ("`bs` is not a size",), ("--set bs=4k",)),
        ("iodepth=[1,", ("not valid YAML",), ("[1,32]",)),
        ("repeat=many", ("`repeat` must be a whole number",), ("--set repeat=3",)),
    ],
)
def test_bad_set(tmp_path: Path, arg: str, says: tuple[str, ...], fix: tuple[str, ...]) -> None:
    r = storbench(tmp_path, "run", "quick", "--target", str(tmp_path / "x.dat"), "--set", arg)
    err = assert_one_error(r, says=says, fix=fix)
    assert "quick" not in err.split(":")[1]  # not blamed on the suite's file
    assert not db_path(tmp_path).exists()


def test_bad_target_argument(tmp_path: Path) -> None:
    r = storbench(tmp_path, "plan", "check", "quick", "--target", "device:")
    assert_one_error(r, says=("no path after device:",), fix=("--target device:/path",))


# ---------------------------------------------------------------------------- preflight


@pytest.mark.parametrize(
    ("env", "says", "fix"),
    [
        ({"STORBENCH_FIO": "/nonexistent/fio"}, "is not an executable fio", "unset it"),
        # STORBENCH_FIO=fio: the one on PATH, not storbench's own build
        (
            {"PATH": "/nonexistent", "STORBENCH_FIO": "fio"},
            "fio is not installed",
            "apt-get install fio",
        ),
    ],
    ids=["STORBENCH_FIO", "PATH"],
)
def test_fio_not_installed(tmp_path: Path, env: dict[str, str], says: str, fix: str) -> None:
    plan = write_plan(tmp_path, GOOD)
    r = storbench(tmp_path, "run", str(plan), env=env)
    assert_one_error(r, says=(says,), fix=(fix,))
    assert recorded_runs(tmp_path) == 0
    assert not (tmp_path / "scratch.dat").exists()


def test_plan_check_without_fio_checks_names_only(tmp_path: Path) -> None:
    plan = write_plan(tmp_path, GOOD)
    r = storbench(tmp_path, "plan", "check", str(plan), env={"STORBENCH_FIO": "/nonexistent/fio"})
    assert r.returncode == 0, r.stderr
    assert "OK: 1 points" in r.stdout
    assert "fio is not installed" in r.stdout


@pytest.mark.skipif(not HAVE_FIO, reason="fio is not installed")
def test_missing_device_target(tmp_path: Path) -> None:
    plan = write_plan(tmp_path, GOOD.replace("file: {tmp}/scratch.dat", "device: /dev/sdzz-sbtest"))
    r = storbench(tmp_path, "run", str(plan))
    assert_one_error(r, says=("/dev/sdzz-sbtest does not exist",), fix=("lsblk",))
    assert recorded_runs(tmp_path) == 0


@pytest.mark.skipif(not HAVE_FIO, reason="fio is not installed")
def test_missing_directory_target(tmp_path: Path) -> None:
    r = storbench(
        tmp_path, "run", "quick", "--target", f"directory:{tmp_path}/none", "--set", "runtime=1"
    )
    assert_one_error(r, says=("does not exist",), fix=("create it",))
    assert recorded_runs(tmp_path) == 0


@pytest.mark.parametrize(
    ("target", "says", "fix"),
    [
        ("file: {tmp}/none/x.dat", "the directory {tmp}/none for {tmp}/none/x.dat does not exist",
         "choose a path in a writable directory"),
        ("directory: {tmp}/none", "directory {tmp}/none does not exist",
         "create it first, or name an existing directory"),
    ],
)  # fmt: skip
def test_plan_check_refuses_a_missing_target_directory_as_run_does(
    tmp_path: Path, target: str, says: str, fix: str
) -> None:
    plan = write_plan(tmp_path, GOOD.replace("file: {tmp}/scratch.dat", target))
    says, fix = says.format(tmp=tmp_path), fix.format(tmp=tmp_path)
    checked = storbench(tmp_path, "plan", "check", str(plan))
    assert_one_error(checked, says=(says,), fix=(fix,))
    if HAVE_FIO:  # the same refusal as run's
        ran = storbench(tmp_path, "run", str(plan))
        assert_one_error(ran, says=(says,), fix=(fix,))
    assert recorded_runs(tmp_path) == 0
    shown = storbench(tmp_path, "plan", "show", str(plan))  # a dry run: it may appear later
    assert shown.returncode == 0, shown.stderr


def test_plan_check_refuses_a_new_file_sized_as_a_share_of_itself_as_run_does(
    tmp_path: Path,
) -> None:
    """`size: 50%` of a file storbench is to create: fio failed the job with "error 22
    (Invalid argument)", recorded as the point's only word; now refused before anything
    runs, and accepted once the file exists."""
    plan = write_plan(tmp_path, GOOD.replace("size: 1m", "size: 50%"))
    says = (f"{tmp_path}/scratch.dat does not exist", "`size: 50%`", "you need to specify size=")
    fix = ("give a size (size: 1g)",)
    assert_one_error(storbench(tmp_path, "plan", "check", str(plan)), says=says, fix=fix)
    if HAVE_FIO:
        assert_one_error(storbench(tmp_path, "run", str(plan)), says=says, fix=fix)
    assert recorded_runs(tmp_path) == 0
    assert not (tmp_path / "scratch.dat").exists()
    (tmp_path / "scratch.dat").write_bytes(b"\0" * 65536)
    checked = storbench(tmp_path, "plan", "check", str(plan))
    assert checked.returncode == 0, checked.stderr


# ---------------------------------------------------------------------------- good plans


def test_plan_check_example(tmp_path: Path) -> None:
    (tmp_path / "nvme").mkdir()  # the file target's directory, as on the machine it is for
    plan = write_plan(tmp_path, EXAMPLE.replace("/mnt/nvme/", f"{tmp_path}/nvme/"))
    r = storbench(tmp_path, "plan", "check", str(plan))
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    assert f"{plan}: OK: 24 points" in r.stdout
    assert not db_path(tmp_path).exists()  # no I/O, nothing recorded


def test_plan_show_example_prints_24_job_files(tmp_path: Path) -> None:
    plan = write_plan(tmp_path, EXAMPLE)
    r = storbench(tmp_path, "plan", "show", str(plan))
    assert r.returncode == 0, r.stderr
    assert not db_path(tmp_path).exists()
    assert "24 points" in r.stdout.splitlines()[0]
    blocks = re.split(r"^# point ", r.stdout, flags=re.MULTILINE)[1:]
    assert len(blocks) == 24
    seeds = set()
    for i, block in enumerate(blocks):
        head, *lines = block.strip().splitlines()
        assert head.startswith(f"{i + 1}/24: ")
        assert f"(repetition {i // 8 + 1})" in head
        job = dict(ln.split("=", 1) for ln in lines if "=" in ln and not ln.startswith(";"))
        assert "[rand4k]" in lines
        assert job["filename"] == ("/mnt/nvme/storbench.dat" if i % 8 < 4 else "/dev/sdb")
        assert job["rw"] in ("randread", "randwrite")
        assert job["iodepth"] in ("1", "32")
        for k, v in {
            "bs": "4k",
            "size": "10g",
            "runtime": "60",
            "ramp_time": "10",
            "direct": "1",
        }.items():
            assert job[k] == v, (k, block)
        seeds.add(job["randseed"])
    assert len(seeds) == 3
    first = blocks[0].strip().splitlines()[2:]
    assert first == [
        "[rand4k]",
        "filename=/mnt/nvme/storbench.dat",
        "rw=randread",
        "bs=4k",
        "iodepth=1",
        "size=10g",
        "runtime=60",
        "ramp_time=10",
        "direct=1",
        first[9],  # randseed=...
        "group_reporting",
    ]
    assert first[9].startswith("randseed=")


def test_plan_show_with_set_overrides(tmp_path: Path) -> None:
    plan = write_plan(tmp_path, EXAMPLE)
    r = storbench(
        tmp_path, "plan", "show", str(plan), "--set", "iodepth=[1,8,64]", "--set", "repeat=1"
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("filename=") == 2 * 2 * 3
    assert "randseed=" not in r.stdout
    assert sorted({ln for ln in r.stdout.splitlines() if ln.startswith("iodepth=")}) == [
        "iodepth=1",
        "iodepth=64",
        "iodepth=8",
    ]


def test_long_error_line_is_not_wrapped(tmp_path: Path) -> None:
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    deep.mkdir(parents=True)
    plan = write_plan(deep, BAD_PLANS["mapping-where-a-value-belongs"][0])
    r = storbench(tmp_path, "plan", "check", str(plan))
    first = r.stderr.splitlines()[0]
    assert first.startswith("storbench: error: ")
    assert first.endswith("not a mapping (key: value lines)")


def test_plan_name_too_long_for_the_file_system(tmp_path: Path) -> None:
    """Found by the fuzz test: ENAMETOOLONG from pathlib was a traceback."""
    for name in ("a" * 300, "a/" * 3000):
        assert_one_error(storbench(tmp_path, "plan", "check", name), says=("its name is too long",))
