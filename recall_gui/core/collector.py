"""Keeping Python's garbage collector out of the way while libraries and models load.

Loading LanceDB, PyArrow or a fastembed model makes hundreds of thousands of objects that all live as long
as the process. The collector, counting those allocations, runs full passes in the middle of the load:
passes that find nothing to free, yet hold Python's lock for tens of milliseconds each, so every other
thread (the window's included) stands still meanwhile. Loads run with the collector paused.

When the last load ends, what is alive is frozen (``gc.freeze``) before the collector resumes: without
that, its first pass would traverse everything the load made, and so would every full pass after it, on
whichever thread allocates (docs/PERFORMANCE.md#collector). Frozen objects are module
state that lives as long as the process; they are still freed as usual when nothing refers to them.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

_lock = threading.Lock()
_loads = 0
_resume = False


@contextlib.contextmanager
def collection_paused() -> Iterator[None]:
    """No automatic collection until the block (and any other paused block running meanwhile) ends; then
    what is alive is frozen and the collector resumes as it was."""
    global _loads, _resume
    with _lock:
        if _loads == 0:
            _resume = gc.isenabled()
            gc.disable()
        _loads += 1
    try:
        yield
    finally:
        with _lock:
            _loads -= 1
            if _loads == 0:
                gc.freeze()
                if _resume:
                    gc.enable()
