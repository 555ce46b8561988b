"""The bar that says the table shown is an older version, read-only, with one click back to the latest."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QPushButton, QWidget

from recall_gui.qt.panels.status_note import StatusNote

if TYPE_CHECKING:
    from recall_gui.core.tables import TableVersion


def pinned_text(name: str, version: TableVersion | None, number: int, latest: int | None) -> str:
    """What the bar says about version ``number`` of ``name``."""
    when = f" of {version.time_text}" if version is not None else ""
    rows = f", {version.rows:,} rows" if version is not None and version.rows is not None else ""
    newest = f" (the latest is version {latest})" if latest is not None else ""
    return (
        f"Version {number} of {name}{when}{rows}: an older version, read-only — not the latest{newest}. "
        "Browsing, searching, the entry and exports show this version."
    )


class VersionBar(QWidget):
    """``versionNote`` and ``latestButton``; hidden while the latest version is shown."""

    latestRequested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("versionBar")
        self.note = StatusNote("versionNote")
        self.latest_button = QPushButton("Back to the latest")
        self.latest_button.setObjectName("latestButton")
        self.latest_button.setToolTip("Show the table as it is now")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.note, 1)
        layout.addWidget(self.latest_button)
        self.latest_button.clicked.connect(self.latestRequested)
        self.hide()

    def show_pinned(self, text: str) -> None:
        self.note.show_note(text, "warning")
        self.show()

    def show_latest(self) -> None:
        self.hide()
