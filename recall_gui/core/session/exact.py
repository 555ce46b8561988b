"""Exact top-k over vectors held in memory, in exactly the order LanceDB's flat search gives.

One pass over the matrix does the work: a float32 matrix-vector product (memory-bound, near the
bandwidth floor), turned into an approximate score per row. A bound on the k-th smallest score, taken
from the minima of small blocks, and a strict bound on float32 rounding error select a few candidates
that surely contain the true top k; only those are re-scored with LanceDB's own float32 arithmetic
(:mod:`recall_gui.core.session.lance_distance`, bit for bit):

- ``l2``: squared Euclidean distance, ``sum((x - q)^2)``;
- ``cosine``: ``1 - x.q / (|x| |q|)``; rows (and queries) of zero length have no cosine and are skipped;
- ``dot``: ``1 - x.q``.

Candidates are ordered by that distance, then by row id, which is how LanceDB orders equal distances
(duplicate vectors); rows whose distance is NaN are left out, as LanceDB leaves them out. So near-ties
closer than float32 resolution come out in LanceDB's order too, and the distances reported are LanceDB's.
Rows too short or too long for the bounds (:mod:`recall_gui.core.session.magnitudes`) are candidates in
every search: LanceDB's float32 arithmetic puts them where it does (at -inf, +inf, or far off).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from concurrent.futures import Executor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from recall_gui.core.session import certified
from recall_gui.core.session.lance_distance import Measure
from recall_gui.core.session.lance_distance import distances as lance_distances
from recall_gui.core.session.magnitudes import query_in_range, split_rows

Matrix = npt.NDArray[np.float32]
RowIds = npt.NDArray[np.uint64]

#: Unit roundoff of float32.
_U = float(np.finfo(np.float32).eps) / 2


def rounding_slack(dim: int, scale: float) -> float:
    """How far a distance computed from float32 dot products of length ``dim`` can be from the exact one,
    for vectors whose distances are at most ``scale``.

    Any float32 dot product of length d is within gamma_d * |x| |q| of the true value, whatever the
    summation order (BLAS blocking, LanceDB's lanes, FMA); the norms and the few float32 operations after
    it add a few roundoffs, and underflow one more for vectors within the bounded range
    (:mod:`~recall_gui.core.session.magnitudes`). Both the approximate score and LanceDB's distance are
    within ``(2 gamma + 10 u) scale`` of the exact distance; the slack covers their sum, twice.
    """
    gamma = dim * _U / (1 - dim * _U)
    return 8 * (gamma + 5 * _U) * scale


#: Rows per block when bounding the k-th smallest score by block minima.
_BLOCK = 64
#: Candidates re-scored in float64 at once (bounds the temporary memory of a pathological query).
RESCORE_CHUNK = 8192


@dataclass(frozen=True)
class VectorMatrix:
    """A table's vectors at one version: one float32 row per searchable row, with its LanceDB row id.

    Rows LanceDB's flat search never returns (null vectors, vectors containing NaN) are left out.
    """

    matrix: Matrix
    row_ids: RowIds
    #: |x|^2 per row (float32), for L2 scores from the dot products.
    sq_norms: Matrix
    #: 1/|x| per row (float32), 0 where the float32 |x|^2 is 0 (rows of zeros, or too short for float32).
    inv_norms: Matrix
    #: Positions of the rows of zeros (they have no cosine distance: excluded from cosine search).
    zero_rows: npt.NDArray[np.intp]
    max_norm: float
    #: Positions of the rows too short or too long for the rounding bounds, ranked in every search.
    extreme_rows: npt.NDArray[np.intp] = dataclasses.field(default_factory=lambda: np.empty(0, np.intp))
    #: The largest |x| of the other rows (the scale of their bounds).
    bounded_norm: float = 0.0
    #: How to compute all dot products at once: "matmul" (BLAS) or "einsum" (NumPy's own loop), whichever
    #: was faster on this matrix here (:func:`fastest_kernel`).
    kernel: str = "matmul"
    #: The rows as int8 codes, scanned instead of ``matrix`` (then memory-mapped): see :meth:`with_codes`.
    codes: certified.Int8Codes | None = None

    @property
    def rows(self) -> int:
        return int(self.matrix.shape[0])

    @property
    def nbytes(self) -> int:
        """Memory held: with codes, the codes instead of the float32 rows (mapped from a file)."""
        return int(
            (self.matrix.nbytes if self.codes is None else self.codes.nbytes)
            + self.row_ids.nbytes
            + self.sq_norms.nbytes
            + self.inv_norms.nbytes
            + self.zero_rows.nbytes
        )

    @classmethod
    def build(cls, matrix: Matrix, row_ids: RowIds) -> VectorMatrix:
        """Derive the per-row norms (one pass). ``matrix`` must hold only finite values."""
        with np.errstate(over="ignore", under="ignore"):
            sq_norms = np.einsum("ij,ij->i", matrix, matrix)
        zero_rows, extreme_rows = split_rows(matrix, sq_norms)
        with np.errstate(divide="ignore"):
            inv_norms = (1.0 / np.sqrt(sq_norms.astype(np.float64))).astype(np.float32)
        inv_norms[sq_norms == 0] = 0
        max_norm = float(np.sqrt(sq_norms.max(initial=0.0)))
        bounded = np.delete(sq_norms, extreme_rows) if len(extreme_rows) else sq_norms
        bounded_norm = float(np.sqrt(bounded.max(initial=0.0)))
        kernel = fastest_kernel(matrix)
        return cls(
            matrix, row_ids, sq_norms, inv_norms, zero_rows, max_norm, extreme_rows, bounded_norm, kernel
        )

    def with_codes(self, folder: Path, workers: Executor | None = None) -> VectorMatrix:
        """The same rows searched through int8 codes (:mod:`recall_gui.core.session.certified`), the float32
        rows
        then mapped from a file under ``folder``. Raises ``certified.NotCodable`` or ``OSError``."""
        codes = certified.Int8Codes.build(self.matrix, folder, workers)
        return dataclasses.replace(self, matrix=codes.rows, codes=codes)

    def dot_products(self, query: Matrix) -> Matrix:
        """``matrix @ query`` in float32: the one pass over memory a search costs (extreme rows'
        products may overflow: they are ranked apart)."""
        with np.errstate(over="ignore", invalid="ignore", under="ignore"):
            if self.kernel == "einsum":
                products: Matrix = np.einsum("ij,j->i", self.matrix, query)
                return products
            return self.matrix @ query


#: Below this size a matrix is scanned with BLAS without measuring (it is fast either way).
_CALIBRATE_BYTES = 8 * 1024 * 1024


def fastest_kernel(matrix: Matrix, trials: int = 3) -> str:
    """The kernel (``matmul`` or ``einsum``) that scans ``matrix`` faster here, by the median of a few
    interleaved trials.

    They differ by machine and load: NumPy's einsum loop won on the 2-core benchmark machine, elsewhere
    BLAS's threads may win (docs/PERFORMANCE_LOG.md#exact-fastest_kernel).
    """
    if matrix.nbytes < _CALIBRATE_BYTES or matrix.shape[0] == 0:
        return "matmul"
    query = np.ones(matrix.shape[1], np.float32)
    timings: dict[str, list[float]] = {"matmul": [], "einsum": []}
    for _ in range(trials):
        for kernel, spent in timings.items():
            started = time.perf_counter()
            if kernel == "einsum":
                np.einsum("ij,j->i", matrix, query)
            else:
                _ = matrix @ query
            spent.append(time.perf_counter() - started)
    return min(timings, key=lambda kernel: sorted(timings[kernel])[trials // 2])


def bytes_per_row(dim: int) -> int:
    """Memory one row costs in a :class:`VectorMatrix`: the vector, its row id and two norms."""
    return dim * 4 + 8 + 4 + 4


def nearest_rows(
    vectors: VectorMatrix,
    query: npt.NDArray[Any],
    metric: str,
    k: int,
    allowed: npt.NDArray[np.bool_] | None = None,
    *,
    measure: Measure = lance_distances,
) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.float32]]:
    """Positions in ``vectors`` and distances of the ``k`` rows nearest to ``query``, nearest first;
    only rows where ``allowed`` is true, when it is given (a filter). ``measure`` gives the candidates'
    LanceDB distances (the emulation, or LanceDB itself: :mod:`~recall_gui.core.session.lance_arithmetic`).

    Equal distances are ordered by row id, as LanceDB orders them.
    """
    q = np.ascontiguousarray(query, dtype=np.float32)
    return _best_of(vectors, q, None, metric, k, allowed=allowed, measure=measure)


def nearest_rows_many(
    vectors: VectorMatrix,
    queries: npt.NDArray[Any],
    metric: str,
    ks: Sequence[int],
    *,
    chunk: int = 64,
    measure: Measure = lance_distances,
) -> list[tuple[npt.NDArray[np.intp], npt.NDArray[np.float32]]]:
    """:func:`nearest_rows` for many queries with one pass over the matrix per ``chunk`` of queries (one
    matrix product instead of a scan each); each answer is the one :func:`nearest_rows` gives, since the
    scores only choose candidates and the candidates are ranked exactly."""
    block_queries = np.ascontiguousarray(queries, dtype=np.float32)
    answers = []
    for start in range(0, len(block_queries), chunk):
        block = block_queries[start : start + chunk]
        with np.errstate(over="ignore", invalid="ignore", under="ignore"):
            scores = block @ vectors.matrix.T  # one row of dot products per query, each contiguous
        for number, q in enumerate(block):
            k = ks[start + number]
            answers.append(_best_of(vectors, q, scores[number], metric, k, allowed=None, measure=measure))
    if vectors.codes is not None:  # the products read every page of the mapped float32 copy: unmap them
        vectors.codes.release_rows()
    return answers


def _best_of(
    vectors: VectorMatrix,
    q: npt.NDArray[np.float32],
    products: npt.NDArray[np.float32] | None,
    metric: str,
    k: int,
    *,
    allowed: npt.NDArray[np.bool_] | None,
    measure: Measure,
) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.float32]]:
    """The ranking of :func:`nearest_rows`, from the dot products when they were computed already
    (``products``, overwritten) or from one scan."""
    q_norm = float(np.sqrt(np.dot(q.astype(np.float64), q.astype(np.float64))))
    zero = len(vectors.zero_rows) if metric == "cosine" else 0  # rows without a cosine distance
    if allowed is None:
        searchable = vectors.rows - zero
    else:
        zero = int(np.count_nonzero(allowed[vectors.zero_rows])) if zero else 0
        searchable = int(np.count_nonzero(allowed)) - zero
    k = min(k, searchable)
    if k <= 0 or (metric == "cosine" and q_norm == 0):
        return np.empty(0, np.intp), np.empty(0, np.float32)
    in_range = query_in_range(q, metric)
    if vectors.codes is not None and products is None and in_range:
        # The int8 scan selects the candidates: a proved superset of the k nearest (core/certified.py).
        candidates = certified.candidates(vectors.codes, q, k, metric, allowed)
        return _ranked(vectors, q, metric, k, candidates, measure=measure)
    scores = vectors.dot_products(q) if products is None else products
    with np.errstate(over="ignore", invalid="ignore"):  # extreme rows' scores: replaced below
        if metric == "l2":  # |x|^2 - 2 x.q: the squared distance minus the constant |q|^2
            scores *= -2
            scores += vectors.sq_norms
            scale = (vectors.bounded_norm + q_norm) ** 2
        elif metric == "cosine":  # -x.q / |x|: the cosine distance minus 1, times |q|
            scores *= vectors.inv_norms
            np.negative(scores, out=scores)
            scores[vectors.zero_rows] = np.inf
            scale = 2 * q_norm
        elif metric == "dot":  # -x.q: the dot distance minus 1
            np.negative(scores, out=scores)
            scale = 1 + vectors.bounded_norm * q_norm
        else:
            raise ValueError(f"unknown metric {metric!r}")
    extreme = vectors.extreme_rows
    scores[extreme] = np.inf
    if allowed is not None:
        scores[~allowed] = np.inf
        extreme = extreme[allowed[extreme]]
    if not in_range:
        scores[scores != np.inf] = 0  # LanceDB's distances degenerate (all 1, or infinite): rescore every row
    threshold = _kth_smallest_bound(scores, k) + rounding_slack(int(q.shape[0]), scale)
    if np.isfinite(threshold):
        with np.errstate(over="ignore"):  # a threshold beyond float32: every row passes
            candidates = np.flatnonzero(~(scores > threshold))
    else:  # fewer than k rows within the bounds: every row still in the running is a candidate
        candidates = np.flatnonzero(scores != np.inf)
    # Within the bounds, LanceDB's k nearest are within the threshold, whatever rows LanceDB has no
    # distance for (NaN) or puts at +-inf: those are extreme rows, ranked in every search.
    return _ranked(vectors, q, metric, k, np.union1d(candidates, extreme), measure=measure)


def _ranked(
    vectors: VectorMatrix,
    q: Matrix,
    metric: str,
    k: int,
    candidates: npt.NDArray[np.intp],
    *,
    measure: Measure,
) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.float32]]:
    """The k nearest of ``candidates`` by LanceDB's distance and then row id (rows whose LanceDB distance
    is NaN are left out)."""
    best, best_distances = np.empty(0, np.intp), np.empty(0, np.float32)
    # Usually one small chunk; many equal vectors make many candidates, re-scored a chunk at a time.
    for start in range(0, len(candidates), RESCORE_CHUNK):
        chunk = candidates[start : start + RESCORE_CHUNK]
        distances = measure(vectors.matrix[chunk], q, metric)
        kept = ~np.isnan(distances)
        positions = np.concatenate([best, chunk[kept]])
        distances = np.concatenate([best_distances, distances[kept]])
        order = np.lexsort((vectors.row_ids[positions], distances))[:k]
        best, best_distances = positions[order], distances[order]
    return best, best_distances


def _kth_smallest_bound(scores: npt.NDArray[np.float32], k: int) -> float:
    """A value at least the k-th smallest score, found without sorting every score.

    The k-th smallest minimum of k distinct blocks has k scores at or below it, so it bounds the k-th
    smallest score from above; for real data it is barely above it, so few rows pass the filter.
    """
    blocks = scores.shape[0] // _BLOCK
    if blocks < max(k, 16):
        return float(np.partition(scores, k - 1)[k - 1])
    minima = scores[: blocks * _BLOCK].reshape(blocks, _BLOCK).min(axis=1)
    return float(np.partition(minima, k - 1)[k - 1])
