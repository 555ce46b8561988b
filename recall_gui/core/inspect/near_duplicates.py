"""Groups of rows whose vectors lie within a distance threshold: exact, blocked, cancellable.

Every pair of rows is compared once (the upper triangle of the all-pairs matrix), a tile of
:data:`TILE_ROWS` x :data:`TILE_COLUMNS` pairs at a time, so the memory it takes beside the vectors is
bounded (about 35 MB at 100k rows) whatever the table's size. Each pair passes two filters that can only let
too many pairs through, never too few, and the survivors are measured in float64 with LanceDB's formulas:

1. A pre-filter in :data:`REDUCED_DIMS` + 1 dimensions: each vector's components along the principal
   directions of the table's vectors, plus the length of what is left. The distance between two such short
   vectors is never more than the distance between the full ones (the left-over parts can only be further
   apart than their lengths differ), so a pair farther apart there is farther apart in full. On embeddings
   it keeps a few pairs in ten thousand, at a tenth of the cost of full dot products
   (docs/PERFORMANCE_LOG.md#near_duplicates-groupfinder).
2. Where the pre-filter keeps many pairs of a tile (vectors that are all alike), full float32 dot products
   of the tile, kept within a strict bound on their rounding error.

Pairs join groups as they are found (union-find); a group is the set of rows linked by such pairs (a
connected component: unique, whatever the order of the rows or of the work), and its widest pair is the
two of its rows farthest apart, which lie beyond the threshold when rows chain (a-b and b-c close, a-c
not). Splitting such a chain into groups whose every pair is within the threshold would hide a close pair
(b could stand with a or with c, not both) and depend on the order of the rows.

Metrics: ``cosine`` (``1 - x.y / (|x| |y|)``; rows of zero length have no cosine and join no group) and
``l2`` (squared Euclidean distance, LanceDB's ``l2``).
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from recall_gui.core.base.errors import OperationCancelled
from recall_gui.core.inspect.duplicate_threshold import check_threshold
from recall_gui.core.session.exact import VectorMatrix

#: Rows and columns of one tile of pairs: its scores (4 MB in float32) stay in a core's cache between the
#: product and the comparison (docs/PERFORMANCE_LOG.md#near_duplicates-groupfinder).
TILE_ROWS = 1024
TILE_COLUMNS = 1024
#: How long one step works (seconds): a search waiting for the same thread waits about this long.
STEP_SECONDS = 0.02
#: Principal directions the pre-filter keeps (plus one dimension for the length of the rest).
REDUCED_DIMS = 32
#: Tables smaller than this are compared in full at once (the pre-filter would not pay for itself).
REDUCE_FROM_ROWS = 4096
#: Rows sampled to find the principal directions, and rows projected onto them per step.
_SAMPLE_ROWS = 4096
_PROJECT_ROWS = 8192
#: A tile whose pre-filter keeps more than this share of its pairs is scored in full instead.
DENSE_SHARE = 0.01
#: Rows of a group measured at once when its largest distance is computed (float64).
_GROUP_BLOCK = 512
#: Unit roundoff of float32.
_U = float(np.finfo(np.float32).eps) / 2

Progress = Callable[[float], None]


@dataclass(frozen=True)
class Grouping:
    """The groups found: positions in the matrix (ascending within a group), and each group's widest
    pair: the largest distance between two of its rows, and their positions."""

    groups: tuple[npt.NDArray[np.intp], ...]
    max_distances: tuple[float, ...]
    widest: tuple[tuple[int, int], ...]
    #: Pairs within the threshold.
    pairs: int
    #: Rows compared (rows of zero length are left out of a cosine comparison).
    rows: int
    #: Rows left out: of zero length, for cosine (which has no value for them).
    left_out: int = 0


class GroupFinder:
    """The search for groups, a short piece of work per :meth:`step`, so that a caller can run it on a
    shared worker thread without holding it for long (a search waits for one step at most), report
    progress between steps and stop at any step. :meth:`finish` then measures each group."""

    def __init__(
        self,
        vectors: VectorMatrix,
        threshold: float,
        metric: str = "cosine",
        *,
        tile_rows: int = TILE_ROWS,
        tile_columns: int = TILE_COLUMNS,
        reduced_dims: int | None = None,
        keep_pairs: bool = False,
        first_rows: int | None = None,
    ) -> None:
        """``reduced_dims``: the pre-filter's principal directions (``None``: :data:`REDUCED_DIMS` for
        tables of :data:`REDUCE_FROM_ROWS` rows or more and vectors of more than twice as many
        dimensions, else no pre-filter; 0: none). ``keep_pairs``: also keep every pair found within the
        threshold (:meth:`close_pairs`), for a caller that joins the pairs of several matrices.
        ``first_rows``: compare only the pairs whose first row is among the first ``first_rows`` rows (a
        partition's rows at home; pairs of two guests meet at home elsewhere)."""
        self.threshold = check_threshold(threshold, metric)
        self.metric = metric
        self.vectors = vectors
        rows = vectors.rows
        dim = int(vectors.matrix.shape[1]) if vectors.matrix.ndim == 2 else 0
        gamma = dim * _U / (1 - dim * _U)
        #: A bound on the float32 error of a tile's scores, in the units of each comparison.
        self._slack = 8 * (gamma + 4 * _U)
        self._parent = np.arange(rows, dtype=np.intp)
        self._usable = vectors.inv_norms > 0 if metric == "cosine" else np.ones(rows, bool)
        leading = rows if first_rows is None else max(0, min(first_rows, rows))
        self._tiles = [
            (start, min(start + tile_rows, leading), column, min(column + tile_columns, rows))
            for start in range(0, leading, tile_rows)
            for column in range(start, rows, tile_columns)
        ]
        self._next = 0
        self._block: tuple[int, npt.NDArray[np.float32]] | None = None
        self._total_work = float(
            sum((stop - start) * (end - column) for start, stop, column, end in self._tiles)
        )
        self._done_work = 0.0
        self.pairs = 0
        self._kept: list[tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]]] | None = (
            [] if keep_pairs else None
        )
        if reduced_dims is None:
            reduced_dims = REDUCED_DIMS if rows >= REDUCE_FROM_ROWS and dim > 2 * REDUCED_DIMS else 0
        self._dims = min(reduced_dims, dim)
        #: The pre-filter's rows ``[x.P, |rest|, -|.|^2/2, 1]`` and columns ``[x.P, |rest|, 1, -|.|^2/2]``.
        self._left: npt.NDArray[np.float32] | None = None
        self._right: npt.NDArray[np.float32] | None = None
        self._directions: npt.NDArray[np.float64] | None = None
        self._prefilter_slack = 0.0
        #: Work before the first tile: the principal directions, then the rows projected a block at a time.
        self._preparing: list[Callable[[], None]] = []
        if self._dims > 0 and rows > 1:
            self._preparing = [self._fit_directions] + [
                functools.partial(self._project, start) for start in range(0, rows, _PROJECT_ROWS)
            ]
            self._preparing.append(self._finish_projection)
        #: Tiles scored in full because the pre-filter kept too many of their pairs.
        self.dense_tiles = 0
        self._buffer: npt.NDArray[np.float32] | None = None
        self._mask: npt.NDArray[np.bool_] | None = None

    @property
    def done(self) -> bool:
        return not self._preparing and self._next >= len(self._tiles)

    @property
    def progress(self) -> float:
        """The share of the pairs compared so far (0 to 1)."""
        return self._done_work / self._total_work if self._total_work else 1.0

    def step(self) -> None:
        """Do the next piece of work: prepare the pre-filter, or compare the pairs of the next tiles (for
        about :data:`STEP_SECONDS`) and join the groups of those within the threshold."""
        if self._preparing:
            self._preparing.pop(0)()
            return
        started = time.perf_counter()
        while self._next < len(self._tiles) and time.perf_counter() - started < STEP_SECONDS:
            self._compare_tile()
        if self.done:
            self._block, self._buffer, self._mask = None, None, None

    def _compare_tile(self) -> None:
        start, stop, column, end = self._tiles[self._next]
        self._next += 1
        vectors = self.vectors
        first, second = self._prefiltered(start, stop, column, end)
        if first is None or second is None:
            self.dense_tiles += self._left is not None
            if self._block is None or self._block[0] != start:
                block = vectors.matrix[start:stop]
                if self.metric == "cosine":
                    block = block * vectors.inv_norms[start:stop, None]  # unit rows: scores are |x_j| cos
                self._block = (start, block)
            first, second = self._candidates(self._block[1], start, column, end)
        if len(first):
            keep = self._usable[first] & self._usable[second]
            first, second = first[keep], second[keep]
            distances = pair_distances(vectors.matrix, first, second, self.metric)
            close = distances <= self.threshold
            first, second = first[close], second[close]
            self.pairs += len(first)
            if self._kept is not None:
                self._kept.append((first, second))
            _union(self._parent, first, second)
        self._done_work += (stop - start) * (end - column)

    def _unit_rows(self, rows: npt.NDArray[np.intp] | slice) -> npt.NDArray[np.float64]:
        """Rows in float64, of length 1 for cosine (rows of zero length stay zero)."""
        x = self.vectors.matrix[rows].astype(np.float64)
        if self.metric == "cosine":
            norms = np.sqrt(np.einsum("ij,ij->i", x, x))
            x /= np.where(norms > 0, norms, 1.0)[:, None]
        return x

    def _fit_directions(self) -> None:
        """The principal directions of a sample of the rows (float64, orthonormal)."""
        usable = np.flatnonzero(self._usable)
        rng = np.random.default_rng(0)
        sample = np.sort(rng.choice(usable, min(_SAMPLE_ROWS, len(usable)), replace=False))
        rows = self._unit_rows(sample)
        _, _, directions = np.linalg.svd(rows - rows.mean(axis=0), full_matrices=False)
        self._directions = directions[: self._dims]
        width = len(self._directions) + 3
        self._left = np.zeros((self.vectors.rows, width), np.float32)
        self._right = np.zeros((self.vectors.rows, width), np.float32)

    def _project(self, start: int) -> None:
        """Rows ``start..`` on the principal directions, with the length of the rest, in float64, stored
        in float32 as the pre-filter's rows and columns."""
        assert self._directions is not None and self._left is not None and self._right is not None
        rows = self._unit_rows(slice(start, start + _PROJECT_ROWS))
        along = rows @ self._directions.T
        rest = np.sqrt(
            np.maximum(0.0, np.einsum("ij,ij->i", rows, rows) - np.einsum("ij,ij->i", along, along))
        )
        short = np.hstack([along, rest[:, None]])
        half_square = np.einsum("ij,ij->i", short, short) / 2
        stop, width = start + len(rows), short.shape[1]
        self._left[start:stop, :width] = short
        self._left[start:stop, width] = -half_square
        self._left[start:stop, width + 1] = 1.0
        self._right[start:stop, :width] = short
        self._right[start:stop, width] = 1.0
        self._right[start:stop, width + 1] = -half_square

    def _finish_projection(self) -> None:
        """The pre-filter's error bound, now that the longest row is known."""
        assert self._left is not None
        width = self._left.shape[1]
        longest = float(np.max(-2.0 * self._left[:, width - 2], initial=0.0))  # the largest |x|^2
        gamma = width * _U / (1 - width * _U)
        # The float32 product of a left and a right row is within gamma (|a||b| + |a|^2/2 + |b|^2/2) of the
        # float64 value, storing them in float32 moves it by a few roundoffs more, and the length of the
        # rest (a square root of a difference) is exact to far below 1e-6: all of it, twice over.
        self._prefilter_slack = (4 * gamma + 8 * _U + 1e-6) * max(longest, 1e-30)

    def _prefiltered(
        self, start: int, stop: int, column: int, end: int
    ) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]] | tuple[None, None]:
        """The pairs of a tile the pre-filter keeps, or ``(None, None)`` without a pre-filter or when it
        keeps too many of them."""
        if self._left is None or self._right is None:
            return None, None
        # left . right = -(squared distance of the short vectors) / 2 >= -(the threshold in squared L2) / 2
        reach = 2 * self.threshold if self.metric == "cosine" else self.threshold
        scores = self._product(self._left[start:stop], self._right[column:end])
        return self._pairs_above(scores, -reach / 2 - self._prefilter_slack, start, column, DENSE_SHARE)

    def _product(
        self, rows: npt.NDArray[np.float32], columns: npt.NDArray[np.float32]
    ) -> npt.NDArray[np.float32]:
        """``rows @ columns.T`` into a buffer kept from tile to tile (a fresh 32 MB array costs more than
        the product of the pre-filter's few dimensions)."""
        shape = (len(rows), len(columns))
        if self._buffer is None or self._buffer.shape != shape:
            self._buffer = np.empty(shape, np.float32)
            self._mask = np.empty(shape, bool)
        return np.matmul(rows, columns.T, out=self._buffer)

    def _pairs_above(
        self, scores: npt.NDArray[np.float32], bound: Any, start: int, column: int, most: float = 1.0
    ) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]] | tuple[None, None]:
        """Positions ``(i, j)``, ``i < j``, of the scores at or above ``bound`` (``(None, None)`` when they
        are more than the share ``most`` of the tile)."""
        mask = self._mask if self._mask is not None and self._mask.shape == scores.shape else None
        above = np.greater_equal(scores, bound, out=mask)
        if np.count_nonzero(above) > most * above.size:
            return None, None
        # flatnonzero is far faster than nonzero on a 2-D mask with few true cells.
        first, second = np.divmod(np.flatnonzero(above), above.shape[1])
        first += start
        second += column
        upper = first < second
        return first[upper], second[upper]

    def _candidates(
        self, block: npt.NDArray[np.float32], start: int, column: int, end: int
    ) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]]:
        """Positions ``(i, j)``, ``i < j``, of rows ``start..`` and columns ``column..end`` whose float32
        score could mean a distance within ``threshold``: a superset of the pairs that are within it."""
        vectors, threshold, slack = self.vectors, self.threshold, self._slack
        scores = self._product(block, vectors.matrix[column:end])
        if self.metric == "cosine":
            # x_i/|x_i| . x_j >= (1 - t) |x_j| within the float32 error bound (|x_j| gamma, a few roundoffs).
            norms = np.sqrt(vectors.sq_norms[column:end], dtype=np.float32)
            bound = (1.0 - threshold - slack) * norms
        else:
            # |x_i|^2 + |x_j|^2 - 2 x_i.x_j <= t  <=>  x_i.x_j >= (|x_i|^2 + |x_j|^2 - t) / 2; the error
            # of each term is within |x_i| |x_j| gamma.
            scale = vectors.max_norm**2
            bound = (vectors.sq_norms[column:end] - threshold - slack * scale) / 2
            bound = bound[None, :] + vectors.sq_norms[start : start + len(block), None] / 2
        first, second = self._pairs_above(scores, bound, start, column)
        assert first is not None and second is not None
        return first, second

    def close_pairs(self) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]]:
        """Every pair ``(i, j)``, ``i < j``, found within the threshold so far (``keep_pairs`` only)."""
        assert self._kept is not None, "the finder was made without keep_pairs"
        empty = np.empty(0, np.intp)
        first = np.concatenate([pair[0] for pair in self._kept] or [empty])
        second = np.concatenate([pair[1] for pair in self._kept] or [empty])
        return first, second

    @property
    def compared_rows(self) -> int:
        """Rows compared (rows of zero length are left out of a cosine comparison)."""
        return int(np.count_nonzero(self._usable))

    def groups(self) -> list[npt.NDArray[np.intp]]:
        """The groups linked so far: sets of two or more rows, each ascending, by their first row."""
        return _groups(self._parent)

    def finish(self, cancel: threading.Event | None = None) -> Grouping:
        """The groups, largest first (then the closest), each with its widest pair."""
        return measured_grouping(
            self.groups(),
            self.vectors.matrix,
            self.metric,
            pairs=self.pairs,
            rows=self.compared_rows,
            left_out=self.vectors.rows - self.compared_rows,
            cancel=cancel,
        )


def measured_grouping(
    groups: list[npt.NDArray[np.intp]],
    matrix: npt.NDArray[np.float32],
    metric: str,
    *,
    pairs: int,
    rows: int,
    left_out: int = 0,
    cancel: threading.Event | None = None,
) -> Grouping:
    """``groups`` (positions in ``matrix``, ascending within a group) measured and ordered: largest
    first, then the closest, then by their first row; setting ``cancel`` stops at the next group."""
    maxima, widest = [], []
    for members in groups:
        if cancel is not None and cancel.is_set():
            raise OperationCancelled("the search for near-duplicates was cancelled")
        distance, first, second = widest_pair(matrix, members, metric)
        maxima.append(distance)
        widest.append((first, second))
    order = sorted(range(len(groups)), key=lambda g: (-len(groups[g]), maxima[g], int(groups[g][0])))
    return Grouping(
        tuple(groups[g] for g in order),
        tuple(maxima[g] for g in order),
        tuple(widest[g] for g in order),
        pairs,
        rows,
        left_out,
    )


def groups_of_pairs(
    rows: int, first: npt.NDArray[np.intp], second: npt.NDArray[np.intp]
) -> list[npt.NDArray[np.intp]]:
    """The groups that the pairs ``(first[k], second[k])`` link among ``rows`` rows: sets of two or more
    rows, each ascending, in the order of their first row."""
    parent = np.arange(rows, dtype=np.intp)
    _union(parent, first.astype(np.intp), second.astype(np.intp))
    return _groups(parent)


def find_groups(
    vectors: VectorMatrix,
    threshold: float,
    metric: str = "cosine",
    *,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
    tile_rows: int = TILE_ROWS,
    tile_columns: int = TILE_COLUMNS,
) -> Grouping:
    """Every group of rows of ``vectors`` linked by pairs within ``threshold`` (``metric``), in one call
    (blocking). ``progress`` gets the share of the work done after each tile; setting ``cancel`` stops the
    work at the next tile with :class:`OperationCancelled`."""
    finder = GroupFinder(vectors, threshold, metric, tile_rows=tile_rows, tile_columns=tile_columns)
    while not finder.done:
        if cancel is not None and cancel.is_set():
            raise OperationCancelled("the search for near-duplicates was cancelled")
        finder.step()
        if progress is not None:
            progress(finder.progress)
    return finder.finish(cancel)


def pair_distances(
    matrix: npt.NDArray[np.float32],
    first: npt.NDArray[np.intp],
    second: npt.NDArray[np.intp],
    metric: str,
    chunk: int = 8192,
) -> npt.NDArray[np.float64]:
    """LanceDB's distance between rows ``first[k]`` and ``second[k]``, in float64 (NaN where a cosine
    has none)."""
    found = np.empty(len(first), np.float64)
    for at in range(0, len(first), chunk):
        x = matrix[first[at : at + chunk]].astype(np.float64)
        y = matrix[second[at : at + chunk]].astype(np.float64)
        if metric == "cosine":
            dots = np.einsum("ij,ij->i", x, y)
            norms = np.sqrt(np.einsum("ij,ij->i", x, x) * np.einsum("ij,ij->i", y, y))
            with np.errstate(divide="ignore", invalid="ignore"):
                found[at : at + chunk] = 1.0 - dots / norms
        else:
            difference = x - y
            found[at : at + chunk] = np.einsum("ij,ij->i", difference, difference)
        found[at : at + chunk][(x == y).all(axis=1)] = 0.0  # a copy: exactly 0, whatever the rounding
    return found


def widest_pair(
    matrix: npt.NDArray[np.float32], members: npt.NDArray[np.intp], metric: str
) -> tuple[float, int, int]:
    """The largest distance between two of ``members`` (float64, a block of rows at a time; 0 for copies
    of one vector) and the positions of the two rows, the smaller first."""
    rows = matrix[members].astype(np.float64)
    if (rows == rows[0]).all():
        return 0.0, int(members[0]), int(members[1])
    if metric == "cosine":
        rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    largest, pair = -np.inf, (0, 1)
    squares = np.einsum("ij,ij->i", rows, rows)
    for start in range(0, len(rows), _GROUP_BLOCK):
        block = rows[start : start + _GROUP_BLOCK]
        if metric == "cosine":
            distances = 1.0 - block @ rows.T
        else:
            distances = squares[start : start + len(block), None] + squares[None, :] - 2 * (block @ rows.T)
        distances[np.arange(len(block)), np.arange(start, start + len(block))] = -np.inf  # a row and itself
        at = int(np.argmax(distances))
        if distances.flat[at] > largest:
            largest = float(distances.flat[at])
            pair = (start + at // len(rows), at % len(rows))
    first, second = sorted(pair)
    return max(largest, 0.0), int(members[first]), int(members[second])


def _find(parent: npt.NDArray[np.intp], nodes: npt.NDArray[np.intp]) -> npt.NDArray[np.intp]:
    """The root of each node (every parent is at or below its child, so following parents ends)."""
    roots = parent[nodes]
    while True:
        above = parent[roots]
        if np.array_equal(above, roots):
            return roots
        roots = above


def _union(parent: npt.NDArray[np.intp], first: npt.NDArray[np.intp], second: npt.NDArray[np.intp]) -> None:
    """Join the groups of ``first[k]`` and ``second[k]`` for every ``k``, vectorised: each round points the
    larger root of every pair still apart at the smaller one; of several writes to one root one wins, and
    the pairs it left apart are joined in a later round."""
    while len(first):
        a, b = _find(parent, first), _find(parent, second)
        apart = a != b
        a, b = a[apart], b[apart]
        if not len(a):
            return
        parent[np.maximum(a, b)] = np.minimum(a, b)
        first, second = a, b


def _groups(parent: npt.NDArray[np.intp]) -> list[npt.NDArray[np.intp]]:
    """The sets of two or more rows that share a root, each in ascending order."""
    roots = _find(parent, np.arange(len(parent), dtype=np.intp))
    order = np.argsort(roots, kind="stable")
    ordered = roots[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    sizes = np.diff(np.r_[starts, len(ordered)])
    return [order[s : s + n] for s, n in zip(starts, sizes, strict=True) if n > 1]
