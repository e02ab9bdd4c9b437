"""Every command that reads results says the same on PostgreSQL as on SQLite.

Two real runs (fio on a scratch file, repetitions, a time series every 500 ms) and runs
imported from real fio outputs of two versions are recorded in a SQLite file, then merged
into a second SQLite file and into a PostgreSQL database of the harness's own server, so
both hold the same runs with the same provenance. Each command is then run on both and
its output compared byte for byte, but for the database's name: the terminal tables, JSON,
CSV, Markdown, HTML reports, SVG charts, archives, `cleanup` (refused: the runs came from
another database), `import` of fio files, and the
pages of `storbench serve`. The commands that write runs (`run`, `resume`, `merge`, `import`
of an archive) are tested on PostgreSQL in test_postgres_runs.py; the last test here checks
that every command of the CLI is one or the other, so a new command cannot skip PostgreSQL."""

from __future__ import annotations

import json
import re
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the harness modules
import pgserver
from pgserver import PASSWORD, ok
from pgserver import storbench as sb
from serving import serving

pytestmark = pytest.mark.integration

pg_server = pgserver.pg_server
FIO_VERSIONS = Path(__file__).resolve().parents[1] / "data" / "fio-versions"
#: real outputs of two fio versions (tests/data/fio-versions/README.md): two reporting
#: groups (two measurements) and a unified_rw_reporting one
IMPORTED = (
    FIO_VERSIONS / "fio-3.16" / "two-groups-jsonplus.json",
    FIO_VERSIONS / "fio-2.12" / "randrw-unified-json.json",
)
PLAN = """\
name: twin
targets:
  - file: {dir}/a.dat
workloads:
  - name: rand
    rw: randread
    bs: 4k
    size: 16m
    runtime: 1
    iodepth: [1, 4]
repeat: 2
interval: 500ms
"""
TIMEOUT = 120


@pytest.fixture(scope="module")
def twin(tmp_path_factory: pytest.TempPathFactory, pg_server: pgserver.PgServer) -> dict[str, Any]:
    """{"lite": SQLite file, "pg": URL, "dir": scratch dir, "names": {db: shown name}}: the
    same runs 1-2 (fio) and 3-4 (imported) in both."""
    d = tmp_path_factory.mktemp("pgcmd")
    source = str(d / "source.db")
    (d / "twin.yaml").write_text(PLAN.format(dir=d))
    for _ in range(2):
        ok(sb("run", str(d / "twin.yaml"), db=source, cwd=d))
    for f in IMPORTED:
        ok(sb("import", str(f), db=source, cwd=d))
    lite, pg = str(d / "lite.db"), pg_server.create_database("twin")
    for db in (lite, pg):
        assert "merged 4 run(s)" in ok(sb("merge", source, db=db, cwd=d))
    shown = pg.replace(PASSWORD, "***")  # how storbench names it
    return {"lite": lite, "pg": pg, "dir": d, "names": {lite: lite, pg: shown}}


#: what differs between two outputs of the same runs but for the database: a report's CSP
#: nonce (random); dates shown to the second: when a report was made, when each database
#: merged its runs or imported a file (the times stored are compared exactly, in the JSON
#: export: epoch seconds)
VARY = (
    (re.compile(r"nonce-[\w-]+|nonce=\"[\w-]+\""), "NONCE"),
    (re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d"), "DATE"),
)


def same_on_both(twin: dict[str, Any], text: dict[str, str]) -> None:
    """The two outputs, the database's name (and a table's trailing padding, which follows
    the name's length) taken out, are equal."""
    norm = {}
    for db, out in text.items():
        out = _without_merge_times(out)
        for pattern, repl in VARY:
            out = pattern.sub(repl, out)
        out = re.sub(r"postgresql://[^\s\"'<]*" + re.escape("twin"), "DB", out)
        out = out.replace(twin["lite"], "DB")
        norm[db] = "\n".join(line.rstrip() for line in out.splitlines())
    lite, pg = norm[twin["lite"]], norm[twin["pg"]]
    assert lite == pg
    assert "DB" in lite or len(lite) > 0


def _without_merge_times(text: str) -> str:
    """A JSON document without the times the runs were merged (each database had its own
    merge, seconds apart): a provenance entry's ``at``."""
    try:
        doc = json.loads(text)
    except ValueError:
        return text

    def strip(v: Any) -> Any:
        if isinstance(v, dict):
            return {k: strip(x) for k, x in v.items() if not (k == "at" and "via" in v)}
        return [strip(x) for x in v] if isinstance(v, list) else v

    return json.dumps(strip(doc), indent=2)


#: commands that print what they read (id: arguments)
PRINTED = {
    "runs": ("runs",),
    "runs-limit": ("runs", "--limit", "2"),
    "show": ("show", "1"),
    "show-latest-imported": ("show", "latest"),
    "show-imported-groups": ("show", "3"),
    "show-point-series": ("show", "2", "--point", "1"),
    "export-json": ("export", "1", "--format", "json"),
    "export-csv": ("export", "2", "--format", "csv"),
    "compare": ("compare", "1", "2"),
    "compare-json": ("compare", "1", "2", "--format", "json"),
    "compare-markdown-filtered": ("compare", "1:iodepth=4", "2:iodepth=4", "--format", "markdown"),
    "report-markdown": ("report", "1", "2", "--format", "markdown"),
    "history": ("history", "1", "2"),
    "history-json-by-plan": ("history", "--plan", "twin", "--format", "json"),
}


@pytest.mark.parametrize("args", list(PRINTED.values()), ids=list(PRINTED))
def test_postgres_commands_print_the_same_as_on_sqlite(
    twin: dict[str, Any], args: tuple[str, ...]
) -> None:
    out = {db: ok(sb(*args, db=db, cwd=twin["dir"])) for db in (twin["lite"], twin["pg"])}
    same_on_both(twin, out)
    assert out[twin["pg"]].strip(), "something was printed"


def test_postgres_commands_refuse_cleanup_of_a_merged_run_as_on_sqlite(
    twin: dict[str, Any],
) -> None:
    """Every run here came from another database (merge): `cleanup` acts on nothing outside
    the database for it, and says so the same way on both."""
    said = {}
    for db in (twin["lite"], twin["pg"]):
        r = sb("cleanup", "1", db=db, cwd=twin["dir"])
        assert r.returncode == 2, r.stdout + r.stderr
        said[db] = r.stderr
    same_on_both(twin, said)
    assert "came from another database" in said[twin["pg"]]


#: commands that write a file (id: arguments before -o, the file's suffix)
WRITTEN = {
    "report-html": (("report", "1", "2"), ".html"),
    "report-html-raw": (("report", "2", "--raw"), ".html"),
    "chart-svg": (("chart", "1", "2", "--kind", "iops-vs-iodepth"), ".svg"),
    "chart-percentiles": (("chart", "3", "--kind", "lat-percentiles"), ".svg"),
}


@pytest.mark.parametrize("args,suffix", list(WRITTEN.values()), ids=list(WRITTEN))
def test_postgres_commands_write_the_same_files_as_on_sqlite(
    twin: dict[str, Any], args: tuple[str, ...], suffix: str
) -> None:
    text = {}
    for i, db in enumerate((twin["lite"], twin["pg"])):
        path = twin["dir"] / f"out{i}{suffix}"
        ok(sb(*args, "-o", str(path), db=db, cwd=twin["dir"]))
        text[db] = path.read_text()
    same_on_both(twin, text)
    assert len(text[twin["pg"]]) > 1000
    if args[0] == "report":  # the test bed says where the run came from, with a date
        assert re.search(
            r"<th>came from</th><td>\S+source.db run \d \(via \S+source.db, 20", text[twin["pg"]]
        )


def test_postgres_commands_archive_and_import_as_on_sqlite(twin: dict[str, Any]) -> None:
    """An archive exported from either database imports to the same run (but for where it
    came from: each its own database and archive); fio outputs imported into both become
    the same run there."""
    d = twin["dir"]
    exported = []
    for i, db in enumerate((twin["lite"], twin["pg"])):
        archive = d / f"run2-{i}.sbz"
        ok(sb("export", "2", "--format", "archive", "-o", str(archive), db=db, cwd=d))
        fresh = str(d / f"fresh{i}.db")
        ok(sb("import", str(archive), db=fresh, cwd=d))
        doc = json.loads(ok(sb("export", "1", "--format", "json", db=fresh, cwd=d)))
        came = doc["run"]["inventory"].pop("provenance")
        assert [p["via"] for p in came] == [str(d / "source.db"), str(archive)]
        assert came[1]["db"] == twin["names"][db] and came[1]["run"] == 2
        exported.append(doc)
    assert exported[0] == exported[1]
    assert len(exported[0]["measurements"]) == 4
    out = {}
    for db in (twin["lite"], twin["pg"]):
        said = ok(sb("import", str(IMPORTED[0]), db=db, cwd=d))
        assert "as run 5" in said, said
        out[db] = ok(sb("show", "5", db=db, cwd=d))
    same_on_both(twin, out)


@pytest.fixture
def served(twin: dict[str, Any]) -> Iterator[dict[str, str]]:
    """`storbench serve --port 0` on each database: {db: base URL}."""
    with serving(twin["lite"], TIMEOUT) as (lite, _), serving(twin["pg"], TIMEOUT) as (pg, line):
        assert PASSWORD not in line
        yield {twin["lite"]: lite, twin["pg"]: pg}


PAGES = (
    "/",
    "/?suite=&name=twin",
    "/runs/1",
    "/runs/3",
    "/runs/2/points/1",
    "/runs/2/intervals/0.json",
    "/compare?a=1&b=2",
    "/compare?a=1%3Aiodepth%3D1&b=2%3Aiodepth%3D1",
    "/history?runs=1,2",
    "/runs/2/live.json",
)


def test_postgres_serve_pages_are_the_same_as_on_sqlite(
    twin: dict[str, Any], served: dict[str, str]
) -> None:
    for page in PAGES:
        text = {}
        for db, base in served.items():
            with urllib.request.urlopen(base + page, timeout=TIMEOUT) as resp:
                assert resp.status == 200, page
                text[db] = resp.read().decode()
        same_on_both(twin, text)


#: commands that do not read a results database
NO_DATABASE = {"plan", "suites", "agent"}
#: commands that write runs: tested on PostgreSQL in test_postgres_runs.py (and import of
#: fio outputs, archives here)
WRITE_RUNS = {"run", "resume", "merge", "import"}


def test_postgres_commands_cover_every_command() -> None:
    from storbench.cli import COMMANDS

    tested = {args[0] for args in PRINTED.values()}
    tested |= {args[0] for args, _ in WRITTEN.values()} | {"export", "import", "serve", "cleanup"}
    assert set(COMMANDS) == tested | NO_DATABASE | WRITE_RUNS, (
        "a command that reads results is tested here on both databases"
    )
    runs_tests = (Path(__file__).parent / "test_postgres_runs.py").read_text()
    for name in WRITE_RUNS:
        assert f'sb("{name}"' in runs_tests, f"{name} is tested on PostgreSQL"
