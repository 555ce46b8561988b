"""Handing the heap's free memory back to the system after a big job (glibc's ``malloc_trim``).

NumPy's arrays of a few megabytes come from the C heap, and glibc keeps freed heap pages for the next
allocation: after the map of a million rows is laid out (a few hundred megabytes of short-lived arrays on
three threads, each with a heap of its own), the window would go on holding them. Where the C library is
not glibc, this does nothing.
"""

from __future__ import annotations

import ctypes
import functools
import sys


@functools.cache
def _malloc_trim() -> object | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        # The process's own symbols, libc's among them: ctypes.util.find_library would run ldconfig.
        return ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):  # not glibc (musl has no malloc_trim)
        return None


def release_free_memory() -> None:
    """Return the C heap's free pages to the system (every thread's heap), where glibc allows it."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)  # type: ignore[operator]
