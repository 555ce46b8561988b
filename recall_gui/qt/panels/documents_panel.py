"""The *Documents* tab: the last search's results by document — each document's best rank and its share
of the results — so a user sees when one document fills the agent's places. Two boxes show how chunks were
found to make documents (the column naming a chunk's document, the one ordering its chunks) and let the
user choose others when the detection is wrong."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QLabel,
    QSizePolicy,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from recall_gui.core.messages import sentence

if TYPE_CHECKING:
    from recall_gui.core.search import DocumentShare, LayoutChoices

_RIGHT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter


#: The boxes' entries for "no column": what the document or the order is then taken from.
BY_ID_PREFIX = "the id's prefix"
BY_ID_NUMBER = "the number in the id"


class DocumentsPanel(QWidget):
    """``documentColumn`` and ``positionColumn`` (how chunks make documents), ``documentsNote`` and
    ``documentsTable`` (document, best rank, results and their share)."""

    #: The user chose another document or position column: ``(document_column, position_column)``, each
    #: ``None`` for the id's part.
    columnsChosen = Signal(object, object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.document_box = self._column_box("documentColumn", "The column that names a chunk's document")
        self.position_box = self._column_box("positionColumn", "The column that orders a document's chunks")
        columns = QFormLayout()  # a row each: a narrow tab still shows whole column names
        columns.setContentsMargins(0, 0, 0, 0)
        columns.addRow("Document:", self.document_box)
        columns.addRow("Order by:", self.position_box)
        self.note = QLabel("Search to see the results by document.")
        self.note.setObjectName("documentsNote")
        self.note.setTextFormat(Qt.TextFormat.PlainText)  # it names the table's columns
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
        layout.addLayout(columns)
        layout.addWidget(self.note)
        layout.addWidget(self.table, 1)

    def _column_box(self, name: str, tip: str) -> QComboBox:
        box = QComboBox()
        box.setObjectName(name)
        box.setToolTip(tip)
        box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        box.setMinimumContentsLength(10)
        box.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        box.activated.connect(self._on_chosen)
        return box

    def show_columns(self, choices: LayoutChoices) -> None:
        """Offer the table's columns (and the id's part) in both boxes, the detected ones marked, the ones
        used chosen."""
        detected, used = choices.detected, choices.used
        for box, none_text, found, shown in (
            (self.document_box, BY_ID_PREFIX, detected.document_column, used.document_column),
            (self.position_box, BY_ID_NUMBER, detected.position_column, used.position_column),
        ):
            box.blockSignals(True)
            box.clear()
            for value in (None, *choices.columns):
                text = none_text if value is None else value
                box.addItem(f"{text} (detected)" if value == found else text, value)
            box.setCurrentIndex(max(box.findData(shown), 0) if shown is not None else 0)
            box.blockSignals(False)

    def clear(self, note: str = "Search to see the results by document.") -> None:
        """No table's columns (another one is being opened) and no results."""
        for box in (self.document_box, self.position_box):
            box.clear()
        self.note.setText(note)
        self.table.setRowCount(0)

    def show_no_results(self, note: str) -> None:
        """No search's results to tell by document; the table's columns stay in the boxes."""
        self.note.setText(note)
        self.table.setRowCount(0)

    def _on_chosen(self, _index: int) -> None:
        self.columnsChosen.emit(self.document_box.currentData(), self.position_box.currentData())

    def show_documents(self, shares: Sequence[DocumentShare], choices: LayoutChoices, results: int) -> None:
        refused = f"{sentence(choices.refused)}. " if choices.refused else ""
        self.note.setText(
            f"{refused}{results} results from {len(shares)} document{'s' if len(shares) != 1 else ''} "
            f"({choices.describe()})."
        )
        self.table.setRowCount(len(shares))
        for row, share in enumerate(shares):
            cells = (share.key, str(share.best_rank), f"{share.results} ({share.share:.0%})")
            for column, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if column:
                    item.setTextAlignment(_RIGHT)
                self.table.setItem(row, column, item)
