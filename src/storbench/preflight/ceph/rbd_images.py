"""rbd images: whether one exists and who has it open, creating (and filling) one for a
run, and removing those storbench created.
"""

from __future__ import annotations

import json
import os
import subprocess
from typing import Any

from storbench.hosts.ceph import CephClient, CephConf, ceph_args
from storbench.hosts.procguard import environment, pdeathsig_prefix
from storbench.preflight.ceph.commands import COMMAND_TIMEOUT, CephCommandError

__all__ = [
    "RBD",
    "create_image",
    "image_info",
    "image_watchers",
    "remove_image",
    "remove_images",
]

RBD = os.environ.get("STORBENCH_RBD", "rbd")


def _rbd(
    conf: CephConf, *args: str, timeout: float = COMMAND_TIMEOUT
) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            # `rbd bench` fills a new image for minutes: it dies with storbench
            [*pdeathsig_prefix(), RBD, *ceph_args(conf), *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
            env=environment(),
        )
    except subprocess.TimeoutExpired as e:
        raise CephCommandError(f"`rbd {' '.join(args)}` timed out after {timeout:g} s") from e
    except OSError as e:
        raise CephCommandError(f"cannot run {RBD}: {e}") from e


def _rbd_error(args: tuple[str, ...], out: subprocess.CompletedProcess[str]) -> CephCommandError:
    lines = [ln for ln in out.stderr.strip().splitlines() if ln.startswith("rbd:")]
    msg = lines[-1] if lines else (out.stderr.strip().splitlines() or [""])[-1]
    return CephCommandError(f"`rbd {' '.join(args)}` failed: {msg or out.returncode}")


def image_info(conf: CephConf, pool: str, image: str) -> dict[str, Any] | None:
    """``rbd info POOL/IMAGE`` (size in bytes, object size, features, ...), or None when the
    image does not exist."""
    args = ("info", f"{pool}/{image}", "--format", "json")
    out = _rbd(conf, *args)
    if out.returncode != 0:
        if "No such file or directory" in out.stderr:
            return None
        raise _rbd_error(args, out)
    info: dict[str, Any] = json.loads(out.stdout)
    return info


def image_watchers(conf: CephConf, pool: str, image: str) -> list[str]:
    """Who has the image open (``rbd status``: a VM, a kernel mapping): addresses."""
    args = ("status", f"{pool}/{image}", "--format", "json")
    out = _rbd(conf, *args)
    if out.returncode != 0:
        raise _rbd_error(args, out)
    return [str(w.get("address")) for w in json.loads(out.stdout).get("watchers", [])]


#: the size of an rbd image's data objects: rbd's default (``rbd_default_order`` 22), which
#: the images storbench creates use unless the cluster's configuration sets another
RBD_OBJECT_SIZE = 4 << 20


def create_image(conf: CephConf, pool: str, image: str, size: int) -> None:
    """Create an image of ``size`` bytes and write it once from end to end (``rbd bench``,
    4 MiB sequential writes): reads from a thin image's unwritten objects never reach a disk
    and would measure nothing but the network."""
    mib = max(1, -(-size // (1 << 20)))  # rbd sizes are whole MiB: round up
    size = mib << 20
    args = ("create", f"{pool}/{image}", "--size", f"{mib}M")
    out = _rbd(conf, *args)
    if out.returncode != 0:
        raise _rbd_error(args, out)
    fill = (
        "bench", "--io-type", "write", "--io-pattern", "seq", "--io-size", "4M",
        "--io-threads", "16", "--io-total", str(size), f"{pool}/{image}",
    )  # fmt: skip
    out = _rbd(conf, *fill, timeout=max(COMMAND_TIMEOUT, size / (10 << 20)))
    if out.returncode != 0:
        err = _rbd_error(fill, out)
        remove_image(conf, pool, image)
        raise err


def remove_image(conf: CephConf, pool: str, image: str) -> None:
    """Remove an rbd image; one that does not exist is no error."""
    args = ("rm", "--no-progress", f"{pool}/{image}")
    out = _rbd(conf, *args, timeout=300.0)
    if out.returncode != 0 and "No such file or directory" not in out.stderr:
        raise _rbd_error(args, out)


def remove_images(images: list[tuple[CephClient, str, str]]) -> list[str]:
    """Remove images storbench created; returns the ``POOL/IMAGE`` names removed."""
    removed = []
    for client, pool, image in images:
        try:
            remove_image(client, pool, image)
            removed.append(f"{pool}/{image}")
        except CephCommandError:
            pass
    return removed
