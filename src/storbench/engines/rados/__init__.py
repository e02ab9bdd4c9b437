"""The ``rados bench`` engine (ceph-common): command lines, parsing and validation of its
output, several clients at once, and running the points of a plan. What rados bench prints,
and the facts this package relies on, are in ``parse.py``'s docstring and
tests/data/rados/README.md.
"""

from __future__ import annotations

from storbench import hooks

#: what the package gives, by the module that has it, imported when first asked for: the
#: plan's check imports ``rados.keys`` alone, never the engine
_WHERE = {
    "AGGREGATE_SERIES_UNITS": "storbench.engines.rados.clients",
    "MIN_WINDOW_S": "storbench.engines.rados.clients",
    "ClientWindow": "storbench.engines.rados.clients",
    "WindowSecond": "storbench.engines.rados.clients",
    "aggregate_clients": "storbench.engines.rados.clients",
    "common_window": "storbench.engines.rados.clients",
    "pooled_stddev": "storbench.engines.rados.clients",
    "spread_of": "storbench.engines.rados.clients",
    "timeline": "storbench.engines.rados.clients",
    "whole_run": "storbench.engines.rados.clients",
    "window_samples": "storbench.engines.rados.clients",
    "window_seconds": "storbench.engines.rados.clients",
    "window_series_table": "storbench.engines.rados.clients",
    "BENCH_PREFIX": "storbench.engines.rados.command",
    "DEFAULT_RUN_NAME": "storbench.engines.rados.command",
    "FORMATS": "storbench.engines.rados.command",
    "HOSTNAME_CHARS": "storbench.engines.rados.command",
    "MODES": "storbench.engines.rados.command",
    "NS_PER_S": "storbench.engines.rados.command",
    "PERCENTILES_NOTE": "storbench.engines.rados.command",
    "RADOS": "storbench.engines.rados.command",
    "RUN_NAME_PREFIX": "storbench.engines.rados.command",
    "MiB": "storbench.engines.rados.command",
    "RadosOutputError": "storbench.engines.rados.command",
    "bench_command": "storbench.engines.rados.command",
    "check_run_name": "storbench.engines.rados.command",
    "cleanup": "storbench.engines.rados.command",
    "cleanup_command": "storbench.engines.rados.command",
    "client_run_name": "storbench.engines.rados.command",
    "is_benchmark_object": "storbench.engines.rados.command",
    "leftover_objects": "storbench.engines.rados.command",
    "list_objects_command": "storbench.engines.rados.command",
    "object_prefix_for": "storbench.engines.rados.command",
    "rados_path": "storbench.engines.rados.command",
    "rados_version": "storbench.engines.rados.command",
    "parse_rados_bench": "storbench.engines.rados.parse",
    "SUMMARY_FIELDS": "storbench.engines.rados.result",
    "RadosBenchResult": "storbench.engines.rados.result",
    "SeriesRow": "storbench.engines.rados.result",
    "PointRun": "storbench.engines.rados.run",
    "RadosRun": "storbench.engines.rados.run",
    "object_prefix_in": "storbench.engines.rados.run",
    "point_client": "storbench.engines.rados.run",
    "point_commands": "storbench.engines.rados.run",
    "point_run_name": "storbench.engines.rados.run",
    "run_bench": "storbench.engines.rados.run",
    "run_commands": "storbench.engines.rados.run",
    "run_point": "storbench.engines.rados.run",
    "SERIES_COLUMNS": "storbench.engines.rados.validate",
    "SERIES_UNITS": "storbench.engines.rados.validate",
    "per_second_samples": "storbench.engines.rados.validate",
    "series_table": "storbench.engines.rados.validate",
    "to_measurement": "storbench.engines.rados.validate",
    "validate": "storbench.engines.rados.validate",
}

__getattr__, __dir__ = hooks.lazy_package(__name__, _WHERE)
