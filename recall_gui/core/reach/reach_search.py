"""Many queries searched as the agent searches them, at once: what each gets, and where a row ranks.

For every query the agent's results (the ``limit`` rows it gets) and, when the query is an entry's own,
that entry's place among the first ``depth`` rows. The agent's search is taken as it is for the table:

- ``exact``: no vector index for the metric and the vectors in memory: the queries are ranked in jobs
  of :data:`JOB_QUERIES` on the compute thread, each one matrix product over the held vectors
  (:func:`recall_gui.core.session.exact.nearest_rows_many`, exact and certified matrices alike), so each
  answer is the one the agent's search gives; the first ``limit`` of a ``depth``-long ranking are the
  agent's results, since the order (distance, then row id) is total;
- ``index:<type>``: the agent's indexed search per query (:func:`recall_gui.core.search.nearest.rank`, a
  few at a time); a row's place comes from the exact ranking when the vectors are in memory, else from
  the index searched ``depth`` deep (then approximate, and ``note`` says so);
- ``flat``: the vectors cannot be held: LanceDB's flat scan per query, ``depth`` deep.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from recall_gui.core.embedders.base import QueryVector
from recall_gui.core.search.harness import AGENT_COLUMNS
from recall_gui.core.search.nearest import index_for, rank
from recall_gui.core.session.exact import VectorMatrix, nearest_rows_many
from recall_gui.core.session.lance_distance import Measure
from recall_gui.core.session.session import Session
from recall_gui.core.session.vector_cache import NotCached
from recall_gui.core.storage.open_table import metric_for

if TYPE_CHECKING:
    from recall_gui.core.storage.open_table import OpenTable
    from recall_gui.core.storage.target import TableOptions

#: Queries per job on the compute thread (a search queued behind waits for one job).
JOB_QUERIES = 64
#: Searches in flight at once when each query is its own LanceDB search.
SEARCHES_AT_ONCE = 4
#: ``own_rank`` of a query that has no entry of its own, or whose entry is not within ``depth``.
NOT_RANKED = 0

RowIds = npt.NDArray[np.uint64]
Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class Ranking:
    """What each query got: ``results[i]`` the agent's rows (row ids, nearest first) and ``own_rank[i]``
    the place of query ``i``'s own row (1 is first; :data:`NOT_RANKED` when not within ``depth``)."""

    results: list[RowIds]
    own_rank: npt.NDArray[np.int64]
    metric: str
    #: How the agent's search ran: "exact", "flat" or "index:<type>".
    method: str
    #: Whether the places are exact (LanceDB's flat order); an index's own are approximate.
    exact_places: bool = True
    note: str | None = None
    #: The table's vectors as this ranking held them in memory (``None``: it did not hold them).
    held: VectorMatrix | None = field(default=None, compare=False, repr=False)


def places(ranked: Sequence[RowIds], owners: RowIds | None) -> npt.NDArray[np.int64]:
    """Each owner's place (1-based) in its row of ``ranked``, :data:`NOT_RANKED` when absent."""
    found = np.zeros(len(ranked), np.int64)
    if owners is None:
        return found
    for number, (row, owner) in enumerate(zip(ranked, owners, strict=True)):
        hit = np.flatnonzero(row == owner)
        if len(hit):
            found[number] = int(hit[0]) + 1
    return found


def rank_job(
    vectors: VectorMatrix,
    queries: npt.NDArray[np.float32],
    *,
    owners: RowIds | None,
    metric: str,
    depth: int,
    limit: int,
    measure: Measure,
) -> tuple[list[RowIds], npt.NDArray[np.int64]]:
    """On the compute thread: each query's first ``limit`` rows (row ids) and its owner's place within
    ``depth``; candidates measured by ``measure`` (:meth:`LanceArithmetic.measure`)."""
    answers = nearest_rows_many(vectors, queries, metric, [max(depth, limit)] * len(queries), measure=measure)
    deep = [vectors.row_ids[positions] for positions, _distances in answers]
    return [rows[:limit] for rows in deep], places(deep, owners)


async def rank_queries(
    session: Session,
    opened: OpenTable,
    queries: npt.NDArray[np.float32],
    owners: RowIds | None,
    *,
    limit: int,
    depth: int,
    options: TableOptions | None,
    on_progress: Progress | None = None,
) -> Ranking:
    """``queries`` (one row each) searched in ``opened`` as the agent searches, with ``limit``; ``owners``:
    each query's own row, whose place within ``depth`` is wanted (``None``: none is)."""
    metric = metric_for(opened, options)
    index = index_for(opened, metric)
    cached = await session.vectors.get(opened, wait=True)
    held = None if isinstance(cached, NotCached) else cached.vectors
    if index is None and held is not None:
        results, own = await _exact(
            session, held, queries, owners, metric=metric, depth=depth, limit=limit, on_progress=on_progress
        )
        return Ranking(results, own, metric, "exact", held=held)
    method = f"index:{index.index_type}" if index is not None else "flat"
    searched = depth if index is None else limit
    found = await _each(session, opened, queries, limit=searched, options=options, on_progress=on_progress)
    results = [rows[:limit] for rows in found]
    if index is None:  # LanceDB's flat scan, depth deep: its order is the agent's
        reason = cached.reason if isinstance(cached, NotCached) else None
        return Ranking(results, places(found, owners), metric, method, note=reason)
    own = places(results, owners)
    if owners is None:
        return Ranking(results, own, metric, method, exact_places=held is not None, held=held)
    missed = np.flatnonzero(own == NOT_RANKED)
    if held is not None:  # every place from the exact ranking, the results from the index
        _, own[missed] = await _exact(
            session, held, queries[missed], owners[missed], metric=metric, depth=depth, limit=limit
        )
        return Ranking(results, own, metric, method, held=held)
    deeper = await _each(session, opened, queries[missed], limit=depth, options=options, on_progress=None)
    own[missed] = places(deeper, owners[missed])
    note = (
        f"places beyond the results come from the index searched {depth} deep (approximate): "
        f"{cached.reason if isinstance(cached, NotCached) else ''}"
    )
    return Ranking(results, own, metric, method, exact_places=False, note=note)


async def _exact(
    session: Session,
    held: VectorMatrix,
    queries: npt.NDArray[np.float32],
    owners: RowIds | None,
    *,
    metric: str,
    depth: int,
    limit: int,
    on_progress: Progress | None = None,
) -> tuple[list[RowIds], npt.NDArray[np.int64]]:
    """Exact rankings in jobs, keeping only each query's results and its owner's place."""
    results: list[RowIds] = []
    own = np.zeros(len(queries), np.int64)
    for start in range(0, len(queries), JOB_QUERIES):
        part = np.ascontiguousarray(queries[start : start + JOB_QUERIES], dtype=np.float32)
        part_owners = None if owners is None else owners[start : start + JOB_QUERIES]
        # Asked per job: LanceDB measures the candidates until its arithmetic here is known.
        measure = session.arithmetic.measure()
        job = session.compute_executor.submit(
            rank_job, held, part, owners=part_owners, metric=metric, depth=depth, limit=limit, measure=measure
        )
        got, got_own = await asyncio.wrap_future(job)
        session.arithmetic.start()  # once a job has answered, so the self-test never slows the first
        results += got
        own[start : start + len(got)] = got_own
        if on_progress is not None:
            on_progress(len(results), len(queries))
    return results, own


async def _each(
    session: Session,
    opened: OpenTable,
    queries: npt.NDArray[np.float32],
    *,
    limit: int,
    options: TableOptions | None,
    on_progress: Progress | None,
) -> list[RowIds]:
    """Each query through :func:`rank` (the agent's search of this table), a few at a time."""

    async def one(vector: npt.NDArray[np.float32]) -> RowIds:
        given = QueryVector.given(vector, "a pseudo-query")
        ranked = await rank(session, opened, given, limit, options, columns=AGENT_COLUMNS)
        return np.array([hit.row_id for hit in ranked.hits], dtype=np.uint64)

    found: list[RowIds] = []
    for start in range(0, len(queries), SEARCHES_AT_ONCE):
        part = queries[start : start + SEARCHES_AT_ONCE]
        found += await asyncio.gather(*(one(vector) for vector in part))
        if on_progress is not None:
            on_progress(len(found), len(queries))
    return found
