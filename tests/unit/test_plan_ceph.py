"""Plans with Ceph targets (``rbd``, ``rados``) and ``engine: rados-bench`` workloads:
parsing with file, line and fix in every error, --target/--ceph-conf/$CEPH_CONF, --set on the
``rados`` suite, the fio job files of Ceph targets, and which write each seq/rand point reads."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from storbench.engines import fio, rados
from storbench.model.errors import PlanError
from storbench.plan import (
    DEFAULT_CEPH_CONF,
    Point,
    Target,
    load_plan,
    parse_plan,
    parse_target_arg,
)


def plan_error(text: str, **kw: object) -> PlanError:
    with pytest.raises(PlanError) as ei:
        parse_plan(text, "p.yaml", **kw)  # type: ignore[arg-type]
    return ei.value


#: a rados bench write on a pool (line 5: the workload; 6-8: its keys)
RADOS_WRITE = """\
name: rb
targets:
  - rados: bench
workloads:
  - name: write
    engine: rados-bench
    mode: write
    runtime: 3
"""

FIO_ON = """\
targets:
  - {target}
workloads:
  - name: w
    rw: randwrite
    bs: 4k
    size: 4m
"""


@pytest.fixture(autouse=True)
def no_ceph_conf_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test starts without $CEPH_CONF (the default ceph.conf is then /etc/ceph's)."""
    monkeypatch.delenv("CEPH_CONF", raising=False)


# ---------------------------------------------------------------------------- targets


def test_target_arguments_for_ceph() -> None:
    assert parse_target_arg("rbd:bench/img") == Target("rbd", "bench/img", conf=DEFAULT_CEPH_CONF)
    t = parse_target_arg("rados:bench", "/etc/c/ceph.conf")
    assert t == Target("rados", "bench", conf="/etc/c/ceph.conf")
    assert (t.pool, t.label, t.ceph) == ("bench", "rados:bench", True)
    img = parse_target_arg("rbd:bench/img")
    assert (img.pool, img.image, img.label) == ("bench", "img", "rbd:bench/img")


@pytest.mark.parametrize(
    ("arg", "fix"),
    [
        ("rbd:pool", "rbd:POOL/IMAGE"),
        ("rbd:", "rbd:POOL/IMAGE"),
        ("rbd:a/b/c", "rbd:POOL/IMAGE"),
        ("rbd:a/", "rbd:POOL/IMAGE"),
        ("rbd:a b/c", "rbd:POOL/IMAGE"),
        ("rados:a/b", "rados:POOL"),
        ("rados:", "rados:POOL"),
    ],
)
def test_bad_ceph_target_arguments(arg: str, fix: str) -> None:
    with pytest.raises(PlanError) as ei:
        parse_target_arg(arg)
    e = ei.value
    kind = arg.split(":")[0]
    article = "an" if kind == "rbd" else "a"
    assert e.message.startswith(f"--target {arg}: not {article} {kind} target")
    assert e.fix is not None and e.fix.startswith(fix)
    # the same through a plan's --target
    e = plan_error(RADOS_WRITE, targets=[arg])
    assert e.message.startswith(f"--target {arg}:") and e.fix is not None and fix in e.fix


def test_rbd_target_in_a_plan_with_size_conf_and_clientname() -> None:
    p = parse_plan(
        """\
targets:
  - rbd: bench/vm1
    size: 64m
    conf: /etc/other/ceph.conf
    clientname: client.bench
    name: vm-disk
workloads:
  - name: w
    rw: randread
""",
        "p.yaml",
    )
    assert p.targets == [
        Target(
            "rbd",
            "bench/vm1",
            name="vm-disk",
            conf="/etc/other/ceph.conf",
            client="bench",
            size=64 << 20,
        )
    ]
    assert Target.from_dict(p.targets[0].to_dict()) == p.targets[0]


@pytest.mark.parametrize("given", ["client.admin", "admin"])
def test_clientname_is_the_user_without_client_prefix(given: str) -> None:
    p = parse_plan(FIO_ON.format(target=f"rados: bench\n    clientname: {given}"), "p.yaml")
    assert p.targets[0].client == "admin"
    assert "clientname=admin\n" in fio.job_file(p.expand()[0])


def test_rbd_size_that_is_not_a_size_is_refused_at_its_line() -> None:
    e = plan_error(
        """\
name: x
targets:
  - rbd: a/b
    size: 1x
workloads:
  - name: w
    rw: read
"""
    )
    assert (e.file, e.line) == ("p.yaml", 4)
    assert "`size` is not a size: '1x'" in e.message
    assert e.fix is not None and "size: 10g" in e.fix


def test_size_on_a_rados_target_is_refused_at_its_line() -> None:
    e = plan_error(
        """\
name: x
targets:
  - rados: bench
    size: 1g
workloads:
  - name: w
    rw: write
    size: 4m
"""
    )
    assert (e.file, e.line) == ("p.yaml", 4)
    assert "a rados target has none" in e.message
    assert e.fix is not None and e.fix.startswith("remove it")


@pytest.mark.parametrize("key", ["conf", "clientname"])
def test_empty_conf_or_clientname_refused(key: str) -> None:
    e = plan_error(FIO_ON.format(target=f'rados: bench\n    {key}: ""'))
    assert (e.file, e.line) == ("p.yaml", 3)
    assert f"`{key}` must be a non-empty string" in e.message
    assert e.fix


def test_ceph_keys_on_a_file_target_refused() -> None:
    e = plan_error(FIO_ON.format(target="file: /tmp/sb.dat\n    clientname: admin"))
    assert (e.file, e.line) == ("p.yaml", 3)
    assert "belongs to Ceph targets" in e.message


@pytest.mark.parametrize(("kind", "path"), [("rbd", "bench"), ("rados", "bench/img")])
def test_bad_ceph_target_path_in_a_plan(kind: str, path: str) -> None:
    e = plan_error(FIO_ON.format(target=f"{kind}: {path}"))
    assert (e.file, e.line) == ("p.yaml", 2)
    article = "an" if kind == "rbd" else "a"
    assert f"not {article} {kind} target: '{path}'" in e.message
    assert e.fix is not None and ("POOL/IMAGE" if kind == "rbd" else "rados:POOL") in e.fix


# ---------------------------------------------------------------------------- ceph.conf


def test_conf_defaults_to_etc_ceph() -> None:
    assert parse_plan(RADOS_WRITE, "p.yaml").targets[0].conf == "/etc/ceph/ceph.conf"
    assert parse_target_arg("rados:bench").conf == "/etc/ceph/ceph.conf"


def test_conf_from_the_ceph_conf_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("CEPH_CONF", str(tmp_path / "env.conf"))
    assert parse_plan(RADOS_WRITE, "p.yaml").targets[0].conf == str(tmp_path / "env.conf")
    assert parse_target_arg("rbd:a/b").conf == str(tmp_path / "env.conf")
    # --ceph-conf wins over the environment, and a relative path is made absolute
    monkeypatch.chdir(tmp_path)
    p = parse_plan(RADOS_WRITE, "p.yaml", ceph_conf="flag.conf")
    assert p.targets[0].conf == str(tmp_path / "flag.conf")
    p = parse_plan(RADOS_WRITE, "p.yaml", targets=["rados:other"], ceph_conf="flag.conf")
    assert p.targets == [Target("rados", "other", conf=str(tmp_path / "flag.conf"))]
    # and a target's own `conf:` wins over both
    own = RADOS_WRITE.replace("  - rados: bench\n", "  - rados: bench\n    conf: /own/ceph.conf\n")
    assert parse_plan(own, "p.yaml", ceph_conf="flag.conf").targets[0].conf == "/own/ceph.conf"


def test_ceph_conf_reaches_the_rados_bench_command_and_the_fio_job(tmp_path: Path) -> None:
    conf = str(tmp_path / "ceph.conf")
    p = load_plan("rados", targets=["rados:bench"], ceph_conf=conf, sets=["runtime=2"])
    cmds = rados.point_commands(p.expand()[0], run_id=7)
    assert cmds == [
        [
            rados.RADOS,
            "-c",
            conf,
            "-p",
            "bench",
            "bench",
            "2",
            "write",
            "-t",
            "16",
            "-b",
            str(4 << 20),
            "--no-cleanup",
            "--run-name",
            "storbench-r7-t0-4194304b-1c-rep0",
            "--show-time",
        ]
    ]
    p = parse_plan(FIO_ON.format(target="rados: bench"), "p.yaml", ceph_conf=conf)
    assert f"conf={conf}\n" in fio.job_file(p.expand()[0])


# ---------------------------------------------------------------------------- rados-bench workloads


def test_rados_bench_workload_keys_and_defaults() -> None:
    p = parse_plan(RADOS_WRITE, "p.yaml")
    (wl,) = p.workloads
    assert wl.options == {"threads": 16, "engine": "rados-bench", "mode": "write", "runtime": 3}
    (pt,) = p.expand()
    assert pt.engine == "rados-bench" and pt.writes
    # a write's object size is rados bench's default, 4 MiB; one client
    assert (pt.params["bs"], pt.params["clients"]) == ("4m", 1)
    assert "ioengine" not in pt.params
    assert pt.est_seconds == 3


def test_iodepth_on_rados_bench_suggests_threads() -> None:
    e = plan_error(RADOS_WRITE + "    iodepth: 8\n")
    assert (e.file, e.line, e.column) == ("p.yaml", 9, 5)
    assert "`iodepth` is a fio option, not one of rados bench" in e.message
    assert e.fix is not None and "`threads`" in e.fix


def test_unknown_mode_lists_the_modes() -> None:
    e = plan_error(RADOS_WRITE.replace("mode: write", "mode: sequential"))
    assert (e.file, e.line) == ("p.yaml", 7)
    assert "`mode` cannot be 'sequential'" in e.message
    assert e.fix is not None and "write, seq, rand" in e.fix


def test_mode_and_runtime_are_required() -> None:
    e = plan_error(RADOS_WRITE.replace("    mode: write\n", ""))
    assert (e.line, e.fix) == (
        5,
        "add `mode: write` (then `seq` or `rand` workloads read what it wrote)",
    )
    e = plan_error(RADOS_WRITE.replace("    runtime: 3\n", ""))
    assert e.line == 5 and "needs `runtime`" in e.message and "runtime: 60" in (e.fix or "")


def test_seq_without_a_write_before_it_is_refused_at_the_seq_line() -> None:
    seq = "  - name: read\n    engine: rados-bench\n    mode: seq\n    runtime: 3\n"
    text = RADOS_WRITE.replace("workloads:\n", "workloads:\n" + seq)  # seq first
    e = plan_error(text)
    assert (e.file, e.line) == ("p.yaml", 5)
    assert "workload 'read': rados bench seq reads the objects a write left" in e.message
    assert e.fix is not None and "mode: write" in e.fix
    # after the write it is fine
    points = parse_plan(RADOS_WRITE + seq, "p.yaml").expand()
    assert [pt.params["mode"] for pt in points] == ["write", "seq"]


def test_seq_with_other_clients_than_the_write_is_refused() -> None:
    text = RADOS_WRITE + (
        "  - name: read\n    engine: rados-bench\n    mode: rand\n    runtime: 3\n    clients: 2\n"
    )
    e = plan_error(text)
    assert (e.file, e.line) == ("p.yaml", 9)
    assert "rand reads the objects a write left" in e.message and "clients 2" in e.message
    assert e.fix is not None and "same clients and bs" in e.fix


def test_seq_with_another_object_size_than_the_write_is_refused() -> None:
    text = RADOS_WRITE + (
        "  - name: read\n    engine: rados-bench\n    mode: seq\n    bs: 1m\n    runtime: 3\n"
    )
    e = plan_error(text)
    assert (e.file, e.line) == ("p.yaml", 9)
    assert "bs 1m" in e.message


def test_rados_bench_with_hosts_is_refused() -> None:
    e = plan_error(RADOS_WRITE + "hosts:\n  - address: local\n")
    assert (e.file, e.line) == ("p.yaml", 5)
    assert "rados bench runs on this machine, not on `hosts:`" in e.message
    assert e.fix is not None and "clients: N" in e.fix


@pytest.mark.parametrize("target", ["file: /tmp/sb.dat", "rbd: bench/img"])
def test_rados_bench_on_a_target_that_is_not_a_pool_is_refused(target: str) -> None:
    e = plan_error(RADOS_WRITE.replace("rados: bench", target))
    assert (e.file, e.line) == ("p.yaml", 5)
    assert "rados bench measures a pool, not the" in e.message
    assert e.fix is not None and "rados: POOL" in e.fix
    e = plan_error(RADOS_WRITE, targets=[target.replace(": ", ":")])
    assert e.line == 5 and "rados bench measures a pool" in e.message


@pytest.mark.parametrize("value", ["2.5", "500ms", "0"])
def test_rados_bench_runtime_in_whole_seconds(value: str) -> None:
    e = plan_error(RADOS_WRITE.replace("runtime: 3", f"runtime: {value}"))
    assert (e.file, e.line) == ("p.yaml", 8)
    assert f"rados bench runs whole seconds (≥ 1), not `runtime: {value}`" in e.message
    assert e.fix == "e.g. `runtime: 60`"


def test_fio_only_and_rados_bench_only_keys_stay_apart() -> None:
    e = plan_error(FIO_ON.format(target="rados: bench") + "    threads: 16\n")
    assert e.line == 8 and "`threads` is a rados bench key" in e.message
    assert e.fix is not None and "engine: rados-bench" in e.fix
    # global: fio options go to fio workloads, rados bench keys to rados-bench ones
    p = parse_plan(
        """\
targets:
  - rados: bench
global:
  iodepth: 8
  threads: 4
  size: 4m
workloads:
  - name: f
    rw: write
  - name: r
    engine: rados-bench
    mode: write
    runtime: 2
""",
        "p.yaml",
    )
    f, r = p.workloads
    assert f.options == {"iodepth": 8, "size": "4m", "rw": "write"}
    assert r.options == {"threads": 4, "engine": "rados-bench", "mode": "write", "runtime": 2}


# ---------------------------------------------------------------------------- the rados suite


def test_rados_suite_as_shipped() -> None:
    p = load_plan("rados", targets=["rados:bench"])
    assert p.report == "rados"
    points = p.expand()
    assert [(pt.params["mode"], pt.params["clients"]) for pt in points] == [
        ("write", 1),
        ("write", 2),
        ("write", 3),
        ("seq", 1),
        ("seq", 2),
        ("seq", 3),
    ]
    for pt in points:
        assert pt.params["bs"] == "4m" and pt.params["threads"] == 16
        assert pt.params["runtime"] == 60 and pt.est_seconds == 60


def test_set_clients_and_runtime_narrow_and_shorten_the_rados_suite() -> None:
    p = load_plan("rados", targets=["rados:bench"], sets=["clients=[1,2]", "runtime=5"])
    points = p.expand()
    assert [(pt.params["mode"], pt.params["clients"], pt.axes) for pt in points] == [
        ("write", 1, {"clients": 1}),
        ("write", 2, {"clients": 2}),
        ("seq", 1, {"clients": 1}),
        ("seq", 2, {"clients": 2}),
    ]
    assert all(pt.params["runtime"] == 5 and pt.est_seconds == 5 for pt in points)
    assert p.overrides == ["clients=[1,2]", "runtime=5"]
    # one client count: no axis left
    one = load_plan("rados", targets=["rados:bench"], sets=["clients=2"]).expand()
    assert [(pt.params["clients"], pt.axes) for pt in one] == [(2, {}), (2, {})]


def test_set_iodepth_on_the_rados_suite_is_refused() -> None:
    with pytest.raises(PlanError) as ei:
        load_plan("rados", targets=["rados:bench"], sets=["iodepth=8"])
    e = ei.value
    assert "--set iodepth=8: no workload of the plan has `iodepth`" in e.message
    assert e.fix is not None and "threads" in e.fix


def test_set_fractional_runtime_on_the_rados_suite_is_refused() -> None:
    with pytest.raises(PlanError) as ei:
        load_plan("rados", targets=["rados:bench"], sets=["runtime=2.5"])
    e = ei.value
    assert e.file == "--set runtime=2.5"
    assert "rados bench runs whole seconds" in e.message
    assert e.fix == "e.g. `--set runtime=60`"


def test_rados_suite_needs_a_rados_target() -> None:
    with pytest.raises(PlanError) as ei:
        load_plan("rados", targets=["/tmp/sb-x.dat"])
    assert "rados bench measures a pool" in ei.value.message


# ---------------------------------------------------------------------------- fio on Ceph targets


def test_fio_on_an_rbd_target_uses_the_rbd_engine() -> None:
    p = parse_plan(FIO_ON.format(target="rbd: bench/vm1"), "p.yaml", ceph_conf="/c/ceph.conf")
    (pt,) = p.expand()
    assert pt.params["ioengine"] == "rbd"
    assert pt.engine == "fio" and pt.writes
    job = fio.job_file(pt, run_id=3)
    lines = job.splitlines()
    assert lines[1] == "[w]"
    assert {"pool=bench", "rbdname=vm1", "ioengine=rbd", "rw=randwrite"} <= set(lines)
    assert not any(ln.startswith(("conf=", "clientname=", "filename")) for ln in lines)
    # librbd reads the ceph.conf from CEPH_CONF: fio runs with it set
    env = fio.ceph_env([pt.target])
    assert env is not None and env["CEPH_CONF"] == "/c/ceph.conf"


def test_fio_on_a_rados_target_uses_the_rados_engine_with_conf_and_prefix() -> None:
    p = parse_plan(FIO_ON.format(target="rados: bench"), "p.yaml", ceph_conf="/c/ceph.conf")
    (pt,) = p.expand()
    assert pt.params["ioengine"] == "rados"
    lines = fio.job_file(pt, run_id=12).splitlines()
    assert {"pool=bench", "conf=/c/ceph.conf", "ioengine=rados"} <= set(lines)
    assert "filename_format=storbench-r12.$jobname.$jobnum.$filenum" in lines
    assert fio.rados_object_prefix(12) == "storbench-r12."
    # without a run (plan show): the prefix without a run id
    assert "filename_format=storbench.$jobname.$jobnum.$filenum" in fio.job_file(pt).splitlines()
    assert fio.ceph_env([pt.target]) is None  # the rados engine takes conf= itself


def test_rbd_suite_on_an_image() -> None:
    p = load_plan("rbd", targets=["rbd:bench/vm1"], ceph_conf="/c/ceph.conf")
    points = p.expand()
    assert len(points) == 32
    assert {pt.params["ioengine"] for pt in points} == {"rbd"}
    assert all(pt.target == Target("rbd", "bench/vm1", conf="/c/ceph.conf") for pt in points)
    job = fio.job_file(points[0]).splitlines()
    assert {"pool=bench", "rbdname=vm1", "size=1g", "ioengine=rbd"} <= set(job)


def test_an_ioengine_in_the_plan_is_replaced_by_the_targets() -> None:
    p = parse_plan(
        FIO_ON.format(target="rbd: bench/vm1") + "    ioengine: libaio\n",
        "p.yaml",
    )
    (pt,) = p.expand()
    assert pt.params["ioengine"] == "rbd"
    assert fio.job_file(pt).count("ioengine=") == 1


def test_fio_workload_without_size_on_a_rados_target_is_refused() -> None:
    e = plan_error(FIO_ON.format(target="rados: bench").replace("    size: 4m\n", ""))
    assert (e.file, e.line) == ("p.yaml", 4)
    assert "has no `size` for rados target bench" in e.message
    assert e.fix is not None and "osd_max_object_size" in e.fix
    # an rbd image has its own size
    p = parse_plan(FIO_ON.format(target="rbd: bench/img").replace("    size: 4m\n", ""), "p.yaml")
    assert len(p.expand()) == 1


# ---------------------------------------------------------------------------- datasets


TWO_CLIENT_COUNTS = """\
targets:
  - rados: bench
workloads:
  - name: write
    engine: rados-bench
    mode: write
    runtime: 3
    clients: [1, 2]
  - name: seq
    engine: rados-bench
    mode: seq
    runtime: 3
    clients: [1, 2]
"""


def test_each_seq_reads_the_dataset_of_its_write() -> None:
    points = parse_plan(TWO_CLIENT_COUNTS, "p.yaml").expand()
    got = [(pt.params["mode"], pt.params["clients"]) for pt in points]
    assert got == [("write", 1), ("write", 2), ("seq", 1), ("seq", 2)]
    w1, w2, s1, s2 = points
    assert s1.extra["dataset"] == w1.extra["dataset"]
    assert s2.extra["dataset"] == w2.extra["dataset"]
    assert w1.extra["dataset"] != w2.extra["dataset"]
    # the seq reads the write's object size (rados bench takes it from the write's metadata)
    assert s1.params["bs"] == s2.params["bs"] == "4m"
    assert len({pt.key for pt in points}) == 4

    # the rados bench run names: the run, the dataset, and each client's own suffix -- a
    # seq client reads what the write client of the same number wrote
    def run_names(pt: Point) -> list[str]:
        return [c[c.index("--run-name") + 1] for c in rados.point_commands(pt, run_id=4)]

    want = [f"storbench-r4-{w2.extra['dataset']}-c1", f"storbench-r4-{w2.extra['dataset']}-c2"]
    assert run_names(w2) == run_names(s2) == want
    assert run_names(w1) == run_names(s1) == [f"storbench-r4-{w1.extra['dataset']}"]


def test_each_repetition_has_its_own_dataset() -> None:
    points = parse_plan(TWO_CLIENT_COUNTS + "repeat: 2\n", "p.yaml").expand()
    assert len(points) == 8
    by_rep = {rep: [pt for pt in points if pt.repetition == rep] for rep in (0, 1)}
    for pts in by_rep.values():
        w1, w2, s1, s2 = pts
        assert (s1.extra["dataset"], s2.extra["dataset"]) == (
            w1.extra["dataset"],
            w2.extra["dataset"],
        )
    datasets = [pt.extra["dataset"] for pt in points if pt.params["mode"] == "write"]
    assert len(set(datasets)) == 4  # 2 client counts x 2 repetitions
    # a repetition is the same point (same key) reading its own round's objects
    assert [pt.key for pt in by_rep[0]] == [pt.key for pt in by_rep[1]]
    assert "randseed" not in points[4].extra  # no fio option on a rados bench point


def test_a_seq_reads_the_last_write_before_it() -> None:
    text = RADOS_WRITE + (
        "  - name: write1m\n    engine: rados-bench\n    mode: write\n    bs: 1m\n    runtime: 3\n"
        "  - name: seq\n    engine: rados-bench\n    mode: seq\n    runtime: 3\n"
        "  - name: seq4m\n    engine: rados-bench\n    mode: seq\n    bs: 4m\n    runtime: 3\n"
    )
    w4, w1, s, s4 = parse_plan(text, "p.yaml").expand()
    assert s.extra["dataset"] == w1.extra["dataset"] and s.params["bs"] == "1m"
    assert s4.extra["dataset"] == w4.extra["dataset"]


def test_two_rados_targets_have_separate_datasets() -> None:
    p = parse_plan(
        RADOS_WRITE + "  - name: seq\n    engine: rados-bench\n    mode: seq\n    runtime: 3\n",
        "p.yaml",
        targets=["rados:a", "rados:b"],
    )
    wa, sa, wb, sb = p.expand()
    assert (wa.target.pool, wb.target.pool) == ("a", "b")
    assert sa.extra["dataset"] == wa.extra["dataset"] != wb.extra["dataset"] == sb.extra["dataset"]


# ---------------------------------------------------------------------------- the command line


def storbench(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("CEPH_CONF", "COLUMNS")}
    return subprocess.run(
        [sys.executable, "-m", "storbench", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        stdin=subprocess.DEVNULL,
    )


def test_plan_show_prints_the_rados_bench_commands() -> None:
    """`storbench plan show` with --target rados:POOL and --ceph-conf (no cluster needed)."""
    r = storbench(
        "plan", "show", "rados", "--target", "rados:bench", "--ceph-conf", "/c/ceph.conf",
        "--set", "clients=[1,2]", "--set", "runtime=5",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "4 points on rados:bench" in r.stdout
    base = "rados -c /c/ceph.conf -p bench bench 5"
    lines = r.stdout.splitlines()
    writes = [ln for ln in lines if ln.startswith(f"{base} write -t 16 -b 4194304 --no-cleanup")]
    seqs = [ln for ln in lines if ln.startswith(f"{base} seq -t 16 --run-name storbench-rRUN-")]
    assert len(writes) == len(seqs) == 3  # 1 + 2 clients each
    assert all(ln.endswith(" --show-time") for ln in writes + seqs)


def test_plan_show_never_wraps_a_command_or_job_line(tmp_path: Path) -> None:
    """What `plan show` prints is the exact command and job file: a line of it that is
    longer than the terminal (a long ceph.conf path) must stay one line when the output goes
    to a file or a pipe, or it cannot be copied and run."""
    conf = str(tmp_path / ("x" * 80) / "ceph.conf")
    r = storbench(
        "plan", "show", "rados", "--target", "rados:bench", "--ceph-conf", conf,
        "--set", "clients=1", "--set", "runtime=5",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    cmds = [ln for ln in r.stdout.splitlines() if ln.startswith("rados ")]
    assert len(cmds) == 2
    assert all(ln.endswith(" --show-time") for ln in cmds), r.stdout


def test_bad_ceph_target_on_the_command_line() -> None:
    r = storbench("plan", "check", "rados", "--target", "rbd:pool")
    assert r.returncode == 2
    assert "--target rbd:pool: not an rbd target" in r.stderr
    assert "fix: rbd:POOL/IMAGE" in r.stderr
    assert "Traceback" not in r.stderr
