"""The low-level, read-only nearest-neighbour search (cosh's `recall::search`).

``search`` takes a fully resolved :class:`RecallSearchInput` and returns the agent-facing output;
``search_hits`` is the same search with what the window shows besides (distances, row ids, metadata,
the method used). The metric is always set explicitly: a table's vector index decides it when there is
one (so the index is used), otherwise cosh's L2.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import numpy as np

from recall_gui.core.errors import DimensionMismatchError, InvalidInputError
from recall_gui.core.tables import OpenTable, TableOptions, bounded, open_table
from recall_gui.core.types import RecallOutput, RecallSearchInput, SearchHit, SearchResult

if TYPE_CHECKING:
    import pyarrow as pa
    from lancedb.query import AsyncVectorQuery

METRICS = ("l2", "cosine", "dot")


async def search(input: RecallSearchInput, options: TableOptions | None = None) -> RecallOutput:
    """The ``limit`` entries nearest to ``input.query_vector``, nearest first."""
    return (await search_hits(input, options)).to_output()


async def search_hits(input: RecallSearchInput, options: TableOptions | None = None) -> SearchResult:
    """:func:`search` with distances, row ids and every other column of each hit."""
    started = time.perf_counter()
    opened = await open_table(input.db_uri, input.table_name, options)
    table_dim = opened.columns.vector_dim
    if input.vector_dim != table_dim:
        raise DimensionMismatchError(input.vector_dim, table_dim, hint=_dimension_hint())
    vector = np.asarray(input.query_vector, dtype=np.float32)
    if vector.ndim != 1 or vector.shape[0] != table_dim:
        raise DimensionMismatchError(int(vector.size), table_dim, hint=_dimension_hint())
    if not np.all(np.isfinite(vector)):
        raise InvalidInputError("the query vector contains NaN or infinite values")
    metric = _metric(opened, options)
    limit = input.effective_limit
    index = opened.vector_index()
    use_index = index is not None and index.metric == metric
    method = f"index:{index.index_type}" if use_index and index else "flat"
    if limit <= 0:
        hits: tuple[SearchHit, ...] = ()
    else:
        query = opened.table.query().nearest_to(vector).column(opened.columns.vector).distance_type(metric)
        query = _tune(query, opened, limit) if use_index else query.bypass_vector_index()
        rows = await bounded(query.limit(limit).with_row_id().to_arrow(), f'searching "{opened.name}"')
        hits = hits_from_arrow(rows, opened)
    elapsed = (time.perf_counter() - started) * 1000
    return SearchResult(input.query, hits, metric, method, elapsed, opened.version)


def _dimension_hint() -> str:
    return "The query was embedded with a model of another width than the one that built this table."


def _metric(opened: OpenTable, options: TableOptions | None) -> str:
    metric = (options.metric if options else None) or opened.default_metric()
    metric = metric.lower()
    if metric not in METRICS:
        raise InvalidInputError(f'unknown distance metric "{metric}" (expected one of {", ".join(METRICS)})')
    return metric


def _tune(query: AsyncVectorQuery, opened: OpenTable, limit: int) -> AsyncVectorQuery:
    """Search settings for an indexed table, chosen for recall@10 >= 0.95 (see bench/)."""
    index = opened.vector_index()
    kind = index.index_type.upper() if index else ""
    if "IVF" in kind:
        query = query.nprobes(20)
    if "HNSW" in kind:
        query = query.ef(max(64, limit * 4))
    if "PQ" in kind or "SQ" in kind or "RQ" in kind:
        query = query.refine_factor(10)
    return query


def hits_from_arrow(rows: pa.Table, opened: OpenTable) -> tuple[SearchHit, ...]:
    """Convert LanceDB's answer (nearest first, with ``_distance`` and ``_rowid``) into hits."""
    columns = opened.columns
    data: dict[str, list[Any]] = {name: rows.column(name).to_pylist() for name in rows.column_names}
    distances = data.pop("_distance", [0.0] * rows.num_rows)
    row_ids = data.pop("_rowid", [None] * rows.num_rows)
    vectors = data.pop(columns.vector, [None] * rows.num_rows)
    ids = data.pop(columns.id) if columns.id else [str(r) for r in row_ids]
    contents = data.pop(columns.content)
    hits = []
    for i in range(rows.num_rows):
        vector = vectors[i]
        hits.append(
            SearchHit(
                id=_text(ids[i]),
                content=_text(contents[i]),
                distance=float(distances[i]),
                row_id=row_ids[i],
                extra={name: values[i] for name, values in data.items()},
                vector=tuple(vector) if vector is not None else None,
            )
        )
    return tuple(hits)


def _text(value: Any) -> str:
    return "" if value is None else str(value)
