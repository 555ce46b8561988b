"""One logged call's results as the agent got them (ids in order, content as the table holds it now), and,
after a replay, what changed: ids gained, lost or moved."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor, QFont

from recall_gui.core.agent_log import RankChange, ReplayDiff
from recall_gui.qt.models.roles import (
    ITEM_ROLE,
    TOOLTIP_CHARS,
    VALUE_ROLE,
    VerdictMark,
    header_data,
    one_line,
)

RANK, ID, CONTENT, CHANGE = range(4)
HEADERS = ("Rank", "ID", "Content (now)", "Change")
_REPLAYED_HEADERS = ("Rank now", *HEADERS[1:])
NOT_THERE = "not in the table now"
_RIGHT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
_LEFT = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
#: The same accents as the status notes (and a word in the cell for those who cannot tell them apart).
_COLOURS = {"gained": QColor("#2e9e5b"), "lost": QColor("#d2453a"), "moved": QColor("#d08a10")}

Index = QModelIndex | QPersistentModelIndex


def change_text(row: RankChange) -> str:
    if row.change == "gained":
        return "new"
    if row.change == "lost":
        return f"lost (was {row.old_rank})"
    if row.change == "moved":
        return f"moved from {row.old_rank}"
    return ""


class CallResultsModel(QAbstractTableModel):
    """The ids of one call: as logged (``replayed`` False), or after a replay with their changes."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._rows: tuple[RankChange, ...] = ()
        self._contents: Mapping[str, str] = {}
        self._replayed = False
        #: The marks of the logged results whose entries have a verdict, by row.
        self._verdicts: dict[int, VerdictMark] = {}

    @property
    def replayed(self) -> bool:
        return self._replayed

    def show_logged(self, ids: Sequence[str]) -> None:
        self.beginResetModel()
        self._rows = tuple(RankChange(entry_id, rank, rank) for rank, entry_id in enumerate(ids, start=1))
        self._contents, self._replayed, self._verdicts = {}, False, {}
        self.endResetModel()

    def show_replay(self, diff: ReplayDiff) -> None:
        self.beginResetModel()
        self._rows, self._replayed, self._verdicts = diff.rows, True, {}
        self.endResetModel()

    def set_verdicts(self, marks: Sequence[VerdictMark | None]) -> None:
        """Mark each logged result whose entry has a verdict (in the rows' order)."""
        self._verdicts = {row: mark for row, mark in enumerate(marks) if mark is not None}
        if self._rows:
            self.dataChanged.emit(self.index(0, RANK), self.index(len(self._rows) - 1, ID))

    def verdict_mark(self, row: int) -> VerdictMark | None:
        return self._verdicts.get(row)

    def set_contents(self, contents: Mapping[str, str]) -> None:
        """The entries' contents looked up now (ids missing from it are no longer in the table)."""
        self._contents = dict(contents)
        if self._rows:
            self.dataChanged.emit(self.index(0, CONTENT), self.index(len(self._rows) - 1, CONTENT))

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(row.id for row in self._rows)

    def entry_id(self, row: int) -> str:
        return self._rows[row].id

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 - Qt's own signature
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(HEADERS)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        return header_data(section, orientation, role, _REPLAYED_HEADERS if self._replayed else HEADERS, {})

    def _content(self, entry_id: str) -> str | None:
        return self._contents.get(entry_id)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        row, column = self._rows[index.row()], index.column()
        content = self._content(row.id)
        mark = self._verdicts.get(index.row()) if column in (RANK, ID) else None
        if role == Qt.ItemDataRole.DisplayRole:
            if column == RANK:
                rank = "–" if row.new_rank is None else str(row.new_rank)
                return f"{rank}  {mark[0]}" if mark is not None and mark[0] else rank
            if column == ID:
                return row.id
            if column == CONTENT:
                if not self._contents:
                    return ""
                return one_line(content) if content is not None else NOT_THERE
            return change_text(row) if self._replayed else ""
        if role == VALUE_ROLE:
            return (row.new_rank, row.id, content, change_text(row))[column]
        if role == ITEM_ROLE:
            return row
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return _RIGHT if column == RANK else _LEFT
        if role == Qt.ItemDataRole.ForegroundRole and mark is not None and mark[1] is not None:
            return mark[1]
        if role == Qt.ItemDataRole.ToolTipRole and mark is not None:
            return mark[2]
        if role == Qt.ItemDataRole.ForegroundRole and self._replayed and column in (RANK, CHANGE):
            return _COLOURS.get(row.change)
        if role == Qt.ItemDataRole.FontRole and column == CONTENT and self._contents and content is None:
            font = QFont()
            font.setItalic(True)
            return font
        if role == Qt.ItemDataRole.ToolTipRole and column in (ID, CONTENT):
            return row.id if column == ID else one_line(content or NOT_THERE, TOOLTIP_CHARS)
        return None
