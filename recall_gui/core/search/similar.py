""" "More like this": the table searched with one of its own rows' stored vectors, through the search
pipeline an agent's query takes (the row itself comes first, at distance ~0)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from recall_gui.core.base.errors import InvalidInputError
from recall_gui.core.base.json_output import json_text
from recall_gui.core.base.types import SearchHit
from recall_gui.core.registry.registry_types import DatabaseEntry
from recall_gui.core.search.harness import Harness, SearchReport
from recall_gui.core.session.session import Session
from recall_gui.core.storage.lance_calls import read_query
from recall_gui.core.storage.target import TableTarget
from recall_gui.core.tables.browse import fetch_row


@dataclass(frozen=True)
class FoundEntry:
    """The row an id names (the first in table order), and how many rows carry that id."""

    hit: SearchHit
    sharing_id: int


def like_label(entry_id: str) -> str:
    """What a "more like this" search shows where a search by text shows its query."""
    return f"more like {entry_id}"


async def find_entry(session: Session, target: TableTarget, entry_id: str) -> FoundEntry:
    """The row whose id is ``entry_id``, vector included (for a table without an id column, ``entry_id``
    is the row id the window shows)."""
    opened = await session.tables.open(target)
    id_column = opened.columns.id
    missing = InvalidInputError(
        f'no entry with the id "{entry_id}" in "{target.table_name}"',
        hint="Copy the id from `recall-gui search` or from the window.",
    )
    if id_column is None:
        if not entry_id.isdigit():
            raise missing
        hit = await fetch_row(session, target, int(entry_id))
        if hit is None:
            raise missing
        return FoundEntry(hit, 1)
    import pyarrow as pa

    from recall_gui.core.storage.rows import hits_from_arrow

    literal = "'" + entry_id.replace("'", "''") + "'"
    column = "`" + id_column.replace("`", "``") + "`"
    field = opened.schema.field(id_column).type
    is_text = pa.types.is_string(field) or pa.types.is_large_string(field)
    where = f"{column} = {literal}" if is_text else f"CAST({column} AS VARCHAR) = {literal}"
    rows = await read_query(opened.table.query().where(where).with_row_id(), f'finding "{entry_id}"')
    if rows.num_rows == 0:
        raise missing
    rows = rows.sort_by("_rowid")
    return FoundEntry(hits_from_arrow(rows.slice(0, 1), opened.columns)[0], rows.num_rows)


async def more_like(harness: Harness, entry: DatabaseEntry, hit: SearchHit, limit: int) -> SearchReport:
    """The ``limit`` rows nearest to ``hit``'s stored vector, as the agent's search ranks them."""
    if hit.vector is None:
        raise InvalidInputError(
            f'the entry "{hit.id}" has no stored vector to search with',
            hint="Its vector is missing (null) in the table.",
        )
    import numpy as np

    vector = np.asarray(hit.vector, dtype=np.float32)
    return await harness.search_vector(entry, vector, limit, label=like_label(hit.id))


def similar_json(report: SearchReport) -> str:
    """``recall-gui search``'s JSON with each result's distance: ``{"query", "results": [{"id", "content",
    "distance"}]}`` (a distance that is not finite as a string: :mod:`recall_gui.core.base.json_output`)."""
    result = report.result
    data: dict[str, Any] = {
        "query": result.query,
        "results": [{"id": hit.id, "content": hit.content, "distance": hit.distance} for hit in result.hits],
    }
    return json_text(data, ensure_ascii=False, separators=(",", ":"))
