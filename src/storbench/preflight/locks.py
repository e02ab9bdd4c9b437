"""One run per target at a time: each local target is locked for the run's whole duration.

Two runs measuring one disk at once measure each other: one test here gave 33 IOPS instead
of 20,367. So a run holds an exclusive ``flock`` on each of its local targets (the scratch
file, the block device node, the directory) from preflight to its end. The lock lives on
the target itself, so it holds between runs recording into different databases and between
users; the kernel drops it when the process ends, however it ends, so a killed run never
leaves a stale lock behind. fio never takes these locks itself.
"""

from __future__ import annotations

import contextlib
import fcntl
import os

from storbench.model.errors import PreflightError


class TargetLocks:
    """The locks a run holds (:meth:`take` each target; :meth:`release` at the end)."""

    def __init__(self) -> None:
        self._fds: dict[str, int] = {}

    def take(self, path: str, shown: str | None = None) -> None:
        """Lock ``path`` (a file, a block device or a directory) for this run; raise a
        :class:`PreflightError` when another process holds it. A path that does not exist
        (yet) is not locked."""
        real = os.path.realpath(path)
        if real in self._fds:
            return
        try:
            fd = os.open(real, os.O_RDONLY | os.O_CLOEXEC | os.O_NOCTTY)
        except FileNotFoundError:
            return
        except OSError as e:
            raise PreflightError(
                f"cannot open {shown or path} to lock it for this run: {e.strerror}",
                fix="check its permissions",
            ) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise PreflightError(
                f"another storbench run is measuring {shown or path} right now; two runs on "
                "one target measure each other, not the target",
                fix="wait until that run ends (`storbench runs` lists those of this "
                "database), then run again",
            ) from None
        except OSError:
            os.close(fd)  # a filesystem without flock: nothing to hold
            return
        self._fds[real] = fd

    def holds(self, path: str) -> bool:
        return os.path.realpath(path) in self._fds

    def release(self) -> None:
        for fd in self._fds.values():
            with contextlib.suppress(OSError):
                os.close(fd)
        self._fds.clear()


def free(path: str) -> bool:
    """Whether no process holds the run lock of ``path`` (a missing path is free)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOCTTY)
    except OSError:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False
    except OSError:
        return True
    finally:
        os.close(fd)
