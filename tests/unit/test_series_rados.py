"""A rados bench point's time series (engines/rados/series.py), on real rados bench outputs
recorded by tests/data/rados/record.sh; expected values read here from the recorded table."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest

from storbench.engines.rados.parse import parse_rados_bench
from storbench.engines.rados.series import client_intervals

DATA = Path(__file__).resolve().parents[1] / "data" / "rados"


def table(name: str) -> list[tuple[int, int, float]]:
    """(sec, finished, avg lat s) of each row of the per-second table, as printed."""
    rows = {}
    for line in (DATA / f"{name}.out").read_text().splitlines():
        cells = line.split()
        if len(cells) == 8 and re.fullmatch(r"\d+", cells[0]):
            rows[int(cells[0])] = (int(cells[0]), int(cells[3]), float(cells[7]))
    return sorted(rows.values())


@pytest.mark.parametrize(
    ("name", "mode"),
    [("write-4k-22s-plain", "write"), ("rand-4k-plain", "rand"), ("seq-4m-plain", "seq")],
)
def test_series_rados_intervals_are_the_tables_differences(name: str, mode: str) -> None:
    result = parse_rados_bench((DATA / f"{name}.out").read_text(), "plain", mode)
    got = client_intervals(result)
    rows = table(name)
    assert len(got) == len(rows) - 1 > 0
    for iv, (before, now) in zip(got, itertools.pairwise(rows), strict=True):
        assert iv.t_ms == now[0] * 1000 and iv.dur_ms == (now[0] - before[0]) * 1000
        assert iv.ios == now[1] - before[1]
        assert iv.bytes == iv.ios * result.op_size
        assert iv.p50_ns is None and iv.p99_ns is None  # rados bench gives no histogram
        if iv.ios:
            want = (now[2] * now[1] - before[2] * before[1]) / iv.ios * 1e9
            assert iv.lat_mean_ns == pytest.approx(want, abs=0.1)
    assert sum(i.ios for i in got) == rows[-1][1] <= result.ops
