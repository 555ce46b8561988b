"""LanceDB's threads yield the CPU to the app's own threads, so its reading never stalls the window.

LanceDB reads and scans on a pool of tokio threads, one per pending read once a big table is read (a dozen
or more). On a 2-core machine, the first search of a 1M-row table (LanceDB's flat scan) together with the
background read of its vectors keeps all of them runnable at once, and the GUI thread can get no CPU at
all for tens of milliseconds: a key press waits that long (docs/PERFORMANCE_LOG.md#lance_priority).

Linux gives every thread its own nice value, and a new thread inherits its creator's. LanceDB starts its
runtime lazily, on the first thread that calls it; starting it from a short-lived thread whose nice value
was raised makes every thread the runtime ever starts (its workers, and the readers they start) run at the
lower priority. They still get every idle cycle, so a search on an idle machine is as fast as before; when
the CPU is contended, the GUI thread and the app's own workers (embedding, ranking) go first. Where
the kernel groups a session's or a desktop app's processes for scheduling (autogroup, systemd scopes:
the usual desktop set-up), nice values only order threads within the group, so other programs do not
starve LanceDB's threads either.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import threading

#: How much lower than the app's threads LanceDB's threads run (nice values: 0 normal, 19 lowest).
LANCE_NICE_INCREMENT = 10

#: LanceDB's runtime is one per process, so whether it was started here is too.
_started = threading.Event()
_lock = threading.Lock()


def start_lance_runtime_at_low_priority(increment: int = LANCE_NICE_INCREMENT) -> None:
    """Start LanceDB's runtime from a thread ``increment`` nice levels below the caller; once per process.

    Must run before anything else calls LanceDB (later, the runtime exists already and this changes
    nothing). Only on Linux: elsewhere a nice value belongs to the whole process, the window's thread
    included. A system that refuses the change leaves LanceDB at normal priority.
    """
    with _lock:
        if _started.is_set() or not sys.platform.startswith("linux"):
            return
        _started.set()
    starter = threading.Thread(target=_start_runtime, args=(increment,), name="recall-lance-start")
    starter.start()
    starter.join()


def _start_runtime(increment: int) -> None:
    thread = threading.get_native_id()
    try:
        current = os.getpriority(os.PRIO_PROCESS, thread)
        os.setpriority(os.PRIO_PROCESS, thread, min(19, current + increment))
    except OSError:
        return
    asyncio.run(_connect_once())


async def _connect_once() -> None:
    """Connecting builds LanceDB's runtime (its worker threads start here); the empty folder is never
    written to."""
    import lancedb

    with tempfile.TemporaryDirectory(prefix="recall-gui-lance-") as folder:
        await lancedb.connect_async(folder)
