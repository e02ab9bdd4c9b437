"""The results database (SQLite, or PostgreSQL: ``pg``): runs, their planned points,
measurements, events and time series.

Every measurement is committed the moment its point finishes (WAL journal), so a run killed
at any instant keeps every finished point. Raw engine output is kept zlib-compressed beside
the parsed figures; latency histograms live in their own table so that summaries load fast.
*Events* are what happened on a run's timeline besides its points (cluster health changes,
preflight findings, objects and images made and removed), one human-readable line each.

A :class:`Store` may be used from several threads (a health monitor records events from its
own thread while the runner records measurements): the one connection is opened with
``check_same_thread=False`` and every use of it holds the store's lock, so a transaction of
one thread never takes in another thread's statements.

Schema versions: 1 (runs, points, measurements, histograms); 2 adds ``events``; 3 adds to
each run the token that marks its processes (see procguard.py), the identity of the process
executing it and its heartbeat (see liveness.py), so that a run cannot be resumed -- nor its
targets measured by another run -- while it still executes; 4 adds ``intervals`` (each point's
time series); 5 ``host_samples`` (what the load's host did per interval); 6 their power; 7
packs every latency histogram (storbench.model.histpack: about an eighth of its JSON text). An
older database is migrated in place when a command that writes opens it (run, resume,
import, merge into it, delete, cleanup ...); a command that only reads reads it through the
current schema without changing it (``schema.read_through``); a newer one is refused.

Modules: ``schema`` (tables and migrations), ``rows`` (what reading gives back), ``faults``
(the database's errors as messages), ``db`` (the :class:`Store`: opening, migrating, and the
parts it is made of). Each part is a class about one subject, built over the one
``base.Connection`` they share (the connection, its lock, transactions), and an attribute of
the Store: ``store.runs`` (``runs.Runs``: runs, points, claims), ``store.measurements``
(``measurements.Measurements``: figures, histograms, raw outputs), ``store.events``
(``events.Events``), ``store.series`` (``series.Series``: each point's intervals),
``store.host_samples`` (``hostload.HostSamples``) and ``store.archive`` (``archive.Archive``:
a run as one portable document)::

    store = Store(path)
    run_id = store.runs.create(...)
    store.measurements.record(run_id, point, measurement, ...)
    store.events.add(run_id, "note", "what happened")
    rows = store.measurements.of_run(run_id)
"""

from __future__ import annotations

from storbench.store.db import Store  # noqa: F401
from storbench.store.faults import (  # noqa: F401
    DEFAULT_TIMEOUT,
    StoreError,
    busy_timeout,
    store_error,
)
from storbench.store.measurements import _strip_bins  # noqa: F401
from storbench.store.rows import (  # noqa: F401
    BOOKKEEPING_EVENTS,
    DEFAULT_DB,
    EventRow,
    MeasurementRow,
    RunRow,
    default_db_path,
)
from storbench.store.schema import SCHEMA_VERSION  # noqa: F401
