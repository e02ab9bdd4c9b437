"""A running run's per-point summaries kept up to date by reading only what was recorded
since: what the live page polls. Reading a 20,000-point run whole takes seconds (its
measurements' figures decoded, every point summarised), and a running run changes with each
point; here each poll reads the measurements' ids, then the measurements (and histograms)
of only the points that have new ones, and summarises those again."""

from __future__ import annotations

from storbench.analysis.summary import PointSummary
from storbench.report.model import read_summaries
from storbench.store import Store


class RunningSummaries:
    """Run ``run_id``'s summaries as :func:`storbench.report.model.load_run` makes them,
    brought up to date by :meth:`update` with the points recorded since it last read."""

    def __init__(self, store: Store, run_id: int) -> None:
        self.store = store
        self.run_id = run_id
        self._seen: dict[int, tuple[int, str]] = {}
        self._by_key: dict[str, PointSummary] = {}

    def update(self) -> set[str]:
        """Read what was recorded since; the keys of the points summarised again."""
        # a run's measurements are only added (deleted with the run, whose id is not reused)
        now = self.store.measurements.ids(self.run_id)
        keys = {key for mid, (_, key) in now.items() if mid not in self._seen}
        if keys and not self._seen:  # the first read: the whole run at once
            rows = self.store.measurements.of_run(self.run_id, bins=False)
            self._by_key = {s.key: s for s in read_summaries(self.store, self.run_id, rows)}
        elif keys:
            rows = self.store.measurements.of_keys(self.run_id, keys)
            for s in read_summaries(self.store, self.run_id, rows, keys=keys):
                self._by_key[s.key] = s
        # what was read: a measurement recorded between the two reads is read again next time
        self._seen = now
        return keys

    @property
    def measured(self) -> set[int]:
        """The indexes of the points with a measurement (at the last update)."""
        return {idx for idx, _ in self._seen.values()}

    @property
    def summaries(self) -> list[PointSummary]:
        """Every point's summary so far, in point order."""
        return sorted(self._by_key.values(), key=lambda s: s.index)
