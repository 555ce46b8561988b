"""Building the demo knowledge base behind a progress dialog the user can cancel.

The build itself is the core's (:func:`recall_gui.core.demo.build_demo`): it runs on a worker thread and
reports progress from there; progress is handed to the GUI thread through the event loop, and Cancel sets
the event the build checks between batches. A cancelled build leaves nothing behind.
"""

from __future__ import annotations

import asyncio
import functools
import threading
from concurrent.futures import Executor
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QProgressDialog, QWidget

DEMO_TITLE = "Building the demo knowledge base"
DEMO_TEXT = (
    "No knowledge base is registered yet, so recall-gui is building a demo from Python's own help topics,\n"
    "embedded on this computer with the packaged all-MiniLM-L6-v2 model. This happens once.\n\n"
    "Embedded {done:,} of {total:,} passages"
)


class DemoBuild:
    """One build: :meth:`run` shows the dialog, builds, and returns the database folder; raises
    :class:`~recall_gui.core.errors.DemoBuildCancelled` when the user cancels."""

    def __init__(self, parent: QWidget | None, registry_dir: Path, chores: Executor) -> None:
        self.registry_dir = registry_dir
        #: Where the build runs (a plain worker thread of the window).
        self.chores = chores
        self.cancel_event = threading.Event()
        self.dialog = QProgressDialog(parent)
        self.dialog.setObjectName("demoDialog")
        self.dialog.setWindowTitle(DEMO_TITLE)
        self.dialog.setLabelText(DEMO_TEXT.format(done=0, total=0).rsplit("\n", 1)[0] + "\nPreparing…")
        self.dialog.setCancelButtonText("Cancel")
        self.dialog.setWindowModality(Qt.WindowModality.WindowModal)
        self.dialog.setMinimumDuration(0)
        self.dialog.setAutoClose(False)
        self.dialog.setAutoReset(False)
        self.dialog.setRange(0, 0)
        self.dialog.setMinimumWidth(520)
        self.dialog.canceled.connect(self.cancel)
        self._closed = False

    def cancel(self) -> None:
        self.cancel_event.set()
        if not self._closed:
            self.dialog.setLabelText("Cancelling…")

    def _progress(self, done: int, total: int) -> None:
        if self._closed or self.cancel_event.is_set():
            return
        self.dialog.setRange(0, total)
        self.dialog.setValue(done)
        self.dialog.setLabelText(DEMO_TEXT.format(done=done, total=total))

    async def run(self) -> Path:
        from recall_gui.core.demo import build_demo

        loop = asyncio.get_running_loop()

        def progress(done: int, total: int) -> None:  # called on the worker thread
            loop.call_soon_threadsafe(self._progress, done, total)

        self.dialog.show()
        try:
            build = functools.partial(
                build_demo, self.registry_dir, progress=progress, cancel=self.cancel_event
            )
            return await loop.run_in_executor(self.chores, build)
        finally:
            self._closed = True
            self.dialog.close()
            self.dialog.deleteLater()
