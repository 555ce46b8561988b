"""The description page's table of databases (Active, Database, Model) as one table model over the
registry snapshot, for any number of databases: cells are made when a view asks for them."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, Qt, Signal

from recall_gui.core.base import masked
from recall_gui.core.registry import DatabaseEntry, Registry

ACTIVE, NAME, EMBEDDING = range(3)
HEADINGS = ("Active", "Database", "Model")
Index = QModelIndex | QPersistentModelIndex


class DatabasesTableModel(QAbstractTableModel):
    """One row per registered database; ticking Active asks for the change (:attr:`activeToggled`) and
    shows it at once, until the next snapshot says what the registry holds."""

    #: The user ticked (``True``) or unticked a database's Active box: its name and the state asked for.
    activeToggled = Signal(str, bool)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._registry: Registry | None = None
        self._rows: tuple[DatabaseEntry, ...] = ()
        #: States asked for and not yet in a snapshot.
        self._asked: dict[str, bool] = {}

    def show(self, registry: Registry) -> None:
        self.beginResetModel()
        self._registry = registry
        self._rows = registry.databases
        self._asked = {}
        self.endResetModel()

    def name_at(self, row: int) -> str | None:
        return self._rows[row].name if 0 <= row < len(self._rows) else None

    def row_of(self, name: str | None) -> int:
        if self._registry is None or name is None:
            return -1
        return self._registry.index.get(name, -1)

    def is_active(self, row: int) -> bool:
        entry = self._rows[row]
        return self._asked.get(entry.name, entry.active)

    # --- the model --------------------------------------------------------------------------------------

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        return 0 if parent.isValid() else len(HEADINGS)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < len(HEADINGS):
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return HEADINGS[section]
        if role == Qt.ItemDataRole.ToolTipRole and section == EMBEDDING:
            return "The embedding model the database's vectors were made with"
        return None

    def flags(self, index: Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        flags = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
        return flags | Qt.ItemFlag.ItemIsUserCheckable if index.column() == ACTIVE else flags

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        entry, column = self._rows[index.row()], index.column()
        if column == ACTIVE:
            active = self.is_active(index.row())
            if role == Qt.ItemDataRole.CheckStateRole:
                return Qt.CheckState.Checked if active else Qt.CheckState.Unchecked
            if role == Qt.ItemDataRole.ToolTipRole:
                return "Agents can search it" if active else "Agents cannot search it"
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return entry.name if column == NAME else entry.embedder.label
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"{masked(entry.uri)}\n\n{entry.description}" if column == NAME else entry.embedder.label
        return None

    def setData(self, index: Index, value: Any, role: int = Qt.ItemDataRole.EditRole) -> bool:
        if not index.isValid() or index.column() != ACTIVE or role != Qt.ItemDataRole.CheckStateRole:
            return False
        active = Qt.CheckState(value) == Qt.CheckState.Checked
        if active == self.is_active(index.row()):
            return False
        name = self._rows[index.row()].name
        self._asked[name] = active
        self.dataChanged.emit(index, index, [Qt.ItemDataRole.CheckStateRole])
        self.activeToggled.emit(name, active)
        return True
