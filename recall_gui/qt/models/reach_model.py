"""The Reach page's table: one row per entry the agent cannot reach by its own query — its id, its place,
why, its query and the entries that took its place. Formats rows only; sorting goes by each cell's
:data:`VALUE_ROLE` (a place as a number, "not in the first N" after every number)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, Qt

from recall_gui import core
from recall_gui.qt.models.roles import ITEM_ROLE, VALUE_ROLE, header_data, one_line

if TYPE_CHECKING:
    from recall_gui.core.reach import Unreachable

ENTRY, RANK, CAUSE, QUERY, TAKEN_BY, WHY = range(6)
HEADERS = ("Entry", "Rank", "Cause", "Its query", "Taken by", "Why")
TOOLTIPS = {
    RANK: "Its place for its own query (1 is first); beyond the depth searched it is not known",
    CAUSE: "What keeps it out of the agent's results",
    QUERY: "The query made from its own text, searched as the agent searches",
    TAKEN_BY: "The entries the agent gets for that query instead",
}

Index = QModelIndex | QPersistentModelIndex


class ReachModel(QAbstractTableModel):
    """The unreachable entries of one report; ``depth``: how deep places were looked for."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._rows: tuple[Unreachable, ...] = ()
        self._depth = 0

    def show(self, rows: tuple[Unreachable, ...], depth: int) -> None:
        self.beginResetModel()
        self._rows, self._depth = rows, depth
        self.endResetModel()

    def add(self, rows: tuple[Unreachable, ...]) -> None:
        """More entries found out of reach while the report is made (below the ones listed)."""
        if rows:
            self.beginInsertRows(QModelIndex(), len(self._rows), len(self._rows) + len(rows) - 1)
            self._rows += rows
            self.endInsertRows()

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 (Qt's signature)
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 (Qt's signature)
        return 0 if parent.isValid() else len(HEADERS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = 0) -> Any:
        return header_data(section, orientation, role, HEADERS, TOOLTIPS)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        item, column = self._rows[index.row()], index.column()
        if role == ITEM_ROLE:
            return item
        if role == VALUE_ROLE:
            return self._value(item, column)
        if role == Qt.ItemDataRole.DisplayRole:
            return self._text(item, column)
        if role == Qt.ItemDataRole.ToolTipRole and column in (QUERY, TAKEN_BY, WHY):
            return one_line(str(self._value(item, column)), 600)
        if role == Qt.ItemDataRole.TextAlignmentRole and column == RANK:
            return Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
        return None

    def _value(self, item: Unreachable, column: int) -> Any:
        if column == RANK:  # unknown places sort after every known one
            return item.rank if item.rank is not None else self._depth + 1
        return (item.named, None, item.cause, item.query, ", ".join(item.taken_by), item.why)[column]

    def _text(self, item: Unreachable, column: int) -> str:
        if column == RANK:
            if item.rank is not None:
                return str(item.rank)
            return "—" if not item.query else f"> {self._depth}"
        if column == QUERY:
            return one_line(item.query, 200) if item.query else "(empty)"
        if column == CAUSE and item.cause == core.reach.PENDING:
            return "…"  # said when every entry has been asked
        return one_line(str(self._value(item, column)), 200)
