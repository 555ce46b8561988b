"""The table area: search results, or every row of the table when browsing, with copy and export.

Both tables show rows as their models format them; copying and exporting read the same cells (full values,
in the order and columns the view shows), so what a user sees is what they get.
"""

from __future__ import annotations

from typing import Any, Literal

from PySide6.QtCore import (
    QEvent,
    QItemSelection,
    QItemSelectionModel,
    QModelIndex,
    QObject,
    QSortFilterProxyModel,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import QAction, QGuiApplication, QKeySequence
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QLineEdit,
    QStackedWidget,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from recall_gui.core.base import SearchResult
from recall_gui.core.storage import IdRepeats, content_sha256
from recall_gui.core.tables import ExportColumn, ExportTable, plain_value, to_clipboard_text
from recall_gui.qt.models.browse_model import CONTENT, BrowseModel
from recall_gui.qt.models.results_model import DISTANCE, ID, ResultsModel
from recall_gui.qt.models.roles import ITEM_ROLE, VALUE_ROLE, chars_that_fit
from recall_gui.qt.widgets import ElidedLabel, PlaceholderTableView

Mode = Literal["results", "browse"]
FILTER_DELAY_MS = 250
#: The id column's width before results are in, and its least width after.
ID_WIDTH = 140

HINT_NO_DATABASE = "No database chosen yet."
HINT_SEARCH = "Type a question and press Enter to see exactly what an agent would get."
HINT_NO_RESULTS = "No results."
HINT_NO_ROWS = "This table has no rows."
HINT_NO_MATCH = "No row's id or content contains this text."
HINT_NO_FILTERED_ROWS = "No row matches the filter."
HINT_LOADING = "Loading…"
#: The column an export adds where ids repeat.
CONTENT_SHA256 = "content sha256"


class ResultsPanel(QWidget):
    """``resultsTable`` (search results) and ``browseTable`` (every row), one shown at a time."""

    #: The row the user selected: a SearchHit, a BrowseRow, or None.
    entrySelected = Signal(object)
    #: The browse filter after the user stopped typing (or pressed Enter).
    filterChanged = Signal(str)

    def __init__(self, browse_model: BrowseModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.results_model = ResultsModel(self)
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.results_model)
        self.proxy.setSortRole(VALUE_ROLE)
        self.browse_model = browse_model

        header = self._build_header()
        self._build_tables()
        self.stack = QStackedWidget()
        self.stack.addWidget(self.results_table)
        self.stack.addWidget(self.browse_table)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(6)
        layout.addLayout(header)
        layout.addWidget(self.repeats_note)
        layout.addWidget(self.stack, 1)

        self.copy_action = QAction("&Copy Selected Rows", self)
        self.copy_action.setShortcut(QKeySequence.StandardKey.Copy)
        self.copy_action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.copy_action.triggered.connect(self.copy_selection)
        for table in (self.results_table, self.browse_table):
            table.addAction(self.copy_action)
            table.selectionModel().selectionChanged.connect(self._on_selection)
        browse_model.modelReset.connect(self._on_browse_reset)

        self._filter_timer = QTimer(self)
        self._filter_timer.setSingleShot(True)
        self._filter_timer.setInterval(FILTER_DELAY_MS)
        self._filter_timer.timeout.connect(self._emit_filter)
        self.filter_edit.textEdited.connect(lambda _text: self._filter_timer.start())
        self.filter_edit.returnPressed.connect(self._emit_filter)
        self.set_mode("results")

    def _build_header(self) -> QHBoxLayout:
        self.caption = ElidedLabel()
        self.caption.setObjectName("resultsCaption")
        self.filter_edit = QLineEdit()
        self.filter_edit.setObjectName("filterEdit")
        self.filter_edit.setPlaceholderText("Filter by id or content")
        self.filter_edit.setClearButtonEnabled(True)
        self.filter_edit.setMinimumWidth(240)
        self.filter_edit.setMaximumWidth(360)
        self.filter_edit.setToolTip("Shows only rows whose id or content contains this text (any case)")
        header = QHBoxLayout()
        header.setContentsMargins(0, 0, 0, 0)
        header.addWidget(self.caption, 1)
        header.addWidget(self.filter_edit)
        # Said once, above the rows, where the table's ids repeat (its rows then show content·3f2a9c1e).
        self.repeats_note = ElidedLabel()
        self.repeats_note.setObjectName("idsRepeatNote")
        self.repeats_note.setVisible(False)
        return header

    def _build_tables(self) -> None:
        self.results_table = PlaceholderTableView()
        self.results_table.setObjectName("resultsTable")
        self.results_table.setModel(self.proxy)
        self.results_table.setSortingEnabled(True)
        self.results_table.sortByColumn(0, Qt.SortOrder.AscendingOrder)
        self.results_table.setPlaceholder(HINT_SEARCH)
        # The content column gets the rest; the ids and distances are fitted to each result and width.
        self._size_columns(self.results_table, {0: 56, ID: ID_WIDTH, DISTANCE: 130})
        self.results_table.viewport().installEventFilter(self)

        self.browse_table = PlaceholderTableView()
        self.browse_table.setObjectName("browseTable")
        self.browse_table.setModel(self.browse_model)
        self.browse_table.setPlaceholder(HINT_NO_DATABASE)
        self._size_columns(self.browse_table, {0: 70, 1: 170})
        self.browse_model.modelReset.connect(lambda: self._size_columns(self.browse_table, {0: 70, 1: 170}))
        self.browse_table.horizontalHeader().sectionResized.connect(self._fit_browse_previews)
        self.browse_model.modelReset.connect(self._fit_browse_previews)

    # --- modes ------------------------------------------------------------------------------------

    @property
    def mode(self) -> Mode:
        return "browse" if self.stack.currentWidget() is self.browse_table else "results"

    def current_table(self) -> QTableView:
        return self.browse_table if self.mode == "browse" else self.results_table

    def focus_rows(self) -> None:
        """The keyboard to the rows shown (F6, or Down in the query), the current one or else the
        first selected, so the arrow keys move through the results at once."""
        table = self.current_table()
        table.setFocus(Qt.FocusReason.ShortcutFocusReason)
        if not table.currentIndex().isValid() and table.model().rowCount() > 0:
            table.selectRow(0)

    def set_mode(self, mode: Mode) -> None:
        self.stack.setCurrentWidget(self.browse_table if mode == "browse" else self.results_table)
        self.filter_edit.setVisible(mode == "browse")

    def show_result(
        self,
        result: SearchResult | None,
        caption: str,
        placeholder: str | None = None,
        copies: dict[int, int] | None = None,
        repeats: IdRepeats | None = None,
    ) -> None:
        """``copies``: results that are near-copies of an earlier one (marked "≈ n" beside their rank);
        ``repeats``: the ids the table's rows share (those results are named by their content)."""
        self.results_model.set_result(result, copies, repeats)
        self.show_repeats(repeats)
        self.results_table.sortByColumn(0, Qt.SortOrder.AscendingOrder)
        self._fit_result_columns()
        default = HINT_SEARCH if result is None else HINT_NO_RESULTS
        self.results_table.setPlaceholder(placeholder or default)
        self.caption.setText(caption)
        self.set_mode("results")
        if result is not None and result.hits:
            flags = QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
            self.results_table.selectionModel().setCurrentIndex(self.proxy.index(0, 0), flags)
        else:
            self.entrySelected.emit(None)

    def show_repeats(self, repeats: IdRepeats | None) -> None:
        """Say (or stop saying) that the table's ids repeat."""
        said = repeats.sentence() if repeats is not None else None
        self.repeats_note.setText("" if said is None else said[0].upper() + said[1:] + ".")
        self.repeats_note.setToolTip("" if said is None else self.repeats_note.text())
        self.repeats_note.setVisible(said is not None)

    def show_browse(self, caption: str, placeholder: str = HINT_LOADING) -> None:
        self.caption.setText(caption)
        self.browse_table.setPlaceholder(placeholder)
        self.show_repeats(None)
        self.set_mode("browse")
        self.entrySelected.emit(None)

    def set_caption(self, caption: str) -> None:
        self.caption.setText(caption)

    def set_browse_placeholder(self, text: str) -> None:
        self.browse_table.setPlaceholder(text)

    def filter_text(self) -> str:
        return self.filter_edit.text()

    # --- reading what the view shows ---------------------------------------------------------------

    def headers(self, table: QTableView | None = None) -> tuple[str, ...]:
        table = table or self.current_table()
        return tuple(
            str(table.model().headerData(c, Qt.Orientation.Horizontal)) for c in self.visible_columns(table)
        )

    def row_values(self, row: int, table: QTableView | None = None) -> tuple[Any, ...]:
        """The full values of one view row, in the view's column order."""
        table = table or self.current_table()
        model = table.model()
        return tuple(model.index(row, c).data(VALUE_ROLE) for c in self.visible_columns(table))

    def shown_results(self) -> ExportTable:
        """Every search result, in the view's order (as the user sorted it) and column order, with full
        values, then each metadata column of the results (as the detail shows them) by its name."""
        table = self.results_table
        model = table.model()
        count = model.rowCount()
        hits = [model.index(r, 0).data(ITEM_ROLE) for r in range(count)]
        names = list(dict.fromkeys(name for hit in hits for name in hit.extra))
        rows = tuple(
            (*self.row_values(r, table), *(plain_value(hits[r].extra.get(name)) for name in names))
            for r in range(count)
        )
        headers = self.headers(table)
        # A metadata column called like a view's column ("ID") keeps its own cell in JSON too.
        titles = [f"{name} (metadata)" if name in headers else name for name in names]
        if self.results_model.repeats:  # ids repeat: each row's content sha256 tells the rows apart
            titles.append(CONTENT_SHA256)
            rows = tuple((*row, content_sha256(hit.content)) for row, hit in zip(rows, hits, strict=True))
        return ExportTable((*headers, *titles), rows)

    def export_columns(self) -> list[ExportColumn]:
        """The browsed table's columns as a whole-table export writes them: the view's, in its order."""
        table = self.browse_table
        columns = [
            self.browse_model.export_column(column, title)
            for column, title in zip(self.visible_columns(table), self.headers(table), strict=True)
        ]
        if self.browse_model.repeats:  # ids repeat: each row's content sha256 tells the rows apart
            columns.append(ExportColumn(CONTENT_SHA256, "content_sha256"))
        return columns

    def selected_rows(self) -> list[int]:
        table = self.current_table()
        return sorted({index.row() for index in table.selectionModel().selectedRows()})

    def selected_items(self) -> list[object]:
        """The rows selected in the table shown (SearchHits or BrowseRows), in the view's order; browsed
        rows no longer in memory are left out."""
        table = self.current_table()
        indexes = sorted(table.selectionModel().selectedRows(), key=lambda index: index.row())
        items = [index.siblingAtColumn(0).data(ITEM_ROLE) for index in indexes]
        return [item for item in items if item is not None]

    def copy_selection(self) -> str:
        """Put the selected rows on the clipboard as tab-separated text; returns the text."""
        table = self.current_table()
        rows = [self.row_values(r, table) for r in self.selected_rows()]
        rows = [row for row in rows if row and row[0] is not None]  # browse rows not in memory
        text = to_clipboard_text(rows) if rows else ""
        if text:
            QGuiApplication.clipboard().setText(text)
        return text

    # --- internals --------------------------------------------------------------------------------

    @staticmethod
    def visible_columns(table: QTableView) -> list[int]:
        """Logical column numbers in the order the user sees them (columns can be dragged)."""
        header = table.horizontalHeader()
        columns = [header.logicalIndex(v) for v in range(header.count())]
        return [c for c in columns if not header.isSectionHidden(c)]

    @staticmethod
    def _size_columns(table: QTableView, widths: dict[int, int]) -> None:
        header = table.horizontalHeader()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        for column, width in widths.items():
            table.setColumnWidth(column, width)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        header.setMinimumSectionSize(40)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Resize and watched is self.results_table.viewport():
            self._fit_result_columns()
        return super().eventFilter(watched, event)

    def _fit_result_columns(self) -> None:
        """The distance column as wide as its title (it names the metric), the ids as wide as the longest
        shown, up to a third of the table; the content column takes the rest."""
        table, header = self.results_table, self.results_table.horizontalHeader()
        header.resizeSection(
            DISTANCE, max(header.sectionSizeHint(DISTANCE), table.sizeHintForColumn(DISTANCE))
        )
        widest = max(table.sizeHintForColumn(ID), header.sectionSizeHint(ID), ID_WIDTH)
        header.resizeSection(ID, min(widest, max(ID_WIDTH, table.viewport().width() // 3)))

    def _fit_browse_previews(self, resized: int = -1, _old_size: int = 0, new_size: int = 0) -> None:
        """Cells of the browse table carry as much text as its widest text column can show (a 1M-row
        table repaints a page of rows per scroll step; laying out hidden text made it slower). While the
        header says a section was resized, it still answers that section's old size: hence ``new_size``."""
        header = self.browse_table.horizontalHeader()
        sizes = {column: header.sectionSize(column) for column in range(CONTENT, header.count())}
        if resized in sizes:
            sizes[resized] = new_size
        widest = max(sizes.values(), default=0)
        self.browse_model.preview_chars = chars_that_fit(widest, self.browse_table.fontMetrics())

    def _on_browse_reset(self) -> None:
        self.entrySelected.emit(None)

    def _on_selection(self, selected: QItemSelection, deselected: QItemSelection) -> None:
        table = self.current_table()
        current: QModelIndex = table.selectionModel().currentIndex()
        rows = table.selectionModel().selectedRows()
        index = current if current.isValid() and table.selectionModel().isRowSelected(current.row()) else None
        if index is None and rows:
            index = rows[0]
        self.entrySelected.emit(index.siblingAtColumn(0).data(ITEM_ROLE) if index is not None else None)

    def _emit_filter(self) -> None:
        self._filter_timer.stop()
        self.filterChanged.emit(self.filter_edit.text())
