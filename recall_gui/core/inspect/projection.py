"""A table's vectors flattened onto a plane, for the map: PCA at once, t-SNE when asked for.

Both are plain functions of a float32 matrix that run on a worker thread; nothing here reads a table.

- :func:`pca` is a randomized SVD of the centred vectors (a few passes over the matrix with NumPy), which
  finds the two leading components to within about 1e-5, and is linear: a query vector lands on the same
  plane (:meth:`Projection.place`).
- :func:`tsne` keeps neighbours together (openTSNE, compiled code with no JIT). Its nearest neighbours come
  from an Annoy index queried in chunks and its optimisation reports every few iterations, so a long run
  says how far it got and stops within moments when cancelled. Everything is seeded: the same matrix
  and seed give the same map.

The finished maps are kept by :class:`recall_gui.core.session.map_cache.MapCache`.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from recall_gui.core.base.compat import annoy_index
from recall_gui.core.base.errors import ProjectionError
from recall_gui.core.session.map_cache import Method, Positions, Projection

if TYPE_CHECKING:
    from collections.abc import Sequence

METHODS: tuple[Method, ...] = ("pca", "tsne")
LABELS: dict[Method, str] = {"pca": "PCA", "tsne": "t-SNE"}
#: ``progress(fraction, stage)``: how far a projection got (0..1) and what it is doing, in words.
Progress = Callable[[float, str], None]

#: Points drawn at most; a bigger table is mapped from a seeded sample of this many rows.
MAX_MAP_POINTS = 100_000
#: Dimensions the vectors are reduced to (by PCA) before t-SNE looks for neighbours.
TSNE_DIMS = 50
#: Neighbours per point t-SNE keeps together (uniform affinities: Böhm, Berens & Kobak 2022 show they
#: give maps like perplexity 30 for a sixth of the neighbour search).
TSNE_NEIGHBOURS = 15
TSNE_TREES = 20
#: Iterations of t-SNE's two phases (openTSNE's defaults): early exaggeration, then the rest.
TSNE_EARLY_ITERATIONS = 250
TSNE_ITERATIONS = 500
#: The fewest rows t-SNE is run on; below it the PCA map is all there is to see.
TSNE_MIN_ROWS = TSNE_NEIGHBOURS + 2
_REPORT_EVERY_ITERATIONS = 10
#: The randomized SVD's extra directions and power iterations: on the benchmark's vectors, whose two
#: leading eigenvalues differ by 1%, the components found lie within 1e-5 of the exact ones
#: (docs/PERFORMANCE.md#the-map).
_OVERSAMPLING = 30
_POWER_ITERATIONS = 3
_KNN_CHUNK = 2000


class Cancelled(Exception):
    """The projection was cancelled through its ``cancel`` event."""


def sample_rows(total: int, bound: int, seed: int) -> npt.NDArray[np.intp] | None:
    """``bound`` of ``total`` row positions, in order, drawn with ``seed``; ``None`` if all fit."""
    if total <= bound:
        return None
    chosen = np.random.default_rng(seed).choice(total, size=bound, replace=False)
    return np.sort(chosen).astype(np.intp)


def _orthonormal(block: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """An orthonormal basis of ``block``'s columns (directions it hardly spans are dropped).

    Through the small Gram matrix rather than ``np.linalg.qr``: NumPy's QR of a tall matrix holds the
    interpreter's lock throughout (over a second at 100,000 rows), which would freeze the window while a
    map is made on a worker thread; matrix products release it (docs/PERFORMANCE.md#the-map). Done twice,
    as in CholeskyQR2, for an orthonormality near float32's precision.
    """
    for _ in range(2):
        gram = (block.T @ block).astype(np.float64)
        values, vectors = np.linalg.eigh(gram)
        keep = values > values.max(initial=0.0) * 1e-10
        if not keep.any():
            return block[:, :0]
        block = np.asarray(block @ (vectors[:, keep] / np.sqrt(values[keep])).astype(np.float32), np.float32)
    return block


def _leading_components(
    matrix: npt.NDArray[np.float32], mean: npt.NDArray[np.float32], count: int, seed: int
) -> npt.NDArray[np.float32]:
    """The ``count`` leading principal directions of ``matrix - mean`` (rows of the answer), by a
    randomized range finder with power iterations (Halko et al.): a few passes over the matrix, no
    ``d x d`` products, never a centred copy, and no LAPACK call on a tall matrix."""
    _rows, dim = matrix.shape
    width = min(dim, count + _OVERSAMPLING)
    basis = np.random.default_rng(seed).standard_normal((dim, width)).astype(np.float32)

    def times(right: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:  # (X - mean) @ right
        return np.asarray(matrix @ right - mean @ right, np.float32)

    def transposed_times(left: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:  # (X - mean).T @ left
        return np.asarray(matrix.T @ left - np.outer(mean, left.sum(axis=0)), np.float32)

    for _ in range(_POWER_ITERATIONS):
        basis = _orthonormal(transposed_times(_orthonormal(times(basis))))
    # The right singular vectors of (X - mean) @ basis are the eigenvectors of its small Gram matrix.
    projected = times(basis)
    values, vectors = np.linalg.eigh((projected.T @ projected).astype(np.float64))
    leading = vectors[:, np.argsort(values)[::-1][:count]]
    components = (basis @ leading.astype(np.float32)).T.astype(np.float32)
    if len(components) < count:  # fewer directions than asked for (a degenerate table): pad with zeros
        components = np.vstack([components, np.zeros((count - len(components), dim), np.float32)])
    # A component's sign is arbitrary: make its largest entry positive, so one map always looks the same.
    largest = np.abs(components).argmax(axis=1)
    signs = np.sign(components[np.arange(len(components)), largest])
    return np.asarray(components * np.where(signs == 0, 1, signs)[:, None], np.float32)


def pca(matrix: npt.NDArray[np.float32], seed: int = 0) -> Projection:
    """The two leading principal components of the rows of ``matrix``."""
    rows, dim = matrix.shape
    if rows == 0:
        return Projection(np.zeros((0, 2), np.float32), "pca", seed)
    mean = matrix.mean(axis=0, dtype=np.float64).astype(np.float32)
    count = min(2, dim)
    components = _leading_components(matrix, mean, count, seed)
    if count < 2:  # a 1-dimensional table: a line
        components = np.vstack([components, np.zeros((1, dim), np.float32)])
    positions = np.asarray(matrix @ components.T - mean @ components.T, np.float32)
    return Projection(positions, "pca", seed, mean, components)


def _neighbours(
    reduced: npt.NDArray[np.float32],
    count: int,
    seed: int,
    report: Callable[[float, str], None],
    cancel: threading.Event,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
    """Each row's ``count`` nearest other rows (Euclidean) and their distances, by an Annoy index."""
    rows = len(reduced)
    index = annoy_index(reduced.shape[1], seed)
    if index is None:  # an untested openTSNE: its public (uninterruptible) neighbour search
        from openTSNE.nearest_neighbors import Annoy

        report(0.0, "finding each point's neighbours")
        found = Annoy(reduced, count, metric="euclidean", n_jobs=1, random_state=seed).build()
        return np.asarray(found[0], np.int64), np.asarray(found[1], np.float64)
    for start in range(0, rows, _KNN_CHUNK):
        _check(cancel)
        for row in range(start, min(rows, start + _KNN_CHUNK)):
            index.add_item(row, reduced[row])
    report(0.1, "indexing the points")
    index.build(TSNE_TREES, n_jobs=1)
    indices = np.empty((rows, count), np.int64)
    distances = np.empty((rows, count), np.float64)
    for start in range(0, rows, _KNN_CHUNK):
        _check(cancel)
        report(0.15 + 0.85 * start / rows, f"finding neighbours ({start:,} of {rows:,} points)")
        for row in range(start, min(rows, start + _KNN_CHUNK)):
            found, dist = index.get_nns_by_item(row, count + 1, include_distances=True)
            others = [(f, d) for f, d in zip(found, dist, strict=True) if f != row][:count]
            while len(others) < count:  # exact duplicates can crowd a row out of its own answer
                others.append(others[-1] if others else (row, 0.0))
            indices[row] = [f for f, _d in others]
            distances[row] = [d for _f, d in others]
    return indices, distances


def _check(cancel: threading.Event) -> None:
    if cancel.is_set():
        raise Cancelled


def tsne(
    matrix: npt.NDArray[np.float32],
    seed: int = 0,
    *,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> Projection:
    """A t-SNE map of the rows of ``matrix`` (openTSNE), reporting to ``progress`` and stopping with
    :class:`Cancelled` soon after ``cancel`` is set."""
    from openTSNE import TSNEEmbedding, affinity
    from openTSNE.nearest_neighbors import PrecomputedNeighbors
    from openTSNE.tsne import OptimizationInterrupt

    rows = len(matrix)
    if rows < TSNE_MIN_ROWS:
        raise ProjectionError(
            f"t-SNE needs at least {TSNE_MIN_ROWS} rows; this table has {rows}",
            hint="The PCA map shows every row.",
        )
    cancel = cancel or threading.Event()
    say: Progress = progress or (lambda _fraction, _stage: None)

    def stage(start: float, end: float) -> Progress:
        return lambda fraction, text: say(start + (end - start) * fraction, text)

    say(0.0, "reducing the vectors")
    start = pca_reduce(matrix, TSNE_DIMS, seed)
    _check(cancel)
    neighbours, distances = _neighbours(start, TSNE_NEIGHBOURS, seed, stage(0.02, 0.4), cancel)
    _check(cancel)
    say(0.4, "weighing the neighbours")
    known = PrecomputedNeighbors(neighbours, distances)
    affinities = affinity.Uniform(knn_index=known, k_neighbors=TSNE_NEIGHBOURS, n_jobs=1)
    initial = pca(start, seed).positions.astype(np.float64)
    scale = float(initial[:, 0].std()) or 1.0
    initial *= 1e-4 / scale  # openTSNE's own PCA initialisation: first axis with standard deviation 1e-4
    total = TSNE_EARLY_ITERATIONS + TSNE_ITERATIONS
    done = [0]

    def callback(iteration: int, _error: float, _embedding: Any) -> bool:
        done[0] += _REPORT_EVERY_ITERATIONS
        say(
            0.42 + 0.58 * min(1.0, done[0] / total),
            f"arranging the points ({min(done[0], total)} of {total})",
        )
        return cancel.is_set()

    embedding = TSNEEmbedding(
        initial,
        affinities,
        n_jobs=tsne_threads(),
        random_state=seed,
        callbacks=callback,
        callbacks_every_iters=_REPORT_EVERY_ITERATIONS,
    )
    try:
        embedding = embedding.optimize(
            TSNE_EARLY_ITERATIONS, exaggeration=12, momentum=0.5, propagate_exception=True
        )
        embedding = embedding.optimize(TSNE_ITERATIONS, momentum=0.8, propagate_exception=True)
    except OptimizationInterrupt:
        raise Cancelled from None
    say(1.0, "done")
    return Projection(np.asarray(embedding, np.float32), "tsne", seed)


def tsne_threads() -> int:
    """Threads t-SNE's optimisation uses: all cores but one, so the window keeps one to itself."""
    return max(1, (os.cpu_count() or 1) - 1)


def pca_reduce(matrix: npt.NDArray[np.float32], dims: int, seed: int) -> npt.NDArray[np.float32]:
    """The rows of ``matrix`` on their ``dims`` leading principal components (all of them if fewer)."""
    if matrix.shape[1] <= dims:
        return np.ascontiguousarray(matrix, np.float32)
    mean = matrix.mean(axis=0, dtype=np.float64).astype(np.float32)
    components = _leading_components(matrix, mean, dims, seed)
    return np.ascontiguousarray(matrix @ components.T - mean @ components.T, np.float32)


def project(
    matrix: npt.NDArray[np.float32],
    method: Method,
    seed: int = 0,
    *,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> Projection:
    """``matrix`` projected by ``method`` (``"pca"`` or ``"tsne"``)."""
    if method == "pca":
        return pca(matrix, seed)
    if method == "tsne":
        return tsne(matrix, seed, progress=progress, cancel=cancel)
    raise ProjectionError(f"unknown projection {method!r} (expected one of {', '.join(METHODS)})")


def within(positions: Positions, polygon: Sequence[tuple[float, float]]) -> npt.NDArray[np.bool_]:
    """Which points lie inside ``polygon`` (even-odd rule), for a lasso drawn on the map."""
    inside = np.zeros(len(positions), bool)
    if len(polygon) < 3:
        return inside
    x, y = positions[:, 0], positions[:, 1]
    corners = np.asarray(polygon, np.float64)
    previous = corners[-1]
    for corner in corners:
        (x1, y1), (x2, y2) = previous, corner
        crosses = (y1 > y) != (y2 > y)
        with np.errstate(divide="ignore", invalid="ignore"):
            at = (x2 - x1) * (y - y1) / (y2 - y1) + x1
        inside ^= crosses & (x < at)
        previous = corner
    return inside
