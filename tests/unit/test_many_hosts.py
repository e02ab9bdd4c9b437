"""Many hosts without a network: plans with ``hosts:`` and ``clients``, per-host job files,
the parser of fio's client/server output on real recordings (tests/data/fio/record-hosts.sh:
status reports, a server killed mid-point, a refused connection, a protocol mismatch, fio's
refusal to write to a mounted device, preflight probes), the window arithmetic, the remote
safety policy and the export of per-host figures.

Expected values come from the recordings themselves (decoded here, see ``raw``), or from the
per-I/O logs recorded beside them (absolute times on one clock: the ground truth for when
each host ran).
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest

from storbench.engines import fio
from storbench.engines.fio import remote
from storbench.engines.fio.agent import bind_refusal
from storbench.model.errors import PlanError
from storbench.model.metrics import HostSeries, Measurement, merge_bins, overlap, window_totals
from storbench.plan import PointHost, Target, parse_plan
from storbench.preflight import local_points, split_destroy
from storbench.report import export, terminal
from storbench.store import Store

DATA = Path(__file__).resolve().parent.parent / "data" / "fio"
BASE = 18770  # record-hosts.sh's PORT_BASE


def out_of(name: str) -> tuple[str, str, int]:
    err = DATA / f"{name}.stderr"
    return (
        (DATA / f"{name}.stdout").read_text(),
        err.read_text() if err.exists() else "",
        int((DATA / f"{name}.exitcode").read_text()),
    )


def raw(name: str) -> list[dict[str, Any]]:
    """The recording's client entries, decoded here (not by storbench), without fio's own
    "All clients" entry."""
    text = (DATA / f"{name}.stdout").read_text()
    i = text.find("\n{")
    doc = json.JSONDecoder().raw_decode(text, i + 1)[0]
    return [e for e in doc["client_stats"] if e["jobname"] != "All clients"]


def hosts_at(*ports: int) -> list[PointHost]:
    return [
        PointHost(f"h{i + 1}", "127.0.0.1", p, Target("directory", f"/d{i + 1}"))
        for i, p in enumerate(ports)
    ]


def measure(name: str, *ports: int) -> Measurement:
    text, stderr, rc = out_of(name)
    m, _ = fio.hosts_measurement(text, stderr, rc, hosts_at(*ports), interval_ms=500)
    return m


def finals(name: str) -> dict[int, dict[str, Any]]:
    last: dict[int, dict[str, Any]] = {}
    for e in raw(name):
        last[e["port"]] = e
    return last


# ---------------------------------------------------------------------------- plans

HOSTS_PLAN = """\
name: vms
hosts:
  - address: 192.0.2.10
  - address: 192.0.2.11
    port: 8766
    name: vm11
    targets:
      - device: /dev/vdb
  - address: local
targets:
  - device: /dev/vdb
workloads:
  - name: r
    rw: randread
    bs: 4k
    runtime: 5
    clients: [1, 2, 3]
    iodepth: [1, 8]
"""


def test_plan_hosts_expand_into_points_on_the_first_n_hosts() -> None:
    p = parse_plan(HOSTS_PLAN, "p.yaml")
    assert [h.label for h in p.hosts] == ["192.0.2.10:8765", "vm11", "local"]
    points = p.expand()
    assert len(points) == 6
    assert [len(pt.hosts) for pt in points] == [1, 1, 2, 2, 3, 3]
    assert [pt.axes for pt in points[:2]] == [
        {"clients": 1, "iodepth": 1},
        {"clients": 1, "iodepth": 8},
    ]
    assert all("clients" not in pt.params for pt in points)  # never passed to fio
    assert points[5].hosts[1].port == 8766 and points[5].hosts[2].local
    assert len({pt.key for pt in points}) == 6
    back = type(points[5]).from_dict(json.loads(json.dumps(points[5].to_dict())))
    assert back == points[5]
    # the local host's view: its own target, no hosts (local checks, scratch files)
    (view,) = local_points([points[5]])
    assert view.target == Target("device", "/dev/vdb") and view.hosts == []


def test_each_host_gets_its_own_job_file_on_its_own_target() -> None:
    p = parse_plan(
        HOSTS_PLAN.replace("  - device: /dev/vdb\nworkloads", "  - device: /dev/sdc\nworkloads"),
        "p.yaml",
    )
    pt = p.expand()[4]
    files = [fio.host_job_file(pt, i, run_id=7, total=6) for i in range(3)]
    assert [f.splitlines()[0].rsplit(", ", 1)[1] for f in files] == [
        "host 192.0.2.10:8765 (1/3)",
        "host vm11 (2/3)",
        "host local (3/3)",
    ]
    assert ["filename=/dev/sdc" in files[0], "filename=/dev/vdb" in files[1]] == [True, True]
    assert all("clients" not in f for f in files)
    assert fio.job_file(pt, run_id=7, total=6) == "\n".join(files)
    cmd = fio.hosts_command(["a.fio", "b.fio"], [("192.0.2.10", 8765), ("127.0.0.1", 4000)], 500)
    assert cmd[1:] == [
        "--output-format=json+",
        "--client=192.0.2.10,8765",
        "a.fio",
        "--status-interval=500ms",
        "--client=127.0.0.1,4000",
        "b.fio",
        "--status-interval=500ms",
    ]


@pytest.mark.parametrize(
    ("est", "interval", "ms"),
    [
        (None, 1000, 1000),  # duration unknown: the point's interval
        (5, 500, 500),
        (60, 1000, 1000),
        (1000, 500, 800),  # 3 hosts x 1,333 reports: 1,000 s needs 0.8 s between them
        (3600, 1000, 2800),
        (21600, 1000, 16300),  # 6 hours: every 16.3 s (fio's client holds every report)
    ],
)
def test_status_interval_is_the_points_while_the_reports_fit(
    est: float | None, interval: int, ms: int
) -> None:
    pt = next(p for p in parse_plan(HOSTS_PLAN, "p.yaml").expand() if len(p.hosts) == 3)
    pt.est_seconds, pt.interval_ms = est, interval
    assert fio.status_interval_ms(pt) == ms
    if est is not None:
        assert est * 1000 / ms * len(pt.hosts) <= fio.hosts.MAX_REPORTS


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("hosts: []\n", "`hosts` must be a non-empty list"),
        ("hosts:\n  - port: 1\n", "a host needs an `address`"),
        ("hosts:\n  - address: a\n    prot: 1\n", 'did you mean "port"?'),
        ("hosts:\n  - address: a\n    port: 70000\n", "from 1 to 65535"),
        ("hosts:\n  - address: a,8765\n", "give the address alone"),
        ("hosts:\n  - address: a\n  - address: a\n", "listed twice"),
        ("hosts:\n  - address: local\n    port: 9\n", "takes no port"),
        (
            "hosts:\n  - address: a\n  - address: b\n    targets: [file: /x, file: /y]\n",
            "every host needs the same number of targets",
        ),
    ],
)
def test_bad_hosts_are_refused_with_a_fix(text: str, says: str) -> None:
    plan = text + "targets: [file: /tmp/x]\nworkloads:\n  - name: w\n    size: 1m\n"
    with pytest.raises(PlanError) as ei:
        parse_plan(plan, "p.yaml")
    assert says in str(ei.value) and "fix" in str(ei.value)


def test_clients_needs_hosts_and_at_most_as_many() -> None:
    no_hosts = "targets: [file: /tmp/x]\nworkloads:\n  - name: w\n    size: 1m\n    clients: 2\n"
    with pytest.raises(PlanError, match="`clients` needs `hosts:`"):
        parse_plan(no_hosts, "p.yaml")
    with pytest.raises(PlanError, match="`clients` 4 but the plan names 3 hosts"):
        parse_plan(HOSTS_PLAN.replace("[1, 2, 3]", "[1, 4]"), "p.yaml")
    p = parse_plan(HOSTS_PLAN, "p.yaml", sets=["clients=[2, 3]"])
    assert sorted({len(pt.hosts) for pt in p.expand()}) == [2, 3]


def test_a_remote_file_needs_no_size_a_remote_directory_does() -> None:
    head = "hosts:\n  - address: 192.0.2.1\ntargets:\n  - {}: /srv/sb\nworkloads:\n  - name: w\n"
    parse_plan(head.format("file") + "    rw: read\n", "p.yaml")  # read at its own size
    with pytest.raises(PlanError, match="has no `size` for directory"):
        parse_plan(head.format("directory") + "    rw: read\n", "p.yaml")


# ---------------------------------------------------------------------------- the parser


def test_three_hosts_each_from_its_final_entry_aggregate_summed_and_windowed() -> None:
    name = "hosts3-status-jsonplus"
    m = measure(name, BASE, BASE + 1, BASE + 2)
    last = finals(name)
    assert m.status == "ok" and list(m.hosts) == ["h1", "h2", "h3"]
    for i, h in enumerate(("h1", "h2", "h3")):
        e = last[BASE + i]
        d = m.hosts[h].directions["read"]
        assert (d.iops, d.total_ios, d.io_bytes) == (
            e["read"]["iops"],
            e["read"]["total_ios"],
            e["read"]["io_bytes"],
        )
        assert d.clat.percentiles["99"] == e["read"]["clat_ns"]["percentile"]["99.000000"]
    agg = m.directions["read"]
    assert agg.total_ios == sum(e["read"]["total_ios"] for e in last.values())
    assert agg.io_bytes == sum(e["read"]["io_bytes"] for e in last.values())
    merged = merge_bins(
        {int(k): v for k, v in e["read"]["clat_ns"]["bins"].items()} for e in last.values()
    )
    assert agg.clat.bins == merged and agg.clat.samples == sum(merged.values())
    # every host is rate-limited to 500 IOPS: the aggregate over the common window is 1500
    assert m.extra["aggregate"] == "window"
    assert agg.iops == pytest.approx(1500, rel=0.01)
    assert agg.runtime_s == pytest.approx(m.extra["window_s"])


def test_start_and_end_of_each_host_match_fios_per_io_logs() -> None:
    """Status reports give when each host measured (see engines/fio/hosts.py); fio's per-I/O logs
    (log_unix_epoch, one clock) give the truth. Host 3 started 400 ms late (startdelay).

    What the reports cannot see is when each server began the run (all within a few tens of
    ms: the client sends the jobs one after the other and each server forks its job); in
    this recording the servers' starts differ by up to ~40 ms, hence the tolerance."""
    m = measure("hosts3-status-jsonplus", BASE, BASE + 1, BASE + 2)
    truth = {}
    for i in (1, 2, 3):
        times = [
            int(ln.split(",")[0])
            for ln in (DATA / f"hosts3-status-jsonplus.host{i}.iops.log").open()
        ]
        truth[f"h{i}"] = (times[0] / 1000, times[-1] / 1000)
    t0 = truth["h1"][0]
    s0 = m.hosts["h1"].extra["start_s"]
    for h, (first, last) in truth.items():
        x = m.hosts[h].extra
        # the first I/O completes ~2 ms (1/500 IOPS) after the start, the last at the end
        assert x["start_s"] - s0 == pytest.approx(first - t0, abs=0.05), h
        assert x["end_s"] - s0 == pytest.approx(last - t0, abs=0.05), h
    assert m.extra["start_spread_s"] == pytest.approx(0.4, abs=0.05)
    # 0.4 s late in a 3 s point: all three ran together ~2.6 s of ~3.4 s -> flagged
    assert m.extra["overlap"] == pytest.approx(2.6 / 3.4, abs=0.03)
    assert m.extra["low_overlap"] is True


def test_hosts_that_barely_overlap_are_flagged_and_summed_over_the_common_window() -> None:
    name = "hosts2-lowoverlap-jsonplus"
    m = measure(name, BASE, BASE + 1)
    x = m.extra
    assert x["start_spread_s"] == pytest.approx(2.0, abs=0.1)
    assert x["low_overlap"] and x["overlap"] < 0.25
    # the window holds only the second host's first second and the first host's last one
    h1, h2 = (m.hosts[h].extra for h in ("h1", "h2"))
    assert x["window_s"] == pytest.approx(h1["end_s"] - h2["start_s"])
    summed = x["sum_of_host_rates"]["read"]["iops"]
    assert summed == pytest.approx(sum(e["read"]["iops"] for e in finals(name).values()))
    assert m.directions["read"].iops != pytest.approx(summed, rel=0.01)


def test_reports_during_ramp_time_do_not_move_the_start() -> None:
    m = measure("hosts2-ramp-jsonplus", BASE, BASE + 1)
    for h in ("h1", "h2"):
        x = m.hosts[h].extra
        # ramp_time=1: measuring starts ~1 s after the servers begin, for runtime=2
        assert x["start_s"] == pytest.approx(1.0, abs=0.15)
        assert x["end_s"] - x["start_s"] == pytest.approx(2.0, abs=0.01)
    assert not m.extra["low_overlap"]


def test_a_server_killed_mid_point_leaves_it_partial_naming_the_host() -> None:
    name = "hosts3-killed-jsonplus"
    m = measure(name, BASE, BASE + 1, BASE + 2)
    assert m.status == "partial"
    assert m.error.startswith("host h2: its fio server went away during the point")
    dead = m.hosts["h2"]
    assert dead.status == "failed" and dead.extra["partial"]
    reports = [e for e in raw(name) if e["port"] == BASE + 1]
    assert dead.directions["read"].total_ios == reports[-1]["read"]["total_ios"] > 0
    ok = [m.hosts["h1"], m.hosts["h3"]]
    assert all(h.status == "ok" for h in ok)
    assert m.directions["read"].total_ios == sum(h.directions["read"].total_ios for h in ok)
    assert m.extra["failed_hosts"] == ["h2"]


def test_a_refused_host_fails_and_the_point_keeps_the_other() -> None:
    _, _, rc = out_of("hosts2-refused-jsonplus")
    assert rc == 0  # fio ran the other host and said nothing in its exit status
    m = measure("hosts2-refused-jsonplus", BASE, BASE + 9)
    assert m.status == "partial"
    assert m.hosts["h2"].error == (
        f"cannot connect to its fio server at 127.0.0.1:{BASE + 9} (Connection refused)"
    )
    assert (
        m.directions["read"].total_ios
        == finals("hosts2-refused-jsonplus")[BASE]["read"]["total_ios"]
    )
    assert m.extra["aggregate"] == "single host"


def test_a_protocol_mismatch_names_the_host() -> None:
    m = measure("hosts2-version-mismatch-jsonplus", BASE, BASE + 5)
    assert m.status == "partial"
    assert "protocol differs (server 98, this fio 97)" in m.hosts["h2"].error


def test_fios_refusal_to_write_a_mounted_device_fails_the_host_with_fios_words() -> None:
    text, stderr, rc = out_of("hosts1-mounted-jsonplus")
    hosts = hosts_at(BASE)
    m, _ = fio.hosts_measurement(text, stderr, rc, hosts, interval_ms=500, names={"h1": "vm"})
    assert rc == 0 and m.status == "failed"
    assert m.hosts["h1"].error.startswith("it did no I/O (fio: fio: /dev/loop0 appears mounted")


def test_nothing_at_all_from_fio() -> None:
    m, _ = fio.hosts_measurement("", "", 1, hosts_at(1, 2), interval_ms=500)
    assert m.status == "failed" and "host h1: its fio server sent no result" in m.error


def test_hosts_sharing_an_address_the_one_whose_reports_stop_is_the_dead_one() -> None:
    # all servers of the recording listen on 127.0.0.1: fio's "disconnected" names only the
    # address; the host whose reports stopped early is the one taken for dead
    m = measure("hosts3-killed-jsonplus", BASE, BASE + 1, BASE + 2)
    assert [h for h, x in m.hosts.items() if x.status != "ok"] == ["h2"]


# ---------------------------------------------------------------------------- probes


def test_probe_replies() -> None:
    def probe(name: str) -> fio.ServerProbe:
        text, stderr, rc = out_of(name)
        return fio._probe_result("127.0.0.1", BASE, text, stderr, rc, False, 15)

    ok = probe("probe-ok")
    assert (ok.error, ok.hostname, ok.os, ok.arch, ok.fio_version) == (
        None,
        "vm",
        "Linux",
        "x86-64",
        "fio-3.33",
    )
    assert ok.missing_engines == []
    assert probe("probe-missing-engine").missing_engines == ["nosuchengine"]
    refused = probe("probe-refused")
    assert refused.error == f"cannot connect to 127.0.0.1:{BASE} (Connection refused)"
    silent = fio._probe_result("10.0.0.1", 8765, "", "", -9, True, 2)
    assert silent.error == "no answer from 10.0.0.1:8765 within 2 s"
    job = fio.probe_job(["libaio", "rbd"])
    assert job.count("create_only=1") == 2 and "filename=/dev/zero" in job


# ---------------------------------------------------------------------------- windows


def series(start: float, end: float, ios_per_s: float) -> HostSeries:
    n = int((end - start) * ios_per_s)
    return HostSeries(start, end, {"read": [(start, 0, 0), (end, n, n * 4096)]})


def test_window_and_overlap_arithmetic() -> None:
    a, b = series(0.0, 10.0, 100), series(2.0, 12.0, 100)
    w = overlap([a, b])
    assert (w.start_spread_s, w.end_spread_s, w.span_s, w.window_s) == (2.0, 2.0, 12.0, 8.0)
    assert w.fraction == pytest.approx(8 / 12) and w.low
    assert window_totals([a, b], "read", 2.0, 10.0) == (1600.0, 1600.0 * 4096)
    assert a.done_at("read", -1) == (0.0, 0.0) and a.done_at("read", 99) == (1000.0, 4096000.0)
    assert not overlap([series(0, 10, 1), series(0.5, 10.4, 1)]).low  # 9.5 of 10: ok


# ---------------------------------------------------------------------------- safety


def test_destroy_data_splits_local_devices_from_remote_host_paths() -> None:
    local, rem = split_destroy(["/dev/sdb", "vm1:/dev/vdb", "10.0.0.5:8766:/srv/x"])
    assert local == ["/dev/sdb"]
    assert rem == [("vm1", "/dev/vdb"), ("10.0.0.5:8766", "/srv/x")]


REMOTE = """\
hosts:
  - address: 10.0.0.5
    name: vm5
  - address: 10.0.0.6
targets:
  - {kind}: {path}
workloads:
  - name: w
    rw: {rw}
{extra}"""


@pytest.mark.parametrize(
    ("kind", "path", "rw", "extra", "refused"),
    [
        ("device", "/dev/vdb", "randwrite", "", True),
        ("device", "/dev/vdb", "randread", "", False),
        ("file", "/srv/sb.dat", "write", "    size: 1m\n", True),
        ("file", "/srv/sb.dat", "read", "    size: 1m\n", True),  # fio may recreate it
        ("file", "/srv/sb.dat", "read", "", False),  # read at its own size
        ("directory", "/srv", "randwrite", "    size: 1m\n", False),
    ],
)
def test_remote_targets_storbench_cannot_check_need_destroy_data(
    kind: str, path: str, rw: str, extra: str, refused: bool
) -> None:
    points = parse_plan(REMOTE.format(kind=kind, path=path, rw=rw, extra=extra), "p").expand()
    problems = remote.target_refusals(points, [])
    assert bool(problems) == refused
    if refused:
        assert [p.split(":")[0] for p in problems] == ["host vm5", "host 10.0.0.6"]
        assert f"--destroy-data vm5:{path}" in problems[0]
        assert f"--destroy-data 10.0.0.6:8765:{path}" in problems[1]
        ok = [("vm5", path), ("10.0.0.6", path)]
        assert remote.target_refusals(points, ok) == []
    stray = remote.target_refusals(points, [("vm9", path)])
    assert any("names no remote target" in p for p in stray)


@pytest.mark.parametrize(
    ("address", "refused"),
    [
        ("0.0.0.0", "all addresses"),
        ("::", "all addresses"),
        ("8.8.8.8", "public address"),
        ("127.0.0.1", None),
        ("10.1.2.3", None),
        ("192.168.1.1", None),
        ("fd00::1", None),
    ],
)
def test_agent_binds_only_to_benchmark_networks_or_loopback(
    address: str, refused: str | None
) -> None:
    reason = bind_refusal(address, any_address=False)
    assert (reason is None) if refused is None else (refused in (reason or ""))
    assert bind_refusal(address, any_address=True) is None


# ---------------------------------------------------------------------------- store, export, show


def test_hosts_are_stored_exported_and_shown(tmp_path: Path) -> None:
    p = parse_plan(
        HOSTS_PLAN.replace("local", "127.0.0.1\n    port: 18772")
        .replace("8766", "18771")
        .replace("192.0.2.11", "127.0.0.1")
        .replace("192.0.2.10", "127.0.0.1\n    port: 18770"),
        "p.yaml",
    )
    points = [pt for pt in p.expand() if len(pt.hosts) == 3][:1]
    text, stderr, rc = out_of("hosts3-killed-jsonplus")
    meas, _ = fio.hosts_measurement(text, stderr, rc, points[0].hosts, interval_ms=500)
    store = Store(str(tmp_path / "r.db"))
    run_id = store.runs.create(
        kind="run",
        name="t",
        source="p.yaml",
        plan_text=None,
        overrides=[],
        inventory={"hosts": []},
        fio_version="fio-3.33",
        storbench_version="0",
        argv=[],
        points=points,
    )
    store.measurements.record(
        run_id,
        points[0],
        meas,
        engine="fio",
        command=None,
        job_file=fio.job_file(points[0]),
        raw_output=text,
        stderr=stderr,
        started_at=0,
        ended_at=1,
    )
    rows = store.measurements.of_run(run_id, bins=True)
    back = rows[0].measurement
    assert back.status == "partial" and set(back.hosts) == {
        "127.0.0.1:18770",
        "vm11",
        "127.0.0.1:18772",
    }
    assert back.hosts["vm11"].status == "failed"
    assert back.hosts["127.0.0.1:18770"].directions["read"].clat.bins  # per host, stored
    doc = json.loads(export.to_json(store.runs.get(run_id), rows))
    rec = doc["measurements"][0]
    assert rec["clients"] == 3 and rec["aggregate"]["failed_hosts"] == ["vm11"]
    assert rec["hosts"]["vm11"]["target"] == {"kind": "device", "path": "/dev/vdb"}
    assert rec["hosts"]["127.0.0.1:18770"]["start_s"] < rec["hosts"]["127.0.0.1:18770"]["end_s"]
    table = list(csv.DictReader(io.StringIO(export.to_csv(store.runs.get(run_id), rows))))
    assert [r["host"] for r in table] == ["", "127.0.0.1:18770", "vm11", "127.0.0.1:18772"]
    assert table[0]["status"] == "partial" and table[2]["status"] == "failed"
    assert int(table[0]["read_io_bytes"]) == int(table[1]["read_io_bytes"]) + int(
        table[3]["read_io_bytes"]
    )
    notes = terminal.host_notes(rows)
    assert any("host vm11: its fio server went away" in n for n in notes)
    line = terminal.point_result_line(back)
    assert line.startswith("PARTIAL: host vm11") and "[2 of 3 hosts" in line
    assert terminal.hosts_table(rows).row_count == 4


def test_a_partial_repetition_is_never_counted_as_a_full_one() -> None:
    """Three repetitions of a point, one of which lost a host (the recorded killed server):
    the summary counts 2 full and 1 partial, and the table's n says so."""
    from storbench.analysis.summary import summarize
    from storbench.plan import Point
    from storbench.report.fmt import SummaryLead, runs_cell

    full = measure("hosts3-status-jsonplus", BASE, BASE + 1, BASE + 2)
    partial = measure("hosts3-killed-jsonplus", BASE, BASE + 1, BASE + 2)
    assert full.status == "ok" and partial.status == "partial"
    t = Target("file", "/x")
    pts = [Point(i, "k", i, t, "w", {"rw": "randread"}, {"rw": "randread"}) for i in range(3)]
    (s,) = summarize(list(zip(pts, [full, partial, full], strict=True)))
    assert (s.runs, s.partial) == (3, 1)
    assert runs_cell(s) == "2 + 1 partial"
    lead = SummaryLead.of([s])
    assert "n" in lead.columns() and "2 + 1 partial" in lead.cells(s)
    (alone,) = summarize([(pts[0], partial)])
    assert runs_cell(alone) == "1 partial" and "n" in SummaryLead.of([alone]).columns()
