"""Read-only browsing of a table: its description, pages of rows, one row in full.

Pages are fetched by row offset (``take_offsets``), which reads only the rows asked for, so scrolling a
1M-row table costs the same at the end as at the start and never loads the table. Vectors are left out of
pages (they are the bulk of a row) and fetched only for the one row a user opens.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from recall_gui.core.columns import ColumnMapping
from recall_gui.core.nearest import hits_from_arrow
from recall_gui.core.tables import OpenTable, TableOptions, bounded, open_table, read_query
from recall_gui.core.types import SearchHit

MAX_PAGE = 10_000


@dataclass(frozen=True)
class IndexInfo:
    """One index of a table, as shown in the database details."""

    name: str
    index_type: str
    columns: tuple[str, ...]
    metric: str | None = None


@dataclass(frozen=True)
class TableInfo:
    """What the window shows when a database is chosen."""

    uri: str
    name: str
    version: int
    row_count: int
    schema: tuple[tuple[str, str], ...]
    columns: ColumnMapping
    indexes: tuple[IndexInfo, ...]
    default_metric: str


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
    """Rows ``offset`` .. ``offset + len(rows)`` of ``total`` (after the filter, when there is one)."""

    offset: int
    rows: tuple[BrowseRow, ...]
    total: int


async def describe_table(uri: str, table_name: str, options: TableOptions | None = None) -> TableInfo:
    opened = await open_table(uri, table_name, options)
    what = f'reading table "{table_name}"'
    row_count = await bounded(opened.table.count_rows(), what)
    configs = await bounded(opened.table.list_indices(), what)
    metrics = {ix.name: ix.metric for ix in opened.indexes}
    indexes = tuple(
        IndexInfo(c.name, str(c.index_type), tuple(c.columns), metrics.get(c.name)) for c in configs
    )
    schema = tuple((f.name, str(f.type)) for f in opened.schema)
    return TableInfo(
        uri, opened.name, opened.version, row_count, schema, opened.columns, indexes, opened.default_metric()
    )


def filter_expression(columns: ColumnMapping, text: str) -> str | None:
    """A case-insensitive substring filter over id and content, as LanceDB SQL; ``None`` for no filter."""
    needle = text.strip().lower()
    if not needle:
        return None
    literal = "'" + needle.replace("'", "''") + "'"
    targets = [columns.content] + ([columns.id] if columns.id else [])
    parts = [f"strpos(lower(CAST({_quote(name)} AS VARCHAR)), {literal}) > 0" for name in targets]
    return " OR ".join(parts)


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _page_columns(opened: OpenTable) -> list[str]:
    return [name for name in opened.schema.names if name != opened.columns.vector]


async def fetch_page(
    uri: str,
    table_name: str,
    *,
    offset: int,
    limit: int,
    options: TableOptions | None = None,
    filter_text: str = "",
) -> Page:
    """Rows from ``offset`` on (at most ``limit``), optionally only those whose id or content contains
    ``filter_text``."""
    opened = await open_table(uri, table_name, options)
    what = f'reading table "{table_name}"'
    offset, limit = max(0, offset), max(0, min(limit, MAX_PAGE))
    where = filter_expression(opened.columns, filter_text)
    columns = _page_columns(opened)
    if where is None:
        total = await bounded(opened.table.count_rows(), what)
        wanted = list(range(offset, min(offset + limit, total)))
        if not wanted:
            return Page(offset, (), total)
        rows = await read_query(opened.table.take_offsets(wanted).select(columns).with_row_id(), what)
    else:
        total = await bounded(opened.table.count_rows(where), what)
        query = opened.table.query().where(where).select(columns).with_row_id().offset(offset).limit(limit)
        rows = await read_query(query, what)
    hits = hits_from_arrow(rows, opened)
    return Page(
        offset,
        tuple(
            BrowseRow(offset + i, hit.id, hit.content, hit.row_id, hit.extra) for i, hit in enumerate(hits)
        ),
        total,
    )


async def fetch_row(
    uri: str, table_name: str, row_id: int, options: TableOptions | None = None
) -> SearchHit | None:
    """One row in full, vector included, by its LanceDB row id; ``None`` if it no longer exists."""
    opened = await open_table(uri, table_name, options)
    taking = opened.table.take_row_ids([row_id]).with_row_id()
    rows = await read_query(taking, f'reading table "{table_name}"')
    hits = hits_from_arrow(rows, opened)
    return hits[0] if hits else None
