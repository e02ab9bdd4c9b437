"""Probes kept between runs (storbench.hosts.probecache) and asked once per inventory: fio's
version and engines and the job files it accepted come from the cache only while the same
fio file is there; a refusal is always fio's own; the inventory asks each command once."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from storbench.engines.fio import tool
from storbench.hosts import probecache
from storbench.hosts.inventory import probe

FAKE_FIO = """#!/bin/sh
echo "$*" >> "{log}"
case "$*" in
  --version) echo fio-3.99 ;;
  --enghelp) printf 'Available IO engines:\\n\\tpsync\\n\\tnull\\n' ;;
  *--parse-only*) grep -q bogus "$3" && {{ echo "fio: bad option bogus" >&2; exit 1; }} ;;
esac
exit 0
"""


@pytest.fixture
def fake_fio(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, Path]]:
    """A fio that logs each command line, answers --version, --enghelp and --parse-only (it
    refuses a job with ``bogus`` in it); the cache in tmp_path."""
    log = tmp_path / "calls.log"
    fio = tmp_path / "bin" / "fio"
    fio.parent.mkdir()
    fio.write_text(FAKE_FIO.format(log=log))
    fio.chmod(fio.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setattr(tool, "FIO", str(fio))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv(probecache.DISABLE_VAR, raising=False)
    tool._facts.cache_clear()
    yield fio, log
    tool._facts.cache_clear()


def calls(log: Path) -> list[str]:
    return log.read_text().splitlines() if log.exists() else []


def test_probe_cache_fio_facts_asked_once_then_kept(fake_fio: tuple[Path, Path]) -> None:
    _, log = fake_fio
    assert tool.fio_version() == "fio-3.99"
    assert tool.available_engines() == frozenset({"psync", "null"})
    assert sorted(calls(log)) == ["--enghelp", "--version"]
    tool._facts.cache_clear()  # a new run of storbench
    assert (tool.fio_version(), tool.available_engines()) == ("fio-3.99", {"psync", "null"})
    assert len(calls(log)) == 2, "the second run asked fio again"


def test_probe_cache_another_fio_file_is_asked_again(fake_fio: tuple[Path, Path]) -> None:
    fio, log = fake_fio
    tool.fio_version()
    tool._facts.cache_clear()
    fio.write_text(FAKE_FIO.format(log=log).replace("3.99", "3.100"))  # an upgrade
    assert tool.fio_version() == "fio-3.100"
    assert calls(log).count("--version") == 2


def test_probe_cache_parse_only_keeps_what_fio_accepted(
    fake_fio: tuple[Path, Path], tmp_path: Path
) -> None:
    _, log = fake_fio
    good = "[p0]\nrw=randread\nbs=4k\n"
    assert tool.parse_only(good, str(tmp_path)) is None
    assert tool.parse_only(good, str(tmp_path)) is None
    parses = [c for c in calls(log) if "--parse-only" in c]
    assert len(parses) == 1
    # fio's clock check skipped: a parse runs no job
    assert parses[0].startswith("--clocksource=clock_gettime --parse-only ")
    assert tool.parse_only(good + "iodepth=2\n", str(tmp_path)) is None  # other text: asked
    assert len([c for c in calls(log) if "--parse-only" in c]) == 2


def test_probe_cache_parse_only_refusal_is_fio_own_each_time(
    fake_fio: tuple[Path, Path], tmp_path: Path
) -> None:
    _, log = fake_fio
    bad = "[p0]\nbogus=1\n"
    for _ in range(2):
        assert tool.parse_only(bad, str(tmp_path)) == "fio: bad option bogus"
    assert len([c for c in calls(log) if "--parse-only" in c]) == 2


def test_probe_cache_disabled_or_foreign_entries_are_not_read(
    fake_fio: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    probecache.save("k", "abc", {"x": 1})
    assert probecache.load("k", "abc") == {"x": 1}
    assert probecache.load("k", "abd") is None
    entry = probecache.cache_dir() / "k" / "abc.json"
    entry.write_text('{"key": "other", "value": 2}')  # not the entry it says it is
    assert probecache.load("k", "abc") is None
    entry.write_text("{not json")
    assert probecache.load("k", "abc") is None
    monkeypatch.setenv(probecache.DISABLE_VAR, "1")
    probecache.save("k", "new", 1)
    assert not (probecache.cache_dir() / "k" / "new.json").exists()
    if os.geteuid() == 0:  # root may chown: an entry another user wrote is ignored
        monkeypatch.delenv(probecache.DISABLE_VAR)
        probecache.save("k", "theirs", 3)
        os.chown(probecache.cache_dir() / "k" / "theirs.json", 65534, 65534)
        assert probecache.load("k", "theirs") is None


def test_probe_cache_unwritable_cache_only_asks_again(
    fake_fio: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "file"))  # not a directory
    assert tool.parse_only("[p0]\nrw=read\n", str(tmp_path)) is None
    assert tool.fio_version() == "fio-3.99"


def test_probe_cache_inventory_asks_each_command_once(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[list[str]] = []

    def ask(args: list[str], ok_codes: tuple[int, ...]) -> str | None:
        asked.append(args)
        return f"answer {len(asked)}"

    monkeypatch.setattr(probe, "_ask", ask)
    with probe.one_look():
        assert probe._run(["findmnt", "-T", "/x"]) == "answer 1"
        assert probe._run(["findmnt", "-T", "/x"]) == "answer 1"
        assert probe._run(["findmnt", "-T", "/y"]) == "answer 2"
    assert probe._run(["findmnt", "-T", "/x"]) == "answer 3"  # outside: asked each time
    assert len(asked) == 3
