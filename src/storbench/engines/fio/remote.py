"""Preflight across hosts: every fio server answers, runs this controller's fio version, has
the engines the plan needs, and its targets pass the checks storbench can make from here.

What storbench can and cannot check on a remote host
    storbench talks to a remote host only through its fio server, which runs any job it is
    sent and reports nothing but results. It cannot run ``blkid``/``wipefs``, look at
    mounts, stat a file or read the extended attribute that marks storbench's scratch files
    there — and it does not try to find out by having fio read a device or a file (a read
    through fio is no signature check, and fio may lay out or even recreate a file it is
    only asked to read: measured, see README "Many hosts"). So on a remote host:

    * a **device** written by the plan needs ``--destroy-data HOST:DEVICE`` naming that host
      and that device: the user vouches that its data may go. fio itself still refuses to
      write to a device that is mounted there (its ``allow_mounted_write=0`` default; the
      point then fails on that host with fio's message). Reading a device needs no flag.
    * a **file** needs ``--destroy-data HOST:PATH`` when the plan writes it, or when the
      workload has a ``size`` (fio overwrites an existing file, and recreates one smaller
      than ``size`` — losing its contents — even for a read-only workload). Reading a file
      at its own size (no ``size:``) needs no flag: fio opens it read-only and never lays
      it out (a missing file is then fio's error).
    * a **directory** is always allowed: fio creates files named ``storbench.WORKLOAD.N.M``
      in it, a name no one else uses. storbench cannot remove them afterwards (nor files
      fio created for file targets): they stay on the host.
    * free space, and whether the host is the one you meant, are not checked.

    The ``local`` host is this machine: its targets get every local check (preflight
    ``check_targets``), storbench creates, lays out and removes its scratch files as for a
    plan without hosts.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from storbench.engines import fio
from storbench.model.errors import PreflightError
from storbench.plan import Point, PointHost, Target

#: Seconds a fio server has to answer the preflight probe ($STORBENCH_HOST_TIMEOUT).
PROBE_TIMEOUT = float(os.environ.get("STORBENCH_HOST_TIMEOUT") or 15)


def _names_of(h: PointHost) -> set[str]:
    return {h.label, h.address, f"{h.address}:{h.port}"}


def _consents(h: PointHost, path: str, remote: list[tuple[str, str]]) -> bool:
    return any(host in _names_of(h) and p == path for host, p in remote)


@dataclass
class HostCheck:
    inventory: list[dict[str, Any]] = field(default_factory=list)
    names: dict[str, str] = field(default_factory=dict)  # host label -> its own host name


def remote_hosts(points: list[Point]) -> dict[str, list[tuple[PointHost, Point]]]:
    """Every remote host of the points (by label, plan order) with the points it is in."""
    out: dict[str, list[tuple[PointHost, Point]]] = {}
    for p in points:
        for h in p.hosts:
            if not h.local:
                out.setdefault(h.label, []).append((h, p))
    return out


def target_refusals(points: list[Point], remote: list[tuple[str, str]]) -> list[str]:
    """Why remote targets may not be used as planned (module doc), one line each."""
    hosts = remote_hosts(points)
    problems: list[str] = []
    for host, path in remote:
        if not any(
            host in _names_of(h) and h.target.path == path
            for uses in hosts.values()
            for h, _ in uses
        ):
            problems.append(
                f"--destroy-data {host}:{path} names no remote target of this plan "
                "(HOST is a host's name, address or address:port; PATH its target)"
            )
    for label, uses in hosts.items():
        seen: dict[Target, tuple[bool, bool]] = {}
        for h, p in uses:
            writes, sized = seen.get(h.target, (False, False))
            seen[h.target] = (
                writes or p.writes,
                sized or any(k in p.params for k in ("size", "filesize")),
            )
        h0 = uses[0][0]
        for t, (writes, sized) in seen.items():
            if t.kind == "device" and writes and not _consents(h0, t.path, remote):
                problems.append(
                    f"host {label}: the plan writes to device {t.path} there, and storbench "
                    "cannot check a remote device for partitions, filesystems or data; "
                    f"if its data may be destroyed, pass --destroy-data {label}:{t.path}"
                )
            elif t.kind == "file" and (writes or sized) and not _consents(h0, t.path, remote):
                why = "writes to" if writes else "gives a `size` for"
                problems.append(
                    f"host {label}: the plan {why} file {t.path} there, and storbench cannot "
                    "see whether it exists: fio overwrites an existing file (and recreates one "
                    "smaller than `size`, even to read it); if it may be destroyed, pass "
                    f"--destroy-data {label}:{t.path}, or use a `directory:` target"
                )
    return problems


def _engines(uses: list[tuple[PointHost, Point]]) -> list[str]:
    names = dict.fromkeys(str(p.params.get("ioengine", "psync")) for _, p in uses)
    return [e for e in names if not e.startswith("external:")]


def check_hosts(
    points: list[Point],
    destroy_data: list[tuple[str, str]],
    *,
    timeout: float = PROBE_TIMEOUT,
) -> HostCheck:
    """Probe every remote host (in parallel) and check its targets; raise PreflightError
    naming every host that fails, with its reason, when any does. Nothing runs before."""
    hosts = remote_hosts(points)
    result = HostCheck()
    if not hosts and not destroy_data:
        return result
    problems = target_refusals(points, destroy_data)
    fixes: dict[str, None] = {}
    if problems:
        fixes["--destroy-data HOST:PATH for a remote target whose data may be destroyed"] = None
    labels = list(hosts)
    servers = [(hosts[lab][0][0].address, hosts[lab][0][0].port) for lab in labels]
    engines = sorted({e for lab in labels for e in _engines(hosts[lab])})
    probes = fio.probe_servers(servers, engines, timeout=timeout) if servers else []
    mine = fio.fio_version()
    for lab, probe in zip(labels, probes, strict=True):
        need = _engines(hosts[lab])
        entry: dict[str, Any] = {
            "label": lab,
            "address": probe.address,
            "port": probe.port,
            "hostname": probe.hostname,
            "os": probe.os,
            "arch": probe.arch,
            "fio_version": probe.fio_version,
            "targets": [t.to_dict() for t in dict.fromkeys(h.target for h, _ in hosts[lab])],
        }
        result.inventory.append(entry)
        if probe.hostname:
            result.names[lab] = probe.hostname
        if probe.error:
            problems.append(f"host {lab}: {probe.error}")
            if "protocol" in probe.error:
                fixes[f"run the controller's fio ({mine}) on every host"] = None
            else:
                fixes[
                    "start the fio server there (`storbench agent --bind ADDRESS --port PORT`) "
                    "and check that the controller may reach it (firewall)"
                ] = None
            continue
        if probe.fio_version != mine:
            problems.append(
                f"host {lab}: runs {probe.fio_version}, the controller {mine} (fio's "
                "client/server protocol needs the same version on every host)"
            )
            fixes[f"run the controller's fio ({mine}) on every host"] = None
        missing = [e for e in need if e in probe.missing_engines]
        if missing:
            problems.append(
                f"host {lab}: its fio ({probe.fio_version}) has no {', '.join(missing)} engine"
            )
            if "http" in missing:
                fixes[
                    "s3 targets need fio's http engine on every host: run `make setup` or "
                    "`bash scripts/build-fio-http.sh` there (storbench's agent then runs that "
                    "fio)"
                ] = None
            else:
                fixes["install the engine on that host, or choose another ioengine"] = None
    if problems:
        bad = sum(1 for lab in labels if any(p.startswith(f"host {lab}: ") for p in problems))
        head = (
            f"{bad} of {len(labels)} host{'s' if len(labels) != 1 else ''} failed preflight"
            if bad
            else "preflight refused"
        )
        raise PreflightError(
            head + "; nothing was run:\n  " + "\n  ".join(problems),
            fix="; ".join(fixes) or None,
        )
    return result
