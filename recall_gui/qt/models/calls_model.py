"""The agent log's calls, newest first: time, client, database, query, result count and milliseconds."""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor

from recall_gui.core.agent_log import CallRecord
from recall_gui.qt.models.roles import ITEM_ROLE, TOOLTIP_CHARS, VALUE_ROLE, header_data, one_line

TIME, CLIENT, DATABASE, QUERY, RESULTS, MS = range(6)
HEADERS = ("Time", "Client", "Database", "Query", "Results", "ms")
_HEADER_TIPS = {MS: "Embedding plus search, in milliseconds, as the server measured them"}
_RIGHT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
_LEFT = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
#: A call given an entry marked wrong or outdated: its flag and colour (the review's).
FLAG, FLAG_COLOUR = "⚑", QColor("#d2453a")

Index = QModelIndex | QPersistentModelIndex


def local_time(record: CallRecord) -> str:
    return record.when.astimezone().strftime("%Y-%m-%d %H:%M:%S")


def search_key(record: CallRecord) -> str:
    """What the filter looks in: the client, the database and the query (or the tool), case folded."""
    query = record.query if record.tool == "recall_search" else f"({record.tool})"
    return f"{record.client_label}\n{record.db_name or ''}\n{query or ''}".casefold()


class CallsModel(QAbstractTableModel):
    """One row per logged call, newest first, the ones the filter keeps; formats cells and does nothing
    else. Calls arrive a batch at a time (:meth:`add_newer`) while the log is read."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        #: Oldest first, as the log holds them; row 0 shows the last one (the filter's last one).
        self._records: list[CallRecord] = []
        #: What the filter looks in, one per record.
        self._keys: list[str] = []
        #: The number, counted from the first call read, of ``_records[0]`` (older ones were let go).
        self._base = 0
        #: The numbers of the records the filter keeps, oldest first (``None``: no filter).
        self._kept: list[int] | None = None
        self._needle = ""
        #: Calls made by the window's own Agent view, among the records.
        self.from_window = 0
        #: The calls given an entry marked wrong or outdated (by identity), with those entries in words.
        self._flags: dict[int, tuple[CallRecord, str]] = {}

    @property
    def records(self) -> tuple[CallRecord, ...]:
        """Every call held, oldest first (the filter does not narrow it)."""
        return tuple(self._records)

    @property
    def held(self) -> int:
        """How many calls are held (the filter does not narrow it)."""
        return len(self._records)

    def set_records(self, records: Sequence[CallRecord]) -> None:
        """Show ``records`` (oldest first). Calls appended since the last time are inserted at the top, so
        the selection and the scroll position stay; anything else (a rotation) resets the view."""
        new, old = list(records), self._records
        if old and len(new) > len(old) and new[len(old) - 1] == old[-1] and new[0] == old[0]:
            self.add_newer(new[len(old) :], 0)
            return
        if new == old:
            return
        self.beginResetModel()
        self._records, self._keys, self._base = new, [search_key(r) for r in new], 0
        self.from_window = sum(record.from_window for record in new)
        self._kept = self._matching(0) if self._needle else None
        self.endResetModel()

    def add_newer(self, added: Sequence[CallRecord], dropped: int) -> None:
        """Let the ``dropped`` oldest calls go (rows at the bottom) and show ``added``, newer than every
        call held, at the top: the rows between keep their selection and scroll position."""
        dropped = min(dropped, len(self._records))
        if dropped:
            gone = self._base + dropped
            rows = dropped if self._kept is None else bisect.bisect_left(self._kept, gone)
            if rows:
                self.beginRemoveRows(QModelIndex(), self.rowCount() - rows, self.rowCount() - 1)
            self.from_window -= sum(record.from_window for record in self._records[:dropped])
            del self._records[:dropped], self._keys[:dropped]
            self._base = gone
            if self._kept is not None:
                del self._kept[:rows]
            if rows:
                self.endRemoveRows()
        if not added:
            return
        first = self._base + len(self._records)
        keys = [search_key(record) for record in added]
        numbers = range(first, first + len(added))
        kept = (
            numbers
            if self._kept is None
            else [n for n, k in zip(numbers, keys, strict=True) if self._needle in k]
        )
        if kept:
            self.beginInsertRows(QModelIndex(), 0, len(kept) - 1)
        self._records.extend(added)
        self._keys.extend(keys)
        self.from_window += sum(record.from_window for record in added)
        if self._kept is not None:
            self._kept.extend(kept)
        if kept:
            self.endInsertRows()

    def set_filter(self, text: str) -> None:
        """Keep only the calls whose client, database or query contains ``text`` (in any case)."""
        needle = text.casefold()
        if needle == self._needle:
            return
        self.beginResetModel()
        self._needle = needle
        self._kept = self._matching(self._base) if needle else None
        self.endResetModel()

    def _matching(self, base: int) -> list[int]:
        needle = self._needle
        return [base + number for number, key in enumerate(self._keys) if needle in key]

    def set_flags(self, flagged: Sequence[tuple[CallRecord, str]]) -> None:
        """Flag the calls given an entry marked wrong or outdated (each with what it was given, in words)."""
        self._flags = {id(record): (record, given) for record, given in flagged}
        if self.rowCount():
            self.dataChanged.emit(self.index(0, RESULTS), self.index(self.rowCount() - 1, RESULTS))

    def flag_of(self, record: CallRecord) -> str | None:
        """What a flagged call was given that is marked wrong or outdated (``None``: it is not flagged)."""
        held = self._flags.get(id(record))
        return held[1] if held is not None and held[0] is record else None

    def record(self, row: int) -> CallRecord:
        if self._kept is None:
            return self._records[len(self._records) - 1 - row]
        return self._records[self._kept[len(self._kept) - 1 - row] - self._base]

    def row_of(self, record: CallRecord) -> int | None:
        for row in range(self.rowCount()):
            if self.record(row) == record:
                return row
        return None

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 - Qt's own signature
        if parent.isValid():
            return 0
        return len(self._records) if self._kept is None else len(self._kept)

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
        flag = self.flag_of(record) if column == RESULTS and self._flags else None
        if role == Qt.ItemDataRole.DisplayRole:
            text = self._text(record, column)
            return f"{FLAG} {text}" if flag is not None else text
        if role == Qt.ItemDataRole.ForegroundRole and flag is not None:
            return FLAG_COLOUR
        if role == Qt.ItemDataRole.ToolTipRole and flag is not None:
            return f"Given entries marked wrong or outdated: {flag}"
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
