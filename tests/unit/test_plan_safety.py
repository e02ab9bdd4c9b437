"""Plan safety at load time (issue 17, points 4-6): nothing a plan says may change what fio
reads from its job file (injection), run commands, write files storbench cannot vouch for,
run forever, or make storbench itself expand without bound.

fio's job-file syntax (fio 3.33, init.c/parse.c/options.c): a line ends at a newline, and at
the first `;` or `#` in it; lines are read in 8191-byte pieces; `${VAR}` is replaced by the
environment; `:` separates file names in filename= and directory= (`\\:` escapes one).
"""

from __future__ import annotations

import dataclasses
import os
import time
from pathlib import Path

import pytest

from storbench.engines import fio
from storbench.model.errors import PlanError
from storbench.plan import (
    Point,
    PointHost,
    Target,
    parse_plan,
    parse_target_arg,
)

MAX_POINTS = 100_000  # the documented default of --max-points


def plan(body: str, *, head: str = "targets: [file: /tmp/sb-safety.dat]\n") -> str:
    """A plan with one workload whose option lines are ``body`` (indented for you); the
    options start on line 5."""
    lines = "".join(f"    {ln}\n" for ln in body.strip("\n").splitlines())
    return f"{head}workloads:\n  - name: w\n    size: 1m\n{lines}"


def plan_error(text: str, **kw: object) -> PlanError:
    with pytest.raises(PlanError) as ei:
        parse_plan(text, "p.yaml", **kw)  # type: ignore[arg-type]
    assert ei.value.fix, ei.value
    return ei.value


# ---------------------------------------------------------------------------- injection


def test_plan_injection_newline_in_an_option_value_is_refused() -> None:
    # the value: fio read the second line as an option of its own and overwrote
    # /tmp/x/victim, a file storbench did not create
    e = plan_error(plan('rw: write\nbuffer_pattern: "0xdeadbeef\\nfilename=/tmp/x/victim"'))
    assert (e.file, e.line) == ("p.yaml", 6)
    assert "`buffer_pattern`" in e.message
    assert "newline" in e.message


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ('"a\\rfilename=/tmp/v"', "carriage return"),
        ('"a\\0b"', "NUL"),
        ('"a\\x1bb"', "U+001B"),
        ('"a\\u2028filename=/tmp/v"', "U+2028"),
        ('"0xdead;filename=/tmp/v"', "`;`"),
        ('"0xdead #1"', "`#`"),
        ('"${HOME}"', "${"),
        ('"' + "a" * 8200 + '"', "longer than"),
    ],
)
def test_plan_injection_job_file_syntax_in_a_value_is_refused(value: str, says: str) -> None:
    e = plan_error(plan(f"buffer_pattern: {value}"))
    assert e.line == 5
    assert says in e.message


def test_plan_injection_in_an_axis_value_points_at_the_item() -> None:
    e = plan_error(plan('verify_pattern:\n  - "0xff"\n  - "0xaa\\nfilename=/tmp/v"'))
    assert e.line == 7
    assert "newline" in e.message


def test_plan_injection_through_set_is_refused() -> None:
    arg = 'buffer_pattern="0xdeadbeef\\nfilename=/tmp/x/victim"'
    e = plan_error(plan("rw: write"), sets=[arg])
    assert e.file == f"--set {arg}"
    assert "newline" in e.message


HOSTS = "targets: [file: /tmp/a.dat]\nhosts: [{}]\n"


@pytest.mark.parametrize(
    ("text", "line", "says"),
    [
        ('name: "a\\nb"\n' + plan(""), 1, "`name`"),
        ('description: "a\\x07b"\n' + plan(""), 1, "`description`"),
        (plan("", head='targets: [{file: /tmp/a.dat, name: "x\\ny"}]\n'), 1, "target `name`"),
        (plan("").replace("name: w", 'name: "w\\nfilename=/tmp/v"'), 3, "workload `name`"),
        (plan("", head=HOSTS.format('{address: local, name: "h\\nx"}')), 2, "host `name`"),
        (
            plan("", head=HOSTS.format('{address: "10.0.0.1\\nfilename=/tmp/v"}')),
            2,
            "host address",
        ),
    ],
)
def test_plan_injection_control_characters_in_names(text: str, line: int, says: str) -> None:
    e = plan_error(text)
    assert e.line == line
    assert says in e.message
    assert "control character" in e.message


def test_plan_injection_description_may_have_several_lines() -> None:
    p = parse_plan('description: "one\\ntwo\\tthree"\n' + plan(""), "p.yaml")
    assert p.description == "one\ntwo\tthree"


@pytest.mark.parametrize(
    ("path", "says"),
    [
        ('"/tmp/a\\nfilename=/tmp/v"', "newline"),
        ('"/tmp/a;b"', "`;`"),
        ('"/tmp/a#b"', "`#`"),
        ('"/tmp/${HOME}"', "${"),
        ('"/tmp/$pagesize"', "`$`"),
    ],
)
@pytest.mark.parametrize("kind", ["file", "directory", "device"])
def test_plan_injection_in_a_target_path_is_refused(kind: str, path: str, says: str) -> None:
    e = plan_error(plan("", head=f"targets:\n  - {kind}: {path}\n"))
    assert e.line == 2
    assert says in e.message


def test_plan_injection_in_a_ceph_target_is_refused() -> None:
    e = plan_error(plan("", head='targets:\n  - rados: bench\n    conf: "/etc/ceph/c;x"\n'))
    assert e.line == 3
    assert "`;`" in e.message
    e = plan_error(plan("", head='targets:\n  - rbd: "bench/im#g"\n'))
    assert e.line == 2


@pytest.mark.parametrize(
    "arg",
    [
        "file:/tmp/a\nfilename=/tmp/v",
        "/tmp/a\nfilename=/tmp/v",
        "directory:/tmp/a;b",
        "device:/dev/sd${X}",
        "file:/tmp/$ncpus",
        "rados:bench;x",
    ],
)
def test_plan_injection_in_a_target_argument_is_refused(arg: str) -> None:
    with pytest.raises(PlanError) as ei:
        parse_target_arg(arg)
    assert ei.value.message.startswith("--target ")
    assert ei.value.fix


def test_plan_device_paths_must_be_absolute() -> None:
    # fio runs in a temporary directory: a relative device path would name another file
    e = plan_error(plan("", head="targets:\n  - device: sdb\n"))
    assert e.line == 2
    assert "absolute" in e.message
    assert parse_target_arg("device:sdb").path == os.path.abspath("sdb")


def test_plan_injection_colon_in_a_path_is_escaped_in_the_job_file(tmp_path: Path) -> None:
    # fio splits filename= and directory= at `:`; `\:` keeps one name (checked with real
    # fio in tests/integration/test_plan_injection.py)
    dev = "/dev/disk/by-path/pci-0000:00:1f.2-ata-1"
    text = plan(
        "",
        head=f"targets:\n  - file: {tmp_path}/a:b.dat\n  - device: {dev}\n"
        f"  - directory: {tmp_path}/d:x\n",
    )
    jobs = [fio.job_file(pt) for pt in parse_plan(text, "p.yaml").expand()]
    assert f"filename={tmp_path}/a\\:b.dat\n" in jobs[0]
    assert "filename=/dev/disk/by-path/pci-0000\\:00\\:1f.2-ata-1\n" in jobs[1]
    assert f"directory={tmp_path}/d\\:x\n" in jobs[2]


# ---------------------------------------------------------------------------- job file


def _point(**params: object) -> Point:
    return Point(
        index=0,
        key="k",
        repetition=0,
        target=Target("file", "/tmp/sb-safety.dat"),
        workload="w",
        params={"rw": "read", "size": "1m", **params},
        axes={},
    )


@pytest.mark.parametrize(
    "value", ["0xdeadbeef\nfilename=/tmp/v", "a\rb", "a;b", "a#b", "${HOME}", "x" * 9000]
)
def test_job_file_never_holds_a_line_a_value_could_break(value: str) -> None:
    # the last line of defence: a point that did not come through the loader (a stored
    # point, a caller's own) still never reaches a job file
    with pytest.raises(PlanError) as ei:
        fio.job_file(_point(buffer_pattern=value))
    assert "buffer_pattern" in ei.value.message
    with pytest.raises(PlanError):
        fio.job_file(dataclasses.replace(_point(), target=Target("file", "/tmp/a\nb")))


def test_job_file_refuses_an_option_name_that_is_not_one() -> None:
    with pytest.raises(PlanError):
        fio.job_file(_point(**{"rw=read\nfilename": "/tmp/v"}))


def test_job_file_refuses_a_host_label_that_breaks_its_comment_line() -> None:
    pt = _point()
    for label in ("h\nfilename=/tmp/v", "h" * 9000):
        pt.hosts = [PointHost(label, "127.0.0.1", 8765, Target("file", "/tmp/sb.dat"))]
        with pytest.raises(PlanError):
            fio.job_file(pt)


# ---------------------------------------------------------------------------- commands, files


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ("exec_prerun: touch /tmp/x", "runs a command"),
        ("exec_postrun: rm -rf /tmp/x", "runs a command"),
        ("ioengine: exec", "runs a command"),
        ("ioengine: [psync, exec]", "runs a command"),
        ("read_iolog: /tmp/trace.log", "replays"),
        ("replay_redirect: /dev/sdb", "replays"),
        ("merge_blktrace_file: /tmp/m.bin", "replays"),
        ("profile: act", "profile"),
        ("allow_mounted_write: 1", "mounted"),
        ("allow_mounted_write:", "mounted"),  # bare: fio sets a flag written alone
    ],
)
def test_plan_options_that_run_commands_or_bypass_targets_are_refused(body: str, says: str) -> None:
    e = plan_error(plan(body))
    assert e.line == 5
    assert says in e.message


def test_plan_options_refused_in_global_and_through_set() -> None:
    e = plan_error("global:\n  exec_postrun: reboot\n" + plan(""))
    assert e.line == 2
    e = plan_error(plan(""), sets=["exec_prerun=reboot"])
    assert e.file == "--set exec_prerun=reboot"


@pytest.mark.parametrize(
    ("body", "says", "fix"),
    [
        ("write_iolog: trace.log", "absolute", "/"),
        ("write_bw_log:", "absolute", "write_bw_log: /"),
        ("write_lat_log: logs/w", "absolute", "/"),
        ("write_iops_log: /tmp/$pagesize", "`$`", ""),
        ('write_hist_log: "/tmp/a\\nfilename=/tmp/v"', "newline", ""),
        ("mem: mmap:buffers", "absolute", "/"),
        ('iomem: "mmapshared:"', "absolute", "/"),
        ("donorname: /tmp/donor", "file name", "donorname:"),
    ],
)
def test_plan_options_that_write_files_need_a_clean_absolute_path(
    body: str, says: str, fix: str
) -> None:
    e = plan_error(plan(body))
    assert e.line == 5
    assert says in e.message
    assert fix in (e.fix or "")


def test_plan_options_that_write_files_are_accepted_with_an_absolute_path(
    tmp_path: Path,
) -> None:
    body = f"write_iolog: {tmp_path}/t.log\nwrite_bw_log: {tmp_path}/w\nmem: mmap:{tmp_path}/m"
    (pt,) = parse_plan(plan(body), "p.yaml").expand()
    assert pt.params["write_bw_log"] == f"{tmp_path}/w"
    assert parse_plan(plan("mem: mmap"), "p.yaml")  # anonymous memory: no file


def test_plan_options_that_write_files_are_refused_with_hosts() -> None:
    head = "targets: [directory: /tmp]\nhosts: [{address: local}]\n"
    e = plan_error(plan("write_iolog: /tmp/t.log", head=head))
    assert e.line == 6
    assert "hosts" in e.message


@pytest.mark.parametrize(
    "body",
    [
        "ioengine: falloc",
        "ioengine: ftruncate",
        "ioengine: filecreate",
        "ioengine: filedelete",
        "ioengine: e4defrag\ndonorname: donor",
        "unlink: 1",
        "unlink:",
        "unlink_each_loop: true",
    ],
)
def test_plan_engines_and_options_that_modify_files_count_as_writing(body: str) -> None:
    (pt,) = parse_plan(plan("rw: randread\n" + body), "p.yaml").expand()
    assert pt.writes


def test_plan_reads_stay_reads() -> None:
    for body in ("ioengine: psync", "unlink: 0", "ioengine: filestat", ""):
        (pt,) = parse_plan(plan("rw: randread\n" + body), "p.yaml").expand()
        assert not pt.writes, body


# ---------------------------------------------------------------------------- values (point 5)


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ("runtime: -1", "`runtime` must be 0 or more"),
        ("ramp_time: -5", "`ramp_time` must be 0 or more"),
        ("startdelay: -1", "`startdelay` must be 0 or more"),
        ("runtime: .inf", "`runtime` must be"),
        ("runtime: .nan", "`runtime` must be"),
        ("bs: -4096", "`bs` must be more than 0"),
        ("bs: 0", "`bs` must be more than 0"),
        ("io_size: -1", "`io_size` must be more than 0"),
        ("filesize: 99999999999999999999999", "`filesize` is larger"),
        ("numjobs: 100000", "`numjobs` must be 1 to 4088"),
        ("iodepth: 10000000", "`iodepth` must be 1 to 65536"),
        ("nrfiles: 99999999999999", "`nrfiles` must be"),
        ("nr_files: 0", "`nr_files` must be 1 or more"),
        ("timeout: -1", "`timeout` must be 0 or more"),  # fio's alias of runtime
        ("blockalign: 0", "`blockalign` must be more than 0"),
        ("thinktime: -1", "`thinktime` must be 0 or more"),
        ('rate_iops: "-5"', "`rate_iops` must be 0 or more"),
    ],
)
def test_plan_values_out_of_range_are_refused(body: str, says: str) -> None:
    e = plan_error(plan(body))
    assert e.line == 5
    assert says in e.message


def test_plan_negative_nice_is_fine() -> None:
    (pt,) = parse_plan(plan("nice: -5"), "p.yaml").expand()
    assert pt.params["nice"] == -5


@pytest.mark.parametrize("size", ["0", "-1", "0.1"])
def test_plan_size_zero_or_negative_is_refused(size: str) -> None:
    e = plan_error(plan("").replace("size: 1m", f"size: {size}"))
    assert e.line == 4
    assert "`size` must be more than 0" in e.message
    assert "omit" in (e.fix or "")


def test_plan_runtime_minus_one_through_set_is_refused() -> None:
    e = plan_error(plan("runtime: 10"), sets=["runtime=-1"])
    assert e.file == "--set runtime=-1"
    assert "0 or more" in e.message
    assert "--set runtime=" in (e.fix or "")


def test_plan_runtime_zero_has_no_planned_duration() -> None:
    # runtime=0 is fio's "no time limit": the point runs until size is done
    (pt,) = parse_plan(plan("runtime: 0"), "p.yaml").expand()
    assert pt.est_seconds is None


@pytest.mark.parametrize(
    ("body", "line", "says"),
    [
        ("bs: 2m", 5, "`bs` 2m is larger than `size` 1m"),
        ("bs: [4k, 2m]", 5, "`bs` 2m is larger than `size` 1m"),
        ("blocksize: 4m", 5, "`blocksize` 4m is larger than `size` 1m"),
        ("bs: 64k\nfilesize: 16k", 5, "larger than `filesize` 16k"),
    ],
)
def test_plan_block_size_larger_than_size_is_refused(body: str, line: int, says: str) -> None:
    e = plan_error(plan(body))
    assert e.line == line
    assert says in e.message


def test_plan_block_size_against_each_size_of_an_axis() -> None:
    text = plan("bs: [4k, 64k]").replace("size: 1m", "size: [1m, 32k]")
    e = plan_error(text)
    assert "`bs` 64k is larger than `size` 32k" in e.message
    assert parse_plan(plan("bs: [4k, 64k]"), "p.yaml")  # every pair fits
    assert parse_plan(plan("bs: 4k,64k"), "p.yaml")  # compound values: fio's business


def test_plan_block_size_against_the_files_of_a_directory(tmp_path: Path) -> None:
    head = f"targets: [directory: {tmp_path}]\n"
    e = plan_error(plan("bs: 4k\nnrfiles: 1024", head=head))
    assert "1024 files" in e.message
    assert parse_plan(plan("bs: 4k\nnrfiles: 1024", head="targets: [file: /tmp/a]\n"), "p")


def test_plan_file_target_that_is_a_directory(tmp_path: Path) -> None:
    e = plan_error(plan("", head=f"targets:\n  - file: {tmp_path}\n"))
    assert e.line == 2
    assert "is a directory" in e.message
    assert "directory:" in (e.fix or "")
    e = plan_error(plan(""), targets=[f"file:{tmp_path}"])
    assert e.message.startswith(f"--target file:{tmp_path}: ")


def test_plan_device_target_that_is_not_a_block_device(tmp_path: Path) -> None:
    f = tmp_path / "disk.img"
    f.write_bytes(b"")
    for path in (str(f), "/dev/null"):
        e = plan_error(plan("", head=f"targets:\n  - device: {path}\n"))
        assert e.line == 2
        assert "not a block device" in e.message
    e = plan_error(plan(""), targets=[f"device:{f}"])
    assert "not a block device" in e.message
    # missing: preflight says so (it may appear before the run)
    assert parse_plan(plan("", head="targets:\n  - device: /dev/sdzz-none\n"), "p.yaml")


def test_plan_directory_target_that_is_a_file(tmp_path: Path) -> None:
    f = tmp_path / "f"
    f.write_bytes(b"x")
    e = plan_error(plan("", head=f"targets:\n  - directory: {f}\n"))
    assert "not a directory" in e.message


def test_plan_remote_targets_are_not_looked_at_here(tmp_path: Path) -> None:
    # a remote host's /tmp is not this machine's: nothing to refuse from here
    head = f"targets: [file: {tmp_path}]\nhosts: [{{address: 10.0.0.1}}]\n"
    assert parse_plan(plan("", head=head), "p.yaml")
    head = f"targets: [file: {tmp_path}]\nhosts: [{{address: local}}]\n"
    assert "is a directory" in plan_error(plan("", head=head)).message


def test_plan_rados_bench_clients_have_a_bound() -> None:
    text = (
        "targets: [rados: bench]\nworkloads:\n  - engine: rados-bench\n    mode: write\n"
        "    runtime: 1\n    clients: 100000\n"
    )
    e = plan_error(text)
    assert e.line == 6
    assert "`clients` must be 1 to 1024" in e.message


def test_plan_rbd_image_size_must_be_positive() -> None:
    e = plan_error(plan("", head="targets:\n  - rbd: bench/img\n    size: 0\n"))
    assert e.line == 3
    assert "more than 0" in e.message


# ---------------------------------------------------------------------------- size (point 6)


def test_plan_huge_repeat_is_refused_before_expanding() -> None:
    t = time.monotonic()
    e = plan_error(plan("") + "repeat: 1000000000\n")
    assert time.monotonic() - t < 5
    assert "1,000,000,000 points" in e.message
    assert f"{MAX_POINTS:,}" in e.message
    assert "--max-points" in (e.fix or "")
    assert e.line == 5  # repeat


def test_plan_huge_matrix_is_refused_before_expanding() -> None:
    axis = "[" + ", ".join(str(i) for i in range(1, 1001)) + "]"
    t = time.monotonic()
    e = plan_error(plan(f"iodepth: {axis}\nthinktime: {axis}"))
    assert time.monotonic() - t < 10
    assert "1,000,000 points" in e.message
    assert e.line == 3  # the workload


def test_plan_point_limit_can_be_raised() -> None:
    text = plan("") + "repeat: 20\n"
    plan_error(text, max_points=10)
    assert len(parse_plan(text, "p.yaml", max_points=20).expand()) == 20


def test_plan_point_limit_comes_before_rados_bench_expansion() -> None:
    text = (
        "targets: [rados: bench]\nworkloads:\n  - engine: rados-bench\n    mode: [write, seq]\n"
        "    runtime: 1\nrepeat: 1000000000\n"
    )
    t = time.monotonic()
    e = plan_error(text)
    assert time.monotonic() - t < 5
    assert "points" in e.message


def test_plan_deeply_nested_yaml_is_an_error_not_a_traceback() -> None:
    t = time.monotonic()
    e = plan_error("name: " + "[" * 100000)
    assert "nested" in e.message
    assert time.monotonic() - t < 5
    e = plan_error(plan(""), sets=["bs=" + "[" * 100000])
    assert "nested" in e.message


def _bomb(levels: int = 9) -> str:
    parts = ["&a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    parts += [f"&a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, levels)]
    return "[" + ", ".join(parts) + "]"


@pytest.mark.parametrize(
    "text",
    [
        plan("") + f"report: {_bomb()}\n",
        plan("", head=f"targets: [{{file: /tmp/a, name: {_bomb()}}}]\n"),
        plan("") + f"description: {_bomb()}\n",
    ],
)
def test_plan_yaml_alias_bomb_is_refused_quickly(text: str) -> None:
    t = time.monotonic()
    e = plan_error(text)
    assert time.monotonic() - t < 5
    assert "alias" in e.message


def test_plan_yaml_alias_bomb_through_set_is_refused_quickly() -> None:
    t = time.monotonic()
    plan_error(plan(""), sets=[f"report={_bomb()}"])
    assert time.monotonic() - t < 5


@pytest.mark.parametrize(
    "text",
    [
        plan("") + "[[a]]: 1\n",  # ruamel: TypeError, unhashable
        plan("") + "? [{a: 1}]\n: 1\n",
        plan("") + "x: {[[a]]: 1}\n",
    ],
)
def test_plan_yaml_list_in_a_key_is_an_error_not_a_traceback(text: str) -> None:
    e = plan_error(text)
    assert "key" in e.message


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("2001-02-30", "day is out of range"),
        ("!!int abc", "invalid literal"),
        ("!!float abc", "could not convert"),
        ("1" + "0" * 5000, "digits"),
    ],
)
def test_plan_yaml_values_yaml_cannot_construct_are_an_error(value: str, says: str) -> None:
    e = plan_error(f"name: {value}\n" + plan(""))
    assert "malformed YAML" in e.message
    assert says in e.message
