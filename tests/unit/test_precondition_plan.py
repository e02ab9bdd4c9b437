"""The plan's `precondition`: per target or for all, checked at load, and what the
sequential phase's fio job is."""

from __future__ import annotations

import pytest

from storbench.engines import get as engine
from storbench.model.errors import PlanError
from storbench.plan import parse_plan

WL = "workloads:\n  - name: w\n    rw: randread\n    bs: 4k\n    size: 8m\n    runtime: 5\n"


def test_precondition_per_target_and_for_the_rest() -> None:
    text = (
        "name: p\nprecondition: workload\ntargets:\n  - file: /tmp/sb-pre-a.dat\n"
        "    precondition: sequential\n  - file: /tmp/sb-pre-b.dat\n" + WL
    )
    a, b = parse_plan(text, "p.yaml").expand()
    assert (a.precondition, b.precondition) == ("sequential", "workload")
    assert a.writes and not b.writes  # a sequential phase writes the target
    assert type(a).from_dict(a.to_dict()).precondition == "sequential"
    assert b.est_seconds == 5 + 25 * 60  # its workload, at most SNIA's 25 one-minute rounds


def test_precondition_from_the_command_line() -> None:
    p = parse_plan(
        "name: p\n" + WL, "p.yaml", targets=["/tmp/sb-pre.dat"], sets=["precondition=sequential"]
    )
    assert p.expand()[0].precondition == "sequential"


@pytest.mark.parametrize(
    ("text", "words"),
    [
        (
            "name: p\nprecondition: sequentail\ntargets: [{file: /tmp/x.dat}]\n" + WL,
            'did you mean "sequential"',
        ),
        ("name: p\ntargets: [{rados: pool, precondition: sequential}]\n" + WL, "a rados pool"),
    ],
)
def test_precondition_refuses_bad_values(text: str, words: str) -> None:
    with pytest.raises(PlanError) as e:
        parse_plan(text, "p.yaml", ceph_conf="/etc/ceph/ceph.conf")
    assert words in str(e.value) + (e.value.fix or "") and e.value.line is not None


def test_precondition_sequential_job_writes_the_region_twice() -> None:
    text = (
        "name: p\ntargets: [{file: /tmp/sb-pre.dat, precondition: sequential}]\n"
        "workloads:\n  - {name: w, rw: randread, bs: 4k, size: 8m, offset: 1m, runtime: 5,"
        " time_based: 1, ioengine: libaio, direct: 1, rate_iops: 100}\n"
    )
    (pt,) = parse_plan(text, "p.yaml").expand()
    phase = engine("fio").precondition_point(pt)
    assert phase.params == {
        "ioengine": "libaio",
        "direct": 1,
        "size": "8m",
        "offset": "1m",
        "rw": "write",
        "bs": "128k",
        "loops": 2,
        "numjobs": 1,
        "iodepth": 32,
    }
