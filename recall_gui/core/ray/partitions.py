"""Partitions of a table's vectors such that every pair within a distance threshold meets in one of them.

The near-duplicates of a table too big for one machine are found partition by partition
(:mod:`recall_gui.core.ray.duplicate_engine`). k-means centroids, fitted on a sample, give each vector a
home
partition (its nearest centroid). A vector is also copied, as a guest, into every other partition j whose
half-space it lies within ``reach`` of:

    (|x - c_j|^2 - |x - c_home|^2) / (2 |c_home - c_j|) <= reach

The left side is the distance from x to the plane halfway between c_home and c_j. For a pair x, y within
``reach`` of each other (Euclidean), y's home h lies on h's side of that plane for x's home, and x is no
farther than |x - y| from it, so x is a guest (or at home) in h: the pair meets there. The partition plan is
therefore exact, whatever the centroids; good centroids only keep the guests few.

``reach`` is the Euclidean distance of the threshold: sqrt(T) for squared L2, and sqrt(2 C) for a cosine
threshold C on vectors scaled to length 1 (where |x - y|^2 = 2 (1 - cos)).
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

Floats = npt.NDArray[np.float64]

#: Lloyd iterations of k-means (the plan is exact whatever the centroids: more only trims the guests).
KMEANS_ITERATIONS = 20
#: Relative slack on the guest rule: float64 rounding of the distances can only add guests, never lose one.
_SLACK = 1e-9


def reach_of(threshold: float, metric: str) -> float:
    """The Euclidean distance within which two vectors (of length 1 for cosine) meet the threshold."""
    return math.sqrt(2 * threshold) if metric == "cosine" else math.sqrt(threshold)


def unit_rows(vectors: npt.NDArray[np.floating]) -> Floats:
    """``vectors`` in float64 scaled to length 1 (rows of zero length stay zero)."""
    rows = np.asarray(vectors, np.float64)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return rows / np.where(norms > 0, norms, 1.0)


def kmeans(sample: Floats, k: int, seed: int = 0, iterations: int = KMEANS_ITERATIONS) -> Floats:
    """``k`` centroids of the rows of ``sample`` (k-means++ start, Lloyd iterations; seeded). Fewer
    distinct rows than ``k`` give fewer centroids."""
    rng = np.random.default_rng(seed)
    distinct = np.unique(sample, axis=0)
    k = max(1, min(k, len(distinct)))
    centroids = [distinct[rng.integers(len(distinct))]]
    nearest = _squared_distances(distinct, np.array(centroids)).min(axis=1)
    while len(centroids) < k:
        total = nearest.sum()
        pick = rng.choice(len(distinct), p=nearest / total) if total > 0 else rng.integers(len(distinct))
        centroids.append(distinct[pick])
        nearest = np.minimum(nearest, _squared_distances(distinct, distinct[pick][None, :])[:, 0])
    found = np.array(centroids)
    for _ in range(iterations):
        home = _squared_distances(sample, found).argmin(axis=1)
        moved = found.copy()
        for j in range(len(found)):
            members = sample[home == j]
            if len(members):
                moved[j] = members.mean(axis=0)
        if np.array_equal(moved, found):
            break
        found = moved
    return found


def assign(
    rows: Floats, centroids: Floats, reach: float
) -> tuple[npt.NDArray[np.intp], list[npt.NDArray[np.intp]]]:
    """Each row's home partition, and for every partition the rows it holds (home or guest), ascending."""
    distances = _squared_distances(rows, centroids)
    home = distances.argmin(axis=1)
    home_distance = distances[np.arange(len(rows)), home]
    apart = np.sqrt(_squared_distances(centroids, centroids))  # |c_i - c_j|
    scale = np.einsum("ij,ij->i", rows, rows) + float(np.max(np.einsum("ij,ij->i", centroids, centroids)))
    held = []
    for j in range(len(centroids)):
        beyond = distances[:, j] - home_distance  # 0 at home
        limit = 2 * apart[home, j] * reach + _SLACK * (scale + 1.0)
        held.append(np.flatnonzero((home == j) | (beyond <= limit)))
    return home, held


def _squared_distances(rows: Floats, centroids: Floats) -> Floats:
    """|x - c|^2 for every row and centroid (float64; never below 0)."""
    squares = np.einsum("ij,ij->i", rows, rows)[:, None] + np.einsum("ij,ij->i", centroids, centroids)
    return np.asarray(np.maximum(squares - 2 * rows @ centroids.T, 0.0), np.float64)
