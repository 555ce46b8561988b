"""The *Documents* tab: the last search's results by document — each document's best rank and its share
of the results — so a user sees when one document fills the agent's places."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget

if TYPE_CHECKING:
    from recall_gui.core.search import DocumentLayout, DocumentShare

_RIGHT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter


class DocumentsPanel(QWidget):
    """``documentsNote`` and ``documentsTable`` (document, best rank, results and their share)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.note = QLabel("Search to see the results by document.")
        self.note.setObjectName("documentsNote")
        self.note.setWordWrap(True)
        self.table = QTableWidget(0, 3)
        self.table.setObjectName("documentsTable")
        self.table.setHorizontalHeaderLabels(["Document", "Best rank", "Results"])
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.horizontalHeader().setStretchLastSection(False)
        self.table.horizontalHeader().setSectionResizeMode(
            0, self.table.horizontalHeader().ResizeMode.Stretch
        )
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 6, 4, 4)
        layout.addWidget(self.note)
        layout.addWidget(self.table, 1)

    def show_documents(self, shares: Sequence[DocumentShare], layout: DocumentLayout, results: int) -> None:
        self.note.setText(
            f"{results} results from {len(shares)} document{'s' if len(shares) != 1 else ''} "
            f"({layout.describe()})."
        )
        self.table.setRowCount(len(shares))
        for row, share in enumerate(shares):
            cells = (share.key, str(share.best_rank), f"{share.results} ({share.share:.0%})")
            for column, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if column:
                    item.setTextAlignment(_RIGHT)
                self.table.setItem(row, column, item)
