"""How long ago the OS created this process: the clock the start-up figures are read on.

psutil's ``Process.create_time()`` adds the process's start (in clock ticks since boot) to the boot time
that ``/proc/stat`` gives in whole seconds, so a process's age read from it is too long by the fraction of
a second the boot time lost: anywhere from 0 to 1 s, fixed for one boot of one machine
(docs/PERFORMANCE_LOG.md#a-registry-of-50000-databases). On Linux the age is read on the clock that start is
counted on, ``CLOCK_BOOTTIME`` (to the tick, 10 ms); elsewhere psutil's reading is the best there is.
"""

from __future__ import annotations

import os
import sys
import time


def process_age_s() -> float:
    """Seconds since this process was created."""
    if sys.platform.startswith("linux"):
        with open("/proc/self/stat", encoding="ascii") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        started_ticks = int(fields[19])  # field 22 of stat(5): the start, in clock ticks since boot
        return time.clock_gettime(time.CLOCK_BOOTTIME) - started_ticks / os.sysconf("SC_CLK_TCK")
    import psutil

    return time.time() - psutil.Process().create_time()
