"""The watchdog of fio's S3 loads (engines/fio/watchdog.py): how long a load may go without a
completed request, and that only a time without progress fires it. Its clock is given
(no waiting): the real service that stops answering is tests/integration/s3/test_s3_stalls.py."""

from __future__ import annotations

import pytest

from storbench.engines.fio import watchdog
from storbench.engines.fio.watchdog import Watchdog, bound_s, limit_s


@pytest.fixture(autouse=True)
def ten_seconds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(watchdog, "ANSWER_TIMEOUT", 10.0)


def test_s3_watchdog_limit_adds_the_points_time_and_its_objects_in_flight() -> None:
    assert limit_s({"rw": "trim", "bs": "4k"}) == pytest.approx(10.0, abs=0.01)
    assert limit_s({"bs": "4k", "runtime": "1m", "ramp_time": "5s"}) == pytest.approx(75, abs=0.01)
    assert limit_s({"bs": "64k", "timeout": 30}) == pytest.approx(40, abs=0.01)  # runtime's alias
    # 1 GiB objects, 8 jobs: 8 GiB in flight at 10 MiB/s
    assert limit_s({"bs": "1g", "numjobs": 8}) == pytest.approx(10 + 8 * 1024 / 10)
    # the largest of a read,write pair or a range; iodepth too
    assert limit_s({"bs": "4k,100m", "iodepth": 2}) == pytest.approx(30)
    assert limit_s({"bsrange": "4k-100m"}) == pytest.approx(20)
    assert limit_s({"bssplit": "4k/50:100m/50"}) == pytest.approx(20)
    assert limit_s({"runtime": "soon", "bs": "big"}) == pytest.approx(10.0, abs=0.01)
    # the pauses a plan asks for: a start's delay (a range: its end), time between I/Os (us)
    assert limit_s({"startdelay": "5-20", "thinktime": 30_000_000}) == pytest.approx(60, abs=0.01)
    assert limit_s({"thinktime": "2s"}) == pytest.approx(12, abs=0.01)


def test_s3_watchdog_bound_of_a_whole_load_adds_its_bytes_when_it_has_no_runtime() -> None:
    """Where fio shows no progress until the load ends (hosts), the whole load is bounded:
    a timed one by its time, one that moves a size of objects by that size at 10 MiB/s."""
    timed = {"bs": "4k", "size": "1g", "runtime": 30}
    assert bound_s(timed) == limit_s(timed) == pytest.approx(40, abs=0.01)
    # 100 MiB per job, 4 jobs, twice over: 800 MiB at 10 MiB/s
    assert bound_s({"bs": "4k", "size": "100m", "numjobs": 4, "loops": 2}) == pytest.approx(
        10 + 80, abs=0.01
    )
    # io_size, when given, is what each job moves (not size)
    assert bound_s({"bs": "4k", "size": "1g", "io_size": "50m"}) == pytest.approx(15, abs=0.01)
    assert bound_s({"bs": "4k"}) == pytest.approx(10.0, abs=0.01)


def test_s3_watchdog_fires_only_after_the_limit_without_progress() -> None:
    now = [0.0]
    dog = Watchdog(5.0, "the S3 service at http://x", clock=lambda: now[0])
    now[0] = 4.0
    dog.progress(0)  # fio's first report: nothing done yet, yet it runs
    now[0] = 8.0
    assert not dog()
    dog.progress(0)  # the same count again is no progress
    now[0] = 9.5
    assert dog()
    assert dog.fired is not None
    assert "no S3 request completed for 5 s" in dog.fired and "http://x" in dog.fired
    assert "STORBENCH_S3_TIMEOUT" in dog.fired
    dog.progress(7)  # once fired it stays fired: fio was killed
    assert dog()


def test_s3_watchdog_counts_restarted_counters_as_progress() -> None:
    now = [0.0]
    dog = Watchdog(5.0, "s", clock=lambda: now[0])
    dog.progress(900)  # the end of ramp_time
    now[0] = 4.0
    dog.progress(12)  # fio counts from 0 again
    now[0] = 8.0
    assert not dog()
