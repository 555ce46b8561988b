"""The reach report's searches on Ray, for tables one machine cannot hold: the same answers as the local
exact ranking (:func:`recall_gui.core.reach.reach_search.rank_queries`).

The table's vector column is read with lance-ray at the version the driver opened (null vectors left out
by the reader). Each block ranks every query among its own rows with the local exact code
(:func:`recall_gui.core.session.exact.nearest_rows_many`: LanceDB's float32 distances, ties by row id) and
sends back each query's first ``depth`` rows; the driver merges the blocks' lists by distance, then row
id, which is the order the local ranking gives over the whole table. A table whose agent searches through
an index is refused: Ray ranks exactly, the agent would not.
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from recall_gui.core.base.errors import OperationCancelled, RecallError
from recall_gui.core.base.own_thread import on_own_thread
from recall_gui.core.ray.cluster import ray_running
from recall_gui.core.ray.connection import watched
from recall_gui.core.ray.duplicate_engine import (
    UnboundedVectors,
    job_error,
    lance_uri,
    read_vectors,
    usable_rows,
)
from recall_gui.core.reach.reach import find_reach
from recall_gui.core.reach.reach_report import ReachReport
from recall_gui.core.reach.reach_search import Ranking, RowIds, places
from recall_gui.core.registry.registry_types import DatabaseEntry
from recall_gui.core.search.harness import Harness
from recall_gui.core.search.nearest import index_for
from recall_gui.core.session.exact import VectorMatrix, nearest_rows_many
from recall_gui.core.session.lance_distance import Measure
from recall_gui.core.session.session import Session
from recall_gui.core.storage.open_table import metric_for
from recall_gui.core.storage.target import TableTarget

if TYPE_CHECKING:
    import pyarrow as pa

    from recall_gui.core.storage.open_table import OpenTable
    from recall_gui.core.storage.target import TableOptions

#: Rows a block ranks at once.
BLOCK_ROWS = 50_000
#: Where the report of a table Ray cannot rank exactly can still be had.
LOCAL_HINT = "Run it with --engine local: the agent's own search (LanceDB's) ranks them there."
#: Entries the reach report asks for in one Ray job: each job reads the vector column again, so the
#: report grows in larger steps than on the local engine.
RAY_PART_QUERIES = 4096


async def rank_queries_on_ray(
    session: Session,
    opened: OpenTable,
    queries: npt.NDArray[np.float32],
    owners: RowIds | None,
    *,
    limit: int,
    depth: int,
    options: TableOptions | None,
    on_progress: Callable[[int, int], None] | None = None,
) -> Ranking:
    """:func:`~recall_gui.core.reach.reach_search.rank_queries` on the Ray this process is connected to
    (:func:`recall_gui.core.ray.cluster.ray_cluster`)."""
    metric = metric_for(opened, options)
    index = index_for(opened, metric)
    if index is not None:
        raise RecallError(
            f'agents search "{opened.name}" through its index ({index.index_type}), which Ray does not '
            "reproduce: it ranks exactly",
            hint="Use --engine local for a table with a vector index.",
        )
    cancel = threading.Event()
    # The driver's verdict on LanceDB's arithmetic, asked per job as the local engine asks it.
    measure = session.arithmetic.measure()
    ranked_on_ray = functools.partial(
        _ranked_on_ray,
        uri=lance_uri(TableTarget(opened.uri, opened.name)),
        storage_options=dict(opened.storage_options),
        version=opened.version,
        vector=opened.columns.vector,
        queries=np.ascontiguousarray(queries, dtype=np.float32),
        metric=metric,
        depth=max(depth, limit),
        measure=measure,
        cancel=cancel,
    )
    if on_progress is not None:
        on_progress(0, 0)  # busy: Ray's blocks report nothing until the merge
    # A cluster lost during the job ends it with an error, never with part of the ranking.
    job = on_own_thread("recall-ray-job", watched, ranked_on_ray, cancel, "the reach report's searches")
    try:
        deep = await asyncio.shield(job)
    except asyncio.CancelledError:
        cancel.set()
        job.add_done_callback(lambda done: done.cancelled() or done.exception())
        raise
    session.arithmetic.start()  # once a job has answered, as the local engine starts it
    if on_progress is not None:
        on_progress(len(queries), len(queries))
    return Ranking([rows[:limit] for rows in deep], places(deep, owners), metric, "exact")


async def find_reach_in_ray(
    harness: Harness, entry: DatabaseEntry, *, address: str | None = None, **options: Any
) -> ReachReport:
    """:func:`~recall_gui.core.reach.reach.find_reach` ranked on Ray, started for it (or the cluster at
    ``address`` joined) and stopped after it, without blocking the event loop."""
    async with ray_running(address):
        options.setdefault("part", RAY_PART_QUERIES)
        return await find_reach(harness, entry, ranker=rank_queries_on_ray, **options)


def _ranked_on_ray(
    *,
    uri: str,
    storage_options: dict[str, str],
    version: int,
    vector: str,
    queries: npt.NDArray[np.float32],
    metric: str,
    depth: int,
    measure: Measure,
    cancel: threading.Event,
) -> list[RowIds]:
    """The Ray job (blocking): each block's first ``depth`` rows per query, merged."""
    import ray

    try:
        table = read_vectors(uri, storage_options, version, vector)
        ranking = functools.partial(
            _block_best, vector=vector, queries=ray.put(queries), metric=metric, depth=depth, measure=measure
        )
        found = table.map_batches(ranking, batch_format="pyarrow", batch_size=BLOCK_ROWS)
        best: _Best | None = None
        for batch in found.iter_batches(batch_format="pyarrow"):
            if cancel.is_set():
                raise OperationCancelled("the reach report was cancelled")
            best = _kept_best(best, batch, depth)  # merged as they come: the driver holds depth per query
    except Exception as error:  # Ray wraps a task's error: said in the words of its cause
        said = job_error(error, uri)
        if isinstance(said, UnboundedVectors):  # the local engine ranks them with LanceDB's own search
            raise UnboundedVectors(hint=LOCAL_HINT) from error
        raise said from error
    return _lists(best, len(queries))


def _block_best(
    batch: pa.Table, *, vector: str, queries: Any, metric: str, depth: int, measure: Measure
) -> pa.Table:
    """One block's rows ranked for every query (the local exact code, its candidates measured by
    ``measure``): its first ``depth`` per query."""
    import pyarrow as pa
    import ray

    asked = ray.get(queries) if isinstance(queries, ray.ObjectRef) else queries
    matrix, usable, zero = usable_rows(batch, vector, metric)
    kept = usable | zero  # rows of zero length stay: the exact ranking leaves them out of a cosine search
    row_ids = batch.column("_rowid").to_numpy().astype(np.uint64)
    held = VectorMatrix.build(np.ascontiguousarray(matrix[kept]), row_ids[kept])
    answers = nearest_rows_many(held, asked, metric, [depth] * len(asked), measure=measure)
    numbers = np.concatenate(
        [np.full(len(p), n, np.int32) for n, (p, _d) in enumerate(answers)] or [np.empty(0, np.int32)]
    )
    positions = np.concatenate([p for p, _d in answers] or [np.empty(0, np.intp)]).astype(np.intp)
    distances = np.concatenate([d for _p, d in answers] or [np.empty(0, np.float32)])
    return pa.table(
        {
            "query": pa.array(numbers.astype(np.int32)),
            "row": pa.array(held.row_ids[positions]),
            "distance": pa.array(distances.astype(np.float32)),
        }
    )


#: Ranked rows so far: each query's number, the row id and its distance, by query, distance, row id.
_Best = tuple[npt.NDArray[np.int32], npt.NDArray[np.uint64], npt.NDArray[np.float32]]


def _kept_best(best: _Best | None, batch: pa.RecordBatch, depth: int) -> _Best:
    """Each query's first ``depth`` rows over the blocks merged so far and ``batch``: by distance, then
    row id (LanceDB's order)."""
    numbers = batch.column("query").to_numpy().astype(np.int32)
    rows = batch.column("row").to_numpy().astype(np.uint64)
    distances = batch.column("distance").to_numpy().astype(np.float32)
    if best is not None:
        numbers = np.concatenate([best[0], numbers])
        rows = np.concatenate([best[1], rows])
        distances = np.concatenate([best[2], distances])
    order = np.lexsort((rows, distances, numbers))
    numbers, rows, distances = numbers[order], rows[order], distances[order]
    place = np.arange(len(numbers)) - np.searchsorted(numbers, numbers, side="left")
    keep = place < depth
    return numbers[keep], rows[keep], distances[keep]


def _lists(best: _Best | None, queries: int) -> list[RowIds]:
    """Each query's rows, nearest first."""
    if best is None:
        return [np.empty(0, np.uint64) for _ in range(queries)]
    numbers, rows, _distances = best
    starts = np.searchsorted(numbers, np.arange(queries), side="left")
    ends = np.searchsorted(numbers, np.arange(queries), side="right")
    return [rows[start:end] for start, end in zip(starts, ends, strict=True)]
