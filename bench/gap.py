"""How long the GUI thread goes without serving a 10 ms timer: the worst delay a key press could see."""

from __future__ import annotations

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

    def _tick(self) -> None:
        now = time.perf_counter()
        self.max_gap_ms = max(self.max_gap_ms, (now - self.last) * 1000)
        self.last = now

    def start(self) -> None:
        self.max_gap_ms, self.last = 0.0, time.perf_counter()
        self.timer.start()

    def stop(self) -> float:
        """Stop ticking; the longest gap (ms) since :meth:`start`, counting the one up to now."""
        self._tick()
        self.timer.stop()
        return self.max_gap_ms

    async def measure(self, step: Callable[[], Awaitable[Any]]) -> tuple[float, float]:
        """``(duration_ms, max_gap_ms)`` of ``step``."""
        self.start()
        started = time.perf_counter()
        await step()
        duration = (time.perf_counter() - started) * 1000
        return duration, self.stop()
