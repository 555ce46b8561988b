"""The registered databases as a picker lists them, for any number of them: one list model over the
registry snapshot's own tuples (nothing is copied per database), its rows' texts made when a view asks."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractListModel, QModelIndex, QObject, QPersistentModelIndex, Qt

from recall_gui.core.registry import DatabaseEntry, Registry

Index = QModelIndex | QPersistentModelIndex


class DatabaseListModel(QAbstractListModel):
    """``by_activity``: active databases by name, then inactive ones by name marked "(inactive)"; else the
    registry's own order and plain names. The database's name is each row's ``UserRole``."""

    def __init__(self, *, by_activity: bool = True, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.by_activity = by_activity
        self._registry: Registry | None = None
        self._entries: tuple[DatabaseEntry, ...] = ()

    def show(self, registry: Registry) -> None:
        self.beginResetModel()
        self._registry = registry
        self._entries = registry.by_activity if self.by_activity else registry.databases
        self.endResetModel()

    def row_of(self, name: str | None) -> int:
        """The row of database ``name``; -1 when it is not listed."""
        if self._registry is None or name is None:
            return -1
        places = self._registry.index_by_activity if self.by_activity else self._registry.index
        return places.get(name, -1)

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        return 0 if parent.isValid() else len(self._entries)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._entries):
            return None
        entry = self._entries[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return entry.name if entry.active or not self.by_activity else f"{entry.name} (inactive)"
        if role == Qt.ItemDataRole.UserRole:
            return entry.name
        return None
