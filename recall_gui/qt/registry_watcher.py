"""Noticing that another program (cosh, an editor) rewrote the registry while the window is open.

A file watcher says *something* happened in the registry directory; whether the registry really changed is
decided by the snapshot's file stamps (:meth:`Registry.changed_on_disk`), so the window's own writes and
editors' temporary files do not count. Atomic saves replace the file (a new inode), which many watchers
lose track of, so the directory itself is watched and the files are re-added after every change.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QFileSystemWatcher, QObject, QTimer, Signal

from recall_gui.core.base import ACTIVE_FILE, DBS_FILE

SETTLE_MS = 200


class RegistryWatcher(QObject):
    """Emits :attr:`touched` (once per burst of file events) when the registry directory changes."""

    touched = Signal()

    def __init__(self, directory: Path, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.directory = directory
        self._watcher = QFileSystemWatcher(self)
        self._settle = QTimer(self)
        self._settle.setSingleShot(True)
        self._settle.setInterval(SETTLE_MS)
        self._settle.timeout.connect(self._on_settled)
        self._watcher.directoryChanged.connect(self._on_event)
        self._watcher.fileChanged.connect(self._on_event)
        self.rewatch()

    def rewatch(self) -> None:
        paths = [self.directory, self.directory / DBS_FILE, self.directory / ACTIVE_FILE]
        wanted = [str(p) for p in paths if p.exists()]
        watched = set(self._watcher.files()) | set(self._watcher.directories())
        missing = [p for p in wanted if p not in watched]
        if missing:
            self._watcher.addPaths(missing)

    def _on_event(self, _path: str) -> None:
        self._settle.start()

    def _on_settled(self) -> None:
        self.rewatch()
        self.touched.emit()
