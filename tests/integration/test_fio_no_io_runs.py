"""A point that did no I/O is not "ok": real fio on a real file, as a hostile tester found it.

``size: 200%`` of a file storbench did not create: fio (3.33) lays the job out at twice the
file, may not extend it (``--readonly``), fails to allocate its random map, does no I/O and
says error 0, exit 0 -- and the point was recorded "ok" with 0.0 IOPS. ``plan check`` now
refuses such a percentage (fio reads only 1% to 100%), and the fio engine fails any local
point that did no I/O, with fio's own words."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from storbench.engines import fio
from storbench.plan import Point, Target

pytestmark = pytest.mark.integration

HAVE_FIO = shutil.which("fio") is not None or fio.fio_path() is not None
THEIRS = os.urandom(1 << 20) * 8  # 8 MiB of a file storbench did not create


@pytest.mark.skipif(not HAVE_FIO, reason="fio is not installed")
def test_fio_no_io_point_fails_with_fios_words(tmp_path: Path) -> None:
    """The engine given the point as it stood before plan check refused it: real fio does
    no I/O, and the point fails saying so and why (fio's own messages)."""
    target = tmp_path / "theirs.dat"
    target.write_bytes(THEIRS)
    work = tmp_path / "work"
    work.mkdir()
    params = {"rw": "randread", "bs": "4k", "size": "200%", "runtime": 1, "time_based": 1}
    point = Point(0, "k", 0, Target("file", str(target)), "r", params, {})
    fr = fio.run_point(point, str(work))
    m = fr.measurement
    assert fr.exit_code == 0  # fio itself says nothing went wrong
    assert '"total_ios" : 0' in fr.raw_output  # and did nothing
    assert m.status == "failed", (m.status, m.error, fr.raw_output[-2000:])
    assert m.error is not None and m.error.startswith("it did no I/O"), m.error
    assert "random map" in m.error, m.error  # fio's reason, in its words
    assert target.read_bytes() == THEIRS


@pytest.mark.skipif(not HAVE_FIO, reason="fio is not installed")
def test_fio_no_io_size_beyond_100_percent_is_refused_before_any_io(tmp_path: Path) -> None:
    target = tmp_path / "theirs.dat"
    target.write_bytes(THEIRS)
    plan = tmp_path / "plan.yaml"
    plan.write_text(
        f"name: pct\ntargets:\n  - file: {target}\nworkloads:\n  - name: r\n"
        "    rw: randread\n    bs: 4k\n    size: 200%\n    runtime: 1\n    time_based: 1\n"
    )
    db = tmp_path / "r.db"
    for args in (["plan", "check", str(plan)], ["run", str(plan), "--db", str(db)]):
        r = subprocess.run(
            [sys.executable, "-m", "storbench", *args],
            capture_output=True,
            text=True,
            timeout=300,
            cwd=tmp_path,
        )
        assert r.returncode == 2, (args, r.stdout, r.stderr)
        assert "plan.yaml:8" in r.stderr and "200%" in r.stderr, r.stderr
        assert "a percentage from 1% to 100%" in r.stderr and "Traceback" not in r.stderr
    assert not db.exists()  # nothing recorded
    assert target.read_bytes() == THEIRS
