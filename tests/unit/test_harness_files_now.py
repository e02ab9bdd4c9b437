"""The harness's reading of a directory another process is changing (tests/waiting.py):
what is removed between being listed and being read is left out, never an error; a fifo
is not read (reading it would block)."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the harness modules
from waiting import files_now, size_of


def _tree(base: Path) -> None:
    (base / "a").mkdir(parents=True)
    (base / "b").mkdir()
    (base / "top").write_bytes(b"0")
    (base / "a" / "one").write_bytes(b"11")
    (base / "b" / "two").write_bytes(b"222")


def test_harness_files_now_leaves_out_a_directory_removed_while_read(tmp_path: Path) -> None:
    _tree(tmp_path)
    seen = files_now(tmp_path, Path.read_bytes)
    first = next(seen)  # the top directory's file: both subdirectories are listed by now
    assert first == (tmp_path / "top", b"0")
    shutil.rmtree(tmp_path / "b")
    assert dict(seen) == {tmp_path / "a" / "one": b"11"}


def test_harness_files_now_does_not_read_a_fifo(tmp_path: Path) -> None:
    _tree(tmp_path)
    os.mkfifo(tmp_path / "a" / "pipe")
    assert sorted(size for _, size in files_now(tmp_path, size_of)) == [1, 2, 3]
