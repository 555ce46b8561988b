"""Browsing a whole table: rows arrive page by page as the view scrolls (Qt's fetch-more protocol).

The row count grows as the user scrolls towards the end, one page per ``fetchMore``; the rows themselves live
in a :class:`~recall_gui.core.tables.paging.PageCache`, so only the most recently viewed pages are in memory
and a
1M-row table scrolls with flat memory. A page dropped from memory is fetched again when it comes back into
view. Pages that arrive after the model was reset (another table, another filter) are discarded.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, Qt, Signal

from recall_gui.core.storage import IdRepeats, content_sha256, entry_label
from recall_gui.core.tables import DEFAULT_MAX_PAGES, DEFAULT_PAGE_SIZE, ExportColumn, PageCache
from recall_gui.qt.models.roles import (
    ITEM_ROLE,
    PREVIEW_CHARS,
    TOOLTIP_CHARS,
    VALUE_ROLE,
    cell_text,
    header_data,
    one_line,
    plain_value,
)

if TYPE_CHECKING:
    from recall_gui.core.tables import BrowseRow, Page

#: Fetches ``limit`` rows from ``offset`` of the table being browsed.
PageFetcher = Callable[[int, int], Awaitable["Page"]]
TaskStarter = Callable[[Coroutine[Any, Any, Any]], "asyncio.Task[Any]"]

ROW, ID, CONTENT = range(3)
_RIGHT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
_LEFT = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
LOADING = "…"
_DISPLAY = int(Qt.ItemDataRole.DisplayRole.value)
_TOOLTIP = int(Qt.ItemDataRole.ToolTipRole.value)
_ALIGNMENT = int(Qt.ItemDataRole.TextAlignmentRole.value)
#: The roles :meth:`BrowseModel.data` answers besides the alignment.
_ANSWERED = frozenset({_DISPLAY, _TOOLTIP, int(VALUE_ROLE), int(ITEM_ROLE)})

Index = QModelIndex | QPersistentModelIndex


class BrowseModel(QAbstractTableModel):
    """Row number, id, one-line content and the metadata columns of every row of one table."""

    #: A page arrived and is shown (also after the first page of a new table or filter).
    pageLoaded = Signal()

    def __init__(
        self,
        start_task: TaskStarter,
        *,
        page_size: int = DEFAULT_PAGE_SIZE,
        max_pages: int = DEFAULT_MAX_PAGES,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._start_task = start_task
        self._cache = PageCache(page_size, max_pages)
        self._fetch: PageFetcher | None = None
        self._extra: tuple[str, ...] = ()
        self._exposed = 0
        self._generation = 0
        self._pending: dict[int, asyncio.Task[Any]] = {}
        self._growing = False
        self._failed = False
        #: Milliseconds the latest page took to arrive.
        self.last_fetch_ms: float | None = None
        #: The table version the latest page was read from (``None`` until a page arrived).
        self.table_version: int | None = None
        #: Longest text a cell shows; the view sets it to what its widest column can show (see
        #: :func:`~recall_gui.qt.models.roles.chars_that_fit`), since laying out text nobody sees is most
        #: of what painting a page of rows costs.
        self.preview_chars = PREVIEW_CHARS
        #: The ids several rows of the table share: those rows' ids show as ``content·3f2a9c1e``.
        self.repeats = IdRepeats()

    # --- what the window drives -------------------------------------------------------------------

    def reset(self, fetch: PageFetcher | None, extra_columns: Sequence[str] = ()) -> None:
        """Show another table (or the same one with another filter); ``None`` shows nothing."""
        self.beginResetModel()
        self._generation += 1
        for task in self._pending.values():
            task.cancel()
        self._pending.clear()
        self._cache.clear()
        self._fetch = fetch
        self._extra = tuple(extra_columns)
        self._exposed = 0
        self._growing = False
        self._failed = False
        self.table_version = None
        self.repeats = IdRepeats()
        self.endResetModel()
        self.headerDataChanged.emit(Qt.Orientation.Horizontal, 0, max(0, self.columnCount() - 1))

    async def load_first_page(self) -> None:
        """Fetch and show the first page; raises what the fetch raises."""
        await self._load(0, grow=True)

    @property
    def total(self) -> int | None:
        """Rows in the table (matching the filter), once the first page has arrived."""
        return self._cache.total

    @property
    def cache(self) -> PageCache:
        return self._cache

    @property
    def generation(self) -> int:
        """Changes on every :meth:`reset`; a caller awaiting a page compares it to notice a newer reset."""
        return self._generation

    def value(self, item: BrowseRow, column: int) -> Any:
        """The full value of one cell: what sorting, copying and export use."""
        if column == ROW:
            return item.offset + 1
        if column == ID:
            return item.id
        if column == CONTENT:
            return item.content
        return plain_value(item.extra.get(self._extra[column - 3]))

    def set_repeats(self, repeats: IdRepeats) -> None:
        """Name the rows whose id others share by their content (from the ids of the table shown)."""
        self.repeats = repeats
        if self.rowCount():
            self.dataChanged.emit(self.index(0, ID), self.index(self.rowCount() - 1, ID))

    def export_column(self, column: int, title: str) -> ExportColumn:
        """What a whole-table export writes for ``column``, under ``title``."""
        if column == ROW:
            return ExportColumn(title, "row")
        if column == ID:
            return ExportColumn(title, "id")
        if column == CONTENT:
            return ExportColumn(title, "content")
        return ExportColumn(title, "metadata", self._extra[column - 3])

    def item(self, row: int) -> BrowseRow | None:
        return self._cache.row(row)

    # --- Qt's fetch-more protocol -----------------------------------------------------------------

    def canFetchMore(self, parent: Index = QModelIndex()) -> bool:  # noqa: B008 - Qt's signature
        total = self._cache.total
        return (
            not parent.isValid()
            and self._fetch is not None
            and not self._growing
            and not self._failed
            and total is not None
            and self._exposed < total
        )

    def fetchMore(self, parent: Index = QModelIndex()) -> None:  # noqa: B008
        if not self.canFetchMore(parent):
            return
        self._growing = True
        self._request(self._cache.page_of(self._exposed), grow=True)

    def _request(self, page: int, *, grow: bool = False) -> None:
        if page in self._pending or self._fetch is None:
            return
        self._pending[page] = self._start_task(self._load(page, grow=grow))

    async def _load(self, page_number: int, *, grow: bool) -> None:
        generation, fetch = self._generation, self._fetch
        if fetch is None:
            return
        started = time.perf_counter()
        try:
            page = await fetch(self._cache.offset_of(page_number), self._cache.page_size)
        except asyncio.CancelledError:
            self._forget_request(generation, page_number)
            raise
        except Exception:
            # Stop asking for pages until the next reset: a broken table would otherwise be asked
            # again on every repaint, with an error each time.
            self._failed = self._forget_request(generation, page_number) or self._failed
            raise
        if generation != self._generation:
            return
        self._pending.pop(page_number, None)
        self.last_fetch_ms = (time.perf_counter() - started) * 1000
        self.table_version = page.version
        self._show(page, grow)
        self.pageLoaded.emit()

    def _forget_request(self, generation: int, page_number: int) -> bool:
        """Clear the bookkeeping of a request that ended without a page; ``False`` if it was stale."""
        if generation != self._generation:
            return False
        self._growing = False
        self._pending.pop(page_number, None)
        return True

    def _show(self, page: Page, grow: bool) -> None:
        self._cache.store(page)
        if page.total < self._exposed:  # the table shrank since the rows were shown
            self.beginResetModel()
            self._exposed = page.total
            self.endResetModel()
        if grow:
            self._growing = False
            end = min(page.total, max(self._exposed, page.offset + len(page)))
            if end > self._exposed:
                self.beginInsertRows(QModelIndex(), self._exposed, end - 1)
                self._exposed = end
                self.endInsertRows()
        if len(page):
            first = min(page.offset, self._exposed)
            last = min(page.offset + len(page), self._exposed) - 1
            if last >= first:
                self.dataChanged.emit(self.index(first, 0), self.index(last, self.columnCount() - 1))

    # --- cells ------------------------------------------------------------------------------------

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else self._exposed

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else 3 + len(self._extra)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        return header_data(section, orientation, role, ("Row", "ID", "Content", *self._extra), {})

    def data(self, index: Index, role: int = _DISPLAY) -> Any:
        # A repaint asks each visible cell for seven roles and this model answers two of them: the role
        # is tested first, with plain ints, so the other five cost next to nothing
        # (docs/PERFORMANCE_LOG.md#browse_model-data).
        if role == _ALIGNMENT:
            return _RIGHT if index.column() == ROW else _LEFT
        if role not in _ANSWERED or not index.isValid():
            return None
        row, column = index.row(), index.column()
        found = self._cache.locate(row)
        if found is None:
            if not self._failed:
                self._request(self._cache.page_of(row))
            return LOADING if role == _DISPLAY and column == ID else None
        page, at = found
        if role == ITEM_ROLE:
            return page.row(at)
        if role == VALUE_ROLE:
            return self.value(page.row(at), column)
        if column == ROW:
            return str(page.offset + at + 1)
        if column == ID:
            entry_id = page.ids[at]
            if self.repeats.is_shared(entry_id):
                return entry_label(entry_id, content_sha256(page.contents[at]))
            return entry_id
        limit = TOOLTIP_CHARS if role == _TOOLTIP else self.preview_chars
        if column == CONTENT:
            return one_line(page.contents[at], limit)
        values = page.extra.get(self._extra[column - 3])
        return cell_text(None if values is None else values[at], limit)
