"""The schema view beside the filter: every column (nested fields too), its Arrow type, whether it may be
empty, its role, the vector's width and metric, and the indexes. Double-clicking a name puts it into the
filter."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtWidgets import QHeaderView, QLabel, QVBoxLayout, QWidget

from recall_gui.qt.models.text_rows import KEY_ROLE, TextRowsModel, fit_columns, text_rows_view

if TYPE_CHECKING:
    from recall_gui.core.tables import SchemaFacts

HEADERS = ("Column", "Type", "Nullable", "Role", "Indexes")


class SchemaPanel(QWidget):
    """``schemaTable`` and ``schemaNote``."""

    #: A column's name was double-clicked (to put into the filter).
    columnActivated = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.note = QLabel("Choose a database to see its columns.")
        self.note.setTextFormat(Qt.TextFormat.PlainText)  # it names the table
        self.note.setObjectName("schemaNote")
        self.note.setWordWrap(True)
        # A model the view asks for the rows on screen (a table of 10,000 columns made 50,000 items).
        self.model = TextRowsModel(HEADERS, self)
        self.table = text_rows_view("schemaTable", self.model)
        self.table.horizontalHeader().setSectionResizeMode(len(HEADERS) - 1, QHeaderView.ResizeMode.Stretch)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 4, 0, 0)
        layout.addWidget(self.note)
        layout.addWidget(self.table, 1)
        self.table.doubleClicked.connect(self._on_double_click)
        self._facts: SchemaFacts | None = None

    @property
    def facts(self) -> SchemaFacts | None:
        return self._facts

    def clear(self, note: str = "Choose a database to see its columns.") -> None:
        self._facts = None
        self.model.show(0, lambda _row, _column: "")
        self.note.setText(note)

    def show_facts(self, facts: SchemaFacts) -> None:
        self._facts = facts
        columns = facts.columns

        def cell(row: int, position: int) -> str:
            column = columns[row]
            if position == 0:
                return ("    " * column.depth) + column.name
            if position == 1:
                return column.arrow_type
            if position == 2:
                return "yes" if column.nullable else "no"
            return column.role_text if position == 3 else ", ".join(column.indexes)

        self.model.show(len(columns), cell, lambda row: columns[row].name)
        fit_columns(self.table, range(len(HEADERS) - 1))
        count = len(facts.columns)
        indexes = len(facts.indexes)
        self.note.setText(
            f"{facts.table}, version {facts.version}: {count} column{'' if count == 1 else 's'}, "
            f"{indexes or 'no'} index{'' if indexes == 1 else 'es'}. Double-click a name to put it into "
            "the filter; nested fields are written parent.field."
        )

    def names(self) -> list[str]:
        return [self.model.key(row) for row in range(self.model.rowCount())]

    def _on_double_click(self, index: QModelIndex) -> None:
        name = index.data(KEY_ROLE)
        if isinstance(name, str) and self._facts is not None:
            role = next((c.role for c in self._facts.columns if c.name == name), "")
            if role != "vector":
                self.columnActivated.emit(name)
