"""The query box, the result limit and the search button."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QPushButton, QVBoxLayout, QWidget

from recall_gui.core.base import DEFAULT_LIMIT, MAX_QUERY_CHARS
from recall_gui.qt.widgets import ElidedLabel, LimitSpin

if TYPE_CHECKING:
    from recall_gui.core.embedders import ReadExtent

MAX_LIMIT = 1000
#: How much of the query before the cut the note quotes.
READ_NOTE_WORDS_CHARS = 40
#: The query box holds the longest query searched (``core.types.MAX_QUERY_CHARS``). Qt's default (32,767)
#: would cut a long paste without a word; far more is no better, as Qt cuts a paste beyond the limit in
#: time that grows with the square of the limit (docs/PERFORMANCE_LOG.md#query_bar-max_query_chars).


class QueryBar(QWidget):
    """``queryEdit``, ``limitSpin`` and ``searchButton``; Enter in either field searches."""

    searchRequested = Signal()
    cancelRequested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.query_edit = QLineEdit()
        self.query_edit.setObjectName("queryEdit")
        self.query_edit.setClearButtonEnabled(True)
        self.query_edit.setMaxLength(MAX_QUERY_CHARS)
        self.query_edit.setPlaceholderText(
            "Ask what an agent would ask — Enter searches; an empty query browses every row (Ctrl+L)"
        )
        self.limit_spin = LimitSpin()
        self.limit_spin.setObjectName("limitSpin")
        self.limit_spin.setRange(1, MAX_LIMIT)
        self.limit_spin.setValue(DEFAULT_LIMIT)
        self.limit_spin.setAccelerated(True)
        self.limit_spin.setToolTip("How many results to return (the agent's `limit`; cosh's default is 5)")
        limit_label = QLabel("&Limit:")
        limit_label.setBuddy(self.limit_spin)
        self.search_button = QPushButton("&Search")
        self.search_button.setObjectName("searchButton")
        self.search_button.setToolTip("Search (Enter)")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setObjectName("cancelButton")
        self.cancel_button.setToolTip("Cancel the running search (Esc)")
        self.cancel_button.setEnabled(False)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(8)
        row.addWidget(self.query_edit, 1)
        row.addWidget(limit_label)
        row.addWidget(self.limit_spin)
        row.addWidget(self.search_button)
        row.addWidget(self.cancel_button)
        # Under the box, after a search: where the model stopped reading a query longer than it reads.
        self.read_note = ElidedLabel()
        self.read_note.setObjectName("queryReadNote")
        self.read_note.setVisible(False)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addLayout(row)
        layout.addWidget(self.read_note)
        self.query_edit.returnPressed.connect(self.searchRequested)
        self.limit_spin.returnPressed.connect(self.searchRequested)
        self.search_button.clicked.connect(self.searchRequested)
        self.cancel_button.clicked.connect(self.cancelRequested)

    def query(self) -> str:
        return self.query_edit.text()

    def limit(self) -> int:
        return self.limit_spin.value()

    def set_busy(self, busy: bool) -> None:
        self.cancel_button.setEnabled(busy)

    def show_reading(self, extent: ReadExtent | None, query: str) -> None:
        """Say where the model stopped reading ``query`` when it is longer than the model reads (and say
        nothing otherwise)."""
        if extent is None or not extent.truncated:
            self.read_note.setVisible(False)
            self.read_note.clear()
            return
        cut = extent.read_chars
        before = " ".join(query[max(0, cut - READ_NOTE_WORDS_CHARS) : cut].split())
        text = (
            f"The model reads this query only up to “…{before}” (its first {extent.limit:,} tokens): the "
            f"{extent.unread_chars:,} characters after that change nothing."
        )
        self.read_note.setText(text)
        self.read_note.setToolTip(text)
        self.read_note.setVisible(True)
