"""The dialog that lists the tables of an opened folder, with rows, columns and model, to choose one."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from recall_gui.core.base import masked

if TYPE_CHECKING:  # the core's folder module loads LanceDB's side of the core: not at start-up
    from recall_gui.core.tables import Folder, FolderTable

HEADERS = ("Table", "Rows", "Text column", "Vectors", "Model")


def _cells(table: FolderTable) -> list[str]:
    if table.columns is None:
        rows = f"{table.row_count:,}" if table.row_count is not None else "?"
        return [table.name, rows, "—", "—", f"cannot be opened: {table.problem}"]
    model = table.model
    label = (model.spec.label if model.found else "none: browse only") if model else "?"
    return [
        table.name,
        f"{table.row_count:,}" if table.row_count is not None else "?",
        table.columns.content,
        f"{table.columns.vector_dim}-d “{table.columns.vector}”",
        label,
    ]


class TablePicker(QDialog):
    """``tablePicker``: ``tableList`` (one row per table; those that cannot be opened are greyed out)."""

    def __init__(self, folder: Folder, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("tablePicker")
        self.setWindowTitle("Choose a table")
        self.folder = folder
        intro = QLabel(
            f"<b>{len(folder.tables)} tables</b> in {masked(folder.place.uri)}. Choose the one to browse and "
            "search; "
            "nothing is registered or written."
        )
        intro.setWordWrap(True)
        intro.setTextFormat(Qt.TextFormat.RichText)
        self.list = QTreeWidget()
        self.list.setObjectName("tableList")
        self.list.setHeaderLabels(list(HEADERS))
        self.list.setRootIsDecorated(False)
        self.list.setAlternatingRowColors(True)
        self.list.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self._items: list[QTreeWidgetItem] = []
        for table in folder.tables:
            item = QTreeWidgetItem(_cells(table))
            self._items.append(item)
            item.setData(0, Qt.ItemDataRole.UserRole, table.name)
            item.setTextAlignment(1, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            if table.model is not None:
                item.setToolTip(4, f"Model {table.model.reason}")
            if table.columns is None:
                item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEnabled)
                item.setToolTip(0, table.problem or "")
            self.list.addTopLevelItem(item)
        header = self.list.header()
        header.setStretchLastSection(True)
        for column in range(len(HEADERS) - 1):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Open | QDialogButtonBox.StandardButton.Cancel
        )
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        self.list.itemSelectionChanged.connect(self._update_button)
        self.list.itemDoubleClicked.connect(lambda *_: self.accept() if self.chosen() else None)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.list, 1)
        layout.addWidget(self.buttons)
        first = next((item for item in self._items if not item.isDisabled()), None)
        if first is not None:
            self.list.setCurrentItem(first)
        self._update_button()
        self.resize(720, 320)

    def chosen(self) -> str | None:
        """The selected table's name (``None`` when none, or one that cannot be opened, is selected)."""
        items = [item for item in self.list.selectedItems() if not item.isDisabled()]
        name = items[0].data(0, Qt.ItemDataRole.UserRole) if items else None
        return name if isinstance(name, str) else None

    def choose(self, name: str) -> None:
        """Select ``name`` (as a click would)."""
        for item in self._items:
            if item.data(0, Qt.ItemDataRole.UserRole) == name:
                self.list.setCurrentItem(item)
                return
        raise KeyError(name)

    def _update_button(self) -> None:
        self.buttons.button(QDialogButtonBox.StandardButton.Open).setEnabled(self.chosen() is not None)
