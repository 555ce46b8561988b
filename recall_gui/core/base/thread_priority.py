"""Run a background thread below the app's others: it still gets every idle cycle, but the window's
thread and searches go first when the CPU is busy."""

from __future__ import annotations

import contextlib
import os
import sys
import threading


def lower_this_thread(increment: int) -> None:
    """Raise the calling thread's nice value by ``increment`` (at most 19). Only on Linux, which gives each
    thread its own (elsewhere it belongs to the whole process, the window's thread included); a system that
    refuses leaves it as it is."""
    if not sys.platform.startswith("linux"):
        return
    thread = threading.get_native_id()
    with contextlib.suppress(OSError):
        now = os.getpriority(os.PRIO_PROCESS, thread)
        os.setpriority(os.PRIO_PROCESS, thread, min(19, now + increment))
