"""A bounded set of pages over a long table, so browsing a 1M-row table costs flat memory.

A view asks for rows by position. Rows arrive in pages (see :func:`recall_gui.core.tables.browse.fetch_page`)
and
are kept in least-recently-used order; beyond ``max_pages`` the page used longest ago is dropped and fetched
again if the user scrolls back to it. How many rows a view exposes is the view's business; this only
answers "which rows are in memory, and which page holds row N".
"""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # browse loads numpy and LanceDB; the window imports this module before they are needed
    from recall_gui.core.tables.browse import BrowseRow, Page

#: Rows per page. Each page costs a round trip to LanceDB and a repaint of the view as it arrives, and
#: almost nothing per row (pages are columns: :class:`~recall_gui.core.tables.browse.Page`), so bigger pages
# make
#: a long scroll cheaper for the GUI thread (docs/PERFORMANCE_LOG.md#paging-default_page_size).
DEFAULT_PAGE_SIZE = 1024
#: Pages kept in memory: 16,384 rows at the default page size (a few MB of text).
DEFAULT_MAX_PAGES = 16


class PageCache:
    """Pages by page number, least recently used dropped first."""

    def __init__(self, page_size: int = DEFAULT_PAGE_SIZE, max_pages: int = DEFAULT_MAX_PAGES) -> None:
        if page_size < 1 or max_pages < 1:
            raise ValueError("page_size and max_pages must be at least 1")
        self.page_size = page_size
        self.max_pages = max_pages
        #: Rows available (after the filter) as of the latest page; ``None`` before the first page.
        self.total: int | None = None
        self._pages: OrderedDict[int, Page] = OrderedDict()

    def page_of(self, row: int) -> int:
        return row // self.page_size

    def offset_of(self, page: int) -> int:
        return page * self.page_size

    def has_page(self, page: int) -> bool:
        return page in self._pages

    def row(self, row: int) -> BrowseRow | None:
        """Row ``row`` if its page is in memory (and marks the page as recently used), else ``None``."""
        found = self.locate(row)
        return None if found is None else found[0].row(found[1])

    def locate(self, row: int) -> tuple[Page, int] | None:
        """The page holding row ``row`` and the row's index in it, if that page is in memory (and marks
        it as recently used); a view reads a cell from there without building the row."""
        page = self.page_of(row)
        found = self._pages.get(page)
        if found is None:
            return None
        self._pages.move_to_end(page)
        index = row - self.offset_of(page)
        return (found, index) if index < len(found) else None

    def store(self, page: Page) -> list[int]:
        """Keep ``page`` (its offset must start a page) and return the page numbers dropped to make room."""
        if page.offset % self.page_size:
            raise ValueError(f"page offset {page.offset} is not a multiple of {self.page_size}")
        number = self.page_of(page.offset)
        self.total = page.total
        self._pages[number] = page
        self._pages.move_to_end(number)
        dropped = []
        while len(self._pages) > self.max_pages:
            oldest, _ = self._pages.popitem(last=False)
            dropped.append(oldest)
        return dropped

    def clear(self) -> None:
        self._pages.clear()
        self.total = None

    @property
    def pages_held(self) -> int:
        return len(self._pages)

    @property
    def rows_held(self) -> int:
        return sum(len(page) for page in self._pages.values())
