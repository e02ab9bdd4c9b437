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

from storbench.engines.fio.advice import advice, ended_early  # noqa: F401
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
