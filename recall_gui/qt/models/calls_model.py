"""The agent log's calls, newest first: time, client, database, query, result count and milliseconds."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt

from recall_gui.core.agents import CallRecord
from recall_gui.qt.models.roles import ITEM_ROLE, TOOLTIP_CHARS, VALUE_ROLE, header_data, one_line

TIME, CLIENT, DATABASE, QUERY, RESULTS, MS = range(6)
HEADERS = ("Time", "Client", "Database", "Query", "Results", "ms")
_HEADER_TIPS = {MS: "Embedding plus search, in milliseconds, as the server measured them"}
_RIGHT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
_LEFT = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter

Index = QModelIndex | QPersistentModelIndex


def local_time(record: CallRecord) -> str:
    return record.when.astimezone().strftime("%Y-%m-%d %H:%M:%S")


class CallsModel(QAbstractTableModel):
    """One row per logged call, newest first; formats cells and does nothing else."""

    def __init__(self) -> None:
        super().__init__()
        #: Oldest first, as the log holds them; row 0 shows the last one.
        self._records: tuple[CallRecord, ...] = ()

    @property
    def records(self) -> tuple[CallRecord, ...]:
        return self._records

    def set_records(self, records: Sequence[CallRecord]) -> None:
        """Show ``records`` (oldest first). Calls appended since the last time are inserted at the top, so
        the selection and the scroll position stay; anything else (a rotation) resets the view."""
        new, old = tuple(records), self._records
        if old and len(new) > len(old) and new[len(old) - 1] == old[-1] and new[0] == old[0]:
            added = len(new) - len(old)
            self.beginInsertRows(QModelIndex(), 0, added - 1)
            self._records = new
            self.endInsertRows()
            return
        if new == old:
            return
        self.beginResetModel()
        self._records = new
        self.endResetModel()

    def record(self, row: int) -> CallRecord:
        return self._records[len(self._records) - 1 - row]

    def row_of(self, record: CallRecord) -> int | None:
        for row in range(len(self._records)):
            if self.record(row) == record:
                return row
        return None

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 - Qt's own signature
        return 0 if parent.isValid() else len(self._records)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(HEADERS)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        return header_data(section, orientation, role, HEADERS, _HEADER_TIPS)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        record, column = self.record(index.row()), index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return self._text(record, column)
        if role == VALUE_ROLE:
            return self._value(record, column)
        if role == ITEM_ROLE:
            return record
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return _RIGHT if column in (RESULTS, MS) else _LEFT
        if role == Qt.ItemDataRole.ToolTipRole:
            if column == RESULTS and record.error is not None:
                return one_line(record.error, TOOLTIP_CHARS)
            if column == QUERY and record.query:
                return one_line(record.query, TOOLTIP_CHARS)
            if column == TIME:
                return record.time
            if column == CLIENT:
                return record.client_label
        return None

    @staticmethod
    def _text(record: CallRecord, column: int) -> str:
        if column == TIME:
            return local_time(record)
        if column == CLIENT:
            return record.client_label
        if column == DATABASE:
            return record.db_name or "–"
        if column == QUERY:
            if record.tool != "recall_search":
                return f"({record.tool})"
            return one_line(record.query) if record.query is not None else "–"
        if column == RESULTS:
            return "error" if record.error is not None else str(len(record.result_ids))
        total = record.total_ms
        return f"{total:.1f}" if total is not None else ""

    @staticmethod
    def _value(record: CallRecord, column: int) -> Any:
        if column == TIME:
            return record.time
        if column == RESULTS:
            return -1 if record.error is not None else len(record.result_ids)
        if column == MS:
            return record.total_ms if record.total_ms is not None else -1.0
        return CallsModel._text(record, column) if column != QUERY else (record.query or "")
