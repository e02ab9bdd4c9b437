"""The host samples (storbench.hosts.load) as CSV for spreadsheets and plotting tools: one
row per sample and figure, in base units (%, bytes, bytes/s), devices and interfaces by
name; a device or interface that moved nothing in a sample has no row in it."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence

from storbench.hosts.load import HostSample
from storbench.report.safe import csv_cell

COLUMNS = ("run", "point", "host", "seq", "t_s", "dur_s", "metric", "device", "value")
CPU = ("cpu_user_pct", "cpu_system_pct", "cpu_iowait_pct", "cpu_idle_pct", "cpu_steal_pct")
DISK = (
    "disk_util_pct",
    "disk_queue",
    "disk_read_bytes_per_s",
    "disk_write_bytes_per_s",
    "disk_iops",
)


def host_samples_csv(run_id: int, points: Sequence[tuple[int, Sequence[HostSample]]]) -> str:
    """``points``: (0-based index, samples); ``point`` is 1-based, as show --point takes it."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(COLUMNS)
    for idx, samples in points:
        for s in samples:
            lead = [run_id, idx + 1, csv_cell(s.host), s.seq, s.t_ms / 1000, s.dur_ms / 1000]
            for name in CPU:
                w.writerow([*lead, name, "", getattr(s, name)])
            w.writerow([*lead, "mem_used_bytes", "", s.mem_used_bytes])
            w.writerow([*lead, "mem_total_bytes", "", s.mem_total_bytes])
            for iface, (rx, tx) in s.net.items():
                w.writerow([*lead, "net_rx_bytes_per_s", csv_cell(iface), rx])
                w.writerow([*lead, "net_tx_bytes_per_s", csv_cell(iface), tx])
            for dev, values in s.disks.items():
                for name, v in zip(DISK, values, strict=True):
                    w.writerow([*lead, name, csv_cell(dev), v])
    return buf.getvalue()
