"""The runner's bookkeeping of a point, done while the next point's engine starts up.

Between two points storbench records the one that ended (its measurement and raw output
into SQLite) and prints its progress line and the next one's: about 2 ms of CPU that the
next fio run would otherwise wait for. The runner hands that work to :class:`Later`, which
has it done the moment the next point's engine process has started
(engines.process.when_started: fio then spends 0.1 s or more loading and checking its
clock before its first I/O), or by the runner itself when it needs it done: before it
looks at the next point's result, when the run ends or stops, and when no engine process
started. So a point is committed a few ms after the next one's load began, always before
the next one's result is looked at, and the order of the records and of the progress
lines is the order of the points.

Nothing of the work may be lost or hidden: an error in it (a full disk, a point another
process recorded) asks the run to stop (the engine stops its process as on Ctrl-C) and is
raised by :meth:`Later.done`, where the runner would have met it before.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from storbench.engines import process


class Later:
    """Work that waits for the next engine process to start (module doc)."""

    def __init__(self, stop: Callable[[], None]) -> None:
        self.stop = stop  # asks the run to stop: the running engine process ends
        self.work: list[tuple[Callable[..., Any], tuple[Any, ...]]] = []
        self.error: BaseException | None = None

    def call(self, fn: Callable[..., Any], *args: Any) -> None:
        """``fn(*args)`` after the work waiting already, or now when nothing waits."""
        if not self.work:
            fn(*args)
            return
        self.work.append((fn, args))

    def defer(self, fn: Callable[..., Any], *args: Any) -> None:
        """``fn(*args)`` once the next engine process has started (or :meth:`done`)."""
        if not self.work:
            process.when_started(self._run)
        self.work.append((fn, args))

    def _run(self) -> None:
        """Do what waits, in order; never raises: the first error stops the run and waits
        for :meth:`done`."""
        while self.work:
            fn, args = self.work.pop(0)
            if self.error is not None:
                continue  # after an error nothing more is done (as when it was raised)
            try:
                fn(*args)
            except BaseException as e:
                self.error = e
                self.stop()

    def done(self, *, raise_error: bool = True) -> None:
        """Everything that waits is done by now; its error raised (unless ``raise_error``
        is false: another exception is on its way out)."""
        process.started()
        self._run()
        error, self.error = self.error, None
        if error is not None and raise_error:
            raise error
