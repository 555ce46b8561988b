"""Keeping Python's garbage collector out of the way while libraries and models load.

Loading LanceDB, PyArrow or a fastembed model makes hundreds of thousands of objects that all live as long
as the process. The collector, counting those allocations, runs full passes in the middle of the load:
passes that find nothing to free, yet hold Python's lock for tens of milliseconds each, so every other
thread (the window's included) stands still meanwhile. Loads run with the collector paused.

When the last load ends after modules were imported, what is alive is frozen (``gc.freeze``) before the
collector resumes: without that, its first pass would traverse all the module state the imports made, and
so would every full pass after it, on whichever thread allocates (docs/PERFORMANCE_LOG.md#collector).
Only then: a frozen object in a reference cycle is never freed, so freezing after every load kept each
table, registry snapshot and window that was alive at one of them for as long as the process ran.
"""

from __future__ import annotations

import contextlib
import gc
import sys
import threading
from collections.abc import Iterator


class _Pauses:
    """How many loads hold the collector paused. The collector belongs to the whole process, so this
    count does too (not to a session)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.loads = 0
        self.resume = False
        #: How many modules were loaded when the first of the running loads began.
        self.modules = 0


_PAUSES = _Pauses()


@contextlib.contextmanager
def collection_paused() -> Iterator[None]:
    """No automatic collection until the block (and any other paused block running meanwhile) ends; then
    the collector resumes as it was, after freezing what is alive if the blocks imported modules."""
    pauses = _PAUSES
    with pauses.lock:
        if pauses.loads == 0:
            pauses.resume = gc.isenabled()
            pauses.modules = len(sys.modules)
            gc.disable()
        pauses.loads += 1
    try:
        yield
    finally:
        with pauses.lock:
            pauses.loads -= 1
            if pauses.loads == 0:
                if len(sys.modules) > pauses.modules:
                    gc.freeze()
                if pauses.resume:
                    gc.enable()
