"""Time charts in the HTML report and time series in the JSON export, on runs stored with the
Store's own API (recorded fio outputs as the measurements, intervals and events added as a
running point adds them): each repetition with a series gets its chart in its point's
details, with the steady-state window and the run's events during the point (the data
contract of steady state and drills), escaped; the report's limit on charts; the export's
series equal to what the database holds."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import fields
from pathlib import Path

import pytest

from storbench.engines import fio
from storbench.model.metrics import Measurement
from storbench.model.series import Interval
from storbench.model.units import fmt_iops
from storbench.plan import Point, Target
from storbench.report import html, pointcharts
from storbench.store import Store

DATA = Path(__file__).resolve().parent.parent / "data" / "fio"
HOSTILE = "<script>alert(1)</script> & $x$"
T0 = 1_700_000_000.0


def measurement(stem: str = "libaio-randrw-jsonplus") -> tuple[Measurement, str]:
    text = (DATA / f"{stem}.json").read_text()
    doc, _ = fio.final_document(text)
    return fio.measurement_from_document(doc), text


def intervals(n: int, *, host: str = "", ramp: int = 1, seed: int = 0) -> list[Interval]:
    out = []
    for d in ("read", "write"):
        for s in range(n):
            ios = 1000 + 37 * s + seed + (5 if d == "write" else 0)
            out.append(
                Interval(
                    seq=s,
                    t_ms=(s + 1) * 1000 + 3,
                    dur_ms=1000,
                    direction=d,
                    ios=ios,
                    bytes=ios * 4096,
                    lat_mean_ns=None if s < ramp else 21_000.5,
                    p50_ns=None if s < ramp else 20_000.0,
                    p99_ns=None if s < ramp else 40_000.0 + 1000 * s,
                    p999_ns=None if s < ramp else 90_000.0,
                    ramp=s < ramp,
                    host=host,
                )
            )
    return out


def make_run(store: Store, points: int, *, extra: dict[str, object] | None = None) -> int:
    """A run of ``points`` points, each 10 s from T0 + 100 * index, with 8 intervals per
    direction (points on hosts: each host's, no series of the point's own)."""
    tgt = Target("file", "/mnt/x/sb.dat", name=HOSTILE)
    pts = [
        Point(i, f"k{i}", 0, tgt, HOSTILE, {"iodepth": i + 1}, {"iodepth": i + 1})
        for i in range(points)
    ]
    run_id = store.runs.create(
        kind="run",
        name="tc",
        source="test",
        plan_text="name: tc\n",
        overrides=[],
        inventory={},
        fio_version="fio-3.33",
        storbench_version="0.1.0",
        argv=[],
        points=pts,
    )
    for p in pts:
        meas, text = measurement()
        meas.extra.update(extra or {})
        start = T0 + 100 * p.index
        store.series.add(run_id, p.index, intervals(8, seed=p.index))
        store.measurements.record(
            run_id,
            p,
            meas,
            engine="fio",
            command=["fio", "job.fio"],
            job_file="[j]\n",
            raw_output=text,
            stderr=None,
            started_at=start,
            ended_at=start + 10.0,
        )
    store.runs.set_status(run_id, "completed")
    return run_id


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(str(tmp_path / "r.db"))


def charts_of(page: str) -> list[str]:
    return re.findall(r'<figure class="timechart">.*?</figure>', page, re.S)


def tips(svg: str, cls: str) -> list[str]:
    return re.findall(rf'class="pt {cls}"><title>([^<]*)</title>', svg)


def test_report_time_chart_in_each_points_details_with_window_and_events(store: Store) -> None:
    run = make_run(store, 2, extra={"steady_state": {"window_ms": [3000, 7000]}})
    store.events.add(run, "health", f"HEALTH_WARN {HOSTILE}", at=T0 + 2.5)
    store.events.add(run, "action", "kill osd.3", at=T0 + 100 + 4.0)
    store.events.add(run, "preflight", "not drawn", at=T0 + 5.0)
    store.events.add(run, "health", "between the points", at=T0 + 50.0)
    page = html.render_report(store, [str(run)])

    details = re.findall(r'<details class="point" id="([^"]+)">(.*?)</details>\n', page, re.S)
    assert len(details) == 2
    for no, (ref, body) in enumerate(details):
        (chart,) = charts_of(body)
        assert chart.count("<svg ") == 1 and f'id="{ref}-m{no}-' in chart
        assert "<script" not in chart and "&lt;script&gt;alert(1)&lt;/script&gt;" in chart
        assert "-sbsteady-0" in chart, "the steady-state window is shaded"
        assert "sbramp0-0" in chart, "the ramp interval is shaded"
        # a hover text per interval, with the database's values
        slices = tips(chart, "ts")
        rows = store.series.of_point(run, no)
        assert len(slices) == 8
        for s, i in zip(slices, [i for i in rows if i.direction == "read"], strict=True):
            assert f"read: {fmt_iops(i.iops)} IOPS" in s
    first, second = (tips(charts_of(b)[0], "ev") for _, b in details)
    assert first == ["health at 2.5 s: HEALTH_WARN &lt;script&gt;alert(1)&lt;/script&gt; &amp; $x$"]
    assert second == ["action at 4.0 s: kill osd.3"]
    points = page.split('<section id="points">')[1]
    assert "between the points" not in points and "not drawn" not in points


def test_report_points_on_hosts_draw_the_sum_of_their_hosts(store: Store) -> None:
    run = make_run(store, 1)
    store.series.clear(run, 0)
    store.series.add(run, 0, intervals(4, host="h1", seed=1) + intervals(4, host="h2", seed=2))
    (chart,) = charts_of(html.render_report(store, [str(run)]))
    assert "read (sum of hosts)" in chart and "summed over 2 hosts" in chart
    h1, h2 = store.series.of_point(run, 0, host="h1"), store.series.of_point(run, 0, host="h2")
    first = tips(chart, "ts")[0]
    assert f"read: {fmt_iops(h1[0].iops + h2[0].iops)} IOPS" in first


def test_report_draws_time_charts_up_to_its_limit(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pointcharts, "MAX_TIME_CHARTS", 2)
    run = make_run(store, 3)
    page = html.render_report(store, [str(run)])
    assert len(charts_of(page)) == 2
    assert page.count('class="muted timechart-left-out"') == 1
    assert "Time charts are drawn for the first 2 repetitions" in page
    assert f"storbench show {run} --point 3" in page.split("timechart-left-out", 1)[1]


def test_report_without_series_has_no_time_chart(store: Store) -> None:
    run = make_run(store, 1)
    store.series.clear(run, 0)
    page = html.render_report(store, [str(run)])
    assert not charts_of(page) and "timechart-left-out" not in page


# ---------------------------------------------------------------------------- JSON export


def sb(*args: str, db: Path) -> str:
    r = subprocess.run(
        [sys.executable, "-m", "storbench", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "STORBENCH_DB": str(db)},
    )
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def as_intervals(records: list[dict[str, object]]) -> list[Interval]:
    names = {f.name for f in fields(Interval)}
    for r in records:
        assert r["iops"] == pytest.approx(r["ios"] * 1000 / r["dur_ms"])  # type: ignore[operator]
    return [Interval(**{k: v for k, v in r.items() if k in names}) for r in records]  # type: ignore[arg-type]


def test_series_json_export_equals_the_database(store: Store, tmp_path: Path) -> None:
    run = make_run(store, 2)
    store.series.clear(run, 1)  # point 2 on two hosts
    store.series.add(run, 1, intervals(3, host="h1") + intervals(3, host="h2", ramp=0))
    db = Path(store.path)
    doc = json.loads(sb("export", str(run), "--format", "json", db=db))
    assert set(doc["units"]["series"]) >= {"t_ms", "dur_ms", "p99_ns", "bw_bytes"}
    for rec in doc["measurements"]:
        assert as_intervals(rec["series"]) == store.series.of_point(run, rec["point"] - 1, None)
        assert rec["series"], "every point has one"
    assert "read" in doc["measurements"][0], "the measurement's keys stay"
    series = json.loads(sb("export", str(run), "--series", "--format", "json", db=db))
    assert [p["point"] for p in series["points"]] == [1, 2]  # as show --point counts
    for p in series["points"]:
        assert as_intervals(p["series"]) == store.series.of_point(run, p["point"] - 1, None)
    assert {i["host"] for i in series["points"][1]["series"]} == {"h1", "h2"}
    # without --format, --series stays CSV
    assert sb("export", str(run), "--series", db=db).startswith("run,point,host,direction")
