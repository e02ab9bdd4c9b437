"""The Ceph clusters of a run and its timeline, as the reports show them.

Pure functions over what a run stored: ``RunRow.inventory["ceph"]`` (one dict per cluster:
:func:`storbench.preflight.ceph.cluster_inventory` plus ``conf``, ``client``, the
benchmarked pools (``pools_benchmarked``) and ``health_warning``) and
``store.events.of_run(run_id)``. The HTML report, ``storbench report --format markdown`` and
``storbench show`` all start from :func:`ceph_report`.

Units: capacities are bytes (shown in binary units, 1 GiB = 2^30 bytes); event times are
seconds from the run's start. A CRUSH weight is shown as Ceph stores it (by default the
device's capacity in TiB, but an administrator may set any value).
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from typing import Any

from storbench.model.units import fmt_bytes, fmt_duration
from storbench.report.safe import md_code, md_table, md_text
from storbench.store import EventRow, RunRow

__all__ = [
    "CephReport",
    "ClusterView",
    "OsdRow",
    "PoolRow",
    "TimelineRow",
    "ceph_markdown",
    "ceph_report",
    "cluster_line",
    "cluster_views",
    "fmt_offset",
    "timeline",
    "versions_summary",
]


@dataclass
class OsdRow:
    id: int
    name: str
    host: str
    device_class: str
    objectstore: str
    status: str  # up | down (ceph osd tree)
    in_: bool | None  # in the data distribution (reweight > 0)
    crush_weight: float | None
    reweight: float | None

    def cells(self) -> list[str]:
        """id, host, device class, objectstore, status, in, CRUSH weight, reweight."""
        return [
            self.name,
            self.host,
            self.device_class,
            self.objectstore,
            self.status,
            "-" if self.in_ is None else ("in" if self.in_ else "out"),
            _num(self.crush_weight),
            _num(self.reweight),
        ]


OSD_HEADERS = [
    "OSD",
    "host",
    "device class",
    "objectstore",
    "status",
    "in/out",
    "CRUSH weight",
    "reweight",
]


@dataclass
class PoolRow:
    name: str
    type: str
    size: int | None
    min_size: int | None
    pg_num: int | None
    crush_rule: str
    application: list[str] = field(default_factory=list)
    stored_bytes: int | None = None  # ceph df at the start of the run
    objects: int | None = None
    max_avail_bytes: int | None = None
    known: bool = True  # False: the pool is not in the inventory's pool list

    def cells(self) -> list[str]:
        """pool, type, size, min_size, pg_num, CRUSH rule, application, stored, objects,
        max avail."""
        if not self.known:
            return [self.name, "(not in the inventory)", *[""] * (len(POOL_HEADERS) - 2)]
        return [
            self.name,
            self.type,
            _int(self.size),
            _int(self.min_size),
            _int(self.pg_num),
            self.crush_rule,
            ", ".join(self.application) or "-",
            fmt_bytes(self.stored_bytes),
            _int(self.objects),
            fmt_bytes(self.max_avail_bytes),
        ]


POOL_HEADERS = [
    "pool",
    "type",
    "size",
    "min_size",
    "pg_num",
    "CRUSH rule",
    "application",
    "stored",
    "objects",
    "max avail",
]


@dataclass
class ClusterView:
    """One cluster as a report shows it."""

    fsid: str | None
    conf: str | None
    client: str | None
    health: str  # HEALTH_OK | HEALTH_WARN | HEALTH_ERR | unknown
    checks: list[str]  # "OSD_DOWN: 1 osds down"
    health_warning: str | None
    versions: list[str]  # "16.2.15 pacific: 1 mon, 1 mgr, 2 osd"
    osds: list[OsdRow]
    pools: list[PoolRow]
    raw_total_bytes: int | None
    raw_used_bytes: int | None
    raw_avail_bytes: int | None
    errors: list[str]  # inventory queries that failed

    @property
    def title(self) -> str:
        return f"Ceph cluster {self.fsid or '(fsid unknown)'}"

    @property
    def raw_used_pct(self) -> float | None:
        if self.raw_used_bytes is None or not self.raw_total_bytes:
            return None
        return 100.0 * self.raw_used_bytes / self.raw_total_bytes

    def osd_summary(self) -> str:
        """``2 OSDs (1 bluestore, 1 memstore; 1 down)``."""
        n = len(self.osds)
        stores: dict[str, int] = {}
        for o in self.osds:
            stores[o.objectstore] = stores.get(o.objectstore, 0) + 1
        parts = ", ".join(f"{c} {s}" for s, c in sorted(stores.items()))
        down = sum(1 for o in self.osds if o.status != "up")
        out_ = sum(1 for o in self.osds if o.in_ is False)
        extra = "".join([f"; {down} not up" if down else "", f"; {out_} out" if out_ else ""])
        return f"{n} OSD{'s' if n != 1 else ''}" + (f" ({parts}{extra})" if n else "")

    def capacity(self) -> list[tuple[str, str, str]]:
        """(what, in binary units, exact bytes) of the raw capacity (``ceph df``); the used
        share of the total follows the used bytes."""
        out = []
        pct = self.raw_used_pct
        for what, v in (
            ("raw total", self.raw_total_bytes),
            ("raw used", self.raw_used_bytes),
            ("raw available", self.raw_avail_bytes),
        ):
            if v is not None:
                human = fmt_bytes(v)
                if what == "raw used" and pct is not None:
                    human += f", {pct:.1f} % of the total"
                out.append((what, human, f"{v:,} bytes"))
        return out

    def raw_capacity(self) -> str:
        """``raw 16.0 GiB, 290.3 MiB used (1.8 %), 15.7 GiB available``."""
        if self.raw_total_bytes is None:
            return "raw capacity unknown"
        pct = self.raw_used_pct
        return (
            f"raw {fmt_bytes(self.raw_total_bytes)}, {fmt_bytes(self.raw_used_bytes)} used"
            + (f" ({pct:.1f} %)" if pct is not None else "")
            + f", {fmt_bytes(self.raw_avail_bytes)} available"
        )


@dataclass
class TimelineRow:
    at: float  # unix time, s
    offset_s: float | None  # seconds from the run's start
    kind: str
    message: str
    data: dict[str, Any]

    @property
    def offset(self) -> str:
        return fmt_offset(self.offset_s)

    @property
    def clock(self) -> str:
        """The local wall-clock time, to the second."""
        return dt.datetime.fromtimestamp(self.at).strftime("%Y-%m-%d %H:%M:%S")


@dataclass
class CephReport:
    """What the reports show of one run's Ceph clusters and timeline."""

    clusters: list[ClusterView]
    timeline: list[TimelineRow]


# ---------------------------------------------------------------------------- building


def _num(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.5g}"
    return str(v)


def _int(v: Any) -> str:
    return "-" if v is None else str(v)


def _as_int(v: Any) -> int | None:
    try:
        return int(v) if v is not None else None
    except (TypeError, ValueError):
        return None


def _as_float(v: Any) -> float | None:
    try:
        return float(v) if v is not None else None
    except (TypeError, ValueError):
        return None


_VERSION = re.compile(r"ceph version (\S+) \([0-9a-f]+\) (\w+)")


def versions_summary(versions: dict[str, Any] | None) -> list[str]:
    """``ceph versions`` as one line per distinct version: ``16.2.15 pacific: 1 mon, 1 mgr,
    2 osd`` (daemon types in Ceph's order; ``overall`` is the sum, left out)."""
    if not isinstance(versions, dict):
        return []
    by_version: dict[str, list[str]] = {}
    for daemon, counts in versions.items():
        if daemon == "overall" or not isinstance(counts, dict):
            continue
        for text, n in counts.items():
            m = _VERSION.search(str(text))
            name = f"{m.group(1)} {m.group(2)}" if m else str(text)
            by_version.setdefault(name, []).append(f"{n} {daemon}")
    return [f"{v}: {', '.join(daemons)}" for v, daemons in by_version.items()]


def _checks(health: dict[str, Any] | None) -> list[str]:
    out = []
    for code, c in sorted(((health or {}).get("checks") or {}).items()):
        msg = ((c or {}).get("summary") or {}).get("message") if isinstance(c, dict) else None
        out.append(f"{code}: {msg}" if msg else code)
    return out


def _osds(inv: dict[str, Any]) -> list[OsdRow]:
    rows = []
    for o in inv.get("osds") or []:
        rows.append(
            OsdRow(
                id=int(o.get("id", -1)),
                name=str(o.get("name") or f"osd.{o.get('id')}"),
                host=str(o.get("host") or o.get("hostname") or "-"),
                device_class=str(o.get("device_class") or "-"),
                objectstore=str(o.get("objectstore") or "?"),
                status=str(o.get("status") or "?"),
                in_=o.get("in") if isinstance(o.get("in"), bool) else None,
                crush_weight=_as_float(o.get("crush_weight")),
                reweight=_as_float(o.get("reweight")),
            )
        )
    return sorted(rows, key=lambda r: r.id)


def bench_pool_names(inv: dict[str, Any]) -> list[str]:
    """The benchmarked pools of a cluster entry: ``pools_benchmarked`` (what preflight
    stores); else ``pools`` when it is a list of names (replacing cluster_inventory's pool
    details); else the one ``pool`` cluster_inventory was given."""
    names = inv.get("pools_benchmarked")
    if isinstance(names, list):
        return [str(n) for n in names]
    pools = inv.get("pools")
    if isinstance(pools, list) and pools and all(isinstance(p, str) for p in pools):
        return list(pools)
    pool = inv.get("pool")
    if isinstance(pool, dict) and pool.get("pool_name"):
        return [str(pool["pool_name"])]
    return []


def _pools(inv: dict[str, Any]) -> list[PoolRow]:
    details: dict[str, dict[str, Any]] = {}
    for p in inv.get("pools") or []:
        if isinstance(p, dict) and p.get("pool_name"):
            details[str(p["pool_name"])] = p
    pool = inv.get("pool")
    if isinstance(pool, dict) and pool.get("pool_name"):
        details.setdefault(str(pool["pool_name"]), pool)
    df_pools = {
        str(p.get("name")): p.get("stats") or {}
        for p in ((inv.get("df") or {}).get("pools") or [])
        if isinstance(p, dict)
    }
    rows = []
    for name in bench_pool_names(inv):
        d = details.get(name)
        st = df_pools.get(name, {})
        if d is None:
            rows.append(PoolRow(name, "", None, None, None, "", known=False))
            continue
        rule = d.get("crush_rule_name") or (
            f"rule {d['crush_rule']}" if d.get("crush_rule") is not None else "-"
        )
        rows.append(
            PoolRow(
                name=name,
                type=str(d.get("type") or "-"),
                size=_as_int(d.get("size")),
                min_size=_as_int(d.get("min_size")),
                pg_num=_as_int(d.get("pg_num")),
                crush_rule=str(rule),
                application=[str(a) for a in d.get("application") or []],
                stored_bytes=_as_int(st.get("stored")),
                objects=_as_int(st.get("objects")),
                max_avail_bytes=_as_int(st.get("max_avail")),
            )
        )
    return rows


def cluster_views(inventory: dict[str, Any]) -> list[ClusterView]:
    """One view per cluster of a run's inventory (``inventory["ceph"]``; none without)."""
    out = []
    for inv in inventory.get("ceph") or []:
        if not isinstance(inv, dict):
            continue
        health = inv.get("health") if isinstance(inv.get("health"), dict) else None
        stats = (inv.get("df") or {}).get("stats") or {}
        out.append(
            ClusterView(
                fsid=inv.get("fsid"),
                conf=inv.get("conf"),
                client=inv.get("client"),
                health=str((health or {}).get("status") or "unknown"),
                checks=_checks(health),
                health_warning=inv.get("health_warning"),
                versions=versions_summary(inv.get("versions")),
                osds=_osds(inv),
                pools=_pools(inv),
                raw_total_bytes=_as_int(stats.get("total_bytes")),
                raw_used_bytes=_as_int(stats.get("total_used_raw_bytes")),
                raw_avail_bytes=_as_int(stats.get("total_avail_bytes")),
                errors=[str(e) for e in inv.get("errors") or []],
            )
        )
    return out


def fmt_offset(seconds: float | None) -> str:
    """Seconds from the run's start: ``+12.4 s``, ``-0.8 s`` (before it: preflight),
    ``+754.2 s (12m34s)`` from a minute on."""
    if seconds is None:
        return "?"
    text = f"{seconds:+.1f} s"
    if abs(seconds) >= 60:
        text += f" ({fmt_duration(abs(seconds))})"
    return text


def timeline(events: list[EventRow], started_at: float | None) -> list[TimelineRow]:
    """The events in time order, each with its offset from the run's start (not those a
    run keeps for its own housekeeping)."""
    return [
        TimelineRow(
            at=e.at,
            offset_s=(e.at - started_at) if started_at is not None else None,
            kind=e.kind,
            message=e.message,
            data=e.data,
        )
        for e in sorted(events, key=lambda e: (e.at, e.id))
        if not e.bookkeeping
    ]


def ceph_report(run: RunRow, events: list[EventRow]) -> CephReport | None:
    """A run's clusters and timeline; None when it has neither (a run without Ceph)."""
    clusters = cluster_views(run.inventory)
    rows = timeline(events, run.started_at)
    if not clusters and not rows:
        return None
    return CephReport(clusters=clusters, timeline=rows)


# ---------------------------------------------------------------------------- text


def cluster_line(c: ClusterView) -> str:
    """One line: ``ceph cluster FSID: HEALTH_OK, 2 OSDs (2 bluestore); pool bench size
    1/min_size 1, 8 PGs``."""
    pools = "; ".join(
        f"pool {p.name} size {_int(p.size)}/min_size {_int(p.min_size)}, {_int(p.pg_num)} PGs"
        if p.known
        else f"pool {p.name} (not in the inventory)"
        for p in c.pools
    )
    health = c.health + (f" ({', '.join(x.split(':')[0] for x in c.checks)})" if c.checks else "")
    return f"ceph cluster {c.fsid or '?'}: {health}, {c.osd_summary()}" + (
        f"; {pools}" if pools else ""
    )


def ceph_markdown(report: CephReport | None) -> str:
    """The clusters (facts, OSD table, benchmarked pools) and the timeline as Markdown."""
    if report is None:
        return ""
    out = []
    for c in report.clusters:
        out.append(f"\n### {md_text(c.title)}\n")
        facts = [f"- health at the start: **{md_text(c.health)}**"]
        facts += [f"  - {md_text(x)}" for x in c.checks]
        if c.health_warning and not c.checks:
            facts.append(f"  - preflight warned: {md_text(c.health_warning)}")
        if c.versions:
            facts.append("- versions: " + md_text("; ".join(c.versions)))
        facts.append(f"- capacity: {c.raw_capacity()}")
        if c.conf or c.client:
            facts.append(
                "- client: "
                + ", ".join(
                    x
                    for x in (
                        md_code(c.conf) if c.conf else "",
                        f"as {md_code(c.client)}" if c.client else "",
                    )
                    if x
                )
            )
        if c.errors:
            facts.append("- inventory incomplete: " + md_text("; ".join(c.errors)))
        out.append("\n".join(facts) + "\n")
        if c.osds:
            out.append("\n" + md_table(OSD_HEADERS, [o.cells() for o in c.osds], right={6, 7}))
        if c.pools:
            out.append(
                "\n"
                + md_table(POOL_HEADERS, [p.cells() for p in c.pools], right={2, 3, 4, 7, 8, 9})
            )
    if report.timeline:
        out.append("\n### Timeline\n")
        out.append(
            "\n"
            + md_table(
                ["time", "kind", "event"],
                [[r.offset, r.kind, r.message] for r in report.timeline],
                right={0},
            )
        )
        out.append("\nTimes are seconds from the run's start.\n")
    return "".join(out)
