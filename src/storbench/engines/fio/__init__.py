"""The fio engine: point -> job file -> fio process(es) -> measurement.

fio runs with ``--output-format=json+`` so every direction carries its latency histogram
(``bins``); the parser tolerates text before, between and inside the JSON documents, reads
``--status-interval`` streams (back-to-back documents, the last one is final) and
client/server output (``client_stats``), and aggregates several jobs or hosts itself:
sums of I/O, pooled latency moments, percentiles from merged bins.

Modules: ``tool`` (fio itself), ``jobfile`` (the exact job file of a point), ``spawn`` (one
fio process), ``run`` (a point on this machine), ``hosts`` (a point on several hosts through
fio's client/server mode), ``parse`` and ``check`` (reading fio's output, refusing what fio
does not write), ``server`` (fio servers: local, probed, the agent's), ``remote`` (preflight
of the hosts), ``agent`` (``storbench agent``), ``engine`` (all of it behind engines/base.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from storbench import hooks

# a name that is also a module's (advice) is imported here: the module, once imported,
# would otherwise stand in the package under that name
from storbench.engines.fio.advice import advice, ended_early  # noqa: F401

if TYPE_CHECKING:
    from storbench.engines.fio.check import (  # noqa: F401
        DocumentError,
        check_document,
    )
    from storbench.engines.fio.hosts import (  # noqa: F401
        HostContext,
        client_address,
        host_series,
        hosts_command,
        hosts_measurement,
        status_interval_ms,
    )
    from storbench.engines.fio.jobfile import (  # noqa: F401
        READ_RW,
        ceph_env,
        host_job_file,
        job_file,
        rados_object_prefix,
        rados_object_size,
        rados_objects,
        reads,
        s3_run_tag,
        target_options,
    )
    from storbench.engines.fio.parse import (  # noqa: F401
        final_document,
        job_params,
        measurement_from_document,
        parse_output,
        reporting_groups,
        split_documents,
    )
    from storbench.engines.fio.run import (  # noqa: F401
        Prepared,
        prepare_point,
        run_point,
    )
    from storbench.engines.fio.server import (  # noqa: F401
        FioServer,
        ServerProbe,
        _probe_result,
        fio_server_pid,
        free_port,
        probe_job,
        probe_servers,
        server_listening,
        start_agent,
        stop_agent,
    )
    from storbench.engines.fio.spawn import (  # noqa: F401
        FioRun,
        read_only,
    )
    from storbench.engines.fio.tool import (  # noqa: F401
        FIO,
        OWN_BUILD,
        FioOutputError,
        about,
        available_engines,
        fio_path,
        fio_version,
        parse_only,
    )

#: what the package gives, by the module that has it: imported when first asked for, so that
#: a command that needs one module of the engine (``storbench agent``, and ``--help``, which
#: lists it) does not load them all
_WHERE = {
    "DocumentError": "storbench.engines.fio.check",
    "check_document": "storbench.engines.fio.check",
    "HostContext": "storbench.engines.fio.hosts",
    "client_address": "storbench.engines.fio.hosts",
    "host_series": "storbench.engines.fio.hosts",
    "hosts_command": "storbench.engines.fio.hosts",
    "hosts_measurement": "storbench.engines.fio.hosts",
    "status_interval_ms": "storbench.engines.fio.hosts",
    "READ_RW": "storbench.engines.fio.jobfile",
    "ceph_env": "storbench.engines.fio.jobfile",
    "host_job_file": "storbench.engines.fio.jobfile",
    "job_file": "storbench.engines.fio.jobfile",
    "s3_run_tag": "storbench.engines.fio.jobfile",
    "rados_object_prefix": "storbench.engines.fio.jobfile",
    "rados_object_size": "storbench.engines.fio.jobfile",
    "rados_objects": "storbench.engines.fio.jobfile",
    "reads": "storbench.engines.fio.jobfile",
    "target_options": "storbench.engines.fio.jobfile",
    "final_document": "storbench.engines.fio.parse",
    "job_params": "storbench.engines.fio.parse",
    "measurement_from_document": "storbench.engines.fio.parse",
    "parse_output": "storbench.engines.fio.parse",
    "reporting_groups": "storbench.engines.fio.parse",
    "split_documents": "storbench.engines.fio.parse",
    "Prepared": "storbench.engines.fio.run",
    "prepare_point": "storbench.engines.fio.run",
    "run_point": "storbench.engines.fio.run",
    "FioServer": "storbench.engines.fio.server",
    "ServerProbe": "storbench.engines.fio.server",
    "_probe_result": "storbench.engines.fio.server",
    "fio_server_pid": "storbench.engines.fio.server",
    "free_port": "storbench.engines.fio.server",
    "probe_job": "storbench.engines.fio.server",
    "probe_servers": "storbench.engines.fio.server",
    "server_listening": "storbench.engines.fio.server",
    "start_agent": "storbench.engines.fio.server",
    "stop_agent": "storbench.engines.fio.server",
    "FioRun": "storbench.engines.fio.spawn",
    "read_only": "storbench.engines.fio.spawn",
    "FIO": "storbench.engines.fio.tool",
    "OWN_BUILD": "storbench.engines.fio.tool",
    "FioOutputError": "storbench.engines.fio.tool",
    "about": "storbench.engines.fio.tool",
    "available_engines": "storbench.engines.fio.tool",
    "fio_path": "storbench.engines.fio.tool",
    "fio_version": "storbench.engines.fio.tool",
    "parse_only": "storbench.engines.fio.tool",
}


__getattr__, __dir__ = hooks.lazy_package(__name__, _WHERE)
