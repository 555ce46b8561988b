"""The ranking stage of a search: the rows nearest to a query vector, read-only (cosh's `recall::search`).

:func:`rank` takes an open table and a :class:`~recall_gui.core.embedders.base.QueryVector` (still being
embedded, or given) and answers with the hits. The metric is always set explicitly: a table's vector index
decides it when there is one (so the index is used), otherwise cosh's L2. Three ways, reported in
``Ranked.method``:

- ``index:<type>``: a table with an ANN index for the metric is searched through it, with LanceDB's
  default settings, as cosh's ``table.query().nearest_to(v).limit(n)`` searches it (an approximate search:
  the rows the agent gets, including the ones its index misses);
- ``exact``: otherwise the table's vectors are held in memory (:mod:`recall_gui.core.session.vector_cache`)
  and ranked exactly as LanceDB's flat search ranks them (:mod:`recall_gui.core.session.exact`);
- ``flat``: LanceDB's own flat scan, when the vectors are not in memory (``Ranked.note`` says why).

:func:`search` and :func:`search_hits` are the low-level search with a vector at hand; the harness runs
the whole pipeline (resolve, open, embed, rank) for a query text.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from recall_gui.core.base.errors import DimensionMismatchError, InvalidInputError
from recall_gui.core.base.types import (
    RecallOutput,
    RecallSearchInput,
    SearchHit,
    SearchResult,
    effective_limit,
)
from recall_gui.core.embedders.base import EmbeddedQuery, QueryVector
from recall_gui.core.session.exact import VectorMatrix, nearest_rows
from recall_gui.core.session.lance_distance import Measure
from recall_gui.core.session.session import Session
from recall_gui.core.session.vector_cache import CachedTable, NotCached, rows_at
from recall_gui.core.storage.lance_calls import bounded, read_query
from recall_gui.core.storage.open_table import OpenTable, TableIndex, metric_for
from recall_gui.core.storage.rows import hits_from_arrow
from recall_gui.core.storage.target import TableOptions, TableTarget

if TYPE_CHECKING:
    from lancedb.query import AsyncVectorQuery


async def search(
    session: Session, input: RecallSearchInput, options: TableOptions | None = None
) -> RecallOutput:
    """The ``limit`` entries nearest to ``input.query_vector``, nearest first."""
    return (await search_hits(session, input, options)).to_output()


async def search_hits(
    session: Session, input: RecallSearchInput, options: TableOptions | None = None
) -> SearchResult:
    """:func:`search` with distances, row ids and every other column of each hit."""
    started = time.perf_counter()
    options = options or TableOptions()
    opened = await open_for_search(session, TableTarget(input.db_uri, input.table_name, options))
    require_width(input.vector_dim, opened.columns.vector_dim, DIMENSION_HINT)
    vector = np.asarray(input.query_vector, dtype=np.float32)
    ranked = await rank(session, opened, QueryVector.given(vector, "the given vector"), input.limit, options)
    elapsed = (time.perf_counter() - started) * 1000
    return ranked.result(input.query, elapsed, opened.version)


async def prepare(session: Session, target: TableTarget) -> str | None:
    """Get a table ready for its fastest search, e.g. when the user chooses its database.

    Reads its vectors into memory when exact search applies (waiting for the read, which a search on a
    big table does not do). Returns why searches on it will be slower, or ``None``.
    """
    opened = await session.tables.open(target)
    if index_for(opened, metric_for(opened, target.options)) is not None:
        return None
    cached = await session.vectors.get(opened, wait=True)
    # The self-test of LanceDB's arithmetic waits for the first answer: until then LanceDB measures the
    # few candidates (a few ms more).
    return cached.reason if isinstance(cached, NotCached) else None


@dataclass(frozen=True)
class Ranked:
    """The ranking stage's answer: the hits, how they were found, and the vector they were found for."""

    hits: tuple[SearchHit, ...]
    metric: str
    #: "exact" (in memory), "flat" (LanceDB's scan) or "index:<type>".
    method: str
    query: EmbeddedQuery
    #: Why a slower way was taken, when it was.
    note: str | None = None

    def result(self, query: str, search_ms: float, version: int) -> SearchResult:
        return SearchResult(query, self.hits, self.metric, self.method, search_ms, version, self.note)


#: How often an indexed table's version is read before a search (seconds). Its rows need no such check:
#: the connection reads the newest version on every query (``read_consistency_interval=0``), so a row
#: another program adds is found by the very next search. The check would only notice a new schema or a
#: new or dropped index, which can wait this long; skipping it saves a round trip to LanceDB's runtime
#: (docs/PERFORMANCE_LOG.md#nearest-index_recheck_s). Exact search checks every time: its vectors in memory
#: belong to one version.
INDEX_RECHECK_S = 1.0


async def open_for_search(session: Session, target: TableTarget) -> OpenTable:
    """The table, opened for a search: without reading its version again when it is searched through
    its index and its version was read within :data:`INDEX_RECHECK_S`."""
    opened = session.tables.opened_recently(target, INDEX_RECHECK_S)
    if opened is not None and index_for(opened, metric_for(opened, target.options)) is not None:
        return opened
    return await session.tables.open(target)


def index_for(opened: OpenTable, metric: str) -> TableIndex | None:
    """The vector index a search with ``metric`` goes through, if any (its metric must match)."""
    index = opened.vector_index()
    return index if index is not None and index.metric == metric else None


DIMENSION_HINT = "The query was embedded with a model of another width than the one that built this table."


def require_width(width: int, table_dim: int, hint: str) -> None:
    """The one check that a vector of ``width`` can be searched in a table of ``table_dim``."""
    if width != table_dim:
        raise DimensionMismatchError(width, table_dim, hint=hint)


def checked_vector(embedded: EmbeddedQuery, table_dim: int) -> npt.NDArray[np.float32]:
    """The query vector as float32, if it can be searched in a table of ``table_dim`` dimensions."""
    vector = np.asarray(embedded.vector, dtype=np.float32)
    hint = (
        f"{embedded.used} returned {vector.size}-dimensional vectors; the table was built with another "
        "model. Fix the embedder in the registry."
    )
    require_width(int(vector.size) if vector.ndim == 1 else -1, table_dim, hint)
    if not np.all(np.isfinite(vector)):
        raise InvalidInputError("the query vector contains NaN or infinite values")
    return vector


async def rank(
    session: Session,
    opened: OpenTable,
    query: QueryVector,
    limit: int | None,
    options: TableOptions | None,
    *,
    where: str | None = None,
    columns: Sequence[str] | None = None,
) -> Ranked:
    """The ``limit`` rows of ``opened`` nearest to ``query`` (among those ``where`` keeps, a LanceDB SQL
    predicate applied before ranking), waiting for its vector only where it is needed (the table's
    vectors are looked up meanwhile).

    ``columns``: the columns each hit carries besides its id and content (``None``: every column, and the
    vector). The agent's answer needs none: on a table of thousands of columns, reading them all is
    what a search would spend its time on.

    When the vectors are in memory and ranking them takes a thread, the ranking job itself waits for a
    vector still being embedded on a worker and ranks at once: the vector never passes through the event
    loop, which in the window saves a round trip through the GUI thread between embedding and ranking.
    """
    limit = effective_limit(limit)
    table_dim = opened.columns.vector_dim
    metric = metric_for(opened, options)
    index = index_for(opened, metric)
    if where is not None:
        await opened.check_filter(where)
    if index is not None or limit <= 0:
        embedded = await _ready(query, table_dim)
        hits = (
            await _lance_search(opened, embedded, metric, limit, where, columns=columns, indexed=True)
            if limit > 0
            else ()
        )
        return Ranked(hits, metric, f"index:{index.index_type}" if index else "exact", embedded)
    cached = await session.vectors.get(opened)
    if isinstance(cached, NotCached):
        embedded = await _ready(query, table_dim)
        hits = await _lance_search(opened, embedded, metric, limit, where, columns=columns, indexed=False)
        return Ranked(hits, metric, "flat", embedded, cached.reason)
    matrix = cached.vectors
    allowed = None
    if where is not None:
        allowed = np.isin(matrix.row_ids, await opened.matching_row_ids(where), assume_unique=True)
    if matrix.matrix.nbytes <= INLINE_RANK_BYTES:
        embedded = await _ready(query, table_dim)
        vector = checked_vector(embedded, table_dim)
        measure = session.arithmetic.measure()
        positions, distances = nearest_rows(matrix, vector, metric, limit, allowed, measure=measure)
    else:
        if not query.on_worker:  # the event loop computes it: wait here, not on the compute thread
            await _ready(query, table_dim)
        ranking = functools.partial(_rank_when_ready, allowed=allowed, measure=session.arithmetic.measure())
        job = session.compute_executor.submit(ranking, query, matrix, metric, limit, table_dim)
        embedded, (positions, distances) = await asyncio.wrap_future(job)
    session.arithmetic.start()  # once an answer is ranked, so the self-test never slows one down
    hits_in_memory = await _exact_hits(opened, cached, positions, distances, columns)
    if hits_in_memory is None:
        hits = await _lance_search(opened, embedded, metric, limit, where, columns=columns, indexed=False)
        return Ranked(hits, metric, "flat", embedded, _CHANGED_WHILE_SEARCHING)
    return Ranked(hits_in_memory, metric, "exact", embedded, cached.note)


async def _ready(query: QueryVector, table_dim: int) -> EmbeddedQuery:
    """The query's vector once it is there, checked against the table's width."""
    embedded = await query.wait()
    checked_vector(embedded, table_dim)
    return embedded


def _rank_when_ready(
    query: QueryVector,
    vectors: VectorMatrix,
    metric: str,
    limit: int,
    table_dim: int,
    *,
    allowed: npt.NDArray[np.bool_] | None = None,
    measure: Measure,
) -> tuple[EmbeddedQuery, Ranking]:
    """On the compute thread: the vector (waited for, if it is still being embedded), and its ranking.
    What is wrong with the vector, or the embedding's own error, is raised here and so reaches the caller."""
    embedded = query.future.result()
    vector = checked_vector(embedded, table_dim)
    return embedded, nearest_rows(vectors, vector, metric, limit, allowed, measure=measure)


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
    columns: Sequence[str] | None = None,
) -> tuple[SearchHit, ...] | None:
    """The hits of an in-memory ranking, built from memory or, when only the vectors are held, read
    from the table by row id; ``None`` if they vanished from it meanwhile (the table changed)."""
    vectors = cached.vectors
    if len(positions) == 0:
        return ()
    import pyarrow as pa

    wanted = None if columns is None else hit_columns(opened, columns)
    ranked = await rows_at(opened, cached, positions, f'reading the hits from "{opened.name}"', wanted)
    if ranked is None:
        return None
    # The vectors are the ones in memory (the same float32 values): no need to read them again.
    hit_vectors = vectors.matrix[positions]
    if vectors.codes is not None:  # the rows ranked and these were read from the mapped copy: unmap them
        vectors.codes.release_rows()
    ranked = ranked.append_column(
        opened.columns.vector,
        pa.FixedSizeListArray.from_arrays(pa.array(hit_vectors.ravel()), hit_vectors.shape[1]),
    )
    ranked = ranked.append_column("_distance", pa.array(distances, pa.float32()))
    return hits_from_arrow(ranked, opened.columns)


def hit_columns(opened: OpenTable, columns: Sequence[str]) -> list[str]:
    """The id and content columns, then ``columns`` (each once, the vector never)."""
    mapping = opened.columns
    wanted = [name for name in (mapping.id, mapping.content, *columns) if name and name != mapping.vector]
    return list(dict.fromkeys(wanted))


async def _lance_search(
    opened: OpenTable,
    embedded: EmbeddedQuery,
    metric: str,
    limit: int,
    where: str | None,
    *,
    columns: Sequence[str] | None,
    indexed: bool,
) -> tuple[SearchHit, ...]:
    vector = checked_vector(embedded, opened.columns.vector_dim)
    query = _vector_query(opened, vector, metric, limit, where, indexed=indexed)
    if columns is not None:
        query = query.select([*hit_columns(opened, columns), "_distance"])
    rows = await read_query(query, f'searching "{opened.name}"')
    return hits_from_arrow(rows, opened.columns)


def _vector_query(
    opened: OpenTable,
    vector: npt.NDArray[np.float32],
    metric: str,
    limit: int,
    where: str | None = None,
    *,
    indexed: bool,
) -> AsyncVectorQuery:
    query = opened.query().nearest_to(vector).column(opened.columns.vector).distance_type(metric)
    if where is not None:
        query = query.where(where)  # the async API filters before ranking by default
    if not indexed:
        query = query.bypass_vector_index()
    # Through an index, nothing else is set: cosh's query is nearest_to(v).limit(n), so LanceDB's own
    # nprobes, no refine_factor and no ef decide which rows the agent gets (and so which ones it misses).
    limited: AsyncVectorQuery = query.limit(limit).with_row_id()
    return limited


async def check_searchable(session: Session, target: TableTarget) -> None:
    """Raise what a search of ``target`` would raise whatever the query: a metric the registry names that
    is unknown, a vector column or metric LanceDB refuses (its query plan is built, nothing is ranked),
    a row that cannot be made a hit (the first row is read). Reads one row; for health checks."""
    opened = await session.tables.open(target)
    metric = metric_for(opened, target.options)
    probe = np.zeros(opened.columns.vector_dim, dtype=np.float32)
    query = _vector_query(opened, probe, metric, 1, indexed=index_for(opened, metric) is not None)
    await bounded(query.explain_plan(), f'searching "{opened.name}"')
    first_row = opened.query().select(opened.row_columns).limit(1).with_row_id()
    first = await read_query(first_row, f'reading table "{opened.name}"')
    if first.num_rows:
        # Without its vector (the columns' check took its type) and distance: the rest must make a hit.
        hits_from_arrow(first, opened.columns)
