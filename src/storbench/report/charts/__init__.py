"""Charts of runs with matplotlib (Agg, never a display): the seeds' figures as files or SVG.

A chart is built in two steps. :func:`build_chart` turns runs into a :class:`Chart` — panels,
lines or bars, and for every data point its value and a hover text — without matplotlib.
:func:`render` draws it (PNG or SVG). In SVG every data point becomes its own group with an
SVG ``<title>`` holding its values (a browser shows it on hover, in a standalone file too) and,
for the HTML report, a ``data-ref`` naming the point's detail section.

Kinds (``KINDS``):

- ``iops-vs-iodepth``, ``bw-vs-iodepth``, ``lat-vs-iodepth``: the figure against queue depth,
  a line per block size (one run) or per run (several runs: seed 004's Proxmox vs VMware
  charts, a panel per block size);
- ``iops-vs-numjobs``, ``bw-vs-numjobs``, ``lat-vs-numjobs``: the same against the number of
  jobs (seed 000);
- ``iops-vs-bs``, ``bw-vs-bs``, ``lat-vs-bs``: the same against the block size (an s3
  suite's object size: requests/s and MiB/s per object size, a line per operation, seed 003
  §5.2's charts);
- ``lat-percentiles``: completion latency percentiles (p50 … p99.99), a line per point;
- ``compare``: the % change of IOPS of each later run against the first (seed 004's bars);
- ``capacity``: every step of a capacity search (``slo:``) as latency against offered load,
  with the target line, saturated steps marked and the capacity found (``capacity``; the
  HTML report draws it beside the answer).

Text from plans and hosts ends up in three places here: matplotlib's own ``<text>`` (or glyph
paths), which matplotlib escapes (``$`` is escaped here so that a name is never read as
mathtext), the ``<title>`` of each point and the ``data-ref`` attribute, both escaped with
:func:`html.escape` when they are put into the SVG. Control characters are written out
(:mod:`storbench.report.safe`): XML cannot hold them.

A chart of several runs names each run's lines by what tells the run apart from the others
(its name, filter, target, an option or a test-bed setting it has of its own), not by
``run 7: matrix``; no panel holds more than ``MAX_SERIES`` lines: more are split over
panels, each titled with the lines it holds and with a legend of its own (``facets``).

Modules: ``model`` (runs, charts, panels, lines, marks, rules; the figures), ``build`` (charts
from runs), ``capacity`` (a capacity search's chart), ``facets`` (what a run's lines are
called, crowded panels split), ``draw`` (matplotlib, SVG annotation); a point's time chart
(its series over time, for the HTML report): ``timechart`` (downsampling, shaded spans,
event markers, hover texts) and ``timedraw`` (matplotlib, SVG annotation).
"""

from __future__ import annotations

from storbench.report.charts.build import (  # noqa: F401
    available_kinds,
    build_chart,
    compare_chart,
    comparisons,
    percentile_chart,
    sweep_chart,
)
from storbench.report.charts.capacity import capacity_chart, has_searches  # noqa: F401
from storbench.report.charts.draw import (  # noqa: F401
    render,
    render_inline_svg,
    render_inline_svgs,
)
from storbench.report.charts.facets import run_labels, split_crowded  # noqa: F401
from storbench.report.charts.model import (  # noqa: F401
    KINDS,
    MAX_PANELS,
    MAX_SERIES,
    Chart,
    Line,
    Mark,
    Panel,
    RunReport,
    load_run,
    load_runs,
)
