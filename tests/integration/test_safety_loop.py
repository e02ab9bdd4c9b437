"""Write-safety checks on real loop devices, real signatures, real mounts.

Every loop device, mount, swap and device-mapper mapping made here is undone by the
``cleanup`` fixture, also when a test fails. Tests that need root or a tool that is missing
are skipped with the reason.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from storbench.preflight import safety
from storbench.preflight.safety import (
    create_scratch_file,
    created_by_storbench,
    device_in_use_refusal,
    device_write_refusal,
    file_write_refusal,
    free_space_refusal,
    is_destroy_allowed,
    mark_created,
)

pytestmark = pytest.mark.integration

IMAGE_SIZE = 32 * 1024 * 1024
TOOL_PATH = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin"])
ENV = {**os.environ, "PATH": TOOL_PATH, "LC_ALL": "C", "LVM_SUPPRESS_FD_WARNINGS": "1"}


def tool(name: str) -> str | None:
    return shutil.which(name, path=TOOL_PATH)


def need_tool(name: str, package: str) -> str:
    exe = tool(name)
    if exe is None:
        pytest.skip(f"{name} is not installed (apt-get install {package})")
    return exe


def sh(
    *args: str, check: bool = True, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        list(args), capture_output=True, text=True, check=check, timeout=30, env=ENV, input=stdin
    )


def run_checked(*args: str) -> None:
    sh(*args)


class Cleanup:
    """Undo actions, run last-in first-out at teardown; every one runs even if another fails."""

    def __init__(self) -> None:
        self.actions: list[tuple[str, Callable[[], None]]] = []

    def push(self, what: str, action: Callable[[], None]) -> None:
        self.actions.append((what, action))

    def run(self) -> list[str]:
        errors = []
        while self.actions:
            what, action = self.actions.pop()
            try:
                action()
            except Exception as exc:
                errors.append(f"{what}: {exc}")
        return errors


@pytest.fixture
def cleanup() -> Iterator[Cleanup]:
    stack = Cleanup()
    try:
        yield stack
    finally:
        errors = stack.run()
        assert not errors, f"cleanup failed: {errors}"


@pytest.fixture
def root() -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root: loop devices, mounts and device-mapper need CAP_SYS_ADMIN")


def _detach(dev: str) -> None:
    for _ in range(20):
        if sh("losetup", "-d", dev, check=False).returncode == 0:
            return
        time.sleep(0.1)
    sh("losetup", "-d", dev)


@pytest.fixture
def make_loop(root: None, tmp_path: Path, cleanup: Cleanup) -> Callable[..., str]:
    """make_loop(partscan=False) -> "/dev/loopN" on a sparse file, detached at teardown."""
    need_tool("losetup", "mount")
    counter = iter(range(100))

    def make(partscan: bool = False) -> str:
        image = tmp_path / f"disk{next(counter)}.img"
        with open(image, "wb") as f:
            f.truncate(IMAGE_SIZE)
        args = ["losetup", "--find", "--show", *(["--partscan"] if partscan else []), str(image)]
        proc = sh(*args, check=False)
        if proc.returncode != 0:
            pytest.skip(f"cannot create a loop device here: {proc.stderr.strip()}")
        dev = proc.stdout.strip()
        cleanup.push(f"detach {dev}", lambda: _detach(dev))
        return dev

    return make


def mount(cleanup: Cleanup, dev: str, target: Path, *options: str) -> None:
    target.mkdir(exist_ok=True)
    sh("mount", *options, dev, str(target))

    def umount() -> None:
        if sh("umount", str(target), check=False).returncode != 0:
            time.sleep(0.2)
            sh("umount", "--lazy", str(target))

    cleanup.push(f"umount {target}", umount)


def mkfs_ext4(dev: str) -> None:
    need_tool("mkfs.ext4", "e2fsprogs")
    sh("mkfs.ext4", "-q", "-F", "-E", "nodiscard", dev)


def add_partition(dev: str, label: str) -> str:
    """Write a one-partition table with sfdisk and return the partition's node."""
    need_tool("sfdisk", "fdisk")
    sh("sfdisk", "--quiet", dev, stdin=f"label: {label}\n,16M\n")
    kname = os.path.basename(dev)
    part = f"{dev}p1"
    sysfs = Path(f"/sys/class/block/{kname}p1")
    if not sysfs.exists() and tool("partx"):
        # some kernels (or loop drivers) do not rescan on re-read: add it via BLKPG
        sh("partx", "--update", dev, check=False)
    for _ in range(50):
        if sysfs.exists() and os.path.exists(part):
            return part
        time.sleep(0.05)
    pytest.skip(f"the kernel did not expose {part} after writing a {label} partition table")


# --------------------------------------------------------------------------------------------
# block devices


def test_blank_loop_device_is_allowed(make_loop: Callable[..., str]) -> None:
    dev = make_loop()
    assert device_write_refusal(dev) is None
    assert device_in_use_refusal(dev) is None


def test_ext4_signature_is_refused_unless_named(make_loop: Callable[..., str]) -> None:
    dev = make_loop()
    mkfs_ext4(dev)
    reason = device_write_refusal(dev)
    assert reason is not None
    assert "ext4 filesystem signature (blkid)" in reason or "(wipefs)" in reason
    assert f"--destroy-data {dev}" in reason
    assert device_in_use_refusal(dev) is None
    # the explicit destroy flag waives a signature
    assert device_write_refusal(dev, destroy_data=[dev]) is None
    assert device_write_refusal(dev, destroy_data=["/dev/null"]) is not None


def test_symlinked_name_is_resolved(make_loop: Callable[..., str], tmp_path: Path) -> None:
    dev = make_loop()
    mkfs_ext4(dev)
    link = tmp_path / "by-id-disk"
    link.symlink_to(dev)
    reason = device_write_refusal(str(link))
    assert reason is not None
    assert f"{link} ({dev})" in reason
    assert "ext4" in reason
    assert device_write_refusal(str(link), destroy_data=[dev]) is None


def test_mounted_device_is_refused_even_with_destroy(
    make_loop: Callable[..., str], tmp_path: Path, cleanup: Cleanup
) -> None:
    dev = make_loop()
    mkfs_ext4(dev)
    mnt = tmp_path / "mnt"
    mount(cleanup, dev, mnt)
    reason = device_write_refusal(dev)
    assert reason is not None
    assert "mounted" in reason
    assert str(mnt) in reason
    assert device_write_refusal(dev, destroy_data=[dev]) == reason
    assert device_in_use_refusal(dev) == reason


@pytest.mark.parametrize("label", ["gpt", "dos"])
def test_partition_table_with_partition_is_refused(
    make_loop: Callable[..., str], label: str
) -> None:
    dev = make_loop(partscan=True)
    part = add_partition(dev, label)
    reason = device_write_refusal(dev)
    assert reason is not None
    assert "partitions" in reason
    assert part in reason
    assert f"{label} partition table" in reason
    assert device_write_refusal(dev, destroy_data=[dev]) is None
    # naming the partition does not allow writing the whole disk
    assert not is_destroy_allowed(dev, [part])


def test_mounted_partition_is_refused(
    make_loop: Callable[..., str], tmp_path: Path, cleanup: Cleanup
) -> None:
    dev = make_loop(partscan=True)
    part = add_partition(dev, "gpt")
    mkfs_ext4(part)
    mnt = tmp_path / "pmnt"
    mount(cleanup, part, mnt)
    reason = device_write_refusal(dev, destroy_data=[dev])
    assert reason is not None
    assert f"has partition {part} mounted on {mnt}" in reason
    part_reason = device_write_refusal(part, destroy_data=[part])
    assert part_reason is not None
    assert "is mounted" in part_reason


def test_lvm2_signature_is_refused(make_loop: Callable[..., str]) -> None:
    pvcreate = need_tool("pvcreate", "lvm2")
    dev = make_loop()
    proc = sh(pvcreate, "--yes", dev, check=False)
    if proc.returncode != 0:
        pytest.skip(f"pvcreate failed here: {proc.stderr.strip()}")
    reason = device_write_refusal(dev)
    assert reason is not None
    assert "LVM physical volume signature (LVM2_member; blkid" in reason
    assert f"--destroy-data {dev}" in reason


def test_swap_signature_and_active_swap_are_refused(
    make_loop: Callable[..., str], cleanup: Cleanup
) -> None:
    need_tool("mkswap", "util-linux")
    dev = make_loop()
    sh("mkswap", dev)
    reason = device_write_refusal(dev)
    assert reason is not None
    assert "swap signature" in reason
    proc = sh("swapon", dev, check=False)
    if proc.returncode != 0:
        pytest.skip(f"swapon failed here: {proc.stderr.strip()}")
    cleanup.push(f"swapoff {dev}", lambda: run_checked("swapoff", dev))
    reason = device_write_refusal(dev, destroy_data=[dev])
    assert reason is not None
    assert "as swap (/proc/swaps)" in reason


def test_device_mapper_holder_is_refused(make_loop: Callable[..., str], cleanup: Cleanup) -> None:
    dmsetup = need_tool("dmsetup", "dmsetup")
    dev = make_loop()
    name = f"storbench-test-{os.getpid()}"
    sectors = IMAGE_SIZE // 512
    proc = sh(dmsetup, "create", name, "--table", f"0 {sectors} linear {dev} 0", check=False)
    if proc.returncode != 0:
        pytest.skip(f"cannot create a device-mapper mapping here: {proc.stderr.strip()}")
    cleanup.push(f"dmsetup remove {name}", lambda: run_checked(dmsetup, "remove", "--retry", name))
    reason = device_write_refusal(dev, destroy_data=[dev])
    assert reason is not None
    assert "is held by dm-" in reason
    assert f"device-mapper {name}" in reason


def test_holder_read_from_sysfs(
    make_loop: Callable[..., str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Holders as sysfs shows them, on a real loop device but a copied sysfs tree.

    Runs where device-mapper is not in the kernel (the dmsetup test above then skips).
    """
    dev = make_loop()
    kname = os.path.basename(dev)
    rdev = os.stat(dev).st_rdev
    fake = tmp_path / "sys"
    loopdir = fake / "devices" / "virtual" / "block" / kname
    dmdir = fake / "devices" / "virtual" / "block" / "dm-7"
    (loopdir / "holders").mkdir(parents=True)
    (dmdir / "dm").mkdir(parents=True)
    (dmdir / "dm" / "name").write_text("vg0-data\n")
    (loopdir / "holders" / "dm-7").symlink_to(dmdir)
    (fake / "dev" / "block").mkdir(parents=True)
    (fake / "dev" / "block" / f"{os.major(rdev)}:{os.minor(rdev)}").symlink_to(loopdir)
    monkeypatch.setattr(safety.devices, "_SYS_DEV_BLOCK", fake / "dev" / "block")
    reason = device_write_refusal(dev, destroy_data=[dev])
    assert reason is not None
    assert "is held by dm-7 (device-mapper vg0-data)" in reason
    assert f"/sys/class/block/{kname}/holders" in reason


def test_exclusively_opened_device_is_refused(make_loop: Callable[..., str]) -> None:
    dev = make_loop()
    fd = os.open(dev, os.O_RDONLY | os.O_EXCL)
    try:
        reason = device_write_refusal(dev, destroy_data=[dev])
    finally:
        os.close(fd)
    assert reason is not None
    assert "in use" in reason
    assert device_write_refusal(dev) is None


def test_unknown_signatures_mean_refusal(
    make_loop: Callable[..., str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """When neither wipefs nor blkid can answer, storbench refuses rather than guess."""
    dev = make_loop()
    monkeypatch.setattr(safety.system, "_which", lambda cmd: None)
    reason = device_write_refusal(dev)
    assert reason is not None
    assert "could not check" in reason
    assert "wipefs is not available" in reason
    assert device_write_refusal(dev, destroy_data=[dev]) is None


def test_is_destroy_allowed_matches_the_same_device_only(
    make_loop: Callable[..., str], tmp_path: Path
) -> None:
    dev = make_loop()
    other = make_loop()
    link = tmp_path / "alias"
    link.symlink_to(dev)
    assert is_destroy_allowed(dev, [str(link)])
    assert is_destroy_allowed(str(link), [dev])
    assert is_destroy_allowed(dev, [other, dev])
    assert not is_destroy_allowed(dev, [other])
    assert not is_destroy_allowed(dev, [])
    assert not is_destroy_allowed(dev, ["", str(tmp_path / "missing")])
    # a second device node for the same major:minor also matches
    node = tmp_path / "node"
    os.mknod(node, stat.S_IFBLK | 0o600, os.stat(dev).st_rdev)
    assert is_destroy_allowed(dev, [str(node)])


def test_non_block_paths_say_what_they_are(tmp_path: Path) -> None:
    regular = tmp_path / "plain"
    regular.write_text("x")
    assert "is a regular file" in (device_write_refusal(str(regular)) or "")
    assert "is a directory" in (device_write_refusal(str(tmp_path)) or "")
    assert "is a character device" in (device_write_refusal("/dev/null") or "")
    assert "does not exist" in (device_write_refusal(str(tmp_path / "nope")) or "")
    assert not is_destroy_allowed(str(regular), [str(regular)])


# --------------------------------------------------------------------------------------------
# files


def test_existing_foreign_file_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "data.bin"
    target.write_bytes(b"precious")
    reason = file_write_refusal(str(target))
    assert reason is not None
    assert "not created by storbench" in reason
    assert not created_by_storbench(str(target))
    # a symlink to it is refused too
    link = tmp_path / "link.bin"
    link.symlink_to(target)
    assert "not created by storbench" in (file_write_refusal(str(link)) or "")


def test_scratch_file_is_allowed_and_exclusive(tmp_path: Path) -> None:
    target = tmp_path / "scratch.dat"
    assert file_write_refusal(str(target)) is None  # does not exist yet
    create_scratch_file(str(target))
    assert created_by_storbench(str(target))
    assert file_write_refusal(str(target)) is None
    with pytest.raises(FileExistsError):
        create_scratch_file(str(target))
    assert os.getxattr(target, safety.XATTR_NAME) == str(target.stat().st_ino).encode()
    # a copy with its extended attributes (cp -a, backups) is not storbench's file
    copy = tmp_path / "copy.dat"
    shutil.copy2(target, copy)
    assert not created_by_storbench(str(copy))
    assert file_write_refusal(str(copy)) is not None


def test_block_device_is_not_a_file_target(make_loop: Callable[..., str]) -> None:
    assert "is a block device" in (file_write_refusal(make_loop()) or "")


def test_special_paths_and_missing_parent(tmp_path: Path) -> None:
    assert "is a directory" in (file_write_refusal(str(tmp_path)) or "")
    assert "character device" in (file_write_refusal("/dev/null") or "")
    missing = tmp_path / "no" / "such" / "file"
    assert "does not exist" in (file_write_refusal(str(missing)) or "")
    dangling = tmp_path / "dangling"
    dangling.symlink_to(tmp_path / "gone")
    assert "symbolic link to a missing file" in (file_write_refusal(str(dangling)) or "")
    with pytest.raises(FileExistsError):
        create_scratch_file(str(dangling))


def test_registry_fallback_without_user_xattrs(
    root: None, tmp_path: Path, cleanup: Cleanup
) -> None:
    """ramfs has no extended attributes: the mark goes to the .storbench-created registry."""
    mnt = tmp_path / "ramfs"
    mount(cleanup, "none", mnt, "-t", "ramfs")
    probe = mnt / "probe"
    probe.write_text("")
    try:
        os.setxattr(probe, "user.test", b"1")
        pytest.skip("ramfs supports user xattrs on this kernel: fallback not reachable")
    except OSError:
        pass
    target = mnt / "scratch.dat"
    create_scratch_file(str(target))
    registry = mnt / safety.REGISTRY_NAME
    assert registry.exists()
    assert created_by_storbench(str(target))
    assert file_write_refusal(str(target)) is None
    assert "not created by storbench" in (file_write_refusal(str(probe)) or "")
    # after the file is replaced by another one (new inode), the entry no longer matches
    target.unlink()
    probe.rename(target)
    assert not created_by_storbench(str(target))
    mark_created(str(target))
    assert created_by_storbench(str(target))


def test_free_space(tmp_path: Path) -> None:
    assert free_space_refusal(str(tmp_path / "new" / "file"), 4096) is None
    absurd = 2**62
    reason = free_space_refusal(str(tmp_path / "new" / "file"), absurd)
    assert reason is not None
    assert "needs 4.0 EiB" in reason
    assert "available" in reason
    assert "iB available" in reason or " B available" in reason


# --------------------------------------------------------------------------------------------
# inventory of loop devices (needs root: here because it needs real loop devices)


def test_inventory_of_loop_partition_looks_at_parent(make_loop: Callable[..., str]) -> None:
    from storbench.hosts.inventory import disk_identity, target_inventory

    dev = make_loop(partscan=True)
    part = add_partition(dev, "gpt")
    disk = target_inventory("device", dev)
    info = target_inventory("device", part)
    assert info["device"] == part
    assert info["parent"] == dev
    assert info["size_bytes"] == 16 * 1024 * 1024
    assert disk["size_bytes"] == IMAGE_SIZE
    for key in ("rotational", "scheduler", "logical_block_size", "physical_block_size"):
        assert info[key] == disk[key], key
    assert info["type"] is None  # a loop device is neither SSD nor HDD
    ident = disk_identity(part)
    assert ident["device"] == dev
    assert ident["size_bytes"] == IMAGE_SIZE
