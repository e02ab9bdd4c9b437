"""Findings: the traps a reviewer checks by hand before trusting a number, found by storbench
and kept with the measurement they concern.

A :class:`Finding` has a stable ``code`` (what the trap is; :data:`CODES` says what each
means, how it is found and the fix in general), its ``evidence`` (the numbers that set it
off, in words, and in ``data`` as numbers in base units) and its ``advice`` (the fix for this
point). The checks are the engines' (what only the engine knows: fio's ``direct``) and
analysis/findings.py's (what any measurement shows: its I/O count, its CPU); the execute
stage runs them after each point and the store keeps them in the measurement's data, so an
archive, a merge and every presenter carry them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Code:
    """What a finding's code means, for the README's "Can I trust this number?" and ``show``."""

    code: str
    #: the trap in a few words
    title: str
    #: how storbench finds it (the evidence it needs)
    check: str
    #: the fix, in general
    fix: str
    #: whether a point carrying it may still be judged better or worse than another: a
    #: finding that says the number is not the storage's (the page cache, the client's CPU)
    #: makes a comparison of it meaningless; one that says it is imprecise does not
    judged: bool = False


#: Every finding storbench reports, by code (stable: JSON consumers and tests name them).
CODES: dict[str, Code] = {
    c.code: c
    for c in (
        Code(
            "page-cache",
            "reads or writes served by the page cache, not the storage",
            "buffered I/O (fio `direct=0`, its default) on a file or device whose data the "
            "point touches fits in the memory the host has available; or buffered random "
            "reads at more than twice the IOPS the same target gave with `direct=1` in the "
            "run",
            "set `direct: 1` to measure the storage (or make the data larger than the "
            "host's memory, if the cache is part of what you measure)",
        ),
        Code(
            "unwritten-read",
            "reads of a region nothing wrote",
            "a point that reads a file, a loop device's backing file or an RBD image of "
            "which less than 90 % of the region it reads holds data (its allocated blocks; "
            "`rbd du`): holes and absent objects read as zeroes without touching storage",
            "write the region before reading it: `prefill: true` on the target (storbench "
            "writes it whole before its first point), or a write workload first",
        ),
        Code(
            "compressible",
            "data the storage compresses, written as fio repeats it",
            "a point that writes to a Ceph pool whose BlueStore compression mode compresses "
            "unhinted data (aggressive, force), or to btrfs mounted with compression, a ZFS "
            "dataset or zvol that compresses or deduplicates, or a VDO device, with fio's "
            "default buffers (one buffer per "
            "job, reused for every write: neither `refill_buffers` nor "
            "`buffer_compress_percentage` set)",
            "`refill_buffers: 1` for fresh random data each write, or "
            "`buffer_compress_percentage: N` to measure a stated compressibility",
        ),
        Code(
            "client-cpu-bound",
            "the client's CPU, not the storage, set the number",
            "a job of the engine used 90 % or more of one CPU (fio's `usr_cpu` + `sys_cpu`)",
            "spread the load over more jobs (`numjobs`) or hosts, or use a cheaper ioengine "
            "(io_uring, libaio): the storage may be able to do more",
        ),
        Code(
            "network-bound",
            "the network between the client and the storage set the number",
            "a point whose reads (or writes) moved 90 % or more of what the network "
            "toward (or away from) the client carries: an iperf3 baseline measured at the "
            "run's start toward the storage's endpoint host (an S3 endpoint, a Ceph "
            "cluster's monitors, a network file system's server, a krbd device's monitor, "
            "an iSCSI disk's portal) when an iperf3 server "
            "answers there on port 5201, else the link speed of the interface the route "
            "to it leaves through; on `hosts:`, a host reaching S3 or Ceph against the "
            "baseline measured from the controller to it",
            "measure from a client with a faster path to the storage, or from more "
            "clients: the storage may do more",
        ),
        Code(
            "host-busy",
            "the client's host had no CPU to spare",
            "the CPUs of a host the load ran on were 90 % busy or more (user + system, the "
            "mean of its samples over the point), whoever kept them busy",
            "run on a quiet host (or find what else keeps it busy): a job that waits for a "
            "CPU submits later than the storage could take it",
            judged=True,
        ),
        Code(
            "short-run",
            "too few I/Os for the latency percentiles shown",
            "fewer than 1,000 I/Os: the p99 rests on fewer than 10 of them",
            "run the point longer (`runtime`, with `time_based: 1`), or at a larger `size`",
            judged=True,
        ),
        Code(
            "unsteady",
            "a series whose mean is a poor summary of it",
            "5 or more measured intervals whose IOPS vary by more than 25 % (coefficient of "
            "variation) or move by more than 20 % over the measured time (least-squares line)",
            "precondition the target (`precondition: auto`), run until steady "
            "(`steady_state:`), or run longer; read the point's time series (`show RUN "
            "--point N`)",
            judged=True,
        ),
        Code(
            "sync-iodepth",
            "a queue depth the engine ignores",
            "fio `iodepth` above 1 with a synchronous ioengine (psync, sync, ...): fio keeps "
            "one I/O in flight per job whatever iodepth says",
            "use `ioengine: libaio` or `io_uring` for a queue, or `numjobs` for concurrency",
            judged=True,
        ),
        Code(
            "ended-early",
            "the point ran shorter than its runtime",
            "fio stopped when it had done its `size`, before `runtime`, because the point "
            "has no `time_based`",
            "set `time_based: 1` to run the whole runtime",
            judged=True,
        ),
    )
}


@dataclass(frozen=True)
class Finding:
    """One trap found in one measurement."""

    code: str
    #: what set it off, in words with its numbers ("direct=0; the 1 GiB it reads fits ...")
    evidence: str
    #: the fix for this point
    advice: str
    #: the evidence as numbers in base units (bytes, %, counts), for JSON readers
    data: Mapping[str, Any] = field(default_factory=dict)
    #: the host it concerns, for a point on many hosts ("" for the point as a whole)
    host: str = ""

    @property
    def judged(self) -> bool:
        """Whether a point carrying it may still be judged better or worse (:class:`Code`)."""
        known = CODES.get(self.code)
        return known.judged if known is not None else False

    def to_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "evidence": self.evidence,
            "advice": self.advice,
            "data": dict(self.data),
            **({"host": self.host} if self.host else {}),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Finding:
        return cls(
            code=str(data.get("code", "")),
            evidence=str(data.get("evidence", "")),
            advice=str(data.get("advice", "")),
            data=dict(data.get("data") or {}),
            host=str(data.get("host", "")),
        )


@dataclass(frozen=True)
class NetworkPath:
    """What the network between this machine (the client) and a target's storage carries,
    in bits/s each way (full duplex), and where the figure comes from."""

    #: the host the data crosses the network to, as the target names it (an S3
    #: endpoint's host, a Ceph monitor, a network file system's server)
    endpoint: str
    #: its address, as the route to it was looked up
    address: str
    #: bits/s the network carries toward this client (what reads can move)
    to_client_bits_per_s: float
    #: bits/s it carries away from this client (what writes can move)
    from_client_bits_per_s: float
    #: ``iperf3`` (measured at the run's start) or ``link`` (the interface's link speed)
    source: str
    #: the interface the route to ``address`` leaves through
    device: str = ""
    #: what the endpoint is to the target, in words ("the S3 endpoint")
    what: str = ""
    #: what a reader should know of the path (Ceph: the OSDs are on the monitors' network)
    note: str = ""


@dataclass(frozen=True)
class Facts:
    """What the checks know of where a point ran, besides its measurement."""

    #: bytes of memory available (MemAvailable: free memory and what the kernel can
    #: reclaim, the page cache included) by host label, "" for this machine; a host
    #: missing: unknown
    memory_available: Mapping[str, int] = field(default_factory=dict)
    #: the network between this machine and a target's storage, by target label (a target
    #: missing: no network, or its capacity unknown; hosts/netpath.py)
    network: Mapping[str, NetworkPath] = field(default_factory=dict)


def unjudged(findings: list[Finding]) -> list[Finding]:
    """The findings that keep a point from being judged better or worse."""
    return [f for f in findings if not f.judged]
