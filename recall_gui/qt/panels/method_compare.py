"""The *Words* tab: the agent's vector results beside LanceDB's full-text and hybrid answers for the same
query, rank by rank, each full-text and hybrid entry with its place among the agent's (or that there is no
full-text index, and how to build one)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHeaderView, QLabel, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget

from recall_gui.core.search import compare_lists

#: The lists, in the order shown; the first is what the agent gets.
METHODS = (("vector", "Vector (the agent's)"), ("fts", "Full-text"), ("hybrid", "Hybrid (RRF)"))


def cell_text(name: str, entry_id: str, vector_rank: int | None) -> str:
    """What a cell says: the id, and for the other methods where the agent has it."""
    if name == "vector":
        return entry_id
    return f"{entry_id}  ({'agent: –' if vector_rank is None else f'agent: {vector_rank}'})"


class MethodComparePanel(QWidget):
    """``methodNote`` and ``methodTable``: one row per rank, one column per method."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.note = QLabel("Search to compare the agent's results with a search by words.")
        self.note.setObjectName("methodNote")
        self.note.setWordWrap(True)
        self.note.setTextFormat(Qt.TextFormat.PlainText)  # it quotes the database's name and the query
        self.table = QTableWidget(0, len(METHODS))
        self.table.setObjectName("methodTable")
        self.table.setHorizontalHeaderLabels([title for _name, title in METHODS])
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.table.setWordWrap(False)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 6, 4, 4)
        layout.addWidget(self.note)
        layout.addWidget(self.table, 1)

    def show_note(self, text: str) -> None:
        self.note.setText(text)
        self.table.setRowCount(0)

    def column(self, name: str) -> list[str]:
        """The ids a method's column lists, in rank order."""
        number = [n for n, _title in METHODS].index(name)
        rows = range(self.table.rowCount())
        items = [self.table.item(row, number) for row in rows]
        return [item.text().split("  (")[0] for item in items if item is not None and item.text()]

    def show_lists(self, query: str, lists: dict[str, list[str]]) -> None:
        """The three answers for ``query``, rank by rank; the tooltip says where each is in the others."""
        compared = compare_lists(lists)
        self.note.setText(
            f"For “{query}”: only the first column is what the agent gets; “agent: n” is an entry's rank "
            "there, “–” that the agent does not get it."
        )
        self.table.setRowCount(max((len(ids) for ids in lists.values()), default=0))
        labels = dict(METHODS)
        for number, (name, _title) in enumerate(METHODS):
            for row, entry in enumerate(compared.get(name, ())):
                item = QTableWidgetItem(cell_text(name, entry.id, entry.elsewhere.get("vector")))
                item.setToolTip(
                    "\n".join(f"{labels[other]}: {entry.movement(other)}" for other in entry.elsewhere)
                )
                self.table.setItem(row, number, item)
        self.table.setVerticalHeaderLabels([str(row + 1) for row in range(self.table.rowCount())])
