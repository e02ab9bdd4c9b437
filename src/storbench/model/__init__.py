"""The measurement model every stage speaks: measurements and their latency histograms
(metrics.py, histpack.py), a point's time series (series.py), units and their formatting
(units.py), raw engine output kept compressed (rawpack.py), the redaction of secrets
(redact.py), errors that reach the user with a fix (errors.py), defaults (constants.py)."""
