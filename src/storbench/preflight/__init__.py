"""Preflight: everything checked before any I/O, and the inventory stored with a run.

Checks, in order: each engine of the plan checks its own (engines/base.py ``check``: fio is
installed with every ioengine the plan names, accepts every job file, and with ``hosts:``
every remote fio server answers, runs this fio version and has the engines, and its targets
pass what can be checked from here); each local target is safe to write (devices: not
mounted, no partitions, holders or signatures unless ``--destroy-data`` names them; files:
never one that storbench did not create, nor a log or buffer file fio would write beside
them: ``check_output_files``); there is free space for the planned sizes; Ceph clusters are
healthy and their pools and images as needed (preflight/ceph/). Only when all pass are
scratch files created. Any refusal raises :class:`PreflightError` and nothing is recorded.
"""

from __future__ import annotations

import contextlib
import glob
import os
import re
import stat
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import storbench.plan.enginekeys as enginekeys
from storbench import engines
from storbench.engines.base import CheckOptions, CheckResult
from storbench.hosts import inventory as inv
from storbench.hosts import netbaseline, netpath
from storbench.hosts.ceph import CephClient
from storbench.model.errors import PreflightError
from storbench.model.units import UnitError, parse_size
from storbench.plan import Point, Target, job_section_name, local_points
from storbench.preflight import ceph, safety
from storbench.preflight.locks import TargetLocks


@dataclass
class Preflight:
    inventory: dict[str, Any]
    created: list[str] = field(default_factory=list)  # scratch files storbench made
    warnings: list[str] = field(default_factory=list)
    host_names: dict[str, str] = field(default_factory=dict)  # host label -> its host name
    #: rbd images storbench created: (client, pool, image)
    images: list[tuple[CephClient, str, str]] = field(default_factory=list)
    #: the run's hold on its local targets, until its end (see locks.py)
    locks: TargetLocks = field(default_factory=TargetLocks)


def _reach_bytes(p: Point) -> int | None:
    """How far into its file a point reads or writes: ``offset`` + ``size`` (or
    ``filesize``), plus ``offset_increment`` for each job after the first; None when fio
    decides (no size: the file's own, or not a plain size). An offset given as a percentage
    lies inside the file (fio caps the size at the rest of it)."""
    size = p.params.get("size", p.params.get("filesize"))
    if size is None:
        return None
    try:
        reach = parse_size(str(size).split("-")[-1])
    except UnitError:
        return None
    for key, times in (("offset", 1), ("offset_increment", int(p.params.get("numjobs", 1)) - 1)):
        with contextlib.suppress(UnitError):  # a percentage
            reach += parse_size(p.params.get(key, 0) or 0) * times
    return reach


def _foreign_file_refusal(points: list[Point], t: Target) -> str | None:
    """Why reading the existing file ``t`` (which storbench did not create) would change it:
    a point that reaches past its end makes fio lay the whole file out again (fio 3.33
    filesetup.c extend_file: unlink, then O_TRUNC), its content replaced."""
    have = os.path.getsize(t.path)
    for p in points:
        if p.target != t or str(p.params.get("ioengine", "psync")) in NO_FILE_ENGINES:
            continue
        reach = _reach_bytes(p)
        if reach is not None and reach > have:
            return (
                f"{t.path} holds {safety.human_bytes(have)} and workload {p.workload!r} "
                f"reads {safety.human_bytes(reach)} of it: fio would lay the file out again "
                "at that size, replacing its content, and storbench never changes a file it "
                "did not create"
            )
    return None


def _planned_bytes(points: list[Point], target: Target) -> int:
    """How large a target's scratch file must be (for a directory: how much its files take):
    what the furthest point reaches. A file storbench lays out shorter than a point's
    ``offset`` + ``size`` would be unlinked and made anew by fio (filesetup.c extend_file),
    its mark that storbench created it lost."""
    need = 0
    for p in points:
        if p.target != target:
            continue
        if target.kind == "directory":
            try:
                size = parse_size(p.params.get("size", p.params.get("filesize", 0)) or 0)
            except UnitError:
                continue
            size *= int(p.params.get("numjobs", 1))
        else:
            size = _reach_bytes(p) or 0
        need = max(need, size)
    return need


def directory_files(directory: str, workload: str) -> list[str]:
    """The files fio makes for ``workload`` in a directory target: named by storbench's
    ``filename_format`` (``storbench.WORKLOAD.N.M``), which a fio server prefixes with its own
    address (``127.0.0.1.storbench.WORKLOAD.N.M`` for the ``local`` host of a plan)."""
    name = f"storbench.{job_section_name(workload)}.*"
    d = glob.escape(directory)
    return sorted(
        glob.glob(os.path.join(d, name)) + glob.glob(os.path.join(d, f"127.0.0.1.{name}"))
    )


def check_targets(points: list[Point], destroy_data: list[str]) -> list[str]:
    """Refuse unsafe targets; return warnings."""
    warnings: list[str] = []
    targets = list(dict.fromkeys(p.target for p in points))
    writes = {t: any(p.writes for p in points if p.target == t) for t in targets}
    _check_device_destroy_data(targets, destroy_data)
    for t in targets:
        _check_purge(points, t, destroy_data)
        if t.kind == "device":
            _check_device(t, writes[t], destroy_data)
        elif t.kind == "file":
            _check_file(points, t, writes[t])
        elif t.kind == "directory":
            _check_directory(points, t)
    return warnings


def _check_device_destroy_data(targets: list[Target], destroy_data: list[str]) -> None:
    """Refuse a ``--destroy-data`` name that is no device target of the plan (rbd: later)."""
    for name in destroy_data:
        if name.startswith("rbd:"):
            continue  # checked with the cluster (preflight/ceph/check.py)
        if not any(
            t.kind == "device" and safety.is_destroy_allowed(t.path, [name]) for t in targets
        ):
            raise PreflightError(
                f"--destroy-data {name} does not name a device target of this plan",
                fix="name the exact device the plan writes to",
            )


def _check_purge(points: list[Point], t: Target, destroy_data: list[str]) -> None:
    """A target purged before its points (``precondition: {purge: ...}``) is a block device
    of this machine that ``--destroy-data`` names (safety/purge.py); the plan loader refuses
    the rest first. Remote hosts' targets never reach here: see :func:`_refuse_remote_purge`."""
    how = next((p.purge for p in points if p.target == t and p.purge), None)
    if how is None:
        return
    reason = safety.purge_refusal(t.path, how, destroy_data)
    if reason:
        if "--destroy-data" in reason:
            fix = (
                f"if all its data may be destroyed, add --destroy-data {t.path}; "
                "else leave `purge` out of `precondition`"
            )
        elif "not installed" in reason:
            fix = "install util-linux (it has blkdiscard), or leave `purge` out"
        else:
            fix = "leave `purge` out (`mode: sequential` overwrites the device instead)"
        raise PreflightError(reason, fix=fix)


def _refuse_remote_purge(points: list[Point]) -> None:
    """storbench purges only devices of this machine (the plan loader refuses the rest)."""
    for p in points:
        remote = next((h for h in p.hosts if not h.local), None)
        if p.purge and remote is not None:
            raise PreflightError(
                f"`purge: {p.purge}` of {remote.target.label} on host {remote.label}: storbench "
                "never purges a target of a remote host",
                fix="leave `purge` out of `precondition`",
            )


def _check_device(t: Target, writes: bool, destroy_data: list[str]) -> None:
    """A device target exists, is a block device, is not in use and may be opened; written
    only when its data may be destroyed."""
    if not os.path.exists(t.path):
        raise PreflightError(
            f"device {t.path} does not exist",
            fix="check the name (lsblk lists block devices)",
        )
    if not stat.S_ISBLK(os.stat(t.path).st_mode):
        raise PreflightError(
            f"{t.path} is not a block device, yet the plan names it as `device:`",
            fix="name a block device (lsblk lists them), or measure a file with "
            "`file:` (a new one, which storbench creates)",
        )
    if writes:
        in_use = safety.device_in_use_refusal(t.path)
        if in_use:
            raise PreflightError(
                in_use,
                fix="unmount or release it first, or use another device "
                "(--destroy-data does not override a device in use)",
            )
        reason = safety.device_write_refusal(t.path, destroy_data)
        if reason:
            raise PreflightError(
                reason,
                fix=f"use another device, or, if its data may "
                f"be destroyed, add --destroy-data {t.path}",
            )
    mode = os.R_OK | (os.W_OK if writes else 0)
    if not os.access(t.path, mode):
        raise PreflightError(
            f"no permission to open {t.path} for {'writing' if writes else 'reading'}",
            fix="run as root, or add your user to the `disk` group",
        )


def _check_file(points: list[Point], t: Target, writes: bool) -> None:
    """A file target is storbench's to write (or safe to read as it is), and its file system
    has room for what the file still has to grow."""
    if os.path.exists(t.path):
        if writes:
            reason = safety.file_write_refusal(t.path)
            if reason:
                raise PreflightError(
                    reason,
                    fix="name a new file for storbench to create, or remove this one yourself",
                )
        elif not os.access(t.path, os.R_OK):
            raise PreflightError(
                f"no permission to read {t.path}", fix="check the file's permissions"
            )
        elif not safety.created_by_storbench(t.path):
            reason = _foreign_file_refusal(points, t)
            if reason:
                raise PreflightError(
                    reason,
                    fix=f"lower `size` to at most {os.path.getsize(t.path)} bytes, or "
                    "leave it out (fio then reads the file at its own size)",
                )
    else:
        reason = safety.file_write_refusal(t.path)
        if reason:
            raise PreflightError(reason, fix="choose a path in a writable directory")
        _refuse_share_of_new_file(points, t)
    have = os.path.getsize(t.path) if os.path.isfile(t.path) else 0
    short = _planned_bytes(points, t) - have
    if short > 0:
        reason = safety.free_space_refusal(t.path, short)
        if reason:
            raise PreflightError(reason, fix="free space, or lower `size` (--set size=...)")


def _refuse_share_of_new_file(points: list[Point], t: Target) -> None:
    """A point that sizes the file ``t`` storbench is to create as a share of it (``size:
    50%``): fio takes the share of the file as it finds it, and a new file has no size yet
    (fio fails the job with "you need to specify size=", error 22)."""
    for p in points:
        size = p.params.get("size", p.params.get("filesize"))
        if p.target != t or size is None or "%" not in str(size):
            continue
        if str(p.params.get("ioengine", "psync")) in NO_FILE_ENGINES:
            continue
        raise PreflightError(
            f"{t.path} does not exist, so storbench creates it, and workload {p.workload!r} "
            f"sizes it as `size: {size}`: a share of a file's size, which a new file does not "
            "have yet (fio: 'you need to specify size=')",
            fix=f"give a size (size: 1g) for storbench to lay out, or make {t.path} yourself "
            "first at the size it is to have",
        )


def missing_directory(t: Target) -> PreflightError | None:
    """The refusal of a local ``file:`` target whose directory does not exist, or of a
    ``directory:`` target that does not: what ``run`` refuses at preflight, and ``plan
    check`` refuses the same way (None when it is there, or the target is no such kind)."""
    if t.kind == "directory" and not os.path.isdir(t.path):
        return PreflightError(
            f"directory {t.path} does not exist",
            fix="create it first, or name an existing directory",
        )
    if t.kind == "file" and not os.path.lexists(t.path):
        reason = safety.missing_parent_refusal(t.path)
        if reason:
            return PreflightError(reason, fix="choose a path in a writable directory")
    return None


def missing_directories(points: list[Point]) -> list[PreflightError]:
    """:func:`missing_directory` of each local target of ``points`` (a remote host's
    targets are not on this machine to look at), in the plan's order; and a new file sized
    as a share of itself (:func:`_refuse_share_of_new_file`)."""
    local = local_points(points)
    found = []
    for t in dict.fromkeys(p.target for p in local):
        missing = missing_directory(t)
        if missing is None and t.kind == "file" and not os.path.exists(t.path):
            try:
                _refuse_share_of_new_file(local, t)
            except PreflightError as e:
                missing = e
        if missing is not None:
            found.append(missing)
    return found


def _check_directory(points: list[Point], t: Target) -> None:
    """A directory target exists, may be written, holds no file of fio's names that
    storbench did not create, and has room for the planned files."""
    missing = missing_directory(t)
    if missing is not None:
        raise missing
    if not os.access(t.path, os.W_OK | os.X_OK):
        raise PreflightError(
            f"no permission to write in {t.path}", fix="run as a user who may write there"
        )
    for p in points:
        if p.target != t:
            continue
        for existing in directory_files(t.path, p.workload):
            if not safety.created_by_storbench(existing):
                raise PreflightError(
                    f"{existing} exists and was not created by storbench; it would be overwritten",
                    fix="remove it, or use another directory",
                )
    reason = safety.free_space_refusal(t.path, _planned_bytes(points, t))
    if reason:
        raise PreflightError(reason, fix="free space, or lower `size`")


def _existing_outputs(path: str, suffix: str) -> list[str]:
    """The files already there that the engine would write for ``path``: the file itself,
    or for a prefix (``suffix`` not "") every file named the prefix and what ``suffix``
    matches (fio's logs: ``PREFIX_TYPE[.N].log[.fz]``)."""
    if not suffix:
        return [path] if os.path.lexists(path) else []
    directory, base = os.path.split(path)
    name = re.compile(rf"{re.escape(base)}{suffix}", re.ASCII)
    try:
        entries = os.listdir(directory)
    except OSError:
        return []
    return sorted(os.path.join(directory, e) for e in entries if name.fullmatch(e))


def check_output_files(points: list[Point]) -> None:
    """Files fio writes besides the targets (write_iolog, write_*_log, mem=mmap:FILE,
    e4defrag's donor) obey the rule of file targets: storbench never lets fio write a file
    it did not create, so none may exist yet; their directory must exist and be writable.
    (The plan loader made sure they are absolute paths, and refuses them with hosts.)"""
    seen: set[tuple[str, str]] = set()
    for p in points:
        for out in enginekeys.of(p.params).files(p.params, p.target):
            opt, path = out.option, out.path
            if (path, out.suffix) in seen:
                continue
            seen.add((path, out.suffix))
            where = f"workload {p.workload!r}: `{opt}`"
            directory = os.path.dirname(path) or "."
            if not os.path.isdir(directory):
                raise PreflightError(
                    f"{where} writes into {directory}, which does not exist",
                    fix="create the directory first, or name another one",
                )
            if not os.access(directory, os.W_OK | os.X_OK):
                raise PreflightError(
                    f"{where}: no permission to write in {directory}",
                    fix="name a directory you may write in",
                )
            for existing in _existing_outputs(path, out.suffix):
                if not safety.created_by_storbench(existing):
                    raise PreflightError(
                        f"{where} would write {existing}, which exists and was not created "
                        "by storbench",
                        fix=f"remove it yourself, or give `{opt}` a name of its own",
                    )


_LAYOUT_CHUNK = 1 << 20
#: engines that never read or write the target file (nothing to lay out)
NO_FILE_ENGINES = frozenset({"null", "cpuio"})


def layout_file(path: str, size: int) -> None:
    """Fill a scratch file with data up to ``size`` bytes, as fio's own layout would.

    storbench lays the file out itself because fio, when it finds a file too small, unlinks
    and recreates it: that would lose the mark saying storbench created it. Real data (not
    a sparse or fallocated file) so that reads touch the device.
    """
    have = os.path.getsize(path)
    if have >= size:
        return
    blocks = [os.urandom(_LAYOUT_CHUNK) for _ in range(4)]
    with open(path, "r+b") as f:
        f.seek(have)
        remaining = size - have
        i = 0
        while remaining > 0:
            n = min(remaining, _LAYOUT_CHUNK)
            f.write(blocks[i % len(blocks)][:n])
            remaining -= n
            i += 1
        f.flush()
        os.fsync(f.fileno())


def scratch_sizes(points: list[Point]) -> dict[str, int]:
    """The size each local file target's scratch file is laid out to (see create_files)."""
    local = local_points(points)
    sizes = {}
    for t in dict.fromkeys(p.target for p in local):
        if t.kind == "file" and _touches_file(local, t):
            sizes[t.path] = _planned_bytes(local, t)
    return sizes


def restore_layout(point: Point, sizes: dict[str, int]) -> None:
    """Before a point runs: lay a scratch file storbench created out again when the points
    before it shrank it (fio's ftruncate engine, ``truncate``...). fio would unlink and
    recreate the short file, and the copy it made carries no mark that storbench made it,
    so it would be left behind at the end of the run."""
    for p in local_points([point]):
        size = sizes.get(p.target.path)
        if size and os.path.isfile(p.target.path) and safety.created_by_storbench(p.target.path):
            layout_file(p.target.path, size)


def _touches_file(points: list[Point], t: Target) -> bool:
    return any(
        str(p.params.get("ioengine", "psync")) not in NO_FILE_ENGINES
        for p in points
        if p.target == t
    )


def lock_targets(points: list[Point], locks: TargetLocks) -> None:
    """Hold every local target that exists for the run (see locks.py); files storbench is
    about to create are locked by :func:`create_files` the moment they exist."""
    for t in dict.fromkeys(p.target for p in points):
        if t.kind in ("file", "device", "directory"):
            locks.take(t.path, t.label)


def create_files(points: list[Point], locks: TargetLocks | None = None) -> list[str]:
    """Create (and lay out) the scratch files of file targets; return the ones created.
    Each is locked for the run (``locks``) before it is written. When anything fails, the
    files made so far are removed again."""
    created: list[str] = []
    try:
        for t in dict.fromkeys(p.target for p in points):
            if t.kind != "file":
                continue
            if not os.path.exists(t.path):
                try:
                    safety.create_scratch_file(t.path)
                except FileExistsError:
                    raise PreflightError(
                        f"{t.path} appeared while storbench was about to create it: another "
                        "run is starting on it",
                        fix="wait until that run ends, then run again",
                    ) from None
                created.append(t.path)
                if locks is not None:
                    locks.take(t.path, t.label)
            if _touches_file(points, t) and safety.created_by_storbench(t.path):
                layout_file(t.path, _planned_bytes(points, t))
    except BaseException:
        for path in created:
            with contextlib.suppress(OSError):
                os.unlink(path)
        raise
    return created


def take_inventory(points: list[Point]) -> dict[str, Any]:
    """The host's and the targets' inventory: the host's in a thread beside the targets'
    (both wait on commands, not on Python: ``ipmitool`` may take seconds), each command
    asked once (inventory.one_look: a file target's filesystem and disk identity ask
    ``findmnt`` and ``lsblk`` the same)."""
    with inv.one_look(), ThreadPoolExecutor(max_workers=1) as pool:
        host = pool.submit(inv.host_inventory, engines.get(engines.RUN_VERSION_ENGINE).about())
        targets = []
        for t in dict.fromkeys(p.target for p in points):
            if t.ceph or t.kind == "s3":
                # the cluster's inventory is under "ceph"; s3: its service and bucket (the
                # keys are not in the target: where they are)
                targets.append(t.to_dict())
                continue
            entry: dict[str, Any] = {**t.to_dict(), **inv.target_inventory(t.kind, t.path)}
            entry["identity"] = inv.disk_identity(t.path)
            targets.append(entry)
        return {"host": host.result(), "targets": targets}


def run_preflight(
    points: list[Point],
    *,
    destroy_data: list[str] | None = None,
    host_timeout: float | None = None,
    allow_unhealthy: bool = False,
) -> Preflight:
    """All checks, then inventory, then scratch files (and rbd images). Raises
    PreflightError on refusal."""
    local_dd, remote_dd = split_destroy(list(destroy_data or []))
    _refuse_remote_purge(points)
    found = check_engines(points, CheckOptions(remote_dd, host_timeout))
    rbd_dd = [d for d in local_dd if d.startswith("rbd:")]
    mine = local_points(points)
    locks = TargetLocks()
    try:
        # the lock first: another run's scratch file passes every check while it runs
        lock_targets(mine, locks)
        warnings = check_targets(mine, local_dd)
        check_output_files(mine)
        # last of the checks: it creates the rbd images that are missing
        cluster = ceph.check_ceph(points, allow_unhealthy=allow_unhealthy, destroy_data=rbd_dd)
    except BaseException:
        locks.release()
        raise
    warnings = found.warnings + warnings + cluster.warnings
    try:
        inventory = take_inventory(mine)
        inventory.update(found.inventory)
        if cluster.inventory:
            inventory["ceph"] = cluster.inventory
        warnings += endpoint_baselines(points, inventory)
        created = create_files(mine, locks)
    except BaseException:  # nothing runs: the images just created go again
        ceph.remove_images(cluster.images)
        locks.release()
        raise
    return Preflight(
        inventory=inventory,
        created=created,
        warnings=warnings,
        host_names=found.host_names,
        images=cluster.images,
        locks=locks,
    )


def endpoint_baselines(points: list[Point], inventory: dict[str, Any]) -> list[str]:
    """The network baseline toward the storage endpoint of each target (an S3 endpoint,
    a Ceph monitor, a network file system's server) with an iperf3 server, measured now,
    before any point, added to the inventory's ``network`` (``network-bound``:
    hosts/netpath.py); returns the notes on those that failed."""
    ends = netpath.endpoints(points)
    found, notes = netbaseline.measure_endpoints(
        {address: (end.host, labels) for address, (end, _, labels) in ends.items()}
    )
    if found:
        inventory["network"] = [*(inventory.get("network") or []), *found]
    return notes


def check_engines(points: list[Point], options: CheckOptions) -> CheckResult:
    """Each engine of the points checks its own: the tool here and on every host, the
    options it would reject (engines/base.py). An engine that runs points on hosts also
    checks ``--destroy-data HOST:PATH`` values when the plan has none of its points."""
    found = CheckResult()
    checked = set()
    for engine, pts in engines.of_points(points):
        checked.add(engine.name)
        _merge(found, engine.check(pts, options))
    if options.remote_destroy_data:
        for engine in engines.all_engines():
            if engine.runs_hosts and engine.name not in checked:
                _merge(found, engine.check([], options))
    return found


def _merge(into: CheckResult, one: CheckResult) -> None:
    into.warnings += one.warnings
    into.inventory.update(one.inventory)
    into.host_names.update(one.host_names)


def split_destroy(destroy_data: list[str]) -> tuple[list[str], list[tuple[str, str]]]:
    """``--destroy-data`` values: local device paths, and ``HOST:PATH`` pairs for remote
    targets (HOST is a host's name, address or address:port as the plan names it)."""
    local: list[str] = []
    remote: list[tuple[str, str]] = []
    for value in destroy_data:
        i = value.find(":/")
        if i > 0:
            remote.append((value[:i], value[i + 1 :]))
        else:
            local.append(value)
    return local, remote
