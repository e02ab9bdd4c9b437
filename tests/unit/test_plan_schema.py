"""The plan's keys are declared once (plan/schema.py): the loader's key lists and messages
come from there, and so does docs/plan-keys.md (`storbench plan keys`)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from storbench.errors import PlanError
from storbench.plan import parse_plan, schema

DOCS = Path(__file__).resolve().parents[2] / "docs" / "plan-keys.md"


def test_plan_schema_docs_are_what_the_schema_says() -> None:
    assert DOCS.read_text() == schema.keys_markdown(), (
        "docs/plan-keys.md is out of step: storbench plan keys > docs/plan-keys.md"
    )


def test_plan_schema_plan_keys_command_prints_it() -> None:
    r = subprocess.run(
        [sys.executable, "-m", "storbench", "plan", "keys"], capture_output=True, text=True
    )
    assert r.returncode == 0 and r.stdout == schema.keys_markdown()


def test_plan_schema_every_key_is_documented_once_per_section() -> None:
    for section in schema.SECTIONS:
        names = section.names()
        assert len(names) == len(set(names)), section.title
        for k in section.keys:
            assert k.takes and k.doc.endswith("."), (section.title, k.name)
            assert not k.values or k.takes in ("choice",), (section.title, k.name)


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
