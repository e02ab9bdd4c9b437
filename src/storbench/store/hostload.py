"""The host samples of a results database: what the machine running a point did in each
interval (storbench.hosts.load), one row per sample, written in small batches while the point
runs.

A row is CPU shares, memory and, as compact JSON, the interfaces and devices that moved
something in the interval (rounded to what is worth telling: 0.01 % and whole bytes/s);
``bench/series`` measures its size.
"""

from __future__ import annotations

import json
from typing import Any

from storbench.hosts.load import HostSample
from storbench.store.base import Part, _locked, storable
from storbench.store.dialect import upsert

_COLUMNS = (
    "host, seq, t_ms, dur_ms, cpu_user, cpu_system, cpu_iowait, cpu_idle, cpu_steal,"
    " mem_used, mem_total, net, disks, watts"
)
#: a sample again (same key) replaces the one stored
_UPSERT = upsert(
    "host_samples",
    ("run_id", "point_idx", "host", "seq"),
    ["run_id", "point_idx", *_COLUMNS.split(", ")],
)


def _net(s: HostSample) -> str:
    return json.dumps(
        {k: [round(rx), round(tx)] for k, (rx, tx) in s.net.items()}, separators=(",", ":")
    )


def _disks(s: HostSample) -> str:
    out = {
        k: [round(u, 2), round(q, 3), round(r), round(w), round(n, 1)]
        for k, (u, q, r, w, n) in s.disks.items()
    }
    return json.dumps(out, separators=(",", ":"))


class HostSamples(Part):
    """What the machines running each point did (``host_samples``: CPU, memory, network,
    disks and power of each host in each interval); ``store.host_samples`` of a
    :class:`~storbench.store.db.Store`."""

    @_locked
    def add(self, run_id: int, point_idx: int, samples: list[HostSample]) -> None:
        """Store samples of a point and commit at once (safe from any thread)."""
        with self.tx():
            self.db.executemany(
                _UPSERT,
                [
                    (
                        run_id,
                        point_idx,
                        s.host,
                        s.seq,
                        s.t_ms,
                        s.dur_ms,
                        round(s.cpu_user_pct, 2),
                        round(s.cpu_system_pct, 2),
                        round(s.cpu_iowait_pct, 2),
                        round(s.cpu_idle_pct, 2),
                        round(s.cpu_steal_pct, 2),
                        s.mem_used_bytes,
                        s.mem_total_bytes,
                        _net(s),
                        _disks(s),
                        round(s.watts, 1) if s.watts is not None else None,
                    )
                    for s in samples
                ],
            )

    @_locked
    def clear(self, run_id: int, point_idx: int) -> None:
        """Forget a point's samples (it runs again: a resume after an interruption)."""
        with self.tx():
            self.db.execute(
                "DELETE FROM host_samples WHERE run_id=? AND point_idx=?", (run_id, point_idx)
            )

    @_locked
    def of_point(self, run_id: int, point_idx: int, host: str | None = "") -> list[HostSample]:
        """A point's samples of one host in time order (``host`` '': this machine; a remote
        host by its label), or of every host (None: this machine's first, then by label)."""
        if not storable(run_id, point_idx):  # beyond any key stored: none
            return []
        where, args = ("", ()) if host is None else (" AND host=?", (host,))
        rows = self.db.execute(
            f"SELECT {_COLUMNS} FROM host_samples WHERE run_id=? AND point_idx=?{where}"
            " ORDER BY host, seq",
            (run_id, point_idx, *args),
        )
        return [_sample(r) for r in rows]

    @_locked
    def hosts(self, run_id: int, point_idx: int) -> list[str]:
        """The hosts a point has samples of ('' for this machine first)."""
        if not storable(run_id, point_idx):
            return []
        rows = self.db.execute(
            "SELECT DISTINCT host FROM host_samples WHERE run_id=? AND point_idx=? ORDER BY host",
            (run_id, point_idx),
        )
        return [r["host"] for r in rows]


def _sample(r: Any) -> HostSample:
    return HostSample(
        seq=r["seq"],
        t_ms=r["t_ms"],
        dur_ms=r["dur_ms"],
        cpu_user_pct=r["cpu_user"],
        cpu_system_pct=r["cpu_system"],
        cpu_iowait_pct=r["cpu_iowait"],
        cpu_idle_pct=r["cpu_idle"],
        cpu_steal_pct=r["cpu_steal"],
        mem_used_bytes=r["mem_used"],
        mem_total_bytes=r["mem_total"],
        net={k: (float(v[0]), float(v[1])) for k, v in json.loads(r["net"]).items()},
        disks={k: tuple(float(x) for x in v) for k, v in json.loads(r["disks"]).items()},  # type: ignore[misc]
        host=r["host"],
        watts=r["watts"],
    )
