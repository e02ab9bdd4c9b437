"""Ceph clusters and the run's timeline in the reports (report/ceph.py and its hooks in the
HTML, Markdown and terminal reports), on inventories that the real parsing code
(preflight/ceph/inventory.py: cluster_inventory) builds from the recorded ``ceph ... -f json``
outputs of tests/data/rados, and events in a real Store."""

from __future__ import annotations

import re
from typing import Any

import pytest
from test_ceph_preflight import cluster_state, pg_states, recorded  # noqa: F401
from test_report_html import HOSTILE, make_run, sweep

from storbench.execute.monitor import HealthSample
from storbench.preflight import ceph
from storbench.report import html
from storbench.report import markdown as md
from storbench.report import terminal as term
from storbench.report.ceph import (
    OSD_HEADERS,
    ceph_markdown,
    ceph_report,
    cluster_line,
    cluster_views,
    fmt_offset,
    timeline,
    versions_summary,
)
from storbench.report.model import from_summaries
from storbench.store import Store

CONF = "/etc/ceph/lab.conf"
FSID = recorded("healthy", "s")["fsid"]


def cluster_entry(answer: Any, state: str, pools: list[str], **extra: Any) -> dict[str, Any]:
    """One entry of ``inventory["ceph"]`` as preflight stores it: cluster_inventory of the
    recorded cluster in ``state`` (``answer`` is the cluster_state fixture) plus the keys
    preflight adds."""
    answer.state = state
    inv = ceph.cluster_inventory(CONF, pools[0])
    h = inv["health"]
    inv.update(
        conf=CONF,
        client="client.bench",
        pools_benchmarked=pools,
        health_warning=ceph.health_warning(h["status"], h["checks"]),
    )
    inv.update(extra)
    return inv


def health_event(store: Store, run: int, state: str, pools: list[str], at: float) -> HealthSample:
    h = recorded(state, "health-detail")
    s = HealthSample.of(h["status"], h["checks"], {p: pg_states(state, p) for p in pools}, at=at)
    store.events.add(run, "health", s.message(), s.to_dict(), at=s.at)
    return s


@pytest.fixture
def store(tmp_path: Any) -> Store:
    return Store(str(tmp_path / "r.db"))


# ---------------------------------------------------------------------------- views


def test_versions_summary() -> None:
    assert versions_summary(recorded("healthy", "versions")) == [
        "16.2.15 pacific: 1 mon, 1 mgr, 2 osd"
    ]
    # osd.1 stopped: ceph versions counts the daemons that run
    assert versions_summary(recorded("degraded", "versions")) == [
        "16.2.15 pacific: 1 mon, 1 mgr, 1 osd"
    ]
    assert versions_summary(None) == [] and versions_summary({"mds": {}}) == []


def test_a_healthy_cluster(cluster_state: Any) -> None:  # noqa: F811
    [c] = cluster_views({"ceph": [cluster_entry(cluster_state, "healthy", ["bench"])]})
    df = recorded("healthy", "df")["stats"]
    host = recorded("healthy", "osd-metadata")[0]["hostname"]
    assert (c.fsid, c.conf, c.client, c.health, c.checks) == (
        FSID,
        CONF,
        "client.bench",
        "HEALTH_OK",
        [],
    )
    assert c.health_warning is None and c.errors == []
    assert c.title == f"Ceph cluster {FSID}"
    assert [o.cells() for o in c.osds] == [
        ["osd.0", host, "hdd", "bluestore", "up", "in", "0.0077972", "1"],
        ["osd.1", host, "hdd", "memstore", "up", "in", "0.0077972", "1"],
    ]
    assert len(OSD_HEADERS) == len(c.osds[0].cells())
    [p] = c.pools
    assert p.cells() == [
        "bench",
        "replicated",
        "1",
        "1",
        "8",
        "replicated_rule",
        "rbd",
        "0 B",
        "0",
        "15.0 GiB",
    ]
    assert (c.raw_total_bytes, c.raw_used_bytes, c.raw_avail_bytes) == (
        df["total_bytes"],
        df["total_used_raw_bytes"],
        df["total_avail_bytes"],
    )
    assert c.capacity()[0] == ("raw total", "16.0 GiB", "17,179,869,184 bytes")
    assert c.raw_capacity() == "raw 16.0 GiB, 290.3 MiB used (1.8 %), 15.7 GiB available"
    assert cluster_line(c) == (
        f"ceph cluster {FSID}: HEALTH_OK, 2 OSDs (1 bluestore, 1 memstore); "
        "pool bench size 1/min_size 1, 8 PGs"
    )


def test_an_osd_down(cluster_state: Any) -> None:  # noqa: F811
    [c] = cluster_views({"ceph": [cluster_entry(cluster_state, "degraded", ["deg"])]})
    assert c.health == "HEALTH_WARN"
    assert c.checks == [
        "OSD_DOWN: 1 osds down",
        "PG_DEGRADED: Degraded data redundancy: 2479/4958 objects degraded (50.000%), "
        "8 pgs degraded",
    ]
    assert c.health_warning is not None and "OSD_DOWN: 1 osds down" in c.health_warning
    assert [(o.name, o.status) for o in c.osds] == [("osd.0", "up"), ("osd.1", "down")]
    assert c.osd_summary() == "2 OSDs (1 bluestore, 1 memstore; 1 not up)"
    [p] = c.pools
    assert (p.size, p.min_size, p.pg_num, p.objects) == (2, 2, 8, 2479)
    assert cluster_line(c).startswith(
        f"ceph cluster {FSID}: HEALTH_WARN (OSD_DOWN, PG_DEGRADED), 2 OSDs"
    )


def test_the_benchmarked_pools(cluster_state: Any) -> None:  # noqa: F811
    """``pools_benchmarked`` beside cluster_inventory's details of every pool; or ``pools``
    as a list of names replacing them (then only the one ``pool`` it was given has
    details); or only that ``pool``."""
    both = cluster_entry(cluster_state, "degraded", ["deg", "bench"])
    [c] = cluster_views({"ceph": [both]})
    assert [(p.name, p.size, p.known) for p in c.pools] == [("deg", 2, True), ("bench", 1, True)]
    assert cluster_line(c).endswith(
        "; pool deg size 2/min_size 2, 8 PGs; pool bench size 1/min_size 1, 8 PGs"
    )

    replaced = cluster_entry(cluster_state, "degraded", ["deg"])
    del replaced["pools_benchmarked"]
    replaced["pools"] = ["deg", "bench"]
    [c] = cluster_views({"ceph": [replaced]})
    assert [(p.name, p.known) for p in c.pools] == [("deg", True), ("bench", False)]
    assert "pool bench (not in the inventory)" in cluster_line(c)

    only_pool = cluster_entry(cluster_state, "healthy", ["bench"])
    del only_pool["pools_benchmarked"]
    [c] = cluster_views({"ceph": [only_pool]})
    assert [p.name for p in c.pools] == ["bench"]


def test_an_incomplete_inventory(cluster_state: Any) -> None:  # noqa: F811
    cluster_state.failing = {("osd", "metadata"), ("df",), ("versions",)}
    [c] = cluster_views({"ceph": [cluster_entry(cluster_state, "healthy", ["bench"])]})
    assert [o.objectstore for o in c.osds] == ["?", "?"]
    assert c.versions == [] and c.capacity() == [] and c.raw_capacity() == "raw capacity unknown"
    assert len(c.errors) == 3 and any("osd metadata" in e for e in c.errors)
    assert c.pools[0].stored_bytes is None and c.pools[0].cells()[7] == "-"


def test_two_clusters_and_none() -> None:
    assert cluster_views({}) == [] and cluster_views({"ceph": []}) == []


# ---------------------------------------------------------------------------- timeline


def test_fmt_offset() -> None:
    assert fmt_offset(12.44) == "+12.4 s"
    assert fmt_offset(-0.8) == "-0.8 s"
    assert fmt_offset(754.2) == "+754.2 s (12m34s)"
    assert fmt_offset(None) == "?"


def test_timeline_from_a_real_store(store: Store) -> None:
    run = make_run(store, sweep(["4k"], [1]))
    start = store.runs.get(run).started_at
    health_event(store, run, "degraded", ["deg"], start + 12.44)
    store.events.add(run, "preflight", "HEALTH_OK before the first point", at=start - 0.8)
    store.events.add(run, "rados-cleanup", "removed 239 objects", {"objects": 239}, at=start + 70)
    rows = timeline(store.events.of_run(run), start)
    assert [(r.offset, r.kind) for r in rows] == [
        ("-0.8 s", "preflight"),
        ("+12.4 s", "health"),
        ("+70.0 s (1m10s)", "rados-cleanup"),
    ]
    assert rows[1].message.startswith("HEALTH_WARN: OSD_DOWN (1 osds down)")
    assert rows[1].data["inactive"] == {"deg": {"undersized+degraded+peered": 8}}
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", rows[0].clock)
    assert [r.offset_s for r in timeline(store.events.of_run(run), None)] == [None] * 3


def test_no_ceph_report_for_a_run_without_ceph(store: Store) -> None:
    run = make_run(store, sweep(["4k"], [1]))
    assert ceph_report(store.runs.get(run), store.events.of_run(run)) is None
    assert ceph_markdown(None) == ""
    assert term.ceph_cluster_lines(None) == [] and term.timeline_lines(None) == []
    page = html.render_report(store, [str(run)])
    assert 'id="ceph"' not in page and 'id="timeline"' not in page
    assert 'href="#ceph"' not in page and 'href="#timeline"' not in page


# ---------------------------------------------------------------------------- reports


@pytest.fixture
def ceph_run(store: Store, cluster_state: Any) -> int:  # noqa: F811
    """A run on the recorded cluster that saw an OSD go down and come back, a hostile
    message among its events."""
    inv = {
        "host": {"hostname": "client1"},
        "ceph": [cluster_entry(cluster_state, "healthy", ["bench"])],
    }
    run = make_run(store, sweep(["4k", "64k"], [1, 8]), inventory=inv)
    start = store.runs.get(run).started_at
    health_event(store, run, "degraded", ["bench", "deg"], start + 3.0)
    health_event(store, run, "degraded-stuck", ["bench", "deg"], start + 64.0)
    health_event(store, run, "healthy", ["bench"], start + 80.0)
    store.events.add(run, "rados-cleanup", f"removed objects of {HOSTILE}", at=start + 90.0)
    return run


def test_html_report_shows_the_cluster_and_the_timeline(store: Store, ceph_run: int) -> None:
    page = html.render_report(store, [str(ceph_run)])
    assert 'href="#ceph"' in page and 'href="#timeline"' in page
    ceph_sec = page[page.index('<section id="ceph">') : page.index('<section id="plan">')]
    assert f"Ceph cluster {FSID}" in ceph_sec
    assert "16.2.15 pacific: 1 mon, 1 mgr, 2 osd" in ceph_sec
    assert "16.0 GiB" in ceph_sec and "17,179,869,184 bytes" in ceph_sec
    rows = re.findall(r"<tr[^>]*>((?:<td[^>]*>[^<]*</td>)+)</tr>", ceph_sec)
    cells = [re.findall(r"<td[^>]*>([^<]*)</td>", r) for r in rows]
    host = recorded("healthy", "osd-metadata")[0]["hostname"]
    assert ["osd.1", host, "hdd", "memstore", "up", "in", "0.0077972", "1"] in cells
    assert cells[-1][:7] == ["bench", "replicated", "1", "1", "8", "replicated_rule", "rbd"]
    assert [h for h in OSD_HEADERS if f">{h}</th>" in ceph_sec] == OSD_HEADERS

    tl = page[page.index('<section id="timeline">') : page.index('<section id="points">')]
    offsets = re.findall(r'<td class="n" title="[^"]+">([^<]+)</td>', tl)
    assert offsets == ["+3.0 s", "+64.0 s (1m04s)", "+80.0 s (1m20s)", "+90.0 s (1m30s)"]
    assert "PG_AVAILABILITY (Reduced data availability: 8 pgs inactive, 6 pgs stale)" in tl
    assert "pool deg: 8 PGs inactive (8 undersized+degraded+peered)" in tl
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in tl and "<script>alert" not in page
    # the inventory's raw Ceph structures are not dumped under "More inventory"
    assert "osd_tree" not in page and "stats_by_class" not in page


def test_markdown_report(store: Store, ceph_run: int) -> None:
    r = store.runs.get(ceph_run)
    report = ceph_report(r, store.events.of_run(ceph_run))
    text = md.run_markdown(
        from_summaries(
            id=r.id, name=r.name, status=r.status, report=None, summaries=[], ceph=report
        )
    )
    assert text.startswith(f"## run {r.id} (r)\n\n(no measurements)\n")
    assert f"### Ceph cluster {FSID}\n" in text
    assert "- health at the start: **HEALTH_OK**" in text
    assert "- capacity: raw 16.0 GiB, 290.3 MiB used (1.8 %), 15.7 GiB available" in text
    lines = text.splitlines()
    assert "| " + " | ".join(OSD_HEADERS) + " |" in lines
    assert any(ln.startswith("| osd.0 | ") and "| bluestore | up | in |" in ln for ln in lines)
    assert any(
        ln.startswith("| bench | replicated | 1 | 1 | 8 | replicated_rule |") for ln in lines
    )
    i = lines.index("### Timeline")
    assert lines[i + 2 : i + 4] == ["| time | kind | event |", "|---:|---|---|"]
    assert lines[i + 4].startswith("| +3.0 s | health | HEALTH_WARN: OSD_DOWN (1 osds down);")
    assert lines[i + 7] == (  # HOSTILE as text: no raw HTML, no math
        "| +90.0 s (1m30s) | rados-cleanup | removed objects of "
        "\\<script\\>alert(1)\\</script\\> \\& \"q\" 's' \\$x\\$ |"
    )

    # beside the summary of a run with measurements; without Ceph, no section at all
    from storbench.analysis.summary import summarize

    summaries = summarize([(m.point, m.measurement) for m in store.measurements.of_run(ceph_run)])
    plain = from_summaries(id=r.id, name=r.name, status=r.status, report=None, summaries=summaries)
    with_ceph = from_summaries(
        id=r.id, name=r.name, status=r.status, report=None, summaries=summaries, ceph=report
    )
    assert md.run_markdown(with_ceph) == md.run_markdown(plain) + ceph_markdown(report)
    assert "Ceph" not in md.run_markdown(plain)


def test_terminal_lines(store: Store, ceph_run: int) -> None:
    report = ceph_report(store.runs.get(ceph_run), store.events.of_run(ceph_run))
    assert term.ceph_cluster_lines(report) == [
        f"  ceph cluster {FSID}: HEALTH_OK, 2 OSDs (1 bluestore, 1 memstore); "
        "pool bench size 1/min_size 1, 8 PGs"
    ]
    lines = term.timeline_lines(report)
    assert lines[0] == "timeline (4 events; time from the run's start):"
    assert lines[1].startswith("           +3.0 s  health         HEALTH_WARN: OSD_DOWN")
    assert lines[4] == f"  +90.0 s (1m30s)  rados-cleanup  removed objects of {HOSTILE}"
