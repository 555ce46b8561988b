"""Keeping Python's garbage collector out of the way while libraries and models load.

Loading LanceDB, PyArrow or a fastembed model makes hundreds of thousands of objects that all live as long
as the process. The collector, counting those allocations, runs full passes in the middle of the load:
passes that find nothing to free, yet hold Python's lock for tens of milliseconds each, so every other
thread (the window's included) stands still meanwhile. Loads run with the collector paused.

When the last load ends, what is alive is frozen (``gc.freeze``) before the collector resumes: without
that, its first pass would traverse everything the load made, and so would every full pass after it, on
whichever thread allocates (docs/PERFORMANCE_LOG.md#collector). Frozen objects are module
state that lives as long as the process; they are still freed as usual when nothing refers to them.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator


class _Pauses:
    """How many loads hold the collector paused. The collector belongs to the whole process, so this
    count does too (not to a session)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.loads = 0
        self.resume = False


_PAUSES = _Pauses()


@contextlib.contextmanager
def collection_paused() -> Iterator[None]:
    """No automatic collection until the block (and any other paused block running meanwhile) ends; then
    what is alive is frozen and the collector resumes as it was."""
    pauses = _PAUSES
    with pauses.lock:
        if pauses.loads == 0:
            pauses.resume = gc.isenabled()
            gc.disable()
        pauses.loads += 1
    try:
        yield
    finally:
        with pauses.lock:
            pauses.loads -= 1
            if pauses.loads == 0:
                gc.freeze()
                if pauses.resume:
                    gc.enable()
