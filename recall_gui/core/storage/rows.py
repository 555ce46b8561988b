"""LanceDB's answers as Python values: the rows of a search (hits) or of a page, converted column by column.

Searching and browsing both read rows through :func:`columns_from_arrow`, so an id, a missing text or a
table without an id column reads the same in the results as in the browsed table.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from recall_gui.core.base.types import SearchHit
from recall_gui.core.storage.columns import ColumnMapping

if TYPE_CHECKING:
    import pyarrow as pa


@dataclass(frozen=True)
class ArrowColumns:
    """LanceDB's rows as Python values, column by column (each converted by Arrow in one call)."""

    #: As the tool and the window show them: missing as empty text, anything else as its text; a table
    #: without an id column uses row ids.
    ids: tuple[str, ...]
    contents: tuple[str, ...]
    row_ids: list[int | None]
    #: ``None`` when the rows carry no ``_distance`` (browsing).
    distances: list[float] | None
    #: Every other non-vector column, by name.
    extra: dict[str, list[Any]]


def columns_from_arrow(rows: pa.Table, columns: ColumnMapping) -> ArrowColumns:
    """What searching and browsing read from LanceDB's answer, whether it is made into hits or a page."""
    data: dict[str, list[Any]] = {
        name: rows.column(name).to_pylist() for name in rows.column_names if name != columns.vector
    }
    distances = data.pop("_distance", None)
    row_ids = data.pop("_rowid", None) or [None] * rows.num_rows
    ids = data.pop(columns.id) if columns.id else [str(r) for r in row_ids]
    contents = data.pop(columns.content)
    return ArrowColumns(_texts(ids), _texts(contents), row_ids, distances, data)


def hits_from_arrow(rows: pa.Table, columns: ColumnMapping) -> tuple[SearchHit, ...]:
    """Convert LanceDB's answer (nearest first, with ``_distance`` and ``_rowid``) into hits."""
    found = columns_from_arrow(rows, columns)
    distances = found.distances or [0.0] * rows.num_rows
    vectors = _vector_rows(rows, columns.vector)
    return tuple(
        SearchHit(
            id=found.ids[i],
            content=found.contents[i],
            distance=float(distances[i]),
            row_id=found.row_ids[i],
            extra={name: values[i] for name, values in found.extra.items()},
            vector=vectors[i],
        )
        for i in range(rows.num_rows)
    )


def _vector_rows(rows: pa.Table, name: str) -> list[Any]:
    """Each row's vector, as a row of a NumPy matrix over Arrow's own buffer when the column is a
    fixed-size list without nulls (what every embedding table holds), else as a tuple (or ``None``)."""
    import pyarrow as pa

    if name not in rows.column_names:
        return [None] * rows.num_rows
    column = rows.column(name)
    if not pa.types.is_fixed_size_list(column.type) or column.null_count:
        return [None if vector is None else tuple(vector) for vector in column.to_pylist()]
    width = column.type.list_size
    found: list[Any] = []
    for chunk in column.chunks:
        start = chunk.offset * width
        values = chunk.values.slice(start, len(chunk) * width).to_numpy(zero_copy_only=False)
        found.extend(values.reshape(len(chunk), width))
    return found


def _texts(values: list[Any]) -> tuple[str, ...]:
    return tuple("" if value is None else value if type(value) is str else str(value) for value in values)


#: How an entry without an id is named: this, then ``content·`` and its content's short hash.
NO_ID = "(no id)"


def entry_name(entry_id: str, content: str) -> str:
    """How a person is told which entry it is: its id, or for one without (null or empty)
    ``(no id) content·3f2a9c1e``, the first 8 hex digits of the sha256 of its content's UTF-8 bytes."""
    if entry_id:
        return entry_id
    import hashlib

    digest = hashlib.sha256(content.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{NO_ID} content·{digest}"
