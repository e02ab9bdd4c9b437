"""Fuzzing what users and files give storbench: generated plans, command lines and fio JSON
documents must end in exit 0 or 2 (1 only where the README gives it a meaning: a run with
failed points, a cleanup that left objects), never a traceback, and never a file written or
changed outside storbench's own.

The command line runs in-process (``storbench.cli.main``, the entry point of the installed
command), which takes milliseconds instead of an interpreter start per example; an
exception escaping it is what a user would see as a traceback. Runs use real fio on files
in the example's own sandbox. Examples are derandomised so that CI is repeatable; set
STORBENCH_FUZZ_RANDOM=1 (and STORBENCH_FUZZ_EXAMPLES=N) to explore further.
"""

from __future__ import annotations

import contextlib
import copy
import json
import math
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from storbench import cli
from storbench.cli import plans

DATA = Path(__file__).resolve().parents[1] / "data" / "fio"
HAVE_FIO = shutil.which("fio") is not None
RANDOM = os.environ.get("STORBENCH_FUZZ_RANDOM") == "1"


def examples(default: int) -> Any:
    n = int(os.environ.get("STORBENCH_FUZZ_EXAMPLES", default))
    return settings(
        max_examples=n,
        deadline=None,
        derandomize=not RANDOM,
        database=None,
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
            HealthCheck.function_scoped_fixture,
        ],
    )


# ------------------------------------------------------------------ the sandbox

VICTIM = b"VICTIM-DATA-" * 1000


@contextlib.contextmanager
def sandbox() -> Iterator[Path]:
    """A directory that is the whole world of one example: cwd, $HOME, $TMPDIR and the
    database live in it, with files storbench did not create (``victim*``)."""
    with tempfile.TemporaryDirectory(prefix="sb-fuzz-") as d:
        root = Path(d)
        (root / "victim.txt").write_bytes(VICTIM)
        (root / "victim:two").write_bytes(VICTIM)
        (root / "dir").mkdir()
        (root / "dir" / "victim.dat").write_bytes(VICTIM)
        (root / "tmp").mkdir()
        old_env = dict(os.environ)
        old_cwd = os.getcwd()
        os.environ.update(
            {
                "STORBENCH_DB": str(root / "results.db"),
                "HOME": str(root),
                "TMPDIR": str(root / "tmp"),
                "XDG_DATA_HOME": str(root / "share"),
                "COLUMNS": "120",
            }
        )
        os.environ.pop("STORBENCH_FIO", None)
        os.chdir(root)
        tempfile.tempdir = None  # take the new $TMPDIR
        try:
            yield root
        finally:
            os.chdir(old_cwd)
            os.environ.clear()
            os.environ.update(old_env)
            tempfile.tempdir = None


def snapshot(root: Path) -> dict[str, bytes | None]:
    out: dict[str, bytes | None] = {}
    for p in sorted(root.rglob("*")):
        rel = str(p.relative_to(root))
        out[rel] = p.read_bytes() if p.is_file() and "victim" in p.name else None
    return out


#: What storbench may leave in the sandbox: its database and the outputs asked for (and
#: matplotlib's font cache and configuration under $HOME).
OWN = ("results.db", "results.db-wal", "results.db-shm", "out.", "share", ".cache", ".config")


def assert_nothing_else_written(root: Path, before: dict[str, bytes | None]) -> None:
    after = snapshot(root)
    for name, content in before.items():
        if content is not None:
            assert after.get(name) == content, f"{name} was changed"
    new = [n for n in after if n not in before and not n.startswith(OWN)]
    assert new == [], f"files left behind: {new}"


def invoke(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """``storbench ARGS`` in-process: (exit status, stdout, stderr). Any exception but
    SystemExit escapes: that is a traceback."""
    old = sys.argv
    sys.argv = ["storbench", *args]
    try:
        try:
            cli.main()
            code = 0
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
    finally:
        sys.argv = old
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# ------------------------------------------------------------------ values

HOSTILE = [
    "plain",
    "a b",
    "sdb [/dev/sdb]",
    "[link=http://example.invalid]x[/link]",
    "[bold]",
    "\x1b]0;title\x07",
    "\x1b[2J",
    "line\nfilename=victim.txt",
    "x\rfilename=victim.txt",
    "0xdeadbeef\nfilename=victim.txt",
    "semi;colon",
    "hash#tag",
    "${HOME}",
    "$pagesize",
    '=HYPERLINK("http://x")',
    "+1",
    "-1",
    "@sum",
    "<script>alert(1)</script>",
    "|pipe|",
    "victim.txt",
    "victim:two",
    "dir",
    "\x00nul",
    "é ü 中文",
    "",
    " ",
    "a" * 300,
]
NUMBERS: list[Any] = [0, 1, -1, 2, 4, 32, 4096, 100000, 10**12, 1.5, -0.0, "1k", "4k", "64k"]
NUMBERS += ["1m", "-4k", "0k", "1e3", "inf", "nan", "4x", None, True, [], {}]
SIZES: list[Any] = ["4k", "64k", "1m", "2m", 0, -1, "0", "1g", "10t", "4k,8k", "50%", "x"]
RW = ["read", "randread", "write", "randwrite", "rw", "randrw", "trim", "readwrite", "bogus"]
OPTIONS = [
    "buffer_pattern",
    "write_bw_log",
    "write_iolog",
    "write_lat_log",
    "unlink",
    "offset",
    "verify",
    "ioengine",
    "exec_prerun",
    "filename",
    "directory",
    "description",
    "fill_device",
    "nrfiles",
    "rate_iops",
    "zonemode",
    "not_an_option",
]
ENGINES = ["null", "psync", "libaio", "falloc", "ftruncate", "filedelete", "exec", "sg", 7]

text = st.one_of(st.sampled_from(HOSTILE), st.text(max_size=12))
scalar = st.one_of(text, st.sampled_from(NUMBERS), st.sampled_from(SIZES))
value = st.one_of(scalar, st.lists(scalar, max_size=3))


def target_entry(root: Path) -> st.SearchStrategy[Any]:
    paths = st.sampled_from(
        [
            "new.dat",
            str(root / "new2.dat"),
            "victim.txt",
            "victim:two",
            "dir",
            "dir/victim.dat",
            "/dev/null",
            "missing/dir/x.dat",
            "a:b.dat",
            "n\nl.dat",
            "semi;x.dat",
        ]
    )
    kinds = st.sampled_from(["file", "file", "directory", "device", "rbd", "bogus"])
    return st.one_of(
        st.builds(lambda k, p: {k: p}, kinds, st.one_of(paths, text)),
        st.builds(lambda k, p, n: {k: p, "name": n}, kinds, paths, text),
        scalar,
    )


def workload(small: bool) -> st.SearchStrategy[dict[str, Any]]:
    nums = st.sampled_from([0, 1]) if small else st.sampled_from(NUMBERS)
    fixed: dict[str, Any] = {
        "name": st.one_of(text, st.sampled_from(["w", "r"])),
        "rw": st.one_of(st.sampled_from(RW), text, st.lists(st.sampled_from(RW), max_size=3)),
        "bs": st.one_of(st.sampled_from(["4k", "64k"]), value),
        "size": st.sampled_from(["64k", "1m", "2m"])
        if small
        else st.one_of(st.sampled_from(SIZES), value),
        "runtime": nums,
        "iodepth": st.sampled_from([1, 2, [1, 2]]) if small else value,
        "numjobs": st.sampled_from([1, 2]) if small else value,
        "ioengine": st.sampled_from(ENGINES),
    }
    extra = st.dictionaries(st.sampled_from(OPTIONS), value, max_size=2)
    return st.builds(
        lambda keys, more, **vals: {**{k: v for k, v in vals.items() if k in keys}, **more},
        st.sets(st.sampled_from(sorted(fixed)), max_size=len(fixed)),
        extra,
        **fixed,
    )


def plan_doc(root: Path, small: bool) -> st.SearchStrategy[Any]:
    doc = st.fixed_dictionaries(
        {"targets": st.lists(target_entry(root), min_size=0, max_size=2)},
        optional={
            "name": text,
            "description": text,
            "workloads": st.lists(workload(small), max_size=2),
            "repeat": st.sampled_from([1, 2]) if small else st.sampled_from(NUMBERS),
            "global": st.dictionaries(st.sampled_from(OPTIONS), value, max_size=2),
            "hosts": st.lists(
                st.fixed_dictionaries({"address": st.one_of(st.just("local"), text)}),
                max_size=1,
            ),
            "bogus": text,
        },
    )
    return st.one_of(doc, scalar, st.lists(scalar, max_size=2))


def plan_text(doc: Any, raw: str | None) -> str:
    """JSON is YAML: the generated document, or (sometimes) raw text."""
    if raw is not None:
        return raw
    return json.dumps(doc, allow_nan=True)


# ------------------------------------------------------------------ plans


@pytest.mark.skipif(not HAVE_FIO, reason="fio is not installed")
@examples(120)
@given(data=st.data())
def test_fuzz_plans_check_show_and_dry_run(
    data: st.DataObject, capsys: pytest.CaptureFixture[str]
) -> None:
    with sandbox() as root:
        doc = data.draw(st.one_of(plan_doc(root, small=False), runnable_plan(root)))
        raw = data.draw(st.one_of(st.none(), st.text(max_size=40), st.just("[" * 5000)))
        Path(root / "plan.yaml").write_text(plan_text(doc, raw))
        before = snapshot(root)
        for args in (["plan", "check"], ["plan", "show"], ["run", "--dry-run"]):
            code, _, err = invoke([*args, "plan.yaml"], capsys)
            assert code in (0, 2), (args, code, err)
            if code == 2:
                assert "storbench: error:" in err or "Usage" in err or "Error" in err, err
        assert_nothing_else_written(root, before)


@st.composite
def runnable_plan(draw: st.DrawFn, root: Path) -> dict[str, Any]:
    """A plan that is right -- one target in the sandbox, one small workload -- with (a third
    of the time) one hostile thing in it: a target, a name, a value or an extra option. One
    at a time, so that enough plans really run and each refusal has one cause."""
    good = {"file": "new.dat"} if draw(st.booleans()) else {"directory": "dir"}
    workload: dict[str, Any] = {
        "name": "w",
        "rw": draw(st.sampled_from(RW[:-1])),
        "bs": draw(st.sampled_from(["4k", "64k"])),
        "size": draw(st.sampled_from(["64k", "1m", "2m"])),
        "ioengine": draw(st.sampled_from(["psync", "null", "psync", "falloc", "ftruncate"])),
    }
    for key, choices in (
        ("iodepth", [1, 2, [1, 2]]),
        ("runtime", [1, 0, "1s"]),
        ("offset", ["0", "512k", "1m"]),
        ("unlink", [0, 1]),
    ):
        if draw(st.booleans()):
            workload[key] = draw(st.sampled_from(choices))
    plan: dict[str, Any] = {"targets": [good], "workloads": [workload]}
    if draw(st.booleans()):
        plan["repeat"] = draw(st.sampled_from([1, 2]))
    hostile = draw(st.sampled_from(["none", "none", "target", "name", "plan-name", "option"]))
    if hostile == "target":
        plan["targets"] = [
            draw(
                st.sampled_from(
                    [
                        {"file": "victim.txt"},
                        {"file": "a:b.dat"},
                        {"file": "victim:two"},
                        {"file": str(root / "dir" / "victim.dat")},
                        {"device": str(root / "victim.txt")},
                    ]
                )
            )
        ]
    elif hostile == "name":
        workload["name"] = draw(text)
    elif hostile == "plan-name":
        plan["name"] = draw(text)
    elif hostile == "option":
        workload[draw(st.sampled_from(OPTIONS[:4]))] = draw(value)
    return plan


@pytest.mark.skipif(not HAVE_FIO, reason="fio is not installed")
@pytest.mark.integration
def test_fuzz_plans_run_for_real(capsys: pytest.CaptureFixture[str]) -> None:
    """Generated plans run with real fio: whatever they say, the victims stay as they were,
    nothing is left behind, and a refusal or a failed point is a message. Enough of them
    really run for the test to mean something."""
    codes: list[int] = []

    @examples(60)
    @given(doc=st.data())
    def one(doc: st.DataObject) -> None:
        with sandbox() as root:
            plan = doc.draw(runnable_plan(root))
            Path(root / "plan.yaml").write_text(plan_text(plan, None))
            before = snapshot(root)
            code, out, err = invoke(["run", "plan.yaml"], capsys)
            codes.append(code)
            assert code in (0, 1, 2), (code, out, err)
            if code == 1:
                assert "point(s) failed" in err, err
            assert_nothing_else_written(root, before)
            assert list((root / "tmp").iterdir()) == [], "the work directory stays"

    one()
    assert codes.count(0) >= len(codes) // 4, f"too few plans ran: {sorted(codes)}"


# ------------------------------------------------------------------ command lines

WORDS = [
    "latest",
    "latest~1",
    "latest~99999",
    "1",
    "0",
    "-1",
    "99999999999999999999",
    "1:rw=randread",
    "1:bogus",
    "1:target=",
    ":",
    "quick",
    "plan.yaml",
    "victim.txt",
    "out.html",
    "out.md",
    "out.png",
    "out.svg",
    "--format",
    "json",
    "csv",
    "markdown",
    "html",
    "table",
    "--kind",
    "compare",
    "iops-vs-iodepth",
    "--point",
    "--limit",
    "-o",
    "--db",
    "--set",
    "runtime=-1",
    "x=[",
    "--target",
    "/dev/null",
    "--dry-run",
    "--name",
    "--help",
]
COMMANDS = [
    ["runs"],
    ["show"],
    ["export"],
    ["report"],
    ["compare"],
    ["chart"],
    ["import"],
    ["cleanup"],
    ["plan", "check"],
    ["plan", "show"],
    ["suites"],
    ["run", "--dry-run"],
    ["resume"],
    ["bogus"],
]


@pytest.mark.skipif(not HAVE_FIO, reason="fio is not installed")
@examples(150)
@given(
    command=st.sampled_from(COMMANDS),
    words=st.lists(st.one_of(st.sampled_from(WORDS), st.sampled_from(HOSTILE)), max_size=5),
)
def test_fuzz_command_lines(
    command: list[str], words: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    if command == ["resume"] and "--dry-run" not in words:
        words = [w for w in words if w not in ("latest", "1", "latest~1")]  # no real runs
    with sandbox() as root:
        shutil.copy(DATA / "psync-randread-json.json", root / "a.json")
        code, _, err = invoke(["import", "a.json"], capsys)
        assert code == 0, err
        (root / "plan.yaml").write_text("workloads: [{name: w, rw: read, size: 64k}]\n")
        before = snapshot(root)
        args = [*command, *words]
        code, _, err = invoke(args, capsys)
        assert code in ((0, 1, 2) if command[0] == "cleanup" else (0, 2)), (args, code, err)
        assert_nothing_else_written(root, before)


# ------------------------------------------------------------------ fio JSON documents

RECORDED = sorted(p for p in DATA.glob("*.json"))
BAD: list[Any] = [None, "x", "", -5, -1.5, math.nan, math.inf, -math.inf, 1e308, [], {}, True]
BAD += [[{}], {"a": 1}, "NaN", 10**30]


def paths(doc: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield prefix
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from paths(v, (*prefix, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc[:3]):
            yield from paths(v, (*prefix, i))


def mutate(doc: Any, path: tuple[Any, ...], new: Any, delete: bool) -> Any:
    if not path:
        return new
    parent = doc
    for k in path[:-1]:
        parent = parent[k]
    if delete and isinstance(parent, dict):
        del parent[path[-1]]
    else:
        parent[path[-1]] = new
    return doc


@examples(200)
@given(data=st.data())
def test_fuzz_fio_json_import(data: st.DataObject, capsys: pytest.CaptureFixture[str]) -> None:
    """Crafted (invalid) documents derived from recorded real outputs: imported right, or
    refused with one message (exit 2) and nothing stored."""
    src = data.draw(st.sampled_from(RECORDED))
    text = src.read_text()
    start = text.find("{")
    doc = json.loads(text[start:].split("\n}\n")[0] + "\n}")
    candidates = list(paths(doc))
    for _ in range(data.draw(st.integers(1, 3))):
        where = data.draw(st.sampled_from(candidates))
        new = copy.deepcopy(data.draw(st.one_of(st.sampled_from(BAD), scalar)))
        delete = data.draw(st.booleans())
        try:
            doc = mutate(doc, where, new, delete)
        except (KeyError, IndexError, TypeError):
            continue
        candidates = list(paths(doc))
    body = json.dumps(doc, allow_nan=True)
    if data.draw(st.booleans()):
        body = body[: data.draw(st.integers(0, len(body)))]  # cut short
    with sandbox() as root:
        (root / "x.json").write_text(text[:start] + body)
        code, out, err = invoke(["import", "x.json"], capsys)
        assert code in (0, 2), (code, out, err)
        if code == 2:
            assert err.count("x.json") <= 2 and "x.json: x.json" not in err, err
            return
        code, out, err = invoke(["export", "latest", "--format", "json"], capsys)
        assert code == 0, err
        for m in json.loads(out)["measurements"]:
            for ddir in ("read", "write", "trim"):
                d = m.get(ddir) or {}
                for key in ("iops", "bw_bytes", "io_bytes", "runtime_s"):
                    if d.get(key) is not None:
                        assert math.isfinite(d[key]) and d[key] >= 0, (ddir, key, d[key])


def test_fuzz_invoke_sees_a_traceback_as_an_exception(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The harness itself: an exception inside a command escapes ``invoke``."""

    def boom(*_: Any, **__: Any) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(plans, "suite_names", boom)
    with sandbox(), pytest.raises(RuntimeError):
        invoke(["suites"], capsys)
