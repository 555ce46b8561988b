"""Where one row ranks for a query among all rows in memory, in the order exact search gives them.

Exact search (:func:`recall_gui.core.session.exact.nearest_rows`) orders rows by LanceDB's own float32
distance,
then by row id, leaving out rows without a distance (NaN). The rank of a row is one more than the number
of rows before it in that order. One float32 pass scores every row; rows whose score is surely below (or
above) the row's own distance, by more than the rounding error can account for, are counted (or not) at
once, and only the few near it are measured again with LanceDB's arithmetic
(:mod:`recall_gui.core.session.lance_distance`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from recall_gui.core.session.exact import RESCORE_CHUNK, VectorMatrix, rounding_slack
from recall_gui.core.session.lance_distance import Measure
from recall_gui.core.session.lance_distance import distances as lance_distances
from recall_gui.core.session.magnitudes import query_in_range


def rank_of(
    vectors: VectorMatrix,
    query: npt.NDArray[Any],
    metric: str,
    position: int,
    allowed: npt.NDArray[np.bool_] | None = None,
    *,
    measure: Measure = lance_distances,
) -> tuple[int, float] | None:
    """The rank (1 is nearest) and LanceDB's float32 distance of row ``position`` for ``query``, among
    the rows ``allowed`` keeps; ``None`` when the row has no place in that order (a row of zero length
    has no cosine distance; a row the filter drops)."""
    q = np.ascontiguousarray(query, dtype=np.float32)
    own = float(measure(vectors.matrix[position : position + 1], q, metric)[0])
    if np.isnan(own) or (allowed is not None and not allowed[position]):
        return None
    q_norm = float(np.sqrt(np.dot(q.astype(np.float64), q.astype(np.float64))))
    scores = vectors.dot_products(q).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if metric == "cosine":
            approx = 1.0 - scores * vectors.inv_norms / q_norm
            approx[vectors.zero_rows] = np.inf
            scale = 2.0
        elif metric == "l2":
            approx = vectors.sq_norms - 2.0 * scores + q_norm * q_norm
            scale = (vectors.bounded_norm + q_norm) ** 2
        elif metric == "dot":
            approx = 1.0 - scores
            scale = 1.0 + vectors.bounded_norm * q_norm
        else:
            raise ValueError(f"unknown metric {metric!r}")
    extreme = vectors.extreme_rows  # ranked with LanceDB's arithmetic, whatever their scores say
    approx[extreme] = np.inf
    if allowed is not None:
        approx[~allowed] = np.inf
        extreme = extreme[allowed[extreme]]
    slack = rounding_slack(int(q.shape[0]), scale)
    if not query_in_range(q, metric) or not np.isfinite(slack):
        ahead, near = 0, np.flatnonzero(approx != np.inf)  # ties LanceDB's arithmetic makes
    elif not np.isfinite(own):  # an extreme row at -inf or +inf: every other row within bounds is finite
        ahead, near = (0 if own < 0 else int(np.count_nonzero(approx != np.inf))), extreme[:0]
    else:
        ahead = int(np.count_nonzero(approx < own - slack))
        near = np.flatnonzero(~(np.abs(approx - own) > slack))
    near = np.union1d(near, extreme)
    near = near[near != position]
    row_id = vectors.row_ids[position]
    for start in range(0, len(near), RESCORE_CHUNK):  # a chunk at a time bounds the memory used
        chunk = near[start : start + RESCORE_CHUNK]
        distances = measure(vectors.matrix[chunk], q, metric)
        before = (distances < own) | ((distances == own) & (vectors.row_ids[chunk] < row_id))
        ahead += int(np.count_nonzero(before))
    return ahead + 1, own


def ranked_rows(
    vectors: VectorMatrix,
    query: npt.NDArray[Any],
    metric: str,
    allowed: npt.NDArray[np.bool_] | None = None,
    *,
    measure: Measure = lance_distances,
) -> int:
    """How many rows (among those ``allowed`` keeps) have a place in LanceDB's order for ``query``: all
    but rows of zeros (cosine) and extreme rows whose float32 distance is NaN."""
    q = np.ascontiguousarray(query, dtype=np.float32)
    extreme = vectors.extreme_rows
    if allowed is None:
        rows = vectors.rows - (len(vectors.zero_rows) if metric == "cosine" else 0)
    else:
        zero = int(np.count_nonzero(allowed[vectors.zero_rows])) if metric == "cosine" else 0
        rows = int(np.count_nonzero(allowed)) - zero
        extreme = extreme[allowed[extreme]]
    undefined = 0
    for start in range(0, len(extreme), RESCORE_CHUNK):
        chunk = extreme[start : start + RESCORE_CHUNK]
        undefined += int(np.count_nonzero(np.isnan(measure(vectors.matrix[chunk], q, metric))))
    return rows - undefined
