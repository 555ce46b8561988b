"""How long the GUI thread goes without serving a 10 ms timer: the worst delay a key press could see.

To find out what a stall was, set ``BENCH_GAP_DUMP=FILE`` (and optionally ``BENCH_GAP_DUMP_MS``, default
30): whenever the timer is that late, every thread's Python stack is written to FILE by faulthandler's
watchdog, which needs no GIL, so it also catches a thread that holds the GIL in C code.
"""

from __future__ import annotations

import faulthandler
import os
import time
from collections.abc import Awaitable, Callable
from typing import Any

TICK_MS = 10


class GapMeter:
    """The longest interval between two ticks of a 10 ms ``QTimer`` on the GUI thread while a step runs.

    A tick is late when the thread is busy (Python holding the GIL, Qt laying out or painting); the
    longest interval is how long a key typed meanwhile would have waited to be handled.
    """

    def __init__(self) -> None:
        from PySide6.QtCore import QTimer

        self.timer = QTimer()
        self.timer.setInterval(TICK_MS)
        self.timer.timeout.connect(self._tick)
        self.last = 0.0
        self.max_gap_ms = 0.0
        dump = os.environ.get("BENCH_GAP_DUMP")
        self._dump = open(dump, "a", encoding="utf-8") if dump else None  # noqa: SIM115 - lives with the meter
        self._dump_after_s = float(os.environ.get("BENCH_GAP_DUMP_MS", "30")) / 1000
        #: Of the last measurement: gaps longer than 50 ms, and the CPU time the host took from this
        #: virtual machine meanwhile ("steal", ms; ``None`` where unknown). Neither changes the metric,
        #: both help read it: one stolen slice of 40 ms shows as a 50 ms gap whatever the app does.
        self.gaps_over_50_ms = 0
        self._steal_at_start: float | None = None
        self.steal_ms: float | None = None

    def _tick(self) -> None:
        now = time.perf_counter()
        gap = (now - self.last) * 1000
        self.max_gap_ms = max(self.max_gap_ms, gap)
        self.gaps_over_50_ms += gap > 50
        self.last = now
        if self._dump is not None and self.timer.isActive():
            faulthandler.dump_traceback_later(self._dump_after_s, file=self._dump)

    def start(self) -> None:
        self.max_gap_ms, self.last = 0.0, time.perf_counter()
        self.gaps_over_50_ms = 0
        self._steal_at_start = host_steal_ms()
        self.timer.start()

    def stop(self) -> float:
        """Stop ticking; the longest gap (ms) since :meth:`start`, counting the one up to now."""
        self.timer.stop()
        self._tick()
        steal = host_steal_ms()
        self.steal_ms = (
            None if steal is None or self._steal_at_start is None else steal - self._steal_at_start
        )
        if self._dump is not None:
            faulthandler.cancel_dump_traceback_later()
        return self.max_gap_ms

    async def measure(self, step: Callable[[], Awaitable[Any]]) -> tuple[float, float]:
        """``(duration_ms, max_gap_ms)`` of ``step``."""
        self.start()
        started = time.perf_counter()
        await step()
        duration = (time.perf_counter() - started) * 1000
        return duration, self.stop()


def host_steal_ms() -> float | None:
    """CPU time the hypervisor has taken from this machine since boot, summed over CPUs (ms); Linux."""
    try:
        with open("/proc/stat", encoding="ascii") as stat:
            fields = stat.readline().split()
        return float(fields[8]) * 1000 / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None
