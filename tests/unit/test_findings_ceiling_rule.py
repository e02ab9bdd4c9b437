"""page-cache found by the whole run (engines/fio/ceiling.py), on recorded real fio output:
buffered reads far beyond what the same target gave with direct=1 in the run are flagged;
without a fitting direct=1 reference nothing is said."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from storbench.engines import fio
from storbench.engines.fio import ceiling
from storbench.model.findings import Finding
from storbench.model.metrics import Measurement
from storbench.plan import Point, load_plan

DATA = Path(__file__).resolve().parent.parent / "data" / "fio"


def _meas(name: str) -> Measurement:
    return fio.parse_output((DATA / name).read_text())[0]


def _point(index: int, target: str = "/tmp/storbench-ceiling.dat", **params: object) -> Point:
    p = load_plan("quick", targets=[target]).expand()[0]
    return dataclasses.replace(p, index=index, params=dict(params), extra={})


#: the job files' own options (tests/data/fio/*.fio)
DIRECT_4K = {"ioengine": "psync", "direct": 1, "rw": "randread", "bs": "4k", "size": "64m"}
CACHED_4K = {**DIRECT_4K, "direct": 0, "invalidate": 0, "time_based": 1, "runtime": 2}
DIRECT_128K_READ = {"ioengine": "psync", "direct": 1, "rw": "read", "bs": "128k"}


def _check(pairs: list[tuple[Point, Measurement]]) -> tuple[dict[int, list[Finding]], list[int]]:
    asked: list[int] = []
    by_index = {p.index: m for p, m in pairs}

    def measured(index: int) -> Measurement | None:
        asked.append(index)
        return by_index.get(index)

    return ceiling.beyond_direct([p for p, _ in pairs], measured), asked


def test_findings_ceiling_buffered_random_reads_beyond_direct() -> None:
    direct, cached = _meas("psync-randread-json.json"), _meas("psync-cached-randread-json.json")
    found, _ = _check([(_point(0, **DIRECT_4K), direct), (_point(1, **CACHED_4K), cached)])
    assert list(found) == [1]
    (f,) = found[1]
    assert f.code == "page-cache"
    assert f.data["direct_point"] == 1
    assert f.data["read_iops"] > 2 * f.data["direct_iops"]
    assert "point 1" in f.evidence and "direct=1" in f.evidence


def test_findings_ceiling_needs_a_fitting_direct_reference() -> None:
    cached = _meas("psync-cached-randread-json.json")
    # no direct=1 read of the target: nothing to compare with, and nothing read
    found, asked = _check([(_point(0, **CACHED_4K), cached), (_point(1, **CACHED_4K), cached)])
    assert found == {} and asked == []
    # a direct=1 read only at larger blocks says nothing of 4k IOPS
    big = _meas("twojobs-sections-json.json")
    found, _ = _check([(_point(0, **DIRECT_128K_READ), big), (_point(1, **CACHED_4K), cached)])
    assert found == {}
    # another target's direct figure is not this target's
    other = _point(0, target="/tmp/storbench-other.dat", **DIRECT_4K)
    found, asked = _check(
        [(other, _meas("psync-randread-json.json")), (_point(1, **CACHED_4K), cached)]
    )
    assert found == {} and asked == []


def test_findings_ceiling_leaves_a_point_flagged_already() -> None:
    cached = _meas("psync-cached-randread-json.json")
    cached.findings = [Finding("page-cache", "fits in memory", "set direct: 1")]
    direct = _meas("psync-randread-json.json")
    found, _ = _check([(_point(0, **DIRECT_4K), direct), (_point(1, **CACHED_4K), cached)])
    assert found == {}


def test_findings_ceiling_whichever_point_ran_first() -> None:
    """The check runs once the run's points ran: a direct=1 point measured after the
    buffered one is its reference as well."""
    direct, cached = _meas("psync-randread-json.json"), _meas("psync-cached-randread-json.json")
    found, _ = _check([(_point(0, **CACHED_4K), cached), (_point(1, **DIRECT_4K), direct)])
    assert list(found) == [0]
    (f,) = found[0]
    assert f.data["direct_point"] == 2 and "point 2" in f.evidence


def test_findings_ceiling_leaves_buffered_sequential_reads_alone() -> None:
    """A buffered sequential read reads ahead (the device's read_ahead_kb, 8 MiB on a virtio
    disk): however far beyond the direct figures it goes, it is not compared, nor read."""
    cached = _meas("psync-cached-randread-json.json")  # its figures, read sequentially
    seq = {**CACHED_4K, "rw": "read", "bs": "128k"}
    big = _meas("twojobs-sections-json.json")
    direct = _meas("psync-randread-json.json")
    found, asked = _check(
        [
            (_point(0, **DIRECT_128K_READ), big),
            (_point(1, **DIRECT_4K), direct),
            (_point(2, **seq), cached),
        ]
    )
    assert found == {} and 2 not in asked
