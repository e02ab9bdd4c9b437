"""The test bed's settings (preflight/inventory/tuning.py) read from this machine's real
/proc and /sys, and what `storbench compare` says differed between two runs' test beds
(analysis/testbed.py)."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

from storbench import engines
from storbench.analysis.testbed import differences
from storbench.hosts.inventory import host_inventory, target_inventory
from storbench.hosts.inventory.tuning import host_tuning
from storbench.plan import Point, Target
from storbench.store import Store

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the harness modules
from stored_runs import recorded, stored_run

DATA = Path(__file__).resolve().parent.parent / "data" / "fio"

FIO = engines.get("fio")  # which fio a run would use


def test_testbed_host_tuning_is_what_proc_and_sys_say() -> None:
    t = host_tuning()
    for name, value in t["sysctl"].items():
        raw = Path("/proc/sys", *name.split(".")).read_text()
        assert value == " ".join(raw.split()), name
    assert "vm.dirty_ratio" in t["sysctl"]
    for iface, mtu in t.get("mtu", {}).items():
        assert int(Path(f"/sys/class/net/{iface}/mtu").read_text()) == mtu
    assert "lo" not in t.get("mtu", {})


def test_testbed_a_files_disk_has_its_queue_settings(tmp_path: Path) -> None:
    disk = target_inventory("file", str(tmp_path / "x.dat")).get("disk") or {}
    if not disk.get("kname"):
        return  # a filesystem without a disk under it (tmpfs, overlay): nothing to read
    tuning = disk["tuning"]
    queue = Path("/sys/block", disk["kname"], "queue")
    if (queue / "scheduler").exists():
        assert f"[{tuning['scheduler']}]" in (queue / "scheduler").read_text()
    if (queue / "read_ahead_kb").exists():
        assert tuning["read_ahead_kb"] == int((queue / "read_ahead_kb").read_text())


def test_testbed_differences_name_each_setting_and_ignore_what_always_differs() -> None:
    a = {
        "host": host_inventory(FIO.about()),
        "targets": [{"path": "/x", "disk": {"tuning": {"nr": 64}}}],
    }
    b = copy.deepcopy(a)
    assert differences(a, b) == []
    b["host"]["tuning"]["sysctl"]["vm.dirty_ratio"] = "1"
    b["host"]["hostname"] = "elsewhere"  # which machine it was is not a setting
    b["targets"][0]["disk"]["tuning"]["nr"] = 256
    assert differences(a, b) == [
        ("host.tuning.sysctl.vm.dirty_ratio", a["host"]["tuning"]["sysctl"]["vm.dirty_ratio"], "1"),
        ("targets[/x].disk.tuning.nr", 64, 256),
    ]


def _run(store: Store, inventory: dict[str, object]) -> int:
    p = Point(0, "k", 0, Target("file", "/x"), "w", {"rw": "randread"}, {})
    return stored_run(store, [(p, recorded("psync-randread-json"))], inventory=inventory)


def test_testbed_compare_says_what_differed(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    store = Store(str(db))
    base = {"host": host_inventory(FIO.about()), "targets": []}
    other = copy.deepcopy(base)
    other["host"]["tuning"]["sysctl"]["vm.dirty_ratio"] = "1"
    _run(store, base)
    _run(store, other)
    store.close()
    env = {**os.environ, "STORBENCH_DB": str(db)}
    text = subprocess.run(
        [sys.executable, "-m", "storbench", "compare", "1", "2"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    ).stdout
    want = base["host"]["tuning"]["sysctl"]["vm.dirty_ratio"]
    assert "test beds differ (base -> other):" in text
    assert f"host.tuning.sysctl.vm.dirty_ratio: {want} -> 1" in text
    doc = json.loads(
        subprocess.run(
            [sys.executable, "-m", "storbench", "compare", "1", "2", "--format", "json"],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        ).stdout
    )
    (cmp,) = doc["comparisons"]
    assert cmp["testbed_differences"] == [
        {"setting": "host.tuning.sysctl.vm.dirty_ratio", "base": want, "other": "1"}
    ]
