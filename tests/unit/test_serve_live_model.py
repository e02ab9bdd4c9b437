"""The live page's running summaries (report/livemodel.py) over a run recorded one point at a
time from real recorded fio outputs, on SQLite and on a real PostgreSQL: after each
measurement they equal what loading the whole run gives (repetitions' percentiles merged from
histograms, failed points counted), while each update reads only the points recorded since."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the harness modules
import pgserver
from answer_runs import _fio
from storbench.model.metrics import Measurement
from storbench.plan import Point, Target, point_key
from storbench.report import model
from storbench.report.livemodel import RunningSummaries
from storbench.store import Store

#: the session's PostgreSQL server and a database of each test's own on it
pg_server = pgserver.pg_server
pg_url = pgserver.pg_url
location = pgserver.location

RECORDED = ("psync-randread-json", "numjobs4-group-jsonplus", "libaio-randrw-jsonplus")


def _points() -> list[tuple[Point, Measurement]]:
    """Three workloads, each repeated twice (the repetitions' percentiles are merged)."""
    t = Target("file", "/srv/live.dat")
    out = []
    for rep in (0, 1):
        for n, name in enumerate(RECORDED):
            params = {"rw": "randread", "bs": "4k", "iodepth": 2**n}
            p = Point(len(out), point_key(t, "w", params), rep, t, "w", params, params)
            out.append((p, _fio(name)))
    return out


def _record(store: Store, run_id: int, p: Point, m: Measurement) -> None:
    store.measurements.record(
        run_id, p, m, engine="fio", command=None, job_file=None, raw_output=None,
        stderr=None, started_at=None, ended_at=None,
    )  # fmt: skip


def test_serve_live_summaries_equal_a_whole_load_after_each_point(location: str) -> None:
    pairs = _points()
    store = Store(location)
    try:
        run_id = store.runs.create(
            kind="run", name="live", source="suite:matrix", plan_text=None, overrides=[],
            inventory={}, fio_version=None, storbench_version="0", argv=[],
            points=[p for p, _ in pairs],
        )  # fmt: skip
        live = RunningSummaries(store, run_id)
        assert live.update() == set() and live.summaries == [] and live.measured == set()
        for n, (p, m) in enumerate(pairs):
            if n == 5:  # a failed repetition counts, without figures
                m = Measurement(status="failed", error_code=1, error="fio exited with status 1")
            _record(store, run_id, p, m)
            assert live.update() == {p.key}  # only the point recorded since is read again
            assert live.update() == set()
            whole = model.load_run(store, run_id).summaries
            assert live.summaries == whole
            assert live.measured == set(range(n + 1))
        merged = live.summaries[1]  # jsonplus: its repetitions' bins merged
        assert merged.runs == 2 and merged.clat is not None and merged.clat.percentiles
        assert live.summaries[2].failed == 1
    finally:
        store.close()
