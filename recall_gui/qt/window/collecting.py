"""Python's garbage collector runs on the window's thread while the window is open.

An automatic collection pass runs on whichever thread happens to allocate; where it frees a reference
cycle holding Qt objects (a closed dialog, a page's model), it deletes them on that thread, and Qt crashes
when a widget is deleted off its own thread. So the window holds automatic collection off while it is open
and runs the same passes from a timer on its own thread, a generation when its count passes the
collector's threshold, as automatic collection would.
"""

from __future__ import annotations

import gc

from PySide6.QtCore import QObject, QTimer

from recall_gui.core.base import hold_automatic_collection, release_automatic_collection

#: How often the counts are looked at.
INTERVAL_MS = 1000


class WindowCollector(QObject):
    """Collection on the window's thread from :meth:`start` to :meth:`stop` (both may be called again)."""

    def __init__(self, parent: QObject) -> None:
        super().__init__(parent)
        self._timer = QTimer(self)
        self._timer.setInterval(INTERVAL_MS)
        self._timer.timeout.connect(self.collect_due)
        self._holding = False

    @property
    def holding(self) -> bool:
        return self._holding

    def start(self) -> None:
        if not self._holding:
            hold_automatic_collection()
            self._holding = True
            self._timer.start()

    def stop(self) -> None:
        if self._holding:
            self._timer.stop()
            self._holding = False
            release_automatic_collection()

    def collect_due(self) -> int:
        """The passes automatic collection would have run by now; how many objects they freed."""
        thresholds, counts = gc.get_threshold(), gc.get_count()
        due = [generation for generation in range(3) if counts[generation] > thresholds[generation]]
        return gc.collect(max(due)) if due else 0
