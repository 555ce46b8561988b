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

A window holds automatic collection off while it is open (:func:`hold_automatic_collection`) and collects
on its own thread instead: a pass that runs on a worker thread would delete the Qt objects of the cycles it
frees there, and Qt crashes when a widget is deleted off its thread.
"""

from __future__ import annotations

import contextlib
import gc
import sys
import threading
from collections.abc import Iterator


class _Pauses:
    """How many loads, and how many holders (an open window), keep automatic collection off. The collector
    belongs to the whole process, so these counts do too (not to a session)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.loads = 0
        self.holders = 0
        #: Whether automatic collection was on when the first load or holder turned it off.
        self.resume = False
        #: How many modules were loaded when the first of the running loads began.
        self.modules = 0

    def turn_off(self) -> None:
        """Before a load or a holder is counted (the lock held)."""
        if self.loads == 0 and self.holders == 0:
            self.resume = gc.isenabled()
            gc.disable()

    def turn_back(self) -> None:
        """After a load or a holder has ended (the lock held)."""
        if self.loads == 0 and self.holders == 0 and self.resume:
            gc.enable()


_PAUSES = _Pauses()


@contextlib.contextmanager
def collection_paused() -> Iterator[None]:
    """No automatic collection until the block (and any other paused block running meanwhile) ends; then
    the collector resumes as it was, after freezing what is alive if the blocks imported modules."""
    pauses = _PAUSES
    with pauses.lock:
        if pauses.loads == 0:
            pauses.modules = len(sys.modules)
        pauses.turn_off()
        pauses.loads += 1
    try:
        yield
    finally:
        with pauses.lock:
            pauses.loads -= 1
            if pauses.loads == 0 and len(sys.modules) > pauses.modules:
                gc.freeze()
            pauses.turn_back()


def hold_automatic_collection() -> None:
    """No automatic collection pass, on any thread, until :func:`release_automatic_collection` is called
    as many times: the holder collects (``gc.collect``) on its own thread meanwhile."""
    with _PAUSES.lock:
        _PAUSES.turn_off()
        _PAUSES.holders += 1


def release_automatic_collection() -> None:
    """End one :func:`hold_automatic_collection`."""
    with _PAUSES.lock:
        if _PAUSES.holders == 0:
            raise RuntimeError("automatic collection released more often than held")
        _PAUSES.holders -= 1
        _PAUSES.turn_back()
