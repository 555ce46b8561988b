"""A read-only table of text whose cells are made only when a view asks for them: a table widget makes an
item per cell up front, too slow for a table of thousands of columns (docs/PERFORMANCE_LOG.md#text_rows).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, Qt
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QHeaderView, QTableView

from recall_gui.qt.models.roles import TOOLTIP_CHARS, header_data

Index = QModelIndex | QPersistentModelIndex
#: The role that holds a row's key (e.g. the column name the row describes).
KEY_ROLE = Qt.ItemDataRole.UserRole + 1
#: Rows measured to size a column to its contents (the first ones: the rest scroll into view).
SIZED_FROM_ROWS = 200


class TextRowsModel(QAbstractTableModel):
    """Rows of text cells given by ``cell(row, column)``, each row with a key (``key(row)``)."""

    def __init__(self, headers: Sequence[str], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._headers = tuple(headers)
        self._count = 0
        self._cell: Callable[[int, int], str] = lambda _row, _column: ""
        self._key: Callable[[int], Any] = lambda _row: None

    def show(
        self, count: int, cell: Callable[[int, int], str], key: Callable[[int], Any] | None = None
    ) -> None:
        """Show ``count`` rows whose text ``cell(row, column)`` gives (``key(row)``: the row's key)."""
        self.beginResetModel()
        self._count, self._cell = count, cell
        self._key = key or (lambda _row: None)
        self.endResetModel()

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        return 0 if parent.isValid() else self._count

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        return 0 if parent.isValid() else len(self._headers)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        return header_data(section, orientation, role, self._headers, {})

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return self._cell(index.row(), index.column())
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._cell(index.row(), index.column())[:TOOLTIP_CHARS]
        if role == KEY_ROLE:
            return self._key(index.row())
        return None

    def text(self, row: int, column: int) -> str:
        return self._cell(row, column)

    def key(self, row: int) -> Any:
        return self._key(row)


def text_rows_view(name: str, model: TextRowsModel) -> QTableView:
    """A view of ``model``: rows of one fixed height (Qt never measures them), no row numbers, no editing."""
    view = QTableView()
    view.setObjectName(name)
    view.setModel(model)
    view.verticalHeader().setVisible(False)
    view.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
    view.verticalHeader().setDefaultSectionSize(view.fontMetrics().height() + 8)
    view.setEditTriggers(QTableView.EditTrigger.NoEditTriggers)
    view.setSelectionBehavior(QTableView.SelectionBehavior.SelectRows)
    view.setWordWrap(False)
    view.setTextElideMode(Qt.TextElideMode.ElideRight)
    view.horizontalHeader().setHighlightSections(False)
    return view


def fit_columns(view: QTableView, columns: Sequence[int], limit_px: int = 320) -> None:
    """Size ``columns`` of ``view`` to their title and the text of their first rows (at most
    ``limit_px``); the user may resize them."""
    model = view.model()
    metrics: QFontMetrics = view.fontMetrics()
    header = view.horizontalHeader()
    rows = min(model.rowCount(), SIZED_FROM_ROWS)
    for column in columns:
        title = str(model.headerData(column, Qt.Orientation.Horizontal) or "")
        widest = header.fontMetrics().horizontalAdvance(title) + 24
        for row in range(rows):
            text = str(model.index(row, column).data() or "")
            widest = max(widest, metrics.horizontalAdvance(text) + 16)
        header.setSectionResizeMode(column, QHeaderView.ResizeMode.Interactive)
        header.resizeSection(column, min(widest, limit_px))
