"""The search results table: rank, id, a one-line preview of the content, and the distance."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, Qt

from recall_gui.core.base import METRIC_NAMES, SearchHit, SearchResult
from recall_gui.core.storage import IdRepeats, content_sha256, entry_label
from recall_gui.qt.models.roles import (
    ITEM_ROLE,
    TOOLTIP_CHARS,
    VALUE_ROLE,
    VerdictMark,
    header_data,
    one_line,
)

RANK, ID, CONTENT, DISTANCE = range(4)
_HEADER_TIPS = {
    DISTANCE: "Smaller is nearer. The metric is the one the search used (the index's, or cosh's L2)."
}
_RIGHT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
_LEFT = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter

Index = QModelIndex | QPersistentModelIndex


class ResultsModel(QAbstractTableModel):
    """Rows of one :class:`SearchResult`, nearest first; formats cells and does nothing else."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._result: SearchResult | None = None
        #: Rows that are near-copies of an earlier row: the earlier row's position.
        self._copies: dict[int, int] = {}
        #: The ids several rows of the table share: those results show as ``content·3f2a9c1e``.
        self.repeats = IdRepeats()
        #: The marks of the rows whose entries have a verdict.
        self._verdicts: dict[int, VerdictMark] = {}

    @property
    def result(self) -> SearchResult | None:
        return self._result

    def set_result(
        self,
        result: SearchResult | None,
        copies: dict[int, int] | None = None,
        repeats: IdRepeats | None = None,
    ) -> None:
        self.beginResetModel()
        self._result = result
        self._copies = dict(copies or {})
        self.repeats = repeats or IdRepeats()
        self._verdicts = {}
        self.endResetModel()
        self.headerDataChanged.emit(Qt.Orientation.Horizontal, DISTANCE, DISTANCE)

    def set_verdicts(self, marks: Sequence[VerdictMark | None]) -> None:
        """Mark each row whose entry has a verdict (``marks`` in the rows' order; ``None``: no verdict)."""
        self._verdicts = {row: mark for row, mark in enumerate(marks) if mark is not None}
        if self.rowCount():
            self.dataChanged.emit(self.index(0, RANK), self.index(self.rowCount() - 1, ID))

    def verdict_mark(self, row: int) -> VerdictMark | None:
        return self._verdicts.get(row)

    def hit(self, row: int) -> SearchHit:
        assert self._result is not None
        return self._result.hits[row]

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 - Qt's own signature
        return 0 if parent.isValid() or self._result is None else len(self._result.hits)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else 4

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        metric = self._result.metric if self._result else "l2"
        titles = ("Rank", "ID", "Content", f"Distance ({METRIC_NAMES.get(metric, metric)})")
        return header_data(section, orientation, role, titles, _HEADER_TIPS)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or self._result is None:
            return None
        row, column = index.row(), index.column()
        hit = self._result.hits[row]
        if role == Qt.ItemDataRole.DisplayRole:
            if column == RANK:
                copied = self._copies.get(row)
                rank = str(row + 1) if copied is None else f"{row + 1}  ≈ {copied + 1}"
                mark = self._verdicts.get(row)
                return f"{rank}  {mark[0]}" if mark is not None and mark[0] else rank
            if column == ID:
                return self.name(hit)
            if column == CONTENT:
                return one_line(hit.content)
            return f"{hit.distance:.4f}"
        if role == VALUE_ROLE:
            return (row + 1, hit.id, hit.content, hit.distance)[column]
        if role == ITEM_ROLE:
            return hit
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return _RIGHT if column in (RANK, DISTANCE) else _LEFT
        if role == Qt.ItemDataRole.ForegroundRole and column in (RANK, ID) and row in self._verdicts:
            return self._verdicts[row][1]
        if role == Qt.ItemDataRole.ToolTipRole and column == RANK:
            return self._rank_tip(row)
        if role == Qt.ItemDataRole.ToolTipRole and column == ID:
            return self._id_tip(row, hit)
        if role == Qt.ItemDataRole.ToolTipRole and column == CONTENT:
            return one_line(hit.content, TOOLTIP_CHARS)
        return None

    def name(self, hit: SearchHit) -> str:
        """A result's id as shown: ``content·3f2a9c1e`` where other rows share it."""
        if not self.repeats.is_shared(hit.id):
            return hit.id
        return entry_label(hit.id, content_sha256(hit.content))

    def _rank_tip(self, row: int) -> str | None:
        """The row's verdict, and which earlier result it is a near-copy of."""
        assert self._result is not None
        tips = [self._verdicts[row][2]] if row in self._verdicts else []
        if row in self._copies:
            first = self._result.hits[self._copies[row]]
            tips.append(
                f"A near-copy of result {self._copies[row] + 1} ({self.name(first)}): the agent reads the "
                "same twice"
            )
        return "\n".join(tips) or None

    def _id_tip(self, row: int, hit: SearchHit) -> str:
        """The id whole (whose other rows share it, with this entry's content sha256), and the verdict."""
        tips = [hit.id]
        if self.repeats.is_shared(hit.id):
            tips[0] = (
                f'The id "{hit.id}" is shared by {self.repeats.count(hit.id):,} rows; this entry\'s content '
                f"has the sha256 {content_sha256(hit.content)}"
            )
        if row in self._verdicts:
            tips.append(self._verdicts[row][2])
        return "\n".join(tips)
