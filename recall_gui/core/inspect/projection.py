"""A table's vectors flattened onto a plane, for the map: what every layout shares, and PCA.

- :func:`pca` is a randomized SVD of the centred vectors (a few passes over the matrix with NumPy), which
  finds the two leading components to within about 1e-5, and is linear: a query vector lands on the same
  plane (:meth:`Projection.place`). Beyond :data:`PCA_FIT_ROWS` rows the components are found from a
  seeded sample and every row is projected on them: the first picture of a million rows in about a second.
- The neighbour layout (t-SNE of a sample, the other rows placed from their nearest neighbours) is
  :mod:`recall_gui.core.inspect.layout`; :func:`within` is the lasso's test.

The finished maps are kept by :class:`recall_gui.core.session.map_cache.MapCache`.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from recall_gui.core.session.map_cache import Method, Positions, Projection

if TYPE_CHECKING:
    from collections.abc import Sequence

METHODS: tuple[Method, ...] = ("pca", "tsne")
LABELS: dict[Method, str] = {"pca": "PCA", "tsne": "t-SNE"}
#: ``progress(fraction, stage)``: how far a projection got (0..1) and what it is doing, in words.
Progress = Callable[[float, str], None]

#: Points drawn at most; a bigger table is mapped from a seeded sample of this many rows.
MAX_MAP_POINTS = 1_000_000
#: Rows PCA's components are found from at most (a seeded sample); every row is projected on them.
PCA_FIT_ROWS = 50_000
#: The randomized SVD's extra directions and power iterations: on the benchmark's vectors, whose two
#: leading eigenvalues differ by 1%, the components found lie within 1e-5 of the exact ones
#: (docs/PERFORMANCE_LOG.md#the-map).
_OVERSAMPLING = 30
_POWER_ITERATIONS = 3


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
    map is made on a worker thread; matrix products release it (docs/PERFORMANCE_LOG.md#the-map). Done twice,
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
    chosen = sample_rows(rows, PCA_FIT_ROWS, seed)
    fitted = matrix if chosen is None else np.ascontiguousarray(matrix[chosen])
    mean = fitted.mean(axis=0, dtype=np.float64).astype(np.float32)
    count = min(2, dim)
    components = _leading_components(fitted, mean, count, seed)
    if count < 2:  # a 1-dimensional table: a line
        components = np.vstack([components, np.zeros((1, dim), np.float32)])
    positions = np.asarray(matrix @ components.T - mean @ components.T, np.float32)
    fit = "" if chosen is None else f" (components from a sample of {len(chosen):,} rows)"
    return Projection(positions, "pca", seed, mean, components, how=f"PCA{fit}")


def tsne_threads() -> int:
    """Threads t-SNE's optimisation uses: all cores but one, so the window keeps one to itself."""
    return max(1, (os.cpu_count() or 1) - 1)


def within(positions: Positions, polygon: Sequence[tuple[float, float]]) -> npt.NDArray[np.bool_]:
    """Which points lie inside ``polygon`` (even-odd rule), for a lasso drawn on the map.

    Only points in the polygon's bounding box are tested, sorted by height once, so that each edge
    looks only at the points level with it: a lasso of hundreds of corners around most of a million
    points costs a few passes over them, not one per corner."""
    inside = np.zeros(len(positions), bool)
    if len(polygon) < 3 or not len(positions):
        return inside
    corners = np.asarray(polygon, np.float64)
    (left, bottom), (right, top) = corners.min(axis=0), corners.max(axis=0)
    x, y = positions[:, 0], positions[:, 1]
    boxed = np.flatnonzero((x >= left) & (x <= right) & (y >= bottom) & (y <= top))
    order = np.argsort(y[boxed], kind="stable")
    boxed = boxed[order]
    xs, ys = x[boxed].astype(np.float64), y[boxed].astype(np.float64)
    flips = np.zeros(len(boxed), bool)
    previous = corners[-1]
    for corner in corners:
        (x1, y1), (x2, y2) = previous, corner
        previous = corner
        if y1 == y2:
            continue
        # the edge crosses the points' level for min(y1, y2) <= y < max(y1, y2)
        start, stop = np.searchsorted(ys, [min(y1, y2), max(y1, y2)], side="left")
        level = slice(int(start), int(stop))
        at = (x2 - x1) * (ys[level] - y1) / (y2 - y1) + x1
        flips[level] ^= xs[level] < at
    inside[boxed] = flips
    return inside
