"""The schema view beside the filter: every column (nested fields too), its Arrow type, whether it may be
empty, its role, the vector's width and metric, and the indexes. Double-clicking a name puts it into the
filter."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

if TYPE_CHECKING:
    from recall_gui.core.tables import SchemaFacts

HEADERS = ("Column", "Type", "Nullable", "Role", "Indexes")
NAME_ROLE = Qt.ItemDataRole.UserRole + 1


class SchemaPanel(QWidget):
    """``schemaTable`` and ``schemaNote``."""

    #: A column's name was double-clicked (to put into the filter).
    columnActivated = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.note = QLabel("Choose a database to see its columns.")
        self.note.setObjectName("schemaNote")
        self.note.setWordWrap(True)
        self.table = QTableWidget(0, len(HEADERS))
        self.table.setObjectName("schemaTable")
        self.table.setHorizontalHeaderLabels(HEADERS)
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setWordWrap(False)
        header = self.table.horizontalHeader()
        for column in range(len(HEADERS) - 1):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(len(HEADERS) - 1, QHeaderView.ResizeMode.Stretch)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 4, 0, 0)
        layout.addWidget(self.note)
        layout.addWidget(self.table, 1)
        self.table.itemDoubleClicked.connect(self._on_double_click)
        self._facts: SchemaFacts | None = None

    @property
    def facts(self) -> SchemaFacts | None:
        return self._facts

    def clear(self, note: str = "Choose a database to see its columns.") -> None:
        self._facts = None
        self.table.setRowCount(0)
        self.note.setText(note)

    def show_facts(self, facts: SchemaFacts) -> None:
        self._facts = facts
        self.table.setRowCount(len(facts.columns))
        for row, column in enumerate(facts.columns):
            name = ("    " * column.depth) + column.name
            cells = (name, column.arrow_type, "yes" if column.nullable else "no", column.role_text)
            for position, text in enumerate((*cells, ", ".join(column.indexes))):
                item = QTableWidgetItem(text)
                item.setData(NAME_ROLE, column.name)
                item.setToolTip(text)
                self.table.setItem(row, position, item)
        count = len(facts.columns)
        indexes = len(facts.indexes)
        self.note.setText(
            f"{facts.table}, version {facts.version}: {count} column{'' if count == 1 else 's'}, "
            f"{indexes or 'no'} index{'' if indexes == 1 else 'es'}. Double-click a name to put it into "
            "the filter; nested fields are written parent.field."
        )

    def names(self) -> list[str]:
        items = (self.table.item(row, 0) for row in range(self.table.rowCount()))
        return [item.data(NAME_ROLE) for item in items if item is not None]

    def _on_double_click(self, item: QTableWidgetItem) -> None:
        name = item.data(NAME_ROLE)
        if isinstance(name, str) and self._facts is not None:
            role = next((c.role for c in self._facts.columns if c.name == name), "")
            if role != "vector":
                self.columnActivated.emit(name)
