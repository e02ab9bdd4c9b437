"""The values the command line shows in its help (defaults, choices, where the database is),
in a module that imports nothing of storbench's: ``storbench --help`` and ``storbench COMMAND
--help`` load this, click and the command modules, not the plan loader, the store, rich or
matplotlib. The modules that use these values import them from here.
"""

from __future__ import annotations

import os

#: Plans larger than this many points are refused before they are expanded (``--max-points``).
MAX_POINTS = 100_000

#: Seconds between two samples of a Ceph cluster's health while a run executes.
HEALTH_INTERVAL = 10.0

#: Points the table of ``show`` (and of ``run`` at its end) lists by default (``--limit``):
#: every built-in suite whole at its defaults (matrix: 112 points); past that the suite's
#: answer and the first rows say more than thousands of rows would, and take a second to
#: print (``show RUN --all`` lists them all).
SHOW_LIMIT = 120

#: Where the results database is when neither --db nor $STORBENCH_DB says.
DEFAULT_DB = "~/.local/share/storbench/results.db"

#: What ``storbench chart --kind`` draws (report/charts/model.py builds them).
CHART_KINDS = (
    "iops-vs-iodepth",
    "bw-vs-iodepth",
    "lat-vs-iodepth",
    "iops-vs-numjobs",
    "bw-vs-numjobs",
    "lat-vs-numjobs",
    "iops-vs-bs",
    "bw-vs-bs",
    "lat-vs-bs",
    "lat-percentiles",
    "compare",
    "capacity",
)


def default_db_path() -> str:
    env = os.environ.get("STORBENCH_DB")
    if env:
        return env
    base = os.environ.get("XDG_DATA_HOME")
    if base:
        return os.path.join(base, "storbench", "results.db")
    return os.path.expanduser(DEFAULT_DB)
