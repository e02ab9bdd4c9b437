"""The ``rados bench`` engine (ceph-common): command lines, parsing and validation of its
output, several clients at once, and running the points of a plan. What rados bench prints,
and the facts this package relies on, are in ``parse.py``'s docstring and
tests/data/rados/README.md.
"""

from __future__ import annotations

from storbench.engines.rados.clients import (  # noqa: F401
    AGGREGATE_SERIES_UNITS,
    MIN_WINDOW_S,
    ClientWindow,
    WindowSecond,
    aggregate_clients,
    common_window,
    pooled_stddev,
    spread_of,
    timeline,
    whole_run,
    window_samples,
    window_seconds,
    window_series_table,
)
from storbench.engines.rados.command import (  # noqa: F401
    BENCH_PREFIX,
    DEFAULT_RUN_NAME,
    FORMATS,
    HOSTNAME_CHARS,
    MODES,
    NS_PER_S,
    PERCENTILES_NOTE,
    RADOS,
    RUN_NAME_PREFIX,
    MiB,
    RadosOutputError,
    bench_command,
    check_run_name,
    cleanup,
    cleanup_command,
    client_run_name,
    is_benchmark_object,
    leftover_objects,
    list_objects_command,
    object_prefix_for,
    rados_path,
    rados_version,
)
from storbench.engines.rados.objects import (  # noqa: F401
    put_objects,
    remove_objects,
)
from storbench.engines.rados.parse import (  # noqa: F401
    parse_rados_bench,
)
from storbench.engines.rados.result import (  # noqa: F401
    SUMMARY_FIELDS,
    RadosBenchResult,
    SeriesRow,
)
from storbench.engines.rados.run import (  # noqa: F401
    PointRun,
    RadosRun,
    object_prefix_in,
    point_client,
    point_commands,
    point_run_name,
    run_bench,
    run_commands,
    run_point,
)
from storbench.engines.rados.validate import (  # noqa: F401
    SERIES_COLUMNS,
    SERIES_UNITS,
    per_second_samples,
    series_table,
    to_measurement,
    validate,
)
