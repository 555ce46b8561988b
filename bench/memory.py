"""Peak resident memory over a stretch of work, above where it began: what the work needs free.

The difference of two readings of the resident size is no such figure: memory an earlier step freed
meanwhile makes it small or negative (``browse_1m_rss_mb`` once read -95 MB). The peak is read from the
kernel's high-water mark (``VmHWM``), set back to the current size when the stretch begins (``clear_refs``,
Linux 4.0 and later); elsewhere a thread samples the resident size every 10 ms. Either way the growth is
the peak's rise above the start: never negative.
"""

from __future__ import annotations

import contextlib
import threading
from pathlib import Path

import psutil

STATUS = Path("/proc/self/status")
CLEAR_REFS = Path("/proc/self/clear_refs")
MB = 2**20


def _high_water_mb() -> float | None:
    with contextlib.suppress(OSError):
        for line in STATUS.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024 / MB
    return None


def _reset_high_water() -> bool:
    try:
        CLEAR_REFS.write_text("5")
    except OSError:
        return False
    return True


def resident_mb() -> float:
    return float(psutil.Process().memory_info().rss) / MB


class PeakGrowth:
    """Started at the beginning of a stretch of work; :meth:`mb` is how far the peak rose above it."""

    def __init__(self) -> None:
        self._sampler: threading.Thread | None = None
        self._stop = threading.Event()
        self._lock = threading.Lock()
        start = _high_water_mb() if _reset_high_water() else None
        if start is not None:
            self.start_mb, self._peak_mb = start, None
        else:
            self.start_mb = resident_mb()
            self._peak_mb = self.start_mb
            self._sampler = threading.Thread(target=self._sample, name="bench-memory", daemon=True)
            self._sampler.start()

    def _sample(self) -> None:
        while not self._stop.wait(0.01):
            self._note(resident_mb())

    def _note(self, mb: float) -> float:
        """Keep ``mb`` if it is the highest seen (by the sampler or by a caller); the peak so far."""
        with self._lock:
            self._peak_mb = max(self._peak_mb or 0.0, mb)
            return self._peak_mb

    def peak_mb(self) -> float:
        if self._sampler is None:
            return max(self.start_mb, _high_water_mb() or self.start_mb)
        return max(self.start_mb, self._note(resident_mb()))

    def mb(self) -> float:
        """The peak's rise above the start so far (MB); never negative."""
        return self.peak_mb() - self.start_mb

    def stop(self) -> float:
        growth = self.mb()
        self._stop.set()
        return growth
