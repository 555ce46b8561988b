"""Each of many rows' nearest rows of a reference set, exactly, by the agent's metric (for the map).

One float32 matrix product per chunk of rows gives every score at once; the ``k`` smallest per row are
picked without sorting them all: the k-th smallest of the minima of blocks of 64 columns is at least the
k-th smallest score (k different columns lie at or below it), so only the scores at or below it are
sorted (on this data a few dozen per row instead of thousands). Ties are ordered by column, so the answer
is the same on every run.

The score orders the reference rows as the metric's distance to one query does, up to a constant of the
query (:func:`scores`); :func:`distances` turns scores back into the metric's distances.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Executor, Future
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from recall_gui.core.inspect.projection import Cancelled

Matrix = npt.NDArray[np.float32]
Job = TypeVar("Job")
#: Positions of rows (int32 while they fit).
Indices = npt.NDArray[np.integer[Any]]
#: Rows of queries scored against the reference in one product.
CHUNK_ROWS = 1024
_BLOCK = 64
#: Jobs handed to the worker threads at once.
_IN_FLIGHT = 4


@dataclass(frozen=True)
class Reference:
    """The rows neighbours are taken from, with what the metric's score needs per row."""

    rows: Matrix
    metric: str
    #: l2: |r|^2 (added to -2 q.r); cosine: 1/|r| (inf where |r| = 0: such rows are no one's neighbour).
    per_row: Matrix
    #: |r|^2 per row (float64).
    squares: npt.NDArray[np.float64]

    @classmethod
    def of(cls, rows: Matrix, metric: str) -> Reference:
        rows = np.ascontiguousarray(rows, np.float32)
        squares = np.empty(len(rows), np.float64)
        for start in range(0, len(rows), CHUNK_ROWS * 64):  # a chunk at a time: no float64 copy of the rows
            span = slice(start, start + CHUNK_ROWS * 64)
            squares[span] = np.einsum("ij,ij->i", rows[span], rows[span])
        if metric == "l2":
            per_row = squares.astype(np.float32)
        elif metric == "cosine":
            with np.errstate(divide="ignore"):
                per_row = (1 / np.sqrt(squares)).astype(np.float32)
        elif metric == "dot":
            per_row = np.zeros(len(rows), np.float32)
        else:
            raise ValueError(f"unknown metric {metric!r}")
        return cls(rows, metric, per_row, squares)

    def __len__(self) -> int:
        return len(self.rows)


def scores(queries: Matrix, reference: Reference, columns: npt.NDArray[np.intp] | None = None) -> Matrix:
    """Per query and reference row (or only the reference rows ``columns``): a score that orders the
    rows as their distance to that query does (l2: ``|r|^2 - 2 q.r``, cosine: ``-q.r / |r|``, dot:
    ``-q.r``). A reference row of zero length has no cosine: its score is infinite."""
    rows = reference.rows if columns is None else reference.rows[columns]
    per_row = reference.per_row if columns is None else reference.per_row[columns]
    products: Matrix = queries @ rows.T
    if reference.metric == "l2":
        products *= -2
        products += per_row
    elif reference.metric == "cosine":
        finite = np.isfinite(per_row)
        products *= -np.where(finite, per_row, 0)
        products[:, ~finite] = np.inf
    else:
        np.negative(products, out=products)
    return products


def distances(query_squares: npt.NDArray[np.floating[Any]], found: Matrix, metric: str) -> Matrix:
    """The metric's distances (l2 squared, cosine, dot) from the scores ``found`` (a row per query) and
    each query's squared length ``|q|^2``."""
    q = np.asarray(query_squares, np.float64)
    if metric == "l2":
        result = np.maximum(found + q[:, None], 0)
    elif metric == "cosine":
        with np.errstate(divide="ignore", invalid="ignore"):
            result = 1 + found / np.sqrt(q)[:, None]
    else:
        result = 1 + found
    return np.asarray(result, np.float32)


def smallest(values: Matrix, k: int) -> tuple[npt.NDArray[np.intp], Matrix]:
    """The ``k`` smallest values of each row (``k`` at most the columns), ascending, ties by column;
    NaN counts as infinite."""
    rows, width = values.shape
    values = np.where(np.isnan(values), np.inf, values) if np.isnan(values).any() else values
    blocks = width // _BLOCK
    if blocks >= k and width > 4 * k:  # a bound from the blocks' minima: one cheap pass
        minima = values[:, : blocks * _BLOCK].reshape(rows, blocks, _BLOCK).min(axis=2)
        threshold = np.partition(minima, k - 1, axis=1)[:, k - 1]
    else:
        threshold = np.partition(values, k - 1, axis=1)[:, k - 1]
    row, column = np.nonzero(values <= threshold[:, None])
    found = values[row, column]
    order = np.lexsort((column, found, row))
    row, column, found = row[order], column[order], found[order]
    place = np.arange(len(row)) - np.searchsorted(row, row)  # each candidate's rank in its row
    keep = place < k
    indices = np.empty((rows, k), np.intp)
    best = np.empty((rows, k), np.float32)
    indices[row[keep], place[keep]] = column[keep]
    best[row[keep], place[keep]] = found[keep]
    return indices, best


def nearest(
    queries: Matrix,
    reference: Reference,
    k: int,
    *,
    which: npt.NDArray[np.intp] | None = None,
    self_offset: int | None = None,
    workers: Executor | None = None,
    cancel: threading.Event | None = None,
    progress: Callable[[float], None] | None = None,
) -> tuple[Indices, Matrix]:
    """Each query's ``k`` nearest reference rows (positions, scores; nearest first): of the rows
    ``which`` of ``queries`` when given (read a chunk at a time, never copied whole). With ``self_offset``,
    query ``i`` is reference row ``self_offset + i`` and is not its own neighbour. Chunks of queries run on
    ``workers`` when given; ``cancel`` stops between chunks."""
    count = len(queries) if which is None else len(which)
    k = min(k, len(reference) - (1 if self_offset is not None else 0))
    indices = np.empty((count, max(k, 0)), np.int32 if len(reference) < 2**31 else np.intp)
    found = np.empty((count, max(k, 0)), np.float32)
    if k <= 0 or count == 0:
        return indices, found

    def chunk(start: int) -> None:
        if cancel is not None and cancel.is_set():
            raise Cancelled
        span = slice(start, min(count, start + CHUNK_ROWS))
        taken = queries[span] if which is None else queries[which[span]]
        block = scores(np.ascontiguousarray(taken, np.float32), reference)
        if self_offset is not None:
            own = np.arange(span.start, span.stop)
            block[own - span.start, own + self_offset] = np.inf
        indices[span], found[span] = smallest(block, k)

    starts = range(0, count, CHUNK_ROWS)
    for done, _ in enumerate(run_jobs(chunk, starts, workers), start=1):
        if progress is not None:
            progress(done / len(starts))
    return indices, found


def run_jobs(job: Callable[[Job], None], jobs: Sequence[Job], workers: Executor | None) -> Iterator[None]:
    """``job(each)`` for each of ``jobs``, on ``workers`` (a few in flight, so a search sent to the same
    threads waits for one job at most) or here; yields as each job ends, in order."""
    if workers is None:
        for each in jobs:
            job(each)
            yield None
        return
    pending: deque[Future[None]] = deque()
    try:
        for each in jobs:
            pending.append(workers.submit(job, each))
            if len(pending) >= _IN_FLIGHT:
                pending.popleft().result()
                yield None
        while pending:
            pending.popleft().result()
            yield None
    finally:
        for future in pending:
            future.cancel()
