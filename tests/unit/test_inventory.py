"""Host and target inventory on this machine's real /proc and sysfs."""

from __future__ import annotations

import os
import platform
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import storbench
from storbench.engines import fio as fio_engine
from storbench.engines.fio import tool as fio_tool
from storbench.hosts import inventory
from storbench.hosts.inventory import disk_identity, host_inventory, target_inventory

HOST_KEYS = {
    "hostname",
    "kernel",
    "arch",
    "distribution",
    "cpu_model",
    "cpu_count",
    "memory_bytes",
    "python_version",
    "power",
    "fio_version",
    "fio",
    "storbench_version",
    "tuning",
}
IDENTITY_KEYS = {"model", "size_bytes", "type", "proto", "device", "source"}


def _mount_fstype(path: str) -> str:
    """fstype of the mount holding *path*, straight from /proc/self/mountinfo (longest prefix)."""
    real = os.path.realpath(path)
    best, fstype = -1, ""
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        left, _, right = line.partition(" - ")
        target = left.split()[4].replace("\\040", " ")
        if (real == target or real.startswith(target.rstrip("/") + "/")) and len(target) >= best:
            best, fstype = len(target), right.split()[0]
    return fstype


def _physical_disk() -> str | None:
    for entry in sorted(Path("/sys/block").iterdir()):
        resolved = str(entry.resolve())
        size = (entry / "size").read_text().strip()
        if (
            "/devices/virtual/" not in resolved
            and size != "0"
            and Path(f"/dev/{entry.name}").exists()
        ):
            return f"/dev/{entry.name}"
    return None


def _no_tools(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pretend no external command is installed."""
    monkeypatch.setattr(inventory.probe, "_which", lambda cmd: None)
    monkeypatch.setattr(fio_tool, "fio_path", lambda: None)
    monkeypatch.setattr(fio_tool, "fio_version", lambda: None)
    monkeypatch.setattr(fio_tool, "available_engines", frozenset)


# --------------------------------------------------------------------------------------------
# host


def test_host_inventory_keys_and_types() -> None:
    info = host_inventory(fio_engine.about())
    assert set(info) == HOST_KEYS
    assert isinstance(info["hostname"], str) and info["hostname"]
    assert info["kernel"].startswith(platform.release())
    assert isinstance(info["cpu_count"], int) and info["cpu_count"] >= 1
    assert isinstance(info["memory_bytes"], int) and info["memory_bytes"] > 2**20
    assert info["python_version"] == platform.python_version()
    assert info["storbench_version"] == storbench.__version__
    for key in ("distribution", "cpu_model"):
        assert info[key] is None or (isinstance(info[key], str) and info[key])
    if shutil.which("fio"):
        assert re.match(r"^\d+\.\d+", info["fio_version"]), info["fio_version"]
    else:
        assert info["fio_version"] is None


def test_host_inventory_without_any_tool(monkeypatch: pytest.MonkeyPatch) -> None:
    _no_tools(monkeypatch)
    info = host_inventory(fio_engine.about())
    assert set(info) == HOST_KEYS
    assert info["fio_version"] is None
    assert info["fio"] == {"path": None, "version": None, "ioengines": []}
    assert info["cpu_count"] >= 1


def test_host_inventory_names_the_fio_that_runs_and_its_engines() -> None:
    """The inventory says which fio a run used and what it can do (whether it has http)."""
    fio = host_inventory(fio_engine.about())["fio"]
    if fio_engine.fio_path() is None:
        pytest.skip("fio is not installed")
    assert fio["path"] == fio_engine.fio_path()
    assert fio["version"] == fio_engine.fio_version()
    out = subprocess.run([fio["path"], "--enghelp"], capture_output=True, text=True).stdout
    assert fio["ioengines"] == sorted(line.strip() for line in out.splitlines()[1:] if line)
    assert "psync" in fio["ioengines"]


@pytest.mark.parametrize(
    ("env", "own_build", "expected"),
    [
        ({"STORBENCH_FIO": "/opt/fio/bin/fio"}, True, "/opt/fio/bin/fio"),
        ({"STORBENCH_FIO": "fio"}, True, "fio"),
        ({}, True, fio_tool.OWN_BUILD),
        ({}, False, "fio"),
    ],
    ids=["named", "path-asked", "own-build", "path"],
)
def test_which_fio_runs(
    monkeypatch: pytest.MonkeyPatch, env: dict[str, str], own_build: bool, expected: str
) -> None:
    """$STORBENCH_FIO first (``fio``: the one on PATH), then the own build, then PATH."""
    monkeypatch.delenv("STORBENCH_FIO", raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setattr(fio_tool.os, "access", lambda path, mode: own_build)
    assert fio_tool._which_fio() == expected


def test_distribution_comes_from_os_release() -> None:
    text = Path("/etc/os-release").read_text() if Path("/etc/os-release").exists() else ""
    match = re.search(r'^PRETTY_NAME="?([^"\n]*)"?', text, re.MULTILINE)
    expected = match.group(1) if match else None
    assert host_inventory(fio_engine.about())["distribution"] == expected


# --------------------------------------------------------------------------------------------
# files and directories


def test_file_inventory_finds_its_filesystem(tmp_path: Path) -> None:
    target = tmp_path / "scratch.dat"
    target.write_bytes(b"x")
    info = target_inventory("file", str(target))
    assert set(info) == {"kind", *inventory.FS_KEYS}
    assert info["kind"] == "file"
    assert info["existing_path"] == str(target)
    assert info["fstype"] == _mount_fstype(str(target))
    assert info["mountpoint"] and os.path.realpath(target).startswith(info["mountpoint"])
    assert isinstance(info["mount_options"], str) and info["mount_options"]
    assert info["error"] is None
    disk = info["disk"]
    if disk is not None:
        assert set(disk) == set(inventory.DEVICE_KEYS)
        assert disk["device"].startswith("/dev/")
        assert isinstance(disk["size_bytes"], int) and disk["size_bytes"] > 0


def test_file_that_does_not_exist_uses_nearest_parent(tmp_path: Path) -> None:
    info = target_inventory("file", str(tmp_path / "a" / "b" / "c.dat"))
    assert info["existing_path"] == str(tmp_path)
    assert info["fstype"] == _mount_fstype(str(tmp_path))


def test_directory_inventory_without_findmnt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = target_inventory("directory", str(tmp_path))
    _no_tools(monkeypatch)
    info = target_inventory("directory", str(tmp_path))
    assert info["kind"] == "directory"
    assert info["fstype"] == expected["fstype"]
    assert info["mountpoint"] == expected["mountpoint"]
    assert (info["disk"] is None) == (expected["disk"] is None)


def test_tmpfs_file_has_no_disk() -> None:
    if _mount_fstype("/dev/shm") != "tmpfs":
        pytest.skip("/dev/shm is not tmpfs here")
    info = target_inventory("file", "/dev/shm/storbench-not-created")
    assert info["fstype"] == "tmpfs"
    assert info["disk"] is None
    assert info["error"] is None
    assert set(disk_identity("/dev/shm").values()) == {None}


# --------------------------------------------------------------------------------------------
# devices


def test_device_inventory_of_a_real_disk() -> None:
    dev = _physical_disk()
    if dev is None:
        pytest.skip("no physical (non-virtual) block device visible")
    info = target_inventory("device", dev)
    assert set(info) == {"kind", *inventory.DEVICE_KEYS}
    assert info["device"] == dev
    assert info["parent"] is None
    assert info["error"] is None
    assert isinstance(info["size_bytes"], int) and info["size_bytes"] > 0
    assert isinstance(info["rotational"], bool)
    assert info["type"] == ("HDD" if info["rotational"] else "SSD")
    assert info["logical_block_size"] in (512, 1024, 2048, 4096)
    assert info["physical_block_size"] >= info["logical_block_size"]
    queue = Path(f"/sys/block/{Path(dev).name}/queue/scheduler")
    if queue.exists() and "[" in queue.read_text():
        assert f"[{info['scheduler']}]" in queue.read_text()
    for key in ("model", "vendor", "serial", "transport", "protocol"):
        assert info[key] is None or isinstance(info[key], str)


def test_device_inventory_without_tools_still_reads_sysfs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    dev = _physical_disk()
    if dev is None:
        pytest.skip("no physical (non-virtual) block device visible")
    _no_tools(monkeypatch)
    info = target_inventory("device", dev)
    assert info["size_bytes"] and info["size_bytes"] > 0
    assert isinstance(info["rotational"], bool)


def test_device_inventory_of_non_devices(tmp_path: Path) -> None:
    for path in (str(tmp_path), "/dev/null", str(tmp_path / "missing")):
        info = target_inventory("device", path)
        assert set(info) == {"kind", *inventory.DEVICE_KEYS}
        assert info["error"]
        assert info["size_bytes"] is None


def test_unknown_kind_is_an_error() -> None:
    with pytest.raises(ValueError, match="unknown target kind"):
        target_inventory("rbd", "pool/image")


# --------------------------------------------------------------------------------------------
# disk identity


def test_disk_identity_of_a_file_and_its_disk(tmp_path: Path) -> None:
    ident = disk_identity(str(tmp_path / "file.dat"))
    assert set(ident) == IDENTITY_KEYS
    disk = target_inventory("file", str(tmp_path))["disk"]
    if disk is None:
        assert set(ident.values()) == {None}
        return
    assert ident["device"] == disk["device"]
    assert ident["source"] in ("sysfs", "smartctl")
    assert isinstance(ident["size_bytes"], int) and ident["size_bytes"] > 0
    assert ident["type"] in ("SSD", "HDD", None)
    # same answer when asked about the disk itself
    assert disk_identity(disk["device"]) == ident


def test_disk_identity_without_tools(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _no_tools(monkeypatch)
    ident = disk_identity(str(tmp_path))
    assert set(ident) == IDENTITY_KEYS
    assert ident["source"] in ("sysfs", None)
    assert set(disk_identity("/proc").values()) == {None}


def test_smartctl_answers_are_preferred(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """smartctl's model, capacity, rotation and protocol win over sysfs (parsing only)."""
    if target_inventory("file", str(tmp_path))["disk"] is None:
        pytest.skip("the test directory is not on a physical disk here")
    monkeypatch.setattr(inventory.identity, "_is_virtual", lambda sysdir: False)
    answer = {
        "smartctl": {"exit_status": 0},
        "device": {"protocol": "ATA"},
        "model_name": "Samsung SSD 860 EVO 500GB",
        "user_capacity": {"bytes": 500107862016},
        "rotation_rate": 0,
        "sata_version": {"string": "SATA 3.2"},
    }
    monkeypatch.setattr(inventory.identity, "_smartctl", lambda device: answer)
    ident = disk_identity(str(tmp_path))
    assert ident == {
        "model": "Samsung SSD 860 EVO 500GB",
        "size_bytes": 500107862016,
        "type": "SSD",
        "proto": "SATA",
        "device": ident["device"],
        "source": "smartctl",
    }
    nvme = {"smartctl": {"exit_status": 0}, "device": {"protocol": "NVMe"}, "model_name": "PM961"}
    monkeypatch.setattr(inventory.identity, "_smartctl", lambda device: nvme)
    ident = disk_identity(str(tmp_path))
    assert (ident["model"], ident["type"], ident["proto"]) == ("PM961", "SSD", "NVMe")
