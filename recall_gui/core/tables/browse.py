"""Read-only browsing of a table: its description, pages of rows, one row in full.

Pages are fetched by row offset (``take_offsets``), which reads only the rows asked for, so scrolling a
1M-row table costs the same at the end as at the start and never loads the table. Vectors are left out of
pages (they are the bulk of a row) and fetched only for the one row a user opens.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from recall_gui.core.base.captions import plural, quoted
from recall_gui.core.base.types import SearchHit
from recall_gui.core.session.session import Session
from recall_gui.core.storage.columns import ColumnMapping
from recall_gui.core.storage.lance_calls import read_query
from recall_gui.core.storage.open_table import OpenTable, TableIndex
from recall_gui.core.storage.rows import columns_from_arrow, hits_from_arrow
from recall_gui.core.storage.target import TableTarget

if TYPE_CHECKING:
    import pyarrow as pa

MAX_PAGE = 10_000


@dataclass(frozen=True)
class TableInfo:
    """What the window shows when a database is chosen."""

    uri: str
    name: str
    version: int
    row_count: int
    schema: tuple[tuple[str, str], ...]
    columns: ColumnMapping
    indexes: tuple[TableIndex, ...]
    default_metric: str

    @property
    def metadata_columns(self) -> list[str]:
        """Every column that is neither id, content nor vector."""
        return self.columns.metadata([name for name, _kind in self.schema])


@dataclass(frozen=True)
class BrowseRow:
    """One row of a page: its position, id, text and metadata (no vector)."""

    offset: int
    id: str
    content: str
    row_id: int | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Page:
    """Rows ``offset`` .. ``offset + len(page)`` of ``total`` (after the filter, when there is one).

    The rows are kept as columns, one tuple per column: a page of 1024 rows is a handful of Python objects
    rather than a thousand, so paging through a long table leaves the garbage collector next to nothing
    to scan (docs/PERFORMANCE_LOG.md#browse-page), and a view reads a cell by position
    without building a row. :meth:`row` builds one row when a caller wants it whole.
    """

    offset: int
    total: int
    ids: tuple[str, ...] = ()
    contents: tuple[str, ...] = ()
    row_ids: tuple[int | None, ...] = ()
    #: The metadata columns by name, each as long as ``ids``.
    extra: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)
    #: The version of the table the page was read from (``None``: not read from a table).
    version: int | None = None

    @staticmethod
    def of_rows(offset: int, rows: Sequence[BrowseRow], total: int) -> Page:
        """A page holding ``rows`` (metadata columns missing from a row read as ``None``)."""
        names = list(dict.fromkeys(name for row in rows for name in row.extra))
        return Page(
            offset,
            total,
            tuple(row.id for row in rows),
            tuple(row.content for row in rows),
            tuple(row.row_id for row in rows),
            {name: tuple(row.extra.get(name) for row in rows) for name in names},
        )

    def __len__(self) -> int:
        return len(self.ids)

    def row(self, index: int) -> BrowseRow:
        """Row ``index`` of the page (0-based within the page)."""
        extra = {name: values[index] for name, values in self.extra.items()}
        content, row_id = self.contents[index], self.row_ids[index]
        return BrowseRow(self.offset + index, self.ids[index], content, row_id, extra)

    @property
    def rows(self) -> tuple[BrowseRow, ...]:
        return tuple(self.row(index) for index in range(len(self)))


async def describe_table(session: Session, target: TableTarget) -> TableInfo:
    opened = await session.tables.open(target)
    row_count = await opened.count_rows()
    schema = tuple((f.name, str(f.type)) for f in opened.schema)
    return TableInfo(
        target.uri,
        opened.name,
        opened.version,
        row_count,
        schema,
        opened.columns,
        opened.indexes,
        opened.default_metric(),
    )


async def why_empty(
    session: Session, target: TableTarget, where: str | None, limit: int | None = None
) -> str:
    """Why a search (with ``limit``) or a browse of ``target`` found nothing, in a sentence: a limit of 0,
    no row kept by ``where`` (and how many rows the table has), or no row at all."""
    if limit == 0:
        return "No results: the limit is 0."
    opened = await session.tables.open(target)
    total = await opened.count_rows()
    at = f" at version {target.version}" if target.version is not None else ""
    if total == 0:
        return f"No results: {target.table_name} has no rows{at}."
    if where is not None and await opened.count_rows(where) == 0:
        return (
            f"No row matches the filter {quoted(where)} ({target.table_name} has {plural(total, 'row')}{at})."
        )
    return f"No results, although {target.table_name} has {plural(total, 'row')}{at}."


def filter_expression(columns: ColumnMapping, text: str) -> str | None:
    """A case-insensitive substring filter over id and content, as LanceDB SQL; ``None`` for no filter."""
    needle = text.strip().lower()
    if not needle:
        return None
    literal = "'" + needle.replace("'", "''") + "'"
    targets = [columns.content] + ([columns.id] if columns.id else [])
    parts = [f"strpos(lower(CAST({_quote(name)} AS VARCHAR)), {literal}) > 0" for name in targets]
    return " OR ".join(parts)


def both(first: str | None, second: str | None) -> str | None:
    """Two filters, both applied (either may be missing)."""
    if first is None or second is None:
        return first if second is None else second
    return f"({first}) AND ({second})"


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


async def fetch_page(
    session: Session,
    target: TableTarget,
    *,
    offset: int,
    limit: int,
    filter_text: str = "",
    where: str | None = None,
) -> Page:
    """Rows from ``offset`` on (at most ``limit``), optionally only those whose id or content contains
    ``filter_text`` and that the LanceDB SQL predicate ``where`` keeps."""
    opened = await session.tables.open(target)
    what = f'reading table "{target.table_name}"'
    offset, limit = max(0, offset), max(0, min(limit, MAX_PAGE))
    if where is not None:
        await opened.check_filter(where)
    where = both(filter_expression(opened.columns, filter_text), where)
    columns = opened.row_columns
    total = await opened.count_rows(where)
    if where is None:
        wanted = list(range(offset, min(offset + limit, total)))
        if not wanted:
            return Page(offset, total, version=opened.version)
        rows = await read_query(opened.table.take_offsets(wanted).select(columns).with_row_id(), what)
    else:
        query = opened.table.query().where(where).select(columns).with_row_id().offset(offset).limit(limit)
        rows = await read_query(query, what)
    return page_from_arrow(rows, opened, offset, total)


def page_from_arrow(rows: pa.Table, opened: OpenTable, offset: int, total: int) -> Page:
    """LanceDB's rows (with ``_rowid``, without vectors) as a page, column by column: no per-row objects."""
    found = columns_from_arrow(rows, opened.columns)
    extra = {name: tuple(values) for name, values in found.extra.items()}
    return Page(offset, total, found.ids, found.contents, tuple(found.row_ids), extra, opened.version)


async def fetch_row(session: Session, target: TableTarget, row_id: int) -> SearchHit | None:
    """One row in full, vector included, by its LanceDB row id; ``None`` if it no longer exists."""
    opened = await session.tables.open(target)
    taking = opened.table.take_row_ids([row_id]).with_row_id()
    rows = await read_query(taking, f'reading table "{target.table_name}"')
    hits = hits_from_arrow(rows, opened.columns)
    return hits[0] if hits else None
