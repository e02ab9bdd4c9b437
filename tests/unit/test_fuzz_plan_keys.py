"""Fuzzing the plan keys that came after the first fuzzing (test_fuzz_inputs.py): steady
state, preconditioning and prefill, a workload's actions (drills) and ``osd_daemons``, S3
targets, hosts (and a workload's ``clients``), repetitions until known (``repeat:
{until: ...}``), ``slo`` and ``stop_at`` -- each given well-formed and hostile values:
numbers out of range or of the wrong kind, units, percentages, text with control
characters, URLs with ports that are none and passwords, mappings and lists where a value
goes, unknown keys.

The property, for ``plan check`` and ``plan show`` run in-process on the plan: exit 0 (the
plan is accepted) or 2 with storbench's one message (``storbench: error:``), never a
traceback; nothing written outside storbench's own files; a password given in an endpoint
never shown. Bounded (``examples``) to a few seconds."""

from __future__ import annotations

import json
import shutil
from typing import Any

import pytest
from hypothesis import event, given
from hypothesis import strategies as st
from test_fuzz_inputs import (
    HOSTILE,
    assert_nothing_else_written,
    examples,
    invoke,
    sandbox,
    snapshot,
)

HAVE_FIO = shutil.which("fio") is not None
SECRET = "Pw-9fz7Q"  # a password in an endpoint URL: never to be shown

texts = st.one_of(st.sampled_from(HOSTILE), st.text(max_size=10))
ODD: list[Any] = [None, True, False, 0, 1, -1, 2, 7, 1.5, -0.5, 1e20, -1e20, 10**30, 2**63]
ODD += ["nan", "inf", "-inf", "1e300", "9" * 400, "", " ", "%", "-10%", "0%", "200%", "abc"]
ODD += ["1s", "30s", "-5s", "0s", "1m", "2h", "500ms", "1e20s", "4k", "1g", [], {}, [1, 2]]
odd = st.one_of(st.sampled_from(ODD), texts)


def mostly(good: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """``good`` three times in four, else an odd value: enough plans are accepted for the
    fuzzing to reach what reads them further (points, engines)."""
    return st.one_of(good, good, good, odd)


def some(keys: dict[str, st.SearchStrategy[Any]]) -> st.SearchStrategy[dict[str, Any]]:
    """A mapping of some of ``keys`` (each mostly with its own values) and, now and then,
    one that is none of them."""
    values = st.fixed_dictionaries({}, optional={k: mostly(v) for k, v in keys.items()})
    unknown = st.fixed_dictionaries({}, optional={"bogus": odd, "Metric": odd})
    extra = st.one_of(st.just({}), st.just({}), st.just({}), unknown)
    return st.builds(lambda a, b: {**a, **b}, values, extra)


steady = mostly(
    some(
        {
            "metric": st.sampled_from(["iops", "bw", "lat", "IOPS"]),
            "round": st.sampled_from(["1s", "60s", 1, 0, "1e20"]),
            "window": st.sampled_from([1, 2, 5, 1000, 1001]),
            "rounds": st.sampled_from([1, 5, 25, 1000, 10**9]),
            "range": st.sampled_from(["20%", 20, "0%", "100%", "-1%", "1e400%"]),
            "slope": st.sampled_from(["10%", 10, "nan%", "5 %"]),
        }
    ),
)
precondition = mostly(
    st.one_of(
        st.sampled_from(["none", "sequential", "workload", "Sequential", "random"]),
        some(
            {
                "mode": st.sampled_from(["none", "sequential", "workload"]),
                "purge": st.sampled_from(["discard", "secure", "shred"]),
            }
        ),
    )
)
step = st.sampled_from(["osd_stop", "osd_start", "osd_out", "osd_in", "osd_set", "osd_unset"])
action = mostly(
    st.builds(
        lambda at, s, arg, more: {"at": at, s: arg, **more},
        mostly(st.sampled_from(["1s", 0, "2s", -1, "1e20", 1e308])),
        st.one_of(step, st.just("run"), st.just("run"), texts),
        mostly(st.sampled_from([1, 0, "noout", "true", "sleep 0", "x\ny"])),
        some(
            {
                "timeout": st.sampled_from([1, 5, 1e20, 0, -1, "1e20", "7d", "8d"]),
                "host": st.sampled_from(["vm1", "local", "nohost"]),
            }
        ),
    ),
)
actions = mostly(st.lists(action, max_size=3))
daemons = mostly(
    some(
        {
            "stop": st.sampled_from(["systemctl stop ceph-osd@{id}", "{x}", "ssh {host} true"]),
            "start": st.sampled_from(["systemctl start ceph-osd@{id}", "{", "start {id}"]),
        }
    ),
)
endpoint = st.one_of(
    st.sampled_from(
        [
            "http://127.0.0.1:7070",
            "https://s3.example.invalid",
            f"http://u:{SECRET}@127.0.0.1:7070",
            f"http://u:{SECRET}@h:abc",
            f"http://u:{SECRET}@[::1",
            "http://h1:1,h2:1",
            "http://127.0.0.1:99999",
            "ftp://h",
            "http://h/path?q=1",
            "127.0.0.1:7070",
        ]
    ),
    odd,
)
s3_target = st.builds(
    lambda bucket, more: {"s3": bucket, **more},
    mostly(st.sampled_from(["bench", "bench", "b", "Bench", "a" * 64, "x..y"])),
    some(
        {
            "endpoint": endpoint,
            "region": st.sampled_from(["us-east-1", "EU", ""]),
            "prefix": st.sampled_from(["storbench/", "../x", "a b"]),
            "credentials": st.sampled_from(["env", "profile:x", "file:/nonexistent", "keys"]),
            "create_bucket": st.booleans(),
            "insecure": st.booleans(),
            "keep_objects": st.booleans(),
            "precondition": precondition,
            "prefill": st.booleans(),
        }
    ),
)
host = mostly(
    some(
        {
            "address": st.sampled_from(["local", "10.1.2.3", "::1", "[::1", "h:1", "-oProxy"]),
            "port": st.sampled_from([8765, 0, 65536, -1, "abc", "8765"]),
            "name": st.sampled_from(["vm1", "vm1", "local", ""]),
            "targets": st.lists(st.fixed_dictionaries({"file": st.just("h.dat")}), max_size=1),
            "shell": st.sampled_from(["ssh -p 22 root@10.1.2.3", ["sh", "-c"], "'", []]),
            "ssh": st.sampled_from(["root@10.1.2.3", "-oProxyCommand=x", ""]),
            "agent": st.sampled_from(["storbench agent", ["x"], ""]),
        }
    ),
)
hosts = mostly(st.lists(host, max_size=2))
until = mostly(
    some(
        {
            "until": st.sampled_from(["significant", "significant", "known", 1]),
            "compare": st.sampled_from(["target", "bs", "direct", "iodepth", "", "rw"]),
            "min": st.sampled_from([2, 3, 1, 0, 101, "2"]),
            "max": st.sampled_from([2, 10, 100, 101, 1, 10**30]),
            "equal": st.sampled_from(["2%", 2, "0.1%", "50%", "0%", "nan%", "51%"]),
        }
    )
)
slo = mostly(
    some(
        {
            "latency": st.sampled_from(["2ms", "500us", "1s", "0ms", "2", "2h", "1e300ms"]),
            "percentile": st.sampled_from([99, 99.9, "mean", 100, 0, "p99", "50%"]),
            "resolution": st.sampled_from(["5%", "0.1%", 50, "0%", "60%"]),
        }
    )
)
stop_at = mostly(st.sampled_from(["knee", {"iodepth": "knee"}, {"bs": "knee"}, "top", ["knee"]]))


@st.composite
def plan(draw: st.DrawFn) -> dict[str, Any]:
    """A small plan that is right, then one to three of the keys above set."""
    workload: dict[str, Any] = {"name": "w", "rw": "randread", "bs": "4k", "size": "1m"}
    workload["runtime"] = 2
    doc: dict[str, Any] = {"name": "p", "targets": [{"file": "new.dat"}]}
    doc["workloads"] = [workload]
    for key in draw(st.sets(st.sampled_from(SECTIONS), min_size=1, max_size=3)):
        if key == "steady_state":
            doc[key] = draw(steady)
        elif key in ("precondition", "prefill"):
            where = draw(st.sampled_from([doc, doc["targets"][0]]))
            where[key] = draw(precondition if key == "precondition" else mostly(st.booleans()))
        elif key == "actions":
            workload[key] = draw(actions)
        elif key == "osd_daemons":
            doc[key] = draw(daemons)
        elif key == "s3":
            doc["targets"] = [draw(s3_target)]
        elif key == "hosts":
            doc[key] = draw(hosts)
            if draw(st.booleans()):
                workload["clients"] = draw(mostly(st.sampled_from([1, 2, [1, 2]])))
        elif key == "repeat":
            doc[key] = draw(until)
            if draw(st.booleans()):
                doc["targets"] = [{"file": "a.dat"}, {"file": "b.dat"}]
            if draw(st.booleans()):
                workload["bs"] = draw(st.sampled_from([["4k", "8k"], ["4k"], ["4k", "8k", "16k"]]))
        elif key == "slo":
            doc[key] = draw(slo)
        elif key == "stop_at":
            workload["iodepth"] = draw(mostly(st.sampled_from([[1, 2, 4], [1, 2, 4, 8], [4, 1]])))
            workload[key] = draw(stop_at)
    return doc


SECTIONS = ["steady_state", "precondition", "prefill", "actions", "osd_daemons", "s3", "hosts"]
SECTIONS += ["repeat", "slo", "stop_at"]


@pytest.mark.skipif(not HAVE_FIO, reason="fio is not installed")
@examples(100)
@given(doc=plan())
def test_fuzz_plan_keys_check_and_show(doc: dict[str, Any], capsys: Any) -> None:
    with sandbox() as root:
        (root / "plan.yaml").write_text(json.dumps(doc, allow_nan=True))
        before = snapshot(root)
        for args in (["plan", "check"], ["plan", "show"]):
            code, out, err = invoke([*args, "plan.yaml"], capsys)
            event(f"{args[1]} exit {code}")
            assert code in (0, 2), (args, code, out, err)
            if code == 2:
                assert "storbench: error:" in err and "Traceback" not in err, (args, err)
            assert SECRET not in out + err, (args, out, err)
        assert_nothing_else_written(root, before)


def test_fuzz_plan_keys_each_section_reaches_the_plan(capsys: Any) -> None:
    """The harness itself: a plan with each section well formed is accepted by plan
    check, so the fuzzer's refusals are the values', not the base plan's."""
    right: dict[str, Any] = {
        "steady_state": {"metric": "iops", "round": "1s", "window": 3, "rounds": 5},
        "precondition": "sequential",
        "osd_daemons": {"stop": "systemctl stop ceph-osd@{id}"},
        "repeat": {"until": "significant", "compare": "target", "max": 4},
    }
    with sandbox() as root:
        doc = {
            "name": "p",
            "targets": [{"file": "new.dat"}, {"file": "other.dat"}],
            "workloads": [{"name": "w", "rw": "randread", "bs": "4k", "size": "1m"}],
            **right,
        }
        (root / "plan.yaml").write_text(json.dumps(doc))
        code, out, err = invoke(["plan", "check", "plan.yaml"], capsys)
        assert code == 0, err
        assert "OK" in out
