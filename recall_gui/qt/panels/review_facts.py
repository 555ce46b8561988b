"""Beside the entry under review: how much of it the model reads, its vector's health, its other columns,
and its near-copies (the entries whose vectors lie nearest to its own, each with its verdict)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from PySide6.QtWidgets import QHBoxLayout, QHeaderView, QLabel, QVBoxLayout, QWidget

from recall_gui.qt.models.roles import cell_text, plain_value
from recall_gui.qt.models.text_rows import TextRowsModel, fit_columns, text_rows_view
from recall_gui.qt.panels.status_note import StatusNote, Tone
from recall_gui.qt.widgets import group_box, selectable_label

#: Other columns shown before the box scrolls.
SHOWN_COLUMNS = 6
NEAR_HEADERS = ("Distance", "Entry", "Verdict", "Content")


def _column_cell(name: str, value: Any, column: int) -> str:
    if column == 0:
        return name
    plain = plain_value(value)
    return "" if plain is None else plain if isinstance(plain, str) else json.dumps(plain)


class ReviewFacts(QWidget):
    """``reviewTokens``, ``reviewVector``, ``reviewColumns``, ``reviewNearNote`` and ``reviewNearCopies``."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.tokens = selectable_label("reviewTokens", wrap=True)
        self.vector = StatusNote("reviewVector")
        self.columns_model = TextRowsModel(["Column", "Value"])
        self.columns = text_rows_view("reviewColumns", self.columns_model)
        self.columns.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.columns_box = group_box("Other columns", [(self.columns, 1)])
        self.near_note = selectable_label("reviewNearNote", wrap=True)
        self.near_model = TextRowsModel(NEAR_HEADERS)
        self.near_copies = text_rows_view("reviewNearCopies", self.near_model)
        self.near_copies.horizontalHeader().setSectionResizeMode(3, QHeaderView.ResizeMode.Stretch)
        vector_row = QHBoxLayout()
        vector_row.addWidget(QLabel("Vector:"))
        vector_row.addWidget(self.vector, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.tokens)  # a line of its own: a wrapped label in a form row overflows it
        layout.addLayout(vector_row)
        layout.addWidget(self.columns_box)
        layout.addWidget(group_box("Near-copies", [(self.near_note, 0), (self.near_copies, 1)]), 1)
        self.clear()

    def clear(self) -> None:
        self.show_tokens("–")
        self.vector.show_note("–", "neutral")
        self.show_columns({})
        self.show_near("", [])

    def show_tokens(self, text: str) -> None:
        """How much of the entry its model reads, in words."""
        self.tokens.setText(text)

    def show_vector(self, text: str, tone: Tone) -> None:
        self.vector.show_note(text, tone)

    def show_columns(self, columns: Mapping[str, Any]) -> None:
        names, values = list(columns), list(columns.values())
        self.columns_model.show(len(names), lambda row, column: _column_cell(names[row], values[row], column))
        fit_columns(self.columns, [0])
        self.columns_box.setVisible(bool(names))
        header = self.columns.horizontalHeader().sizeHint().height()
        row = self.columns.verticalHeader().defaultSectionSize()
        self.columns.setMinimumHeight(header + min(len(names), 1) * row + 4)
        self.columns.setMaximumHeight(header + min(len(names), SHOWN_COLUMNS) * row + 4)

    def show_near(self, note: str, rows: Sequence[tuple[str, str, str, str]]) -> None:
        """``rows``: distance, entry, verdict and content of each neighbour, nearest first."""
        self.near_note.setText(note)
        self.near_note.setVisible(bool(note))
        kept = list(rows)
        self.near_model.show(len(kept), lambda row, column: cell_text(kept[row][column]))
        fit_columns(self.near_copies, [0, 1, 2], limit_px=220)

    def near_rows(self) -> list[tuple[str, ...]]:
        """The near-copies shown, as text (for tests and copying)."""
        model = self.near_model
        return [tuple(model.text(row, column) for column in range(4)) for row in range(model.rowCount())]
