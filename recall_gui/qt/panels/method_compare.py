"""The *Words* tab: the agent's vector results beside LanceDB's full-text and hybrid answers for the same
query, each entry with where it stands in the others (or that there is no full-text index, and how to
build one)."""

from __future__ import annotations

from PySide6.QtWidgets import QHBoxLayout, QLabel, QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget

from recall_gui.core.method_comparison import compare_lists

#: The lists, in the order shown; the first is what the agent gets.
METHODS = (("vector", "Vector (the agent's)"), ("fts", "Full-text"), ("hybrid", "Hybrid (RRF)"))


class MethodComparePanel(QWidget):
    """``methodNote`` and one ``methodList_<name>`` per method (rank, id, where it is in the others)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.note = QLabel("Search to compare the agent's results with a search by words.")
        self.note.setObjectName("methodNote")
        self.note.setWordWrap(True)
        self.lists: dict[str, QTreeWidget] = {}
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        for name, title in METHODS:
            tree = QTreeWidget()
            tree.setObjectName(f"methodList_{name}")
            tree.setHeaderLabels([title, "Elsewhere"])
            tree.setRootIsDecorated(False)
            tree.setUniformRowHeights(True)
            self.lists[name] = tree
            row.addWidget(tree, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 6, 4, 4)
        layout.addWidget(self.note)
        layout.addLayout(row, 1)

    def show_note(self, text: str) -> None:
        self.note.setText(text)
        for tree in self.lists.values():
            tree.clear()

    def show_lists(self, query: str, lists: dict[str, list[str]]) -> None:
        """The three answers for ``query``; each line says where the entry is in the other two lists."""
        compared = compare_lists(lists)
        self.note.setText(
            f"For “{query}”: only the vector list is what the agent gets. ↑/↓: higher or lower in the "
            "other list; –: not among its results."
        )
        labels = dict(METHODS)
        for name, tree in self.lists.items():
            tree.clear()
            for entry in compared.get(name, ()):
                others = [
                    f"{labels[other].split(' ')[0]} {entry.movement(other).replace('only here', '–')}"
                    for other in entry.elsewhere
                ]
                tree.addTopLevelItem(QTreeWidgetItem([f"{entry.rank}. {entry.id}", ", ".join(others)]))
            tree.resizeColumnToContents(0)
