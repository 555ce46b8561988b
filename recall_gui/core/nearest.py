"""The low-level, read-only nearest-neighbour search (cosh's `recall::search`).

``search`` takes a fully resolved :class:`RecallSearchInput` and returns the agent-facing output;
``search_hits`` is the same search with what the window shows besides (distances, row ids, metadata,
the method used). The metric is always set explicitly: a table's vector index decides it when there is
one (so the index is used), otherwise cosh's L2.

Three paths, reported in ``SearchResult.method``:

- ``index:<type>``: a table with an ANN index for the metric is searched through it, with the settings
  :func:`_tune` chooses;
- ``exact``: otherwise the table's vectors are held in memory (:mod:`recall_gui.core.vector_cache`) and
  ranked exactly as LanceDB's flat search ranks them (:mod:`recall_gui.core.exact`); the hits' other
  columns come from memory too when they fit, else only the k hits are read from the table, by row id;
- ``flat``: LanceDB's own flat scan, when the vectors do not fit the memory the user allows (the
  result's ``note`` says why).
"""

from __future__ import annotations

import asyncio
import time
from concurrent.futures import Future
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from recall_gui.core.errors import DimensionMismatchError, InvalidInputError
from recall_gui.core.exact import VectorMatrix, nearest_rows
from recall_gui.core.tables import (
    OpenTable,
    TableOptions,
    VectorIndex,
    open_table,
    opened_recently,
    read_query,
)
from recall_gui.core.types import RecallOutput, RecallSearchInput, SearchHit, SearchResult, effective_limit
from recall_gui.core.vector_cache import VECTOR_CACHE, CachedTable, NotCached
from recall_gui.core.workers import compute_executor

if TYPE_CHECKING:
    import pyarrow as pa
    from lancedb.query import AsyncVectorQuery

    from recall_gui.core.embedders.base import Vector

METRICS = ("l2", "cosine", "dot")


async def search(input: RecallSearchInput, options: TableOptions | None = None) -> RecallOutput:
    """The ``limit`` entries nearest to ``input.query_vector``, nearest first."""
    return (await search_hits(input, options)).to_output()


async def search_hits(
    input: RecallSearchInput, options: TableOptions | None = None, *, opened: OpenTable | None = None
) -> SearchResult:
    """:func:`search` with distances, row ids and every other column of each hit.

    ``opened``: the table as :func:`open_for_search` returned it for this very search (the harness opens
    it first to check the model's dimension): it is not opened, nor its version read, a second time.
    """
    started = time.perf_counter()
    if opened is None:
        opened = await open_for_search(input.db_uri, input.table_name, options)
    table_dim = opened.columns.vector_dim
    if input.vector_dim != table_dim:
        raise DimensionMismatchError(input.vector_dim, table_dim, hint=_dimension_hint())
    answer = await _answer(
        opened, _checked_vector(input.query_vector, table_dim), input.effective_limit, options
    )
    elapsed = (time.perf_counter() - started) * 1000
    return SearchResult(
        input.query, answer.hits, answer.metric, answer.method, elapsed, opened.version, answer.note
    )


async def prepare(db_uri: str, table_name: str, options: TableOptions | None = None) -> str | None:
    """Get a table ready for its fastest search, e.g. when the user selects its database.

    Reads its vectors into memory when exact search applies (waiting for the read, which a search on a
    big table does not do). Returns why searches on it will be slower, or ``None``.
    """
    opened = await open_table(db_uri, table_name, options)
    if _index_for(opened, _metric(opened, options)) is not None:
        return None
    cached = await VECTOR_CACHE.get(opened, wait=True)
    return cached.reason if isinstance(cached, NotCached) else None


@dataclass(frozen=True)
class _Answer:
    hits: tuple[SearchHit, ...]
    metric: str
    method: str
    note: str | None = None


#: How often an indexed table's version is read before a search (seconds). Its rows need no such check:
#: the connection reads the newest version on every query (``read_consistency_interval=0``), so a row
#: another program adds is found by the very next search. The check would only notice a new schema or a
#: new or dropped index, which can wait this long; skipping it saves a round trip to LanceDB's runtime
#: (docs/PERFORMANCE.md#nearest-index_recheck_s). Exact search checks every time: its vectors in memory
#: belong to one version.
INDEX_RECHECK_S = 1.0


async def open_for_search(db_uri: str, table_name: str, options: TableOptions | None = None) -> OpenTable:
    """The table, opened for a search: without reading its version again when it is searched through
    its index and its version was read within :data:`INDEX_RECHECK_S`."""
    opened = opened_recently(db_uri, table_name, options, INDEX_RECHECK_S)
    if opened is not None and _index_for(opened, _metric(opened, options)) is not None:
        return opened
    return await open_table(db_uri, table_name, options)


def _index_for(opened: OpenTable, metric: str) -> VectorIndex | None:
    """The vector index a search with ``metric`` goes through, if any (its metric must match)."""
    index = opened.vector_index()
    return index if index is not None and index.metric == metric else None


def _checked_vector(query_vector: object, table_dim: int) -> npt.NDArray[np.float32]:
    """The query vector as float32, if it can be searched in a table of ``table_dim`` dimensions."""
    vector = np.asarray(query_vector, dtype=np.float32)
    if vector.ndim != 1 or vector.shape[0] != table_dim:
        raise DimensionMismatchError(int(vector.size), table_dim, hint=_dimension_hint())
    if not np.all(np.isfinite(vector)):
        raise InvalidInputError("the query vector contains NaN or infinite values")
    return vector


async def _answer(
    opened: OpenTable,
    query: npt.NDArray[np.float32] | Future[Vector],
    limit: int,
    options: TableOptions | None,
) -> _Answer:
    """The hits for ``query``: its vector, or a worker thread's future of it (a query still being
    embedded), which is waited for only where the vector is needed.

    When the table's vectors are in memory and ranking them takes a thread, the ranking job itself waits
    for a future vector and ranks at once: the vector never passes through the event loop, which in the
    window saves a round trip through the GUI thread between embedding and ranking.
    """
    table_dim = opened.columns.vector_dim
    if not isinstance(query, Future):  # a vector at hand is refused before any work when it is wrong
        query = _checked_vector(query, table_dim)
    metric = _metric(opened, options)
    index = _index_for(opened, metric)
    if index is not None:
        vector = await _when_embedded(query, table_dim)
        hits = await _lance_search(opened, vector, metric, limit, indexed=True) if limit > 0 else ()
        return _Answer(hits, metric, f"index:{index.index_type}")
    if limit <= 0:
        await _when_embedded(query, table_dim)
        return _Answer((), metric, "exact")
    cached = await VECTOR_CACHE.get(opened)
    if isinstance(cached, NotCached):
        vector = await _when_embedded(query, table_dim)
        return _Answer(
            await _lance_search(opened, vector, metric, limit, indexed=False), metric, "flat", cached.reason
        )
    if cached.vectors.matrix.nbytes <= INLINE_RANK_BYTES:
        vector = await _when_embedded(query, table_dim)
        ranking = nearest_rows(cached.vectors, vector, metric, limit)
    else:
        job = compute_executor().submit(_rank, query, cached.vectors, metric, limit, table_dim)
        vector, ranking = await asyncio.wrap_future(job)
    exact_hits = await _exact_hits(opened, cached, *ranking)
    if exact_hits is None:
        flat_hits = await _lance_search(opened, vector, metric, limit, indexed=False)
        return _Answer(flat_hits, metric, "flat", _CHANGED_WHILE_SEARCHING)
    return _Answer(exact_hits, metric, "exact")


async def _when_embedded(
    query: npt.NDArray[np.float32] | Future[Vector], table_dim: int
) -> npt.NDArray[np.float32]:
    if isinstance(query, Future):
        vector: Vector = await asyncio.wrap_future(query)
        return _checked_vector(vector, table_dim)
    return query


def _rank(
    query: npt.NDArray[np.float32] | Future[Vector],
    vectors: VectorMatrix,
    metric: str,
    limit: int,
    table_dim: int,
) -> tuple[npt.NDArray[np.float32], Ranking]:
    """On the compute thread: the vector (waited for, if it is still being embedded), and its ranking.
    What is wrong with a waited-for vector, or the embedding's own error, is raised here and so reaches
    the caller."""
    vector = _checked_vector(query.result(), table_dim) if isinstance(query, Future) else query
    return vector, nearest_rows(vectors, vector, metric, limit)


async def search_embedded(
    opened: OpenTable,
    query: str,
    limit: int | None,
    pending: Future[Vector],
    options: TableOptions | None = None,
) -> SearchResult:
    """:func:`search_hits` for a query whose vector another thread is still embedding (see
    :func:`_answer` for what that saves)."""
    started = time.perf_counter()
    embedded_at: list[float] = []
    pending.add_done_callback(lambda _: embedded_at.append(time.perf_counter()))
    answer = await _answer(opened, pending, effective_limit(limit), options)
    # The search's own time: from when both the call and the vector were there.
    elapsed = (time.perf_counter() - max([started, *embedded_at])) * 1000
    hits, note = answer.hits, answer.note
    return SearchResult(query, hits, answer.metric, answer.method, elapsed, opened.version, note)


#: Positions in the vector matrix and distances of the nearest rows, nearest first.
Ranking = tuple[npt.NDArray[np.intp], npt.NDArray[np.float32]]

#: Ranking inline costs the event loop at most about a millisecond below this size; above, a thread.
INLINE_RANK_BYTES = 16 * 1024 * 1024
_CHANGED_WHILE_SEARCHING = "the table changed during the search, so LanceDB's flat scan answered it"


async def _exact_hits(
    opened: OpenTable,
    cached: CachedTable,
    positions: npt.NDArray[np.intp],
    distances: npt.NDArray[np.float32],
) -> tuple[SearchHit, ...] | None:
    """The hits of an in-memory ranking, built from memory or, when only the vectors are held, read
    from the table by row id; ``None`` if they vanished from it meanwhile (the table changed)."""
    vectors = cached.vectors
    if len(positions) == 0:
        return ()
    import pyarrow as pa

    row_ids = vectors.row_ids[positions]
    if cached.payload is not None:
        ranked = cached.payload.take(pa.array(positions)).append_column("_rowid", pa.array(row_ids))
    else:
        wanted = [int(row_id) for row_id in row_ids]
        others = [name for name in opened.schema.names if name != opened.columns.vector]
        taking = opened.table.take_row_ids(wanted).select(others).with_row_id()
        rows = await read_query(taking, f'reading the hits from "{opened.name}"')
        # take_row_ids answers in row-id order, not in the order asked: put the hits back in rank order.
        position = {row_id: i for i, row_id in enumerate(rows.column("_rowid").to_pylist())}
        if len(position) != len(wanted) or any(row_id not in position for row_id in wanted):
            return None
        ranked = rows.take([position[row_id] for row_id in wanted])
    # The vectors are the ones in memory (the same float32 values): no need to read them again.
    hit_vectors = vectors.matrix[positions]
    ranked = ranked.append_column(
        opened.columns.vector,
        pa.FixedSizeListArray.from_arrays(pa.array(hit_vectors.ravel()), hit_vectors.shape[1]),
    )
    ranked = ranked.append_column("_distance", pa.array(distances, pa.float32()))
    return hits_from_arrow(ranked, opened)


async def _lance_search(
    opened: OpenTable, vector: npt.NDArray[np.float32], metric: str, limit: int, *, indexed: bool
) -> tuple[SearchHit, ...]:
    query = opened.table.query().nearest_to(vector).column(opened.columns.vector).distance_type(metric)
    query = _tune(query, opened, limit) if indexed else query.bypass_vector_index()
    rows = await read_query(query.limit(limit).with_row_id(), f'searching "{opened.name}"')
    return hits_from_arrow(rows, opened)


def _dimension_hint() -> str:
    return "The query was embedded with a model of another width than the one that built this table."


def _metric(opened: OpenTable, options: TableOptions | None) -> str:
    metric = (options.metric if options else None) or opened.default_metric()
    metric = metric.lower()
    if metric not in METRICS:
        raise InvalidInputError(f'unknown distance metric "{metric}" (expected one of {", ".join(METRICS)})')
    return metric


#: Rows re-ranked with full vectors per result on product-quantized indexes (``refine_factor``).
PQ_REFINE_FACTOR = 10
#: Smallest HNSW candidate list (``ef``); LanceDB's default is 1.5 x limit.
HNSW_MIN_EF = 50
#: HNSW candidates per result asked for, when that is more than :data:`HNSW_MIN_EF`.
HNSW_EF_PER_RESULT = 4


def _tune(query: AsyncVectorQuery, opened: OpenTable, limit: int) -> AsyncVectorQuery:
    """Search settings for an indexed table: recall@10 >= 0.95 at the least extra cost measured (per index
    type: docs/PERFORMANCE.md#nearest-_tune).

    Product quantization is what loses recall (its distances are coarse): re-ranking ``refine_factor``
    times more rows with their full vectors restores it. HNSW's candidate list must hold at least the
    rows asked for (``limit``, times the refine factor when there is one). ``nprobes`` stays at
    LanceDB's default (20): at 100k rows the default partitioning probes enough that more changed
    nothing; on much larger tables more partitions exist and recall may call for more.
    """
    index = opened.vector_index()
    kind = index.index_type.upper().replace("_", "") if index else ""
    candidates = limit
    if "PQ" in kind:
        query = query.refine_factor(PQ_REFINE_FACTOR)
        candidates = limit * PQ_REFINE_FACTOR
    if "HNSW" in kind:
        query = query.ef(max(HNSW_MIN_EF, HNSW_EF_PER_RESULT * limit, candidates))
    return query


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


def columns_from_arrow(rows: pa.Table, opened: OpenTable) -> ArrowColumns:
    """What searching and browsing read from LanceDB's answer, whether it is made into hits or a page."""
    columns = opened.columns
    data: dict[str, list[Any]] = {
        name: rows.column(name).to_pylist() for name in rows.column_names if name != columns.vector
    }
    distances = data.pop("_distance", None)
    row_ids = data.pop("_rowid", None) or [None] * rows.num_rows
    ids = data.pop(columns.id) if columns.id else [str(r) for r in row_ids]
    contents = data.pop(columns.content)
    return ArrowColumns(_texts(ids), _texts(contents), row_ids, distances, data)


def hits_from_arrow(rows: pa.Table, opened: OpenTable) -> tuple[SearchHit, ...]:
    """Convert LanceDB's answer (nearest first, with ``_distance`` and ``_rowid``) into hits."""
    found = columns_from_arrow(rows, opened)
    distances = found.distances or [0.0] * rows.num_rows
    vectors = _vector_rows(rows, opened.columns.vector)
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
