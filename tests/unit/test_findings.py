"""The findings' checks on recorded real fio output (tests/data/fio) and the points' options:
each trap beside a case that must not be flagged; the codes as the README lists them."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from storbench.analysis import findings
from storbench.engines import fio
from storbench.engines.fio import findings as fio_findings
from storbench.model.findings import CODES, Facts, unjudged
from storbench.model.metrics import Measurement
from storbench.plan import Point, load_plan

DATA = Path(__file__).resolve().parent.parent / "data" / "fio"
README = Path(__file__).resolve().parents[2] / "README.md"
GiB = 1 << 30


def _meas(name: str) -> Measurement:
    return fio.parse_output((DATA / name).read_text())[0]


def _point(target: str = "/tmp/storbench-findings.dat", **params: object) -> Point:
    p = load_plan("quick", targets=[target]).expand()[0]
    return dataclasses.replace(p, params=dict(params), extra={})


def _codes(found: list) -> list[str]:
    return [f.code for f in found]


def test_findings_client_cpu_bound_by_fios_own_figures() -> None:
    """The null engine at full speed: 99.9 % of a CPU; a psync read at 43 %: not bound."""
    fast = findings.findings(_meas("null-engine-jsonplus.json"))
    assert "client-cpu-bound" in _codes(fast)
    cpu = next(f for f in fast if f.code == "client-cpu-bound")
    assert cpu.data["usr_cpu_pct"] + cpu.data["sys_cpu_pct"] >= 99
    assert "client-cpu-bound" not in _codes(findings.findings(_meas("psync-randread-json.json")))
    # the null engine does no I/O: its CPU is what it measures, not a trap
    null = findings.findings(_meas("null-engine-jsonplus.json"), params={"ioengine": "null"})
    assert "client-cpu-bound" not in _codes(null)


def test_findings_client_cpu_bound_not_of_a_job_that_reached_its_own_rate_cap() -> None:
    """A job held to a rate it reached was set by its cap, whatever CPU time fio reports (a
    busy machine's sampled accounting charges a job waking 2,000 times a second up to 95 %
    of a CPU); one short of its cap may be bound. The recording is the null engine's 99.9 %."""
    meas = _meas("null-engine-jsonplus.json")
    iops = sum(d.iops for d in meas.directions.values())
    reached = {"rate_iops": int(iops)}
    assert findings.held_to_its_rate(meas, reached)
    assert "client-cpu-bound" not in _codes(findings.findings(meas, params=reached))
    short = {"rate_iops": f"{int(iops)},{int(iops)}", "numjobs": 2}  # asked twice as much
    assert not findings.held_to_its_rate(meas, short)
    assert "client-cpu-bound" in _codes(findings.findings(meas, params=short))
    assert not findings.held_to_its_rate(meas, {"rate_iops": "lots"})


def test_findings_host_busy_by_its_samples() -> None:
    meas = _meas("psync-randread-json.json")
    meas.extra["host_cpu"] = {"": {"busy_pct_mean": 97.5, "samples": 4}}
    found = [f for f in findings.findings(meas) if f.code == "host-busy"]
    assert [f.data for f in found] == [{"host_cpu_busy_pct": 97.5}]
    assert found[0].judged  # a warning: the job's own CPU time did not say it was bound
    meas.extra["host_cpu"] = {"": {"busy_pct_mean": 60.0, "samples": 4}}
    assert "host-busy" not in _codes(findings.findings(meas))


def test_findings_short_run_below_a_thousand_ios() -> None:
    """Two jobs of 256 I/Os each: a p99 of 512 I/Os rests on 5 of them; 16,384: enough."""
    few = [
        f for f in findings.findings(_meas("twojobs-sections-json.json")) if f.code == "short-run"
    ]
    assert [f.data for f in few] == [{"ios": 512}] and "5 slowest" in few[0].evidence
    assert "short-run" not in _codes(findings.findings(_meas("psync-randread-json.json")))


def test_findings_none_for_a_failed_measurement() -> None:
    meas = _meas("twojobs-sections-json.json")
    meas.status = "failed"
    assert findings.findings(meas) == []


def test_findings_page_cache_when_buffered_data_fits_in_memory() -> None:
    facts = Facts(memory_available={"": 8 * GiB})
    buffered = _point(rw="randread", size="1g")
    found = fio_findings.page_cache(buffered, facts)
    assert _codes(found) == ["page-cache"]
    assert found[0].data == {"direct": 0, "data_bytes": GiB, "memory_available_bytes": 8 * GiB}
    # direct I/O, buffered=0, more data than memory, unknown memory, an engine without cache
    assert fio_findings.page_cache(_point(rw="randread", size="1g", direct=1), facts) == []
    assert fio_findings.page_cache(_point(rw="randread", size="1g", buffered=0), facts) == []
    assert fio_findings.page_cache(_point(rw="randread", size="16g"), facts) == []
    assert fio_findings.page_cache(buffered, Facts()) == []
    nulls = _point(rw="randread", size="1g", ioengine="null")
    assert fio_findings.page_cache(nulls, facts) == []


def test_findings_page_cache_not_for_writes_synced_each_time() -> None:
    facts = Facts(memory_available={"": 8 * GiB})
    for synced in ({"fsync": 1}, {"fdatasync": 1}, {"sync": 1}, {"sync": "dsync"}):
        point = _point(rw="randwrite", size="1g", **synced)
        assert fio_findings.page_cache(point, facts) == [], synced
    # a mix with reads is flagged however it syncs: the reads come from the cache
    mixed = _point(rw="randrw", size="1g", fsync=1)
    assert _codes(fio_findings.page_cache(mixed, facts)) == ["page-cache"]
    assert _codes(fio_findings.page_cache(_point(rw="write", size="1g"), facts)) == ["page-cache"]


def test_findings_page_cache_reads_a_files_own_size(tmp_path: Path) -> None:
    """Without ``size``, the data is the target's own size (a file here: 4 MiB)."""
    target = tmp_path / "data.bin"
    target.write_bytes(b"\0" * (4 << 20))
    point = _point(str(target), rw="read")
    found = fio_findings.page_cache(point, Facts(memory_available={"": GiB}))
    assert [f.data["data_bytes"] for f in found] == [4 << 20]


def test_findings_sync_iodepth_and_ended_early() -> None:
    meas = _meas("psync-randread-json.json")
    psync = _point(rw="randread", ioengine="psync", iodepth=16, direct=1)
    assert _codes(fio_findings.findings(psync, meas, Facts())) == ["sync-iodepth"]
    aio = _point(rw="randread", ioengine="libaio", iodepth=16, direct=1)
    assert fio_findings.findings(aio, meas, Facts()) == []
    meas.extra["ended_early"] = fio.ended_early(_point(runtime="4", size="64m"), meas)
    assert _codes(fio_findings.findings(aio, meas, Facts())) == ["ended-early"]


def test_findings_in_codes_order_and_which_keep_a_verdict() -> None:
    meas = _meas("null-engine-jsonplus.json")
    engine = fio_findings.sync_iodepth(_point(ioengine="psync", iodepth=4))
    found = findings.findings(meas, engine)
    order = list(CODES)
    assert _codes(found) == sorted(_codes(found), key=order.index)
    # the CPU says the number is not the storage's: no verdict on it; a capped queue is noted
    assert _codes(unjudged(found)) == ["client-cpu-bound"]


def test_findings_readme_lists_every_code() -> None:
    text = README.read_text()
    section = text[text.index("## Can I trust this number?") : text.index("## Comparing runs")]
    listed = re.findall(r"^\| `([a-z-]+)` \|", section, re.MULTILINE)
    assert listed == list(CODES)


def _intervals(iops: list[float]) -> list:
    from storbench.model.series import Interval

    return [
        Interval(
            t_ms=(n + 1) * 1000,
            dur_ms=1000,
            direction="read",
            ios=int(v),
            bytes=int(v) * 4096,
            seq=n,
        )
        for n, v in enumerate(iops)
    ]


def test_findings_unsteady_series() -> None:
    """IOPS that halve over the measurement, or swing wildly: unsteady; a flat series, a
    series too short to judge, and one that ran in steady-state rounds: not."""
    meas = _meas("psync-randread-json.json")
    falling = _intervals([1000, 900, 800, 700, 600, 500])
    found = [f for f in findings.findings(meas, (), falling) if f.code == "unsteady"]
    assert found and found[0].data["iops_trend_pct"] < -20 and found[0].data["intervals"] == 6
    swinging = _intervals([1000, 200, 1000, 200, 1000, 200])
    assert "unsteady" in _codes(findings.findings(meas, (), swinging))
    flat = _intervals([1000, 1010, 990, 1005, 995, 1000])
    assert "unsteady" not in _codes(findings.findings(meas, (), flat))
    assert "unsteady" not in _codes(findings.findings(meas, (), falling[:4]))
    meas.extra["steady_state"] = {"steady": True}
    assert "unsteady" not in _codes(findings.findings(meas, (), falling))


def test_findings_unwritten_read_of_a_sparse_file(tmp_path: Path) -> None:
    """A file of holes read: unwritten-read; the same file written, or a point that only
    writes it: not."""
    target = tmp_path / "data.bin"
    with target.open("wb") as f:
        f.truncate(8 << 20)
    reads = _point(str(target), rw="randread", size="8m")
    found = fio_findings.unwritten_read(reads)
    assert [f.data for f in found] == [{"region_bytes": 8 << 20, "written_bytes": 0}]
    assert fio_findings.unwritten_read(_point(str(target), rw="randwrite")) == []
    assert fio_findings.unwritten_read(_point(str(target), rw="randrw", rwmixread=0)) == []
    target.write_bytes(b"\1" * (8 << 20))
    assert fio_findings.unwritten_read(reads) == []


def test_findings_page_cache_said_at_plan_check() -> None:
    """What the plan alone shows is said before the run (plan check, run's warnings): a
    buffered workload over 1 GiB fits in this machine's memory (CI machines have more);
    its direct twin does not warn."""
    from storbench.hosts.inventory.host import memory_available

    memory = memory_available()
    if memory is None or memory < 2 * GiB:
        import pytest

        pytest.skip("this machine has less than 2 GiB available")
    buffered = fio_findings.cache_advice([_point(rw="randread", size="1g")])
    assert [line for line in buffered if "(page-cache)" in line]
    assert not fio_findings.cache_advice([_point(rw="randread", size="1g", direct=1)])
