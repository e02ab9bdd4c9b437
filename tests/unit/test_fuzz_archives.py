"""Fuzzing the archive reader (issue 25): `storbench import` given arbitrary bytes (as they
are, gzip'd, behind an archive's first bytes) and arbitrary valid-looking archives --
real ones (the runs of tests/data/store/v6-runs.sql, and a run stored from recorded real
fio outputs by tests/stored_runs.py) with one to three members changed to hostile values,
deleted, or the whole cut short. The property: exit 2 with one message and the database
as it was, or exit 0 with a correct import (the run stored is the archive's, and `runs`,
`show` and `export` read it); never a traceback. Bounded like test_fuzz_inputs.py's
(derandomised; STORBENCH_FUZZ_RANDOM=1 and STORBENCH_FUZZ_EXAMPLES=N explore further)."""

from __future__ import annotations

import copy
import gzip
import json
import math
import shutil
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_fuzz_inputs import BAD, HOSTILE, examples, invoke, mutate, sandbox, scalar

from storbench.plan import Point, Target
from storbench.store import Store
from storbench.store.archive import SERIES_TABLES

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the harness modules
from stored_runs import recorded, stored_run, stored_text

DATA = Path(__file__).resolve().parents[1] / "data"


def originals(root: str) -> tuple[str, tuple[dict[str, Any], ...]]:
    """A database with one run of its own (the one an import must leave as it is) and the
    real archives the examples change, made once in ``root``."""
    base = Path(root)
    old = base / "old.db"
    with sqlite3.connect(old) as c:
        c.executescript((DATA / "store" / "v6-runs.sql").read_text())
    store = Store(str(old))
    docs = [store.archive.dump(r) for r in (1, 2)]
    store.close()
    mine = base / "mine.db"
    store = Store(str(mine))
    point = Point(0, "k0", 0, Target("file", "/tmp/a.dat"), "w", {"rw": "randread"}, {})
    made = stored_run(store, [(point, recorded("libaio-randrw-jsonplus"))], name="mine")
    docs.append(store.archive.dump(made))
    docs[-1].pop("from")  # not the run here: an archive of a run like it, from elsewhere
    store.close()
    return str(mine), tuple(json.loads(json.dumps(d)) for d in docs)


@pytest.fixture(scope="module")
def prepared(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, tuple[dict[str, Any], ...]]:
    return originals(str(tmp_path_factory.mktemp("archives")))


def members(doc: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """The paths into ``doc`` a change may take: every member, but of a long list or
    mapping (a histogram's bins, a series' rows) only the first three."""
    yield prefix
    if isinstance(doc, dict):
        for k in list(doc)[:3] if len(doc) > 12 else doc:
            yield from members(doc[k], (*prefix, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc[:3]):
            yield from members(v, (*prefix, i))


def value_at(doc: Any, path: tuple[Any, ...]) -> Any:
    for k in path:
        doc = doc[k]
    return doc


def alike(old: Any) -> st.SearchStrategy[Any]:
    """A value of the kind of ``old``: hostile text for text, another number for a number,
    a mapping or list with a hostile entry more."""
    if isinstance(old, bool):
        return st.booleans()
    if isinstance(old, int):
        return st.one_of(st.integers(0, 2**63 - 1), st.sampled_from([0, 1, 2**31, 2**53 + 1]))
    if isinstance(old, float):
        return st.one_of(st.floats(0, 1e300), st.sampled_from([0.0, 1e-300, 4e9]))
    if isinstance(old, str):
        return st.one_of(st.sampled_from(HOSTILE), st.text(max_size=20))
    if isinstance(old, dict):
        return st.builds(lambda k, v: {**old, k: v}, st.sampled_from(HOSTILE), scalar)
    if isinstance(old, list):
        return st.builds(lambda v: [*old, v], scalar)
    return scalar


def without_origin(doc: dict[str, Any]) -> dict[str, Any]:
    """An archive document without where it came from, a series table left out (or null)
    as the empty table it stands for."""
    doc = copy.deepcopy(doc)
    doc.pop("from", None)
    doc["run"]["inventory"].pop("provenance", None)
    for table in SERIES_TABLES:
        if not doc.get(table) or not doc[table]["rows"]:
            doc[table] = {"rows": []}
        doc[table]["rows"] = sorted(doc[table]["rows"], key=json.dumps)  # a set of rows
    return doc


def same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Whether two archive documents hold the same (a number as its value, NaN too)."""

    def plain(x: Any) -> Any:
        if isinstance(x, dict):
            return {k: plain(v) for k, v in x.items()}
        if isinstance(x, list):
            return [plain(v) for v in x]
        return "NaN" if isinstance(x, float) and math.isnan(x) else x

    return plain(without_origin(a)) == plain(without_origin(b))


def check_import(
    root: Path, data: bytes, capsys: pytest.CaptureFixture[str], doc: Any = None
) -> None:
    """Import ``data`` into the example's database: refused with one message and nothing
    changed, or imported right (``doc``, when given, is what it holds)."""
    (root / "x.sbz").write_bytes(data)
    before = stored_text(root / "results.db")
    code, out, err = invoke(["import", "x.sbz"], capsys)
    assert code in (0, 2), (code, out, err)
    if code == 2 or "here already" in out:
        assert code == 0 or err.count("storbench: error:") == 1, err
        assert stored_text(root / "results.db") == before, "a refused archive left something"
        return
    store = Store(str(root / "results.db"), write=False)
    try:
        runs = store.runs.all()
        assert len(runs) == 2, out
        if isinstance(doc, dict):
            again = store.archive.dump(runs[0].id)
            assert same(again, doc), "the run stored is not the archive's"
    finally:
        store.close()
    for args in (["runs"], ["show", "latest"], ["export", "latest", "--format", "json"]):
        code, out, err = invoke(args, capsys)
        assert code == 0, (args, out, err)


@examples(150)
@given(data=st.data())
def test_fuzz_archive_bytes(
    data: st.DataObject,
    capsys: pytest.CaptureFixture[str],
    prepared: tuple[str, tuple[dict[str, Any], ...]],
) -> None:
    """Arbitrary bytes, as they are or gzip'd, and behind an archive's first bytes."""
    body = data.draw(st.binary(max_size=300))
    head = data.draw(st.sampled_from([b"", b'{"format": "storbench-archive", "version": 1']))
    raw = head + body
    if data.draw(st.booleans()):
        raw = gzip.compress(raw)
        if data.draw(st.booleans()):
            raw = raw[: data.draw(st.integers(0, len(raw)))]
    with sandbox() as root:
        shutil.copy(prepared[0], root / "results.db")
        check_import(root, raw, capsys)


@examples(150)
@given(data=st.data())
def test_fuzz_archive_members(
    data: st.DataObject,
    capsys: pytest.CaptureFixture[str],
    prepared: tuple[str, tuple[dict[str, Any], ...]],
) -> None:
    """A real archive with one to three members changed, deleted or cut short."""
    doc: Any = copy.deepcopy(data.draw(st.sampled_from(prepared[1])))
    for _ in range(data.draw(st.integers(1, 3))):
        # a member first (each as likely), then a path inside it
        tops = sorted(doc) if isinstance(doc, dict) else [None]
        top = data.draw(st.sampled_from(tops))
        inside = [()] if top is None else list(members(doc[top], (top,)))
        where = data.draw(st.sampled_from(inside))
        old = value_at(doc, where)
        hostile = st.one_of(st.sampled_from(BAD), scalar)
        # half the time a value of the kind that was there: what a check may let through
        new = copy.deepcopy(data.draw(st.one_of(hostile, alike(old))))
        try:
            doc = mutate(doc, where, new, data.draw(st.booleans()))
        except (KeyError, IndexError, TypeError):
            continue
    body = json.dumps(doc, allow_nan=True).encode()
    cut = data.draw(st.booleans()) and data.draw(st.booleans())
    if cut:
        body = body[: data.draw(st.integers(0, len(body)))]
    with sandbox() as root:
        shutil.copy(prepared[0], root / "results.db")
        check_import(root, gzip.compress(body), capsys, None if cut else doc)
