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

from recall_gui.core.session.exact import RESCORE_CHUNK, VectorMatrix, has_float32_norm, rounding_slack
from recall_gui.core.session.lance_distance import distances as lance_distances


def rank_of(
    vectors: VectorMatrix,
    query: npt.NDArray[Any],
    metric: str,
    position: int,
    allowed: npt.NDArray[np.bool_] | None = None,
) -> tuple[int, float] | None:
    """The rank (1 is nearest) and LanceDB's float32 distance of row ``position`` for ``query``, among
    the rows ``allowed`` keeps; ``None`` when the row has no place in that order (a row of zero length
    has no cosine distance; a row the filter drops)."""
    q = np.ascontiguousarray(query, dtype=np.float32)
    own = float(lance_distances(vectors.matrix[position : position + 1], q, metric)[0])
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
            scale = (vectors.max_norm + q_norm) ** 2
        elif metric == "dot":
            approx = 1.0 - scores
            scale = 1.0 + vectors.max_norm * q_norm
        else:
            raise ValueError(f"unknown metric {metric!r}")
    if allowed is not None:
        approx[~allowed] = np.inf
    slack = rounding_slack(int(q.shape[0]), scale)
    degenerate = metric == "cosine" and not has_float32_norm(q)
    if degenerate or not (np.isfinite(own) and np.isfinite(slack)):  # ties LanceDB's arithmetic makes
        ahead, near = 0, np.flatnonzero(approx != np.inf)
    else:
        ahead = int(np.count_nonzero(approx < own - slack))
        near = np.flatnonzero(~(np.abs(approx - own) > slack))  # NaN scores (overflow) too
    near = near[near != position]
    row_id = vectors.row_ids[position]
    for start in range(0, len(near), RESCORE_CHUNK):  # a chunk at a time bounds the memory used
        chunk = near[start : start + RESCORE_CHUNK]
        distances = lance_distances(vectors.matrix[chunk], q, metric)
        before = (distances < own) | ((distances == own) & (vectors.row_ids[chunk] < row_id))
        ahead += int(np.count_nonzero(before))
    return ahead + 1, own
