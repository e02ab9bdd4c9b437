"""Files: the mark that storbench created a file (xattr or sidecar registry), creating scratch
files, and free space."""

from __future__ import annotations

import contextlib
import json
import os
import stat

from storbench.hosts.inventory.probe import _nearest_existing
from storbench.preflight.safety.system import REGISTRY_NAME, XATTR_NAME, human_bytes


def _registry_entries(directory: str) -> list[tuple[str, int]]:
    try:
        with open(os.path.join(directory, REGISTRY_NAME), encoding="utf-8") as f:
            lines = f.readlines()
    except OSError:
        return []
    entries = []
    for line in lines:
        try:
            obj = json.loads(line)
            entries.append((str(obj["name"]), int(obj["ino"])))
        except (ValueError, KeyError, TypeError):
            continue
    return entries


def _register(real: str, ino: int) -> None:
    directory, name = os.path.split(real)
    line = json.dumps({"name": name, "ino": ino}) + "\n"
    fd = os.open(
        os.path.join(directory, REGISTRY_NAME),
        os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC | os.O_NOFOLLOW,
        0o644,
    )
    try:
        os.write(fd, line.encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)


def mark_created(path: str) -> None:
    """Mark *path* (a regular file storbench just created) as storbench's own.

    Sets the ``user.storbench.created`` extended attribute to the file's inode number; when the
    filesystem refuses user xattrs, appends an entry to the ``.storbench-created`` registry in
    the file's directory instead (see the module docstring). Raises OSError when neither works.
    """
    real = os.path.realpath(path)
    st = os.stat(real)
    if not stat.S_ISREG(st.st_mode):
        raise ValueError(f"{path} is not a regular file")
    try:
        os.setxattr(real, XATTR_NAME, str(st.st_ino).encode("ascii"))
        return
    except FileNotFoundError:
        raise
    except OSError:
        pass  # ENOTSUP and friends: fall back to the registry
    _register(real, st.st_ino)


def created_by_storbench(path: str) -> bool:
    """True when *path* is a regular file that storbench created (xattr or registry mark)."""
    real = os.path.realpath(path)
    try:
        st = os.stat(real)
    except OSError:
        return False
    if not stat.S_ISREG(st.st_mode):
        return False
    try:
        if os.getxattr(real, XATTR_NAME) == str(st.st_ino).encode("ascii"):
            return True
    except OSError:
        pass
    directory, name = os.path.split(real)
    return (name, st.st_ino) in _registry_entries(directory)


def missing_parent_refusal(path: str) -> str | None:
    """Why storbench cannot create file *path*: its directory does not exist (None when
    it does)."""
    parent = os.path.dirname(os.path.realpath(path)) or "."
    if not os.path.exists(parent):
        return f"the directory {parent} for {path} does not exist; create it first"
    return None


def _parent_refusal(path: str, real: str) -> str | None:
    missing = missing_parent_refusal(path)
    if missing:
        return missing
    parent = os.path.dirname(real) or "."
    if not os.path.isdir(parent):
        return f"{parent} (the parent of {path}) is not a directory; choose another path"
    if not os.access(parent, os.W_OK | os.X_OK):
        return (
            f"the directory {parent} is not writable for this user, so storbench cannot create "
            f"{path}; choose another path or fix its permissions"
        )
    return None


def file_write_refusal(path: str) -> str | None:
    """Reason why storbench must not write the file *path*, or None.

    None when the file does not exist (and its directory exists and is writable) or when
    storbench created it. Refuses existing files it did not create, block/character devices,
    directories and other special files, broken symlinks, and a missing or read-only parent
    directory.
    """
    real = os.path.realpath(path)
    try:
        st = os.stat(real)
    except FileNotFoundError:
        if os.path.islink(path) or os.path.islink(real):
            return (
                f"{path} is a symbolic link to a missing file; storbench only creates new files "
                "— remove the link or choose another path"
            )
        return _parent_refusal(path, real)
    except OSError as exc:
        return f"cannot examine {path} ({exc.strerror}); choose another path"
    mode = st.st_mode
    if stat.S_ISBLK(mode):
        return f"{path} is a block device, not a file; use a device target for it"
    if stat.S_ISCHR(mode):
        return f"{path} is a character device, not a file; storbench will not write to it"
    if stat.S_ISDIR(mode):
        return f"{path} is a directory, not a file; use a directory target or give a file path"
    if not stat.S_ISREG(mode):
        return f"{path} is a special file (FIFO or socket), not a regular file; choose another path"
    if not created_by_storbench(real):
        return (
            f"{path} already exists and was not created by storbench, which never overwrites "
            "files it did not create; remove it or choose another path"
        )
    if not os.access(real, os.W_OK):
        return f"{path} was created by storbench but is not writable now; fix its permissions"
    return None


def create_scratch_file(path: str) -> None:
    """Create *path* exclusively (O_CREAT|O_EXCL, fails if anything exists there) and mark it.

    If the mark cannot be recorded, the new empty file is removed and the error re-raised.
    """
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
    os.close(fd)
    try:
        mark_created(path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(path)
        raise


def free_space_refusal(path: str, needed_bytes: int) -> str | None:
    """Reason when the filesystem holding *path* lacks *needed_bytes* of free space, or None.

    Uses ``os.statvfs`` on *path* or its nearest existing parent (space available to
    unprivileged users: ``f_bavail * f_frsize``). *needed_bytes* is what still has to be
    allocated: a caller reusing an existing scratch file subtracts what the file already holds.
    Meant for file and directory targets, not block devices.
    """
    if needed_bytes <= 0:
        return None
    where = _nearest_existing(path)
    try:
        vfs = os.statvfs(where)
    except OSError as exc:
        return f"cannot check free space for {path} ({exc.strerror}); choose another path"
    available = vfs.f_bavail * vfs.f_frsize
    if needed_bytes <= available:
        return None
    return (
        f"not enough free space for {path}: needs {human_bytes(needed_bytes)}, "
        f"the filesystem at {where} has {human_bytes(available)} available; "
        "free some space or use a smaller size"
    )
