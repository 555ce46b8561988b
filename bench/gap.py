"""How long the GUI thread goes without serving a 10 ms timer: the worst delay a key press could see.

Each phase also says what its longest gap was made of (Linux): how long the GUI thread ran, how long it
was ready but waited for a CPU, and how much CPU time the hypervisor took from this virtual machine
meanwhile. On a 2-vCPU guest those are different problems: the first is the app's own work, the second
other threads (the app's or not) holding both CPUs, the third a host that did not run the guest at all.
Reading those counters costs the GUI thread about 40 us per tick (0.4% of its time).

To find out what a stall was, set ``BENCH_GAP_DUMP=FILE`` (and optionally ``BENCH_GAP_DUMP_MS``, default
30): whenever the timer is that late, every thread's Python stack is written to FILE by faulthandler's
watchdog, which needs no GIL, so it also catches a thread that holds the GIL in C code.
"""

from __future__ import annotations

import faulthandler
import os
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

TICK_MS = 10


@dataclass(frozen=True)
class Sample:
    """What the clocks said at one tick: wall time, and (Linux) the GUI thread's scheduler counters and
    each CPU's steal, all in ms; ``None`` where the system does not tell."""

    wall_ms: float
    thread: tuple[float, float] | None  # (time on a CPU, time ready but waiting for one)
    steal: tuple[float, ...] | None  # per CPU

    @staticmethod
    def now() -> Sample:
        return Sample(time.perf_counter() * 1000, thread_sched_ms(), steal_per_cpu_ms())


@dataclass(frozen=True)
class GapParts:
    """One gap and what it was made of (ms). Roughly the rest of ``gap_ms`` the GUI thread slept:
    waiting for the timer itself, the X server, or a lock (Python's included)."""

    gap_ms: float
    gui_cpu_ms: float | None
    cpu_wait_ms: float | None
    #: The most the hypervisor took from any one vCPU during the gap (10 ms resolution): an upper bound
    #: of what it took from the GUI thread's.
    host_steal_ms: float | None

    @staticmethod
    def between(before: Sample, after: Sample) -> GapParts:
        cpu = wait = steal = None
        if before.thread is not None and after.thread is not None:
            cpu = after.thread[0] - before.thread[0]
            wait = after.thread[1] - before.thread[1]
        if before.steal is not None and after.steal is not None and len(before.steal) == len(after.steal):
            steal = max((b - a for a, b in zip(before.steal, after.steal, strict=True)), default=0.0)
        return GapParts(after.wall_ms - before.wall_ms, cpu, wait, steal)

    def to_json(self) -> dict[str, float | None]:
        return {
            name: None if value is None else round(value, 1)
            for name, value in (
                ("gap_ms", self.gap_ms),
                ("gui_cpu_ms", self.gui_cpu_ms),
                ("cpu_wait_ms", self.cpu_wait_ms),
                ("host_steal_ms", self.host_steal_ms),
            )
        }


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
        self.last = Sample.now()
        self.max_gap_ms = 0.0
        #: The longest gap of the last measurement, and what it was made of.
        self.longest: GapParts | None = None
        dump = os.environ.get("BENCH_GAP_DUMP")
        self._dump = open(dump, "a", encoding="utf-8") if dump else None  # noqa: SIM115 - lives with the meter
        self._dump_after_s = float(os.environ.get("BENCH_GAP_DUMP_MS", "30")) / 1000
        #: Of the last measurement: gaps longer than 50 ms, and the CPU time the host took from this
        #: virtual machine meanwhile ("steal", ms; ``None`` where unknown). Neither changes the metric,
        #: both help read it: one stolen slice of 40 ms shows as a 50 ms gap whatever the app does.
        self.gaps_over_50_ms = 0
        self._first = self.last
        self.steal_ms: float | None = None

    def _tick(self) -> None:
        now = Sample.now()
        gap = now.wall_ms - self.last.wall_ms
        if gap > self.max_gap_ms:
            self.max_gap_ms = gap
            self.longest = GapParts.between(self.last, now)
        self.gaps_over_50_ms += gap > 50
        self.last = now
        if self._dump is not None and self.timer.isActive():
            faulthandler.dump_traceback_later(self._dump_after_s, file=self._dump)

    def start(self) -> None:
        self.max_gap_ms, self.last, self.longest = 0.0, Sample.now(), None
        self.gaps_over_50_ms = 0
        self._first = self.last
        self.timer.start()

    def stop(self) -> float:
        """Stop ticking; the longest gap (ms) since :meth:`start`, counting the one up to now."""
        self.timer.stop()
        self._tick()
        before, after = self._first.steal, self.last.steal
        self.steal_ms = None if before is None or after is None else sum(after) - sum(before)
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


def thread_sched_ms() -> tuple[float, float] | None:
    """The calling thread's time on a CPU and time ready but waiting for one, since it started (ms);
    from ``/proc/thread-self/schedstat`` (Linux with scheduler statistics)."""
    try:
        with open("/proc/thread-self/schedstat", encoding="ascii") as stat:
            return parse_schedstat(stat.read())
    except OSError:
        return None


def parse_schedstat(text: str) -> tuple[float, float] | None:
    fields = text.split()
    try:
        return int(fields[0]) / 1e6, int(fields[1]) / 1e6
    except (IndexError, ValueError):
        return None


def steal_per_cpu_ms() -> tuple[float, ...] | None:
    """Steal time of each CPU since boot (ms), from ``/proc/stat``."""
    try:
        with open("/proc/stat", encoding="ascii") as stat:
            return parse_steal_per_cpu(stat.read(), os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError):
        return None


def parse_steal_per_cpu(text: str, ticks_per_s: int) -> tuple[float, ...] | None:
    """The ``cpuN`` lines' eighth value (steal, in clock ticks) as ms; ``None`` if there are none."""
    found = []
    for line in text.splitlines():
        fields = line.split()
        if fields and fields[0].startswith("cpu") and fields[0] != "cpu" and len(fields) > 8:
            try:
                found.append(int(fields[8]) * 1000 / ticks_per_s)
            except ValueError:
                return None
    return tuple(found) or None
