"""The web view (``storbench serve``): a small local web application over a results database.

Pages: the runs (filtered, a page at a time), a run (its suite's answer, summary table a page
at a time, charts and test bed: the HTML report's sections, report/templates), a point (its
repetitions' interactive time series, drawn with the bundled uPlot, job file and raw
output) and the comparison of two runs (the report's comparison: verdicts point by point).

Offline and strict: every script and style sheet is a file of the package (static/), the
Content-Security-Policy allows scripts from the server only (no inline script, no eval), and
every value from a plan, a host or fio reaches a page through Jinja2's autoescape. Read-only
unless asked (``--write``): the SQLite connection is set ``query_only``. No authentication:
loopback by default, and the Host header must name it (a page elsewhere cannot rebind a
name to 127.0.0.1 and read the results).

Modules: ``app`` (the application: routes, headers, errors), ``views`` (runs loaded and
their pages' contexts built once, kept for the next request), ``listing`` (the runs page's
filters and paging), ``pages`` (the request handlers).
"""
