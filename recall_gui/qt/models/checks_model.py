"""The golden checks table: each check's verdict, its question, its expected ids with their ranks, and how
it moved since the last run. Formats rows only; an edit of a query, expected ids or limit typed in a cell
is handed to :attr:`ChecksModel.on_edit` (the page changes the golden file, or says why not)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor

from recall_gui.qt.models.roles import ITEM_ROLE, VALUE_ROLE, header_data, one_line

if TYPE_CHECKING:
    from recall_gui.core.golden import Change, CheckOutcome, GoldenCheck

RESULT, DATABASE, QUERY, LIMIT, EXPECTED, CHANGE = range(6)
HEADERS = ("Result", "Database", "Query", "Limit", "Expected ids (rank)", "Since the last run")
PASSED, FAILED, ERROR, NOT_RUN = "✓ passed", "✗ failed", "⚠ could not run", "not run"
#: The columns a user edits in place, and what each edit changes.
EDITABLE = {QUERY: "query", EXPECTED: "ids", LIMIT: "limit"}
_GOOD, _BAD = QColor("#2e9e5b"), QColor("#d2453a")

Index = QModelIndex | QPersistentModelIndex


def rank_text(rank: int | None) -> str:
    return "missing" if rank is None else str(rank)


class ChecksModel(QAbstractTableModel):
    """One row per check of the golden file, with its outcome once it has run."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._checks: tuple[GoldenCheck, ...] = ()
        self._outcomes: dict[GoldenCheck, CheckOutcome] = {}
        self._changes: dict[GoldenCheck, Change] = {}
        #: Where each check runs as the registry stands (before it has run), in words.
        self._places: tuple[str, ...] = ()
        #: Takes an edit typed in a cell: ``(row, field, value)``, ``field`` one of :data:`EDITABLE`'s
        #: values; ``True`` when the file took it. ``None``: cells are not editable (a run is going on).
        self.on_edit: Callable[[int, str, Any], bool] | None = None

    def set_checks(self, checks: tuple[GoldenCheck, ...], places: tuple[str, ...] = ()) -> None:
        """Show ``checks`` (``places``: where each runs, in words); outcomes of checks that did not change
        are kept."""
        self.beginResetModel()
        self._checks, self._places = checks, places
        self._outcomes = {check: o for check, o in self._outcomes.items() if check in checks}
        self._changes = {check: c for check, c in self._changes.items() if check in checks}
        self.endResetModel()

    def set_outcomes(self, outcomes: tuple[CheckOutcome, ...], changes: tuple[Change, ...]) -> None:
        self._outcomes = {outcome.check: outcome for outcome in outcomes}
        self._changes = {outcome.check: change for outcome, change in zip(outcomes, changes, strict=True)}
        if self._checks:
            self.dataChanged.emit(self.index(0, 0), self.index(len(self._checks) - 1, CHANGE))

    def check(self, row: int) -> GoldenCheck:
        return self._checks[row]

    def place(self, row: int) -> str:
        """Where the check runs as the registry stands now (the last run may have run elsewhere: its
        outcome says where)."""
        if row < len(self._places):
            return self._places[row]
        outcome = self.outcome(row)
        return outcome.searched if outcome is not None and outcome.searched else self._checks[row].named

    def set_places(self, places: tuple[str, ...]) -> None:
        """Where each check runs now (the registry changed)."""
        self._places = places
        if self._checks:
            self.dataChanged.emit(self.index(0, DATABASE), self.index(len(self._checks) - 1, DATABASE))

    def outcome(self, row: int) -> CheckOutcome | None:
        return self._outcomes.get(self._checks[row])

    def change(self, row: int) -> Change | None:
        return self._changes.get(self._checks[row])

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 - Qt's own signature
        return 0 if parent.isValid() else len(self._checks)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(HEADERS)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        return header_data(section, orientation, role, HEADERS, {})

    def verdict(self, row: int) -> str:
        outcome = self.outcome(row)
        if outcome is None:
            return NOT_RUN
        if outcome.error is not None:
            return ERROR
        return PASSED if outcome.passed else FAILED

    def _expected(self, row: int) -> str:
        check, outcome = self._checks[row], self.outcome(row)
        if outcome is None:
            return check.expect_text
        return ", ".join(f"{e.label} ({rank_text(e.rank)})" for e in outcome.expected)

    def flags(self, index: Index) -> Qt.ItemFlag:
        flags = super().flags(index)
        if index.isValid() and self.on_edit is not None and self._editable(index.row(), index.column()):
            flags |= Qt.ItemFlag.ItemIsEditable
        return flags

    def _editable(self, row: int, column: int) -> bool:
        # Ids holding a comma cannot be told apart in one line of text: those are edited in the file.
        return column in EDITABLE and (
            column != EXPECTED or not any(isinstance(i, str) and "," in i for i in self._checks[row].expect)
        )

    def setData(self, index: Index, value: Any, role: int = Qt.ItemDataRole.EditRole) -> bool:
        if role != Qt.ItemDataRole.EditRole or not index.isValid() or self.on_edit is None:
            return False
        if index.column() not in EDITABLE:
            return False
        return self.on_edit(index.row(), EDITABLE[index.column()], value)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        row, column = index.row(), index.column()
        check = self._checks[row]
        if role == Qt.ItemDataRole.EditRole and column in EDITABLE:
            if column == QUERY:
                return check.query
            return check.limit if column == LIMIT else check.expect_text
        if role in (Qt.ItemDataRole.DisplayRole, VALUE_ROLE):
            if column == RESULT:
                return self.verdict(row)
            if column == DATABASE:
                return self.place(row)
            if column == QUERY:
                return one_line(check.query) if role == Qt.ItemDataRole.DisplayRole else check.query
            if column == LIMIT:
                return str(check.limit) if role == Qt.ItemDataRole.DisplayRole else check.limit
            if column == EXPECTED:
                return self._expected(row)
            change = self.change(row)
            return "" if change is None else change.text
        if role == ITEM_ROLE:
            return check
        if role == Qt.ItemDataRole.ForegroundRole:
            verdict = self.verdict(row)
            if column == RESULT and verdict != NOT_RUN:
                return _GOOD if verdict == PASSED else _BAD
            change = self.change(row)
            if (
                column == CHANGE
                and change is not None
                and change.kind in ("worse", "now fails", "better", "now passes")
            ):
                return _BAD if change.kind in ("worse", "now fails") else _GOOD
        if role == Qt.ItemDataRole.ToolTipRole:
            outcome = self.outcome(row)
            if column == RESULT and outcome is not None and outcome.error is not None:
                return outcome.error
            if column == QUERY:
                return one_line(check.query, 600)
            if column == DATABASE:
                return f"The check names {check.named}"
        if role == Qt.ItemDataRole.TextAlignmentRole and column == LIMIT:
            return Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
        return None
