"""The plan's keys are declared once (plan/schema.py): the loader's key lists and messages
come from there, and so does docs/plan-keys.md (`storbench plan keys`)."""

from __future__ import annotations

import dataclasses
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

from storbench import hooks
from storbench.model.errors import PlanError
from storbench.plan import enginekeys, keysdoc, parse_plan, schema

DOCS = Path(__file__).resolve().parents[2] / "docs" / "plan-keys.md"


def test_plan_schema_docs_are_what_the_schema_says() -> None:
    assert DOCS.read_text() == keysdoc.keys_markdown(), (
        "docs/plan-keys.md is out of step: storbench plan keys > docs/plan-keys.md"
    )


def test_plan_schema_plan_keys_command_prints_it() -> None:
    r = subprocess.run(
        [sys.executable, "-m", "storbench", "plan", "keys"], capture_output=True, text=True
    )
    assert r.returncode == 0 and r.stdout == keysdoc.keys_markdown()


def test_plan_schema_every_key_is_documented_once_per_section() -> None:
    engines = [d.section() for d in enginekeys.every_engine()]
    for section in [*schema.SECTIONS, *engines]:
        names = section.names()
        assert len(names) == len(set(names)), section.title
        for k in section.keys:
            assert k.takes and k.doc.endswith("."), (section.title, k.name)
            assert not k.choices() or k.takes in ("choice",), (section.title, k.name)


@pytest.mark.parametrize(
    "plan",
    [
        "nmae: x\ntargets: [{file: a}]\nworkloads: [{name: w, rw: read}]\n",
        "targets: [{file: a, nmae: x}]\nworkloads: [{name: w, rw: read}]\n",
        "hosts: [{address: local, nmae: x}]\ntargets: [{file: a}]\nworkloads: [{name: w}]\n",
    ],
)
def test_plan_schema_an_unknown_key_is_told_the_declared_ones(plan: str) -> None:
    with pytest.raises(PlanError) as e:
        parse_plan(plan, "p.yaml")
    assert 'did you mean "name"?' in str(e.value), str(e.value)


_FILE = "targets: [{file: a}]\nworkloads: [{name: w, rw: read, size: 1m}]\n"
_RBD = "workloads: [{name: w, rw: read, size: 1m}]\ntargets:\n  - rbd: pool/img\n"
_BENCH = "targets: [{rados: pool}]\nworkloads:\n  - engine: rados-bench\n"
#: (section, key, a plan whose value of that key is refused, the line of the error)
_REFUSED = [
    ("PLAN", "name", "name: ''\n" + _FILE, 1),
    ("PLAN", "description", "description: [a]\n" + _FILE, 1),
    ("PLAN", "repeat", _FILE + "repeat: 0\n", 3),
    ("PLAN", "report", _FILE + "report: qualfy\n", 3),
    ("PLAN", "interval", _FILE + "interval: 100ms\n", 3),
    ("HOST", "address", _FILE + "hosts:\n  - address: 'a b'\n", 4),
    ("HOST", "port", _FILE + "hosts:\n  - address: local\n    port: 1\n", 5),
    ("HOST", "name", _FILE + "hosts:\n  - address: local\n    name: [x]\n", 5),
    ("TARGET_MORE", "size", _RBD + "    size: 0\n", 4),
    ("TARGET_MORE", "conf", _RBD + "    conf: ''\n", 4),
    ("TARGET_MORE", "clientname", _RBD + "    clientname: 7\n", 4),
    ("TARGET_MORE", "name", 'targets: [{file: a, name: "a\\nb"}]\nworkloads: [{name: w}]\n', 1),
    ("WORKLOAD", "name", "targets: [{file: a}]\nworkloads:\n  - rw: read\n    name: ''\n", 4),
    ("engine:rados-bench", "mode", _BENCH + "    runtime: 5\n", 3),
    ("engine:rados-bench", "runtime", _BENCH + "    mode: write\n    runtime: 0.5\n", 5),
]


@pytest.mark.parametrize(("section", "key", "plan", "line"), _REFUSED)
def test_plan_schema_checks_are_what_the_loader_says(
    section: str, key: str, plan: str, line: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The loader refuses a value with the message its key's declared check gives, at the
    key: replace the check in the schema and the loader says the replacement."""
    with pytest.raises(PlanError) as e:
        parse_plan(plan, "p.yaml")
    assert e.value.line == line, str(e.value)
    engine = section.removeprefix("engine:") if section.startswith("engine:") else None
    # the plan's own keys are declared in schema.py, an engine's in its own keys module
    owner = importlib.import_module(hooks.ENGINES[engine].keys.split(":")[0]) if engine else schema
    attr = "KEYS" if engine else section
    declared = getattr(owner, attr)
    swapped = tuple(
        dataclasses.replace(k, check=lambda v, m: (f"declared {m is not None}", "fix: it"))
        if k.name == key
        else k
        for k in declared.keys
    )
    monkeypatch.setattr(owner, attr, dataclasses.replace(declared, keys=swapped))
    with pytest.raises(PlanError) as e:
        parse_plan(plan, "p.yaml")
    assert "declared True" in str(e.value) and e.value.line == line, str(e.value)
