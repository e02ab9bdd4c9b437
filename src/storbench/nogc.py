"""Python's cyclic garbage collector paused while a big run's results are in memory.

Loading, comparing and reporting a run of 20,000 points makes millions of small objects
(parsed JSON, summaries, table cells) and no reference cycles worth collecting; each full
collection walks all of them again, and a ``compare`` of two such runs spent about half its
time there. Reference counting still frees everything as usual.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused() -> Iterator[None]:
    """The cyclic collector off inside the block (as it was, after it)."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()
