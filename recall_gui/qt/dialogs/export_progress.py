"""The progress of a whole-table export, with Cancel.

The export is the core's (:func:`recall_gui.core.tables.table_export.export_table`), run as a task of the
window;
this dialog shows how many rows are written and cancels that task when the user asks. A cancelled export
leaves no file.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QProgressDialog, QWidget

#: An export that ends sooner shows no dialog at all.
SHOW_AFTER_MS = 400


class ExportProgress:
    """One export's dialog; :meth:`update` is the export's progress callback."""

    def __init__(self, parent: QWidget, path: Path, task: asyncio.Task[Any] | None) -> None:
        self.path = path
        self.dialog = QProgressDialog(parent)
        self.dialog.setObjectName("exportDialog")
        self.dialog.setWindowTitle("Exporting")
        self.dialog.setLabelText(f"Writing {path.name}…")
        self.dialog.setCancelButtonText("Cancel")
        self.dialog.setWindowModality(Qt.WindowModality.WindowModal)
        self.dialog.setMinimumDuration(SHOW_AFTER_MS)
        self.dialog.setAutoClose(False)
        self.dialog.setAutoReset(False)
        self.dialog.setMinimumWidth(420)
        self.dialog.setRange(0, 0)
        self.dialog.setValue(0)  # starts the timer that shows the dialog if the export takes a while
        self._task = task
        self._closed = False
        self.dialog.canceled.connect(self._on_cancel)

    def _on_cancel(self) -> None:
        if not self._closed and self._task is not None:  # closing the dialog says "canceled" too
            self._task.cancel()

    def update(self, done: int, total: int) -> None:
        if self._closed:
            return
        self.dialog.setRange(0, total)
        self.dialog.setValue(done)
        self.dialog.setLabelText(f"Writing {self.path.name}: {done:,} of {total:,} rows")

    def close(self) -> None:
        self._closed = True
        self.dialog.close()
        self.dialog.deleteLater()
