"""Setting up the demo knowledge base behind a progress dialog the user can cancel.

The work itself is the core's (:func:`recall_gui.core.demo.install_demo`: the prebuilt demo shipped with
the package, written as a LanceDB table in a second or two): it runs on a worker thread and reports
progress from there; progress is handed to the GUI thread through the event loop, and Cancel sets the
event the work checks. A cancelled set-up leaves nothing behind. The dialog shows only when the work
takes longer than :data:`SHOW_AFTER_MS`.
"""

from __future__ import annotations

import asyncio
import functools
import threading
from concurrent.futures import Executor
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QProgressDialog, QWidget

from recall_gui import core

DEMO_TITLE = "Setting up the demo knowledge base"
DEMO_TEXT = (
    "No knowledge base is registered yet, so recall-gui is setting up a demo: Python's own help topics,\n"
    "embedded with the packaged all-MiniLM-L6-v2 model. This happens once.\n\n"
    "Written {done:,} of {total:,} passages"
)
#: A set-up that ends sooner (the usual case) shows no dialog at all.
SHOW_AFTER_MS = 700


class DemoBuild:
    """One set-up: :meth:`run` writes the demo (showing the dialog if it takes a while) and returns the
    database folder; raises :class:`~recall_gui.core.base.errors.DemoBuildCancelled` when the user cancels."""

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
        self.dialog.setMinimumDuration(SHOW_AFTER_MS)
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
        loop = asyncio.get_running_loop()

        def progress(done: int, total: int) -> None:  # called on the worker thread
            loop.call_soon_threadsafe(self._progress, done, total)

        try:
            build = functools.partial(
                core.demo.install_demo, self.registry_dir, progress=progress, cancel=self.cancel_event
            )
            return await loop.run_in_executor(self.chores, build)
        finally:
            self._closed = True
            self.dialog.close()
            self.dialog.deleteLater()
