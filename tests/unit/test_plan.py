"""Plans: parsing (parse_plan / load_plan), --set and --target, expansion into points."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from storbench.model.errors import NotFoundError, PlanError, UserError
from storbench.plan import (
    Plan,
    Target,
    load_plan,
    parse_plan,
    parse_target_arg,
    suite_names,
    suite_text,
)

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


def one_workload(body: str, *, head: str = "targets: [file: /tmp/sb-test.dat]\n") -> str:
    """A plan with one workload whose option lines are ``body`` (indented for you)."""
    lines = "".join(f"    {ln}\n" for ln in body.strip("\n").splitlines())
    return f"{head}workloads:\n  - name: w\n{lines}"


def plan_error(text: str, **kw: object) -> PlanError:
    with pytest.raises(PlanError) as ei:
        parse_plan(text, "p.yaml", **kw)  # type: ignore[arg-type]
    return ei.value


# ---------------------------------------------------------------------------- the example


def test_example_shape_is_accepted_as_written() -> None:
    p = parse_plan(EXAMPLE, "ex.yaml")
    assert isinstance(p, Plan)
    assert p.name == "nvme-vs-sata"
    assert p.repeat == 3
    assert p.targets == [
        Target("file", "/mnt/nvme/storbench.dat"),
        Target("device", "/dev/sdb"),
    ]
    (wl,) = p.workloads
    assert wl.name == "rand4k"
    assert wl.options == {
        "rw": ["randread", "randwrite"],
        "bs": "4k",
        "iodepth": [1, 32],
        "size": "10g",
        "runtime": 60,
        "ramp_time": 10,
        "direct": 1,
    }
    assert wl.line == 6


def test_example_expands_to_2_targets_x_4_points_x_3_repetitions() -> None:
    points = parse_plan(EXAMPLE, "ex.yaml").expand()
    assert len(points) == 24
    assert [pt.index for pt in points] == list(range(24))
    assert [pt.repetition for pt in points] == [0] * 8 + [1] * 8 + [2] * 8
    # rounds: the whole matrix (both targets), then again
    kinds = [pt.target.kind for pt in points[:8]]
    assert kinds == ["file"] * 4 + ["device"] * 4
    for pt in points:
        assert pt.workload == "rand4k"
        assert pt.params["bs"] == "4k"
        assert pt.params["size"] == "10g"
        assert pt.params["direct"] == 1
        assert pt.est_seconds == 70
        assert pt.writes == (pt.params["rw"] == "randwrite")


def test_axis_order_follows_the_workload_keys() -> None:
    points = parse_plan(EXAMPLE, "ex.yaml").expand()
    combos = [(pt.params["rw"], pt.params["iodepth"]) for pt in points[:4]]
    assert combos == [("randread", 1), ("randread", 32), ("randwrite", 1), ("randwrite", 32)]
    assert list(points[0].axes) == ["rw", "iodepth"]
    assert points[0].label() == "rand4k rw=randread iodepth=1"
    # listing iodepth first makes it the outer axis
    text = one_workload("iodepth: [1, 32]\nrw: [randread, randwrite]\nsize: 1g")
    swapped = parse_plan(text, "p.yaml").expand()
    assert [(pt.params["iodepth"], pt.params["rw"]) for pt in swapped] == [
        (1, "randread"),
        (1, "randwrite"),
        (32, "randread"),
        (32, "randwrite"),
    ]


def test_repetitions_get_distinct_randseeds() -> None:
    points = parse_plan(EXAMPLE, "ex.yaml").expand()
    seeds = {
        rep: {pt.extra["randseed"] for pt in points if pt.repetition == rep} for rep in range(3)
    }
    assert all(len(s) == 1 for s in seeds.values())  # one seed per round
    assert len({next(iter(s)) for s in seeds.values()}) == 3  # distinct across rounds
    assert all("randseed" not in pt.params for pt in points)


def test_no_randseed_without_repeat_or_when_the_plan_sets_one() -> None:
    once = parse_plan(EXAMPLE.replace("repeat: 3", "repeat: 1"), "ex.yaml").expand()
    assert all(pt.extra == {} for pt in once)
    seeded = parse_plan(EXAMPLE.replace("    direct: 1", "    randseed: 7"), "ex.yaml").expand()
    assert all("randseed" not in pt.extra and pt.params["randseed"] == 7 for pt in seeded)


def test_point_keys_equal_across_repetitions_and_differ_across_params() -> None:
    points = parse_plan(EXAMPLE, "ex.yaml").expand()
    per_rep = [[pt.key for pt in points if pt.repetition == rep] for rep in range(3)]
    assert per_rep[0] == per_rep[1] == per_rep[2]
    assert len(set(per_rep[0])) == 8  # 4 param combinations x 2 targets
    # a scalar change changes every key
    other = parse_plan(EXAMPLE.replace("bs: 4k", "bs: 8k"), "ex.yaml").expand()
    assert not {pt.key for pt in other} & set(per_rep[0])
    # and the key is stable across parses
    assert [pt.key for pt in parse_plan(EXAMPLE, "ex.yaml").expand()] == [pt.key for pt in points]


def test_point_round_trips_through_dict() -> None:
    from storbench.plan import Point

    for pt in parse_plan(EXAMPLE, "ex.yaml").expand()[:5]:
        assert Point.from_dict(pt.to_dict()) == pt


# ---------------------------------------------------------------------------- options


def test_global_options_merge_and_workload_options_override() -> None:
    text = """\
targets: [file: /tmp/sb.dat]
global:
  ioengine: libaio
  direct: 1
  size: 1g
  runtime: 30
workloads:
  - name: a
    rw: read
    runtime: 5
  - name: b
    rw: write
    direct: 0
"""
    p = parse_plan(text, "p.yaml")
    a, b = p.workloads
    assert a.options == {
        "ioengine": "libaio",
        "direct": 1,
        "size": "1g",
        "runtime": 5,
        "rw": "read",
    }
    assert b.options["direct"] == 0
    assert b.options["runtime"] == 30
    assert b.options["ioengine"] == "libaio"


def test_other_fio_options_pass_through_unchanged() -> None:
    text = one_workload(
        "rw: randrw\nrwmixread: 70\nsize: 1g\nbs: 4k,8k\nbssplit: 4k/50:64k/50\n"
        "norandommap: 1\ngroup_reporting:\ntime_based: 1\nsync: 1\ncpus_allowed: 0-3"
    )
    (pt,) = parse_plan(text, "p.yaml").expand()
    assert pt.params == {
        "rw": "randrw",
        "rwmixread": 70,
        "size": "1g",
        "bs": "4k,8k",
        "bssplit": "4k/50:64k/50",
        "norandommap": 1,
        "group_reporting": None,
        "time_based": 1,
        "sync": 1,
        "cpus_allowed": "0-3",
    }


def test_any_list_valued_fio_option_becomes_an_axis() -> None:
    text = one_workload(
        "rw: randrw\nrwmixread: [50, 70, 90]\nnumjobs: [1, 4]\nioengine: [libaio, psync]\nsize: 1g"
    )
    points = parse_plan(text, "p.yaml").expand()
    assert len(points) == 3 * 2 * 2
    assert list(points[0].axes) == ["rwmixread", "numjobs", "ioengine"]
    assert {(pt.params["rwmixread"], pt.params["numjobs"], pt.params["ioengine"]) for pt in points}
    assert len({pt.key for pt in points}) == 12


def test_booleans_become_fio_integers() -> None:
    (pt,) = parse_plan(one_workload("direct: true\nsize: 1g"), "p.yaml").expand()
    assert pt.params["direct"] == 1


@pytest.mark.parametrize(
    ("opt", "value"),
    [
        ("bs", "4k"),
        ("bs", "4K"),
        ("bs", "4KiB"),
        ("bs", "4kb"),
        ("bs", 4096),
        ("bs", "512"),
        ("size", "10G"),
        ("size", "10g"),
        ("size", "1m"),
        ("size", "1.5g"),
        ("size", "50%"),
        ("runtime", "60s"),
        ("runtime", 60),
        ("runtime", "1m"),
        ("runtime", "2h"),
        ("runtime", "500ms"),
        ("ramp_time", "10s"),
        ("iodepth", "32"),
    ],
)
def test_fio_size_and_time_syntax_accepted(opt: str, value: object) -> None:
    body = f"{opt}: {value}" + ("" if opt == "size" else "\nsize: 1g")
    (pt,) = parse_plan(one_workload(body), "p.yaml").expand()
    assert str(pt.params[opt]) == str(value)


@pytest.mark.parametrize(
    ("opt", "value", "says"),
    [
        ("bs", "4q", "is not a size"),
        ("size", "10x", "is not a size"),
        ("bs", "fourk", "is not a size"),
        ("runtime", "60q", "is not a time"),
        ("ramp_time", "1 minute", "is not a time"),
        ("iodepth", "fast", "must be a whole number"),
        ("iodepth", "1.5", "must be a whole number"),
        ("iodepth", "0", "must be 1 or more"),
        ("numjobs", "0", "must be 1 or more"),
        ("rwmixread", "170", "must be 0 to 100"),
        ("direct", "2", "must be 0 to 1"),
        ("bs", "", "has no value"),
        ("size", '"' + "9" * 400 + '"', "is larger than fio can count"),  # float(): inf
        ("bs", '"' + "9" * 400 + '.5k"', "is larger than fio can count"),
    ],
)
def test_bad_values_rejected_at_their_line(opt: str, value: str, says: str) -> None:
    first = "rw: read" if opt == "size" else "size: 1g"
    e = plan_error(one_workload(f"{first}\n{opt}: {value}"))
    assert says in e.message
    assert e.file == "p.yaml"
    assert e.line == 5  # the option's line
    assert e.fix


@pytest.mark.parametrize(
    ("opt", "value", "says"),
    [
        # fio lays out 200% of a file it may not extend, does no I/O and says error 0
        ("size", "200%", "a percentage from 1% to 100%"),
        ("size", "101%", "a percentage from 1% to 100%"),
        ("size", "0%", "a percentage from 1% to 100%"),
        ("size", "50.5%", "a whole percentage"),  # fio reads it as 50 bytes
        ("io_size", "150%", "a percentage from 1% to 100%"),
        ("offset", "200%", "a percentage from 0% to 100%"),  # fio: no valid offset, no I/O
        ("offset_increment", "101%", "a percentage from 0% to 100%"),
        ("filesize", "200%", "takes no percentage"),  # read as a size of exabytes
        ("bs", "50%", "takes no percentage"),  # "blocksize is larger than data set range"
    ],
)
def test_plan_fio_percentages_out_of_fios_range_are_refused(
    opt: str, value: str, says: str
) -> None:
    first = "rw: read" if opt == "size" else "size: 1g"
    e = plan_error(one_workload(f"{first}\n{opt}: {value}"))
    assert says in e.message and value in e.message, e.message
    assert e.line == 5 and e.fix


@pytest.mark.parametrize(
    ("opt", "value"),
    [("size", "1%"), ("size", "100%"), ("io_size", "50%"), ("offset", "0%"), ("offset", "50%")],
)
def test_plan_fio_percentages_fio_reads_are_accepted(opt: str, value: str) -> None:
    first = "rw: read" if opt == "size" else "size: 1g"
    (wl,) = parse_plan(one_workload(f"{first}\n{opt}: {value}"), "p.yaml").workloads
    assert wl.options[opt] == value


def test_list_item_error_points_at_the_item_line() -> None:
    e = plan_error(one_workload("size: 1g\niodepth:\n  - 1\n  - fast"))
    assert e.line == 7
    assert "whole number" in e.message


def test_rw_typo_suggests_the_nearest_value() -> None:
    e = plan_error(one_workload("size: 1g\nrw: randreed"))
    assert e.line == 5
    assert "randreed" in e.message
    assert e.fix == 'did you mean "randread"?'


def test_unknown_fio_option_suggests_the_nearest() -> None:
    e = plan_error(one_workload("size: 1g\niodepht: 4"))
    assert (e.file, e.line, e.column) == ("p.yaml", 5, 5)
    assert "unknown fio option 'iodepht'" in e.message
    assert e.fix == 'did you mean "iodepth"?'


def test_unknown_top_level_key_suggests_the_nearest() -> None:
    e = plan_error(EXAMPLE.replace("workloads:", "workload:"))
    assert (e.line, e.column) == (5, 1)
    assert e.fix == 'did you mean "workloads"?'


def test_target_options_are_refused_in_workloads() -> None:
    e = plan_error(one_workload("size: 1g\nfilename: /tmp/other"))
    assert e.line == 5
    assert "comes from the target" in e.message


def test_mapping_where_a_value_belongs() -> None:
    e = plan_error(one_workload("size: 1g\nbs:\n  read: 4k"))
    assert e.line == 5
    assert "not a mapping" in e.message
    e = plan_error(EXAMPLE.replace("repeat: 3", "repeat:\n  times: 3"))
    assert e.line == 14
    assert "`repeat` has no key 'times'" in e.message  # a mapping is a rule: until ...
    e = plan_error(EXAMPLE.replace("repeat: 3", "repeat: [3]"))
    assert e.line == 14
    assert "not a list" in e.message


@pytest.mark.parametrize(
    ("text", "line", "says"),
    [
        (EXAMPLE.replace("repeat: 3", "repeat: many"), 14, "`repeat` must be a whole number"),
        (EXAMPLE.replace("repeat: 3", "repeat: 0"), 14, "`repeat` must be a whole number"),
        (EXAMPLE.replace("name: nvme-vs-sata", "name: [a]"), 1, "`name` must be"),
        ("targets: [file: /x]\nworkloads: {name: a}\n", 2, "must be a non-empty list"),
        ("targets: [file: /x]\nworkloads: []\n", 2, "must be a non-empty list"),
        ("targets: [file: /x]\nworkloads:\n  - rand4k\n", 3, "must be a mapping"),
        ("targets: /x\nworkloads:\n  - size: 1g\n", 1, "`targets` must be a list"),
        ("targets:\n  - /x\nworkloads:\n  - size: 1g\n", 2, "each target must be"),
        ("targets:\n  - fiel: /x\nworkloads:\n  - size: 1g\n", 2, "unknown target key"),
        ("targets:\n  - file:\nworkloads:\n  - size: 1g\n", 2, "needs a path"),
        (
            "targets:\n  - file: /x\n    device: /dev/sdb\nworkloads:\n  - size: 1g\n",
            2,
            "exactly one of",
        ),
        ("global: 3\ntargets: [file: /x]\nworkloads:\n  - size: 1g\n", 1, "must be a mapping"),
        ("targets: [file: /x]\nreport: qualfy\nworkloads:\n  - size: 1g\n", 2, "unknown report"),
        ("targets: [file: /x]\nworkloads:\n  - size: 1g\n    bs: []\n", 4, "empty list"),
        ("targets: [file: /x]\nworkloads:\n  - size: 1g\n    bs: [4k, 4k]\n", 4, "twice"),
        (
            "targets: [file: /x]\nworkloads:\n  - name: a\n    size: 1g\n"
            "  - name: a\n    size: 1g\n",
            5,
            "two workloads are named",
        ),
    ],
)
def test_wrong_types_and_shapes(text: str, line: int, says: str) -> None:
    e = plan_error(text)
    assert says in e.message
    assert e.line == line
    assert e.fix


def test_missing_workloads() -> None:
    e = plan_error("name: x\ntargets: [file: /x]\n")
    assert "no workloads" in e.message
    assert "workloads:" in (e.fix or "")
    e = plan_error("name: x\ntargets: [file: /x]\nworkloads:\n")
    assert e.line == 3


def test_missing_targets_without_target_argument() -> None:
    text = "name: x\nworkloads:\n  - size: 1g\n"
    e = plan_error(text)
    assert "no targets" in e.message
    assert "--target" in (e.fix or "")
    p = parse_plan(text, "p.yaml", targets=["/tmp/sb-x.dat"])
    assert p.targets == [Target("file", "/tmp/sb-x.dat")]


def test_file_target_needs_a_size(tmp_path: Path) -> None:
    text = f"targets: [file: {tmp_path}/new.dat]\nworkloads:\n  - name: a\n    rw: read\n"
    e = plan_error(text)
    assert "no `size`" in e.message
    assert e.line == 3
    assert "size" in (e.fix or "")
    # a directory target needs one too; a device or an existing file does not
    with pytest.raises(PlanError):
        parse_plan(text, "p.yaml", targets=[f"directory:{tmp_path}"])
    parse_plan(text, "p.yaml", targets=["device:/dev/sdzz"])
    (tmp_path / "old.dat").write_bytes(b"x" * 4096)
    parse_plan(text, "p.yaml", targets=[str(tmp_path / "old.dat")])
    parse_plan(text, "p.yaml", targets=[str(tmp_path / "n.dat")], sets=["size=1m"])


@pytest.mark.parametrize(
    ("text", "line", "says", "fix"),
    [
        (
            "name: x\nworkloads:\n  - name: a\n    rw: read\n     bs: 4k\n",
            5,
            "mapping values are not allowed",
            "indent",
        ),
        ("name: x\nworkloads:\n  - name: a\n    rw: [read, write\n    bs: 4k\n", 4, "`[`", "]"),
        ("name: x\nworkloads: {name: a\n", 2, "`{`", "}"),
        ('name: "x\nworkloads: []\n', 1, "quoted string", "quote"),
        ("name: x\nworkloads:\n  - name: a\n    bs: 1\n    bs: 2\n", 5, "duplicate key", "remove"),
        ("name: x\nworkloads:\n\t- name: a\n", 3, "\\t", "spaces"),
    ],
)
def test_malformed_yaml(text: str, line: int, says: str, fix: str) -> None:
    e = plan_error(text)
    assert e.message.startswith("malformed YAML")
    assert says in e.message
    assert e.line == line
    assert fix in (e.fix or "")


def test_empty_and_non_mapping_plans() -> None:
    assert "empty" in plan_error("").message
    assert "empty" in plan_error("# only a comment\n").message
    e = plan_error("- a\n- b\n")
    assert "mapping" in e.message and e.line == 1


def test_error_text_names_file_line_and_fix() -> None:
    e = plan_error(one_workload("size: 1g\niodepht: 4"))
    assert str(e) == (
        "p.yaml:5:5: workload 'w': unknown fio option 'iodepht'\n  fix: did you mean \"iodepth\"?"
    )


# ---------------------------------------------------------------------------- --set


def test_set_on_an_axis_replaces_its_values() -> None:
    p = parse_plan(EXAMPLE, "ex.yaml", sets=["iodepth=[1,8,64]"])
    points = p.expand()
    assert len(points) == 2 * 6 * 3
    assert [pt.params["iodepth"] for pt in points[:3]] == [1, 8, 64]
    assert p.overrides == ["iodepth=[1,8,64]"]


def test_set_turns_an_axis_into_one_value() -> None:
    points = parse_plan(EXAMPLE, "ex.yaml", sets=["rw=randread"]).expand()
    assert len(points) == 2 * 2 * 3
    assert all(pt.params["rw"] == "randread" for pt in points)
    assert list(points[0].axes) == ["iodepth"]


def test_set_a_scalar_makes_an_axis() -> None:
    points = parse_plan(EXAMPLE, "ex.yaml", sets=["bs=[4k,64k]"]).expand()
    assert len(points) == 2 * 8 * 3
    assert list(points[0].axes) == ["rw", "bs", "iodepth"]  # in place of the old value


def test_set_a_scalar_and_a_global_scalar() -> None:
    p = load_plan("quick", targets=["/tmp/sb-x.dat"], sets=["runtime=2", "ramp_time=0"])
    for pt in p.expand():
        assert pt.params["runtime"] == 2
        assert pt.params["ramp_time"] == 0
        assert pt.est_seconds == 2


def test_set_new_option_applies_to_every_workload() -> None:
    p = load_plan("quick", targets=["/tmp/sb-x.dat"], sets=["norandommap=1"])
    assert all(wl.options["norandommap"] == 1 for wl in p.workloads)


def test_set_repeat_and_name() -> None:
    p = parse_plan(EXAMPLE, "ex.yaml", sets=["repeat=2", "name=other"])
    assert p.repeat == 2
    assert p.name == "other"
    assert len(p.expand()) == 16


@pytest.mark.parametrize(
    ("arg", "says", "fix"),
    [
        ("iodepht=4", "not a fio option or plan key", 'did you mean "iodepth"?'),
        ("workload=1", "not a fio option or plan key", 'did you mean "workloads"?'),
        ("noequals", "not key=value", "--set"),
        ("=4", "not key=value", "--set"),
        ("iodepth=[1,", "not valid YAML", "list"),
        ("targets=[]", "cannot replace `targets`", "--target"),
        ("filename=/tmp/y", "comes from the target", "--target /tmp/y"),
        ("bs=4q", "is not a size", "--set bs=4k"),
        ("bs=", "has no value", "--set bs=4k"),
        ("repeat=0", "`repeat` must be", "--set repeat=3"),
        ("repeat=many", "`repeat` must be", "--set repeat=3"),
        ("iodepth={a: 1}", "not a mapping", "iodepth"),
        ("rw=randreed", "cannot be 'randreed'", 'did you mean "randread"?'),
    ],
)
def test_bad_set(arg: str, says: str, fix: str) -> None:
    e = plan_error(EXAMPLE, sets=[arg])
    assert says in e.message
    assert fix in (e.fix or "")
    assert e.line is None
    assert e.file is None or e.file == f"--set {arg}"


# ---------------------------------------------------------------------------- --target


def test_target_argument_forms(tmp_path: Path) -> None:
    f = tmp_path / "x.dat"
    assert parse_target_arg(f"file:{f}") == Target("file", str(f))
    assert parse_target_arg("device:/dev/sdb") == Target("device", "/dev/sdb")
    assert parse_target_arg(f"directory:{tmp_path}") == Target("directory", str(tmp_path))
    assert parse_target_arg(f"dir:{tmp_path}") == Target("directory", str(tmp_path))
    # bare paths: existing directory, new file, relative file, /dev path
    assert parse_target_arg(str(tmp_path)) == Target("directory", str(tmp_path))
    assert parse_target_arg(str(f)) == Target("file", str(f))
    assert parse_target_arg("rel.dat") == Target("file", os.path.abspath("rel.dat"))
    assert parse_target_arg("file:rel.dat") == Target("file", os.path.abspath("rel.dat"))
    assert parse_target_arg("/dev/sdzz-not-there") == Target("device", "/dev/sdzz-not-there")


def test_bare_block_device_is_a_device() -> None:
    dev = next(
        (
            f"/dev/{n}"
            for n in sorted(os.listdir("/dev"))
            if os.path.exists(f"/dev/{n}") and stat.S_ISBLK(os.stat(f"/dev/{n}").st_mode)
        ),
        None,
    )
    if dev is None:
        pytest.skip("no block device in /dev")
    assert parse_target_arg(dev) == Target("device", dev)


@pytest.mark.parametrize("arg", ["file:", "device:", "directory:", "dir:", ""])
def test_target_argument_needs_a_path(arg: str) -> None:
    with pytest.raises(PlanError) as ei:
        parse_target_arg(arg)
    assert ei.value.fix


def test_target_arguments_replace_the_plans_targets(tmp_path: Path) -> None:
    p = parse_plan(EXAMPLE, "ex.yaml", targets=[f"file:{tmp_path}/a", f"file:{tmp_path}/b"])
    assert [t.path for t in p.targets] == [f"{tmp_path}/a", f"{tmp_path}/b"]
    assert len(p.expand()) == 24


def test_plan_targets_relative_paths_become_absolute() -> None:
    text = "targets:\n  - file: rel.dat\n    name: fast\nworkloads:\n  - size: 1g\n"
    (t,) = parse_plan(text, "p.yaml").targets
    assert t == Target("file", os.path.abspath("rel.dat"), "fast")
    assert t.label == "fast"


# ---------------------------------------------------------------------------- load_plan


def test_load_plan_from_a_file(tmp_path: Path) -> None:
    path = tmp_path / "ex.yaml"
    path.write_text(EXAMPLE)
    p = load_plan(str(path))
    assert p.source == str(path)
    assert p.text == EXAMPLE
    assert len(p.expand()) == 24


def test_load_plan_errors_name_the_file(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(EXAMPLE.replace("iodepth:", "iodepht:"))
    with pytest.raises(PlanError) as ei:
        load_plan(str(path))
    assert ei.value.where == f"{path}:9:5"


def test_load_plan_missing_file_directory_and_suite(tmp_path: Path) -> None:
    with pytest.raises(NotFoundError) as ei:
        load_plan(str(tmp_path / "nope.yaml"))
    assert ei.value.file == str(tmp_path / "nope.yaml")
    assert "no such file" in ei.value.message
    with pytest.raises(PlanError) as ei2:
        load_plan(str(tmp_path))
    assert "directory" in ei2.value.message and ei2.value.file == str(tmp_path)
    with pytest.raises(NotFoundError) as ei3:
        load_plan("quik")
    assert 'did you mean "quick"?' in (ei3.value.fix or "")


def test_load_plan_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "bin.yaml"
    path.write_bytes(b"name: \xff\xfe\n")
    with pytest.raises(PlanError) as ei:
        load_plan(str(path))
    assert "UTF-8" in ei.value.message
    assert isinstance(ei.value, UserError)


# ---------------------------------------------------------------------------- built-in suites


def test_suite_names() -> None:
    assert set(suite_names()) >= {"quick", "qualify", "profiles", "matrix", "rados", "rbd"}


@pytest.mark.parametrize("name", suite_names())
def test_every_suite_parses_with_a_target(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:7070")
    target = {"rados": "rados:bench", "rbd": "rbd:bench/storbench", "s3": "s3://bench"}.get(
        name, "/tmp/sb-suite.dat"
    )
    sets = ["duration=60"] if name == "soak" else []  # soak needs one (test_soak_*)
    p = parse_plan(suite_text(name), f"suite:{name}", targets=[target], sets=sets)
    assert p.name == name
    assert p.description
    assert p.expand()
    # and needs one: suites name no targets of their own
    with pytest.raises(PlanError):
        parse_plan(suite_text(name), f"suite:{name}")


def test_quick_suite() -> None:
    points = load_plan("quick", targets=["/tmp/sb.dat"]).expand()
    assert len(points) == 6
    rand = [pt for pt in points if pt.params["bs"] == "4k"]
    seq = [pt for pt in points if pt.params["bs"] == "1m"]
    assert {(pt.params["rw"], pt.params["iodepth"]) for pt in rand} == {
        ("randread", 1),
        ("randread", 32),
        ("randwrite", 1),
        ("randwrite", 32),
    }
    assert {pt.params["rw"] for pt in seq} == {"read", "write"}
    assert all(pt.params["direct"] == 1 and pt.params["ioengine"] == "libaio" for pt in points)


def test_qualify_suite() -> None:
    p = load_plan("qualify", targets=["device:/dev/sdb"])
    points = p.expand()
    assert p.report == "qualify"
    assert len(points) == 10
    assert [pt.params["numjobs"] for pt in points] == list(range(1, 11))
    for pt in points:
        assert pt.params["direct"] == 1
        assert pt.params["sync"] == 1
        assert pt.params["iodepth"] == 1
        assert pt.params["bs"] == "4k"
        assert pt.params["rw"] == "write"
        assert pt.writes


def test_profiles_suite_two_points_per_target() -> None:
    p = load_plan("profiles", targets=["/tmp/a.dat", "/tmp/b.dat", "/tmp/c.dat"])
    points = p.expand()
    assert p.report == "profiles"
    assert len(points) == 6
    for t in p.targets:
        mine = [pt for pt in points if pt.target == t]
        assert [pt.workload for pt in mine] == ["seq-rw", "rand4k"]
    seq, rand = points[:2]
    assert (seq.params["rw"], seq.params["bs"], seq.params["iodepth"]) == ("readwrite", "1m", 16)
    assert (rand.params["rw"], rand.params["rwmixread"], rand.params["iodepth"]) == (
        "randrw",
        70,
        64,
    )


def test_matrix_suite() -> None:
    p = load_plan("matrix", targets=["/tmp/sb.dat"])
    points = p.expand()
    assert p.report == "matrix"
    assert len(points) == 112
    assert len({pt.params["bs"] for pt in points}) == 7
    assert {pt.params["iodepth"] for pt in points} == {1, 2, 4, 8, 16, 32, 64, 128}
    assert {pt.params["rw"] for pt in points} == {"randread", "randwrite"}
    assert len({pt.key for pt in points}) == 112
    # shortened and narrowed with --set
    small = load_plan(
        "matrix", targets=["/tmp/sb.dat"], sets=["bs=4k", "iodepth=[1,32]", "runtime=2"]
    ).expand()
    assert len(small) == 4
    assert all(pt.params["runtime"] == 2 for pt in small)


def test_load_plan_unreadable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No permission to read the plan (simulated: tests may run as root, who reads anyway)."""
    path = tmp_path / "secret.yaml"
    path.write_text(EXAMPLE)

    def denied(self: Path, *a: object, **kw: object) -> str:
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "read_text", denied)
    with pytest.raises(PlanError) as ei:
        load_plan(str(path))
    assert ei.value.file == str(path)
    assert "Permission denied" in ei.value.message
    assert "permissions" in (ei.value.fix or "")


def test_load_plan_unsearchable_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "locked" / "p.yaml"
    real_stat = os.stat

    def stat_(p: object, *a: object, **kw: object) -> os.stat_result:
        if str(p) == str(path):
            raise PermissionError(13, "Permission denied", str(p))
        return real_stat(p, *a, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "stat", stat_)
    with pytest.raises(PlanError) as ei:
        load_plan(str(path))
    assert "permission denied" in ei.value.message
    assert ei.value.file == str(path)


def test_suites_lists_each_suites_first_sentence_whole() -> None:
    """`storbench suites` gives each suite's first sentence, wrapped, never cut short."""
    import os
    import subprocess
    import sys

    r = subprocess.run(
        [sys.executable, "-m", "storbench", "suites"],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "80"},
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    entries: dict[str, str] = {}
    name = ""
    for line in r.stdout.splitlines():
        if not line.strip() or line.startswith("Each suite"):
            continue
        assert len(line) <= 80, line
        if not line.startswith(" "):
            name, _, rest = line.partition(" ")
            entries[name] = rest.strip()
        else:
            entries[name] += " " + line.strip()
    assert set(entries) >= {"matrix", "qualify", "quick", "s3", "soak"}
    assert all(text.endswith(".") for text in entries.values()), entries
