"""The query box, the result limit and the search button."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QPushButton, QWidget

from recall_gui.core.base import DEFAULT_LIMIT, MAX_QUERY_CHARS
from recall_gui.qt.widgets import LimitSpin

MAX_LIMIT = 1000
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
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(8)
        layout.addWidget(self.query_edit, 1)
        layout.addWidget(limit_label)
        layout.addWidget(self.limit_spin)
        layout.addWidget(self.search_button)
        layout.addWidget(self.cancel_button)
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
