"""User text is printed as text: names, paths and messages never act as Rich markup, emoji
codes, terminal control sequences, spreadsheet formulas, Markdown or HTML.

The CLI cases run the installed ``storbench`` (test_cli_errors.storbench) on real fio runs
(the ``null`` engine: 1 s, 1 MiB) and on CRAFTED import files: a recorded real fio output
(tests/data/fio) copied with its job name, file name and options changed by this test. They
are not fio output; they stand for what anyone can write into a file given to
``storbench import`` (and what older databases may hold).
"""

from __future__ import annotations

import csv
import io
import json
import re
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from rich.console import Console
from test_cli_errors import HAVE_FIO, storbench

from storbench.plan import Point, Target
from storbench.report import markdown, safe
from storbench.report.terminal import ProgressReporter
from storbench.store import Store

DATA = Path(__file__).resolve().parent.parent / "data" / "fio"

#: Rich markup and an emoji code: shown as they are, never styled, linked or replaced
MARKUP_NAME = "sdb [/dev/sdb] [link=http://x]w[/link] [bold]b[/] :warning:"
#: OSC window title (ended by BEL), clear screen, a C1 CSI, a bidi override, backspace, CR
CONTROL = "A\x1b]0;pwned\x07B\x1b[2JC\x9b31mD\u202eE\x08F\rG"
#: what must never reach a terminal: C0 controls but LF and tab, DEL, C1 controls, the bidi
#: overrides and isolates
RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f\x80-\x9f\u202a-\u202e\u2066-\u2069]")

needs_fio = pytest.mark.skipif(not HAVE_FIO, reason="fio is not installed")


def crafted_import(tmp_path: Path, name: str, *, jobname: str, filename: str, **opts: str) -> Path:
    """A CRAFTED import file (not fio output): the recorded null-engine output with its job
    name, file name and options replaced, and a line of text before the JSON."""
    doc = json.loads((DATA / "null-engine-jsonplus.json").read_text())
    job = doc["jobs"][0]
    job["jobname"] = jobname
    job["job options"] = {**job["job options"], "filename": filename, **opts}
    path = tmp_path / name
    path.write_text(f"note: {jobname}\n" + json.dumps(doc, indent=2) + "\n")
    return path


def plain(r: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in r.stderr, r.stderr
    assert r.returncode == 0, r.stderr
    return r.stdout + r.stderr


def assert_no_raw_control(r: subprocess.CompletedProcess[str]) -> None:
    found = RAW_CONTROL.findall(r.stdout + r.stderr)
    assert not found, f"raw control characters on the terminal: {found!r}\n{r.stdout!r}"


# ---------------------------------------------------------------------------- terminal


@needs_fio
def test_escape_run_prints_markup_in_names_literally(tmp_path: Path) -> None:
    """Seen: a plan named `sdb [/dev/sdb]` crashed `run` with a MarkupError traceback."""
    target = tmp_path / "s [i]x [link=x].dat"
    plan = tmp_path / "p.yaml"
    plan.write_text(
        f"name: {json.dumps(MARKUP_NAME)}\n"
        f"description: {json.dumps(MARKUP_NAME)}\n"
        f"targets:\n  - file: {json.dumps(str(target))}\n"
        "workloads:\n"
        f"  - name: {json.dumps(MARKUP_NAME)}\n"
        "    ioengine: null\n    rw: randread\n    bs: 4k\n    size: 1m\n    runtime: 1\n"
    )
    out = plain(storbench(tmp_path, "run", str(plan)))
    assert MARKUP_NAME in out
    assert str(target) in out
    for cmd in (["show", "latest"], ["runs"], ["plan", "show", str(plan)]):
        out = plain(storbench(tmp_path, *cmd))
        assert (MARKUP_NAME if cmd != ["runs"] else "sdb [/dev/sdb]") in out, cmd  # runs: cut
        assert "\u26a0" not in out, cmd  # :warning: stays a text


def test_escape_progress_bar_shows_markup_and_no_controls() -> None:
    """The live progress bar (a terminal) renders a point's description itself."""
    buf = io.StringIO()
    con = Console(file=buf, force_terminal=True, width=200)
    point = Point(0, "k", 0, Target("file", f"/tmp/{MARKUP_NAME}{CONTROL}"), "w", {}, {})
    with ProgressReporter(con, [point]) as rep:
        rep.point_started(point, 1, 1)
        assert rep.progress is not None
        rep.progress.refresh()
    text = buf.getvalue()
    assert "[/dev/sdb]" in text
    assert "\x1b]0;pwned" not in text and "\x9b" not in text and "\u202e" not in text


def test_escape_import_show_runs_compare_put_no_controls_on_the_terminal(
    tmp_path: Path,
) -> None:
    """Control sequences in an imported file's job name, file name and the text before its
    JSON, in the run's name: every command shows them as \\x1b..., never raw."""
    f = crafted_import(tmp_path, "crafted.json", jobname=CONTROL, filename=f"/tmp/{CONTROL}")
    shown = "\\x1b]0;pwned\\x07"
    for cmd, shows in (
        (["import", "--name", f"n{MARKUP_NAME}", str(f)], True),
        (["show", "latest"], False),
        (["show", "latest", "--point", "1"], True),
        (["runs"], False),
        (["compare", "latest", "latest"], True),
        (["compare", "latest", "latest", "--format", "markdown"], False),  # \\x1b\]0...
        (["export", "latest", "--format", "csv"], True),
        (["report", "latest", "--format", "markdown"], False),
    ):
        r = storbench(tmp_path, *cmd)
        out = plain(r)
        assert_no_raw_control(r)
        assert not shows or shown in out, cmd


def test_escape_old_database_names_print_as_text(tmp_path: Path) -> None:
    """A database written by an older version (no checks at all) may hold anything."""
    store = Store(str(tmp_path / "results.db"))
    tgt = Target("file", f"/mnt/{CONTROL}", name=MARKUP_NAME)
    store.runs.create(
        kind="run",
        name=f"{MARKUP_NAME}{CONTROL}",
        source=CONTROL,
        plan_text=None,
        overrides=[f"--set x={CONTROL}"],
        inventory={"host": {"hostname": CONTROL, "kernel": MARKUP_NAME}},
        fio_version=None,
        storbench_version="0",
        argv=[],
        points=[Point(0, "k", 0, tgt, MARKUP_NAME, {"rw": CONTROL}, {})],
    )
    for cmd, shown in ((["show", "latest"], MARKUP_NAME), (["runs"], "sdb [/dev/sdb]")):
        r = storbench(tmp_path, *cmd)
        out = plain(r)
        assert_no_raw_control(r)
        assert shown in out


# ---------------------------------------------------------------------------- CSV


FORMULAS = {
    "jobname": '=HYPERLINK("http://evil.example","click")',
    "filename": "@SUM(1+1)*cmd|' /C calc'!A0",
    "description": "-2+3+cmd|' /C calc'!A0",
    "buffer_pattern": "+cmd",
    "verify_pattern": "\tx",
}


def test_escape_csv_export_neutralises_formulas(tmp_path: Path) -> None:
    """OWASP: a text cell starting with = + - @ tab or CR gets a leading quote; numbers
    (also numbers as text, such as fio's option values) stay numbers."""
    f = crafted_import(
        tmp_path,
        "crafted.json",
        jobname=FORMULAS["jobname"],
        filename=FORMULAS["filename"],
        description=FORMULAS["description"],
        buffer_pattern=FORMULAS["buffer_pattern"],
        verify_pattern=FORMULAS["verify_pattern"],
        rate_iops="-1",
        **{"=key": "1"},
    )
    plain(storbench(tmp_path, "import", "--name", "+run", str(f)))
    r = storbench(tmp_path, "export", "latest", "--format", "csv")
    rows = list(csv.reader(io.StringIO(plain(r))))
    cells = [c for row in rows for c in row]
    assert not [c for c in cells if c[:1] in ("=", "+", "@", "\t", "\r")], cells
    assert [c for c in cells if c.startswith("-")] == ["-1"]  # a number, kept
    head, row = rows
    rec = dict(zip(head, row, strict=True))
    assert rec["workload"] == "'" + FORMULAS["jobname"]
    assert rec["target"] == "'" + FORMULAS["filename"]
    assert rec["description"] == "'" + FORMULAS["description"]
    assert rec["verify_pattern"] == "'" + FORMULAS["verify_pattern"]
    assert "'=key" in head
    assert float(rec["read_iops"]) > 0 and rec["iodepth"] == "1"


# ---------------------------------------------------------------------------- Markdown

MD_NAME = "<img src=x onerror=alert(1)> | *b* _i_ [l](http://e) ![p](http://t) $m$ `c` ~s~\nnext"


def _table_cells(line: str) -> list[str]:
    return re.split(r"(?<!\\)\|", line.strip())[1:-1]


def test_escape_markdown_report_keeps_names_inside_their_cells(tmp_path: Path) -> None:
    """Raw HTML, pipes, newlines and emphasis/link/math punctuation in names stay text."""
    a = crafted_import(tmp_path, "a.json", jobname=MD_NAME, filename=f"/tmp/a{MD_NAME}")
    b = crafted_import(tmp_path, "b.json", jobname="plain", filename="/tmp/b")
    plain(storbench(tmp_path, "import", "--name", MD_NAME, str(a), str(b)))
    plain(storbench(tmp_path, "import", "--name", "other", str(b)))
    for cmd in (
        ["report", "1", "--format", "markdown"],
        ["report", "1", "2", "--format", "markdown"],
        ["compare", "1", "2", "--format", "markdown"],
    ):
        text = plain(storbench(tmp_path, *cmd))
        assert not re.search(r"(?<!\\)<img|(?<!\\)\]\(http", text), cmd
        assert "\nnext" not in text, cmd
        lines = text.splitlines()
        for i, line in enumerate(lines):
            if line.startswith("|") and not lines[i - 1].startswith("|"):  # a table's header
                n = len(_table_cells(line))
                j = i
                while j < len(lines) and lines[j].startswith("|"):
                    assert len(_table_cells(lines[j])) == n, (cmd, lines[j])
                    j += 1
        assert "\\<img src=x onerror=alert(1)\\> \\| \\*b\\*" in text, cmd


def test_escape_markdown_table_cells() -> None:
    text = markdown.table(["a", "b"], [[MD_NAME, "-1.5"]])
    row = text.splitlines()[2]
    assert len(_table_cells(row)) == 2
    assert row.endswith(" | -1.5 |") and "\\<img" in row and "\n" not in row


# ---------------------------------------------------------------------------- charts and HTML


def test_escape_chart_svg_stays_well_formed_xml(tmp_path: Path) -> None:
    """An SVG file is XML: a control character in a title would make it unreadable."""
    f = crafted_import(tmp_path, "c.json", jobname=f"${CONTROL}$", filename=f"/tmp/{CONTROL}")
    plain(storbench(tmp_path, "import", "--name", "$x$", str(f)))
    r = storbench(tmp_path, "chart", "latest", "--kind", "lat-percentiles", "-o", "c.svg")
    plain(r)
    assert_no_raw_control(r)
    ET.parse(tmp_path / "c.svg")


def test_escape_html_report_has_no_raw_controls(tmp_path: Path) -> None:
    f = crafted_import(tmp_path, "h.json", jobname=CONTROL, filename=f"/tmp/{CONTROL}")
    plain(storbench(tmp_path, "import", "--name", "</script><script>alert(1)", str(f)))
    plain(storbench(tmp_path, "report", "latest", "-o", "r.html"))
    page = (tmp_path / "r.html").read_text()
    assert not RAW_CONTROL.findall(page)
    assert page.count("<script") == 1 and page.count("</script>") == 1
    assert "\\x1b]0;pwned\\x07" in page


# ---------------------------------------------------------------------------- the helpers


def test_escape_visible_keeps_lines_and_shows_controls() -> None:
    assert safe.visible("a\tb\r\nc") == "a\tb\nc"
    assert safe.visible(CONTROL) == "A\\x1b]0;pwned\\x07B\\x1b[2JC\\x9b31mD\\u202eE\\x08F\\rG"
    assert safe.one_line("a\nb\tc") == "a\\nb\\tc"
    assert safe.visible("\ud800").encode() == b"\\ud800"


def test_escape_csv_cell_leaves_numbers_alone() -> None:
    assert [safe.csv_cell(v) for v in (-1.5, 3, None, True)] == [-1.5, 3, None, True]
    assert [safe.csv_cell(v) for v in ("-1.5", "+2", "1e-3", "-")] == ["-1.5", "+2", "1e-3", "'-"]
    assert safe.csv_cell("=1+1") == "'=1+1" and safe.csv_cell("a=b") == "a=b"


def test_escape_md_code_survives_backticks() -> None:
    assert safe.md_code("a`b") == "``a`b``"
    assert safe.md_code("`x`") == "`` `x` ``"
