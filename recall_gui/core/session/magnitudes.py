"""Vectors too short or too long for float32's bounds: the rows exact search ranks without them.

LanceDB computes every distance in float32. For a row whose squared length lies within
``[dim * 2^-126, 2^120]`` (and a cosine query within it too), its products that fall below float32's
normal range err by at most ``2^-150`` each, together at most one roundoff of ``|x| |q|``
(``dim * 2^-150 = 2^-24 * dim * 2^-126``), and nothing overflows: the rounding bounds of exact search hold
with that one roundoff more. Other rows ("extreme": their squared length underflows or overflows float32,
or nearly) get distances of -inf, +inf or far off the exact ones; every search ranks them with LanceDB's
own arithmetic whatever the bounds say. A query outside the range makes every row a candidate.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

#: Why no exact order exists, in the words every engine uses (the vector cache, Ray's blocks).
UNBOUNDED_VECTORS = "some vectors hold infinite (or huge) values"
#: The largest squared length bounded: everything LanceDB forms from two such vectors stays below 2^123.
HIGH = 2.0**120
#: Rows per step when telling zero rows from short ones (bounds the temporary copy).
_STEP = 65536


def low(dim: int) -> float:
    """The smallest squared length bounded for ``dim`` dimensions: ``dim`` products' underflow (each at
    most ``2^-150``) is then at most one float32 roundoff of it."""
    return dim * 2.0**-126


def split_rows(
    matrix: npt.NDArray[np.float32], sq_norms: npt.NDArray[np.floating[Any]]
) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]]:
    """The positions (ascending) of the rows of zeros, and of the extreme rows, of ``matrix``.

    ``sq_norms`` may be computed in float32 (any order): a factor of 2 on each side of the range covers
    its rounding and underflow, so every row not listed has a squared length within the range.
    """
    with np.errstate(invalid="ignore"):
        short = np.flatnonzero(sq_norms < 2 * low(matrix.shape[1]))
        long = np.flatnonzero(~(sq_norms <= HIGH / 2))  # NaN or inf too
    nonzero = np.empty(len(short), bool)
    for start in range(0, len(short), _STEP):
        nonzero[start : start + _STEP] = matrix[short[start : start + _STEP]].any(axis=1)
    return short[~nonzero], np.union1d(short[nonzero], long)


def query_in_range(query: npt.NDArray[np.float32], metric: str) -> bool:
    """Whether ``query``'s float32 distances obey exact search's bounds: not too long for any metric, and
    not too short for cosine (l2 and dot distances err absolutely, and stay within their bound)."""
    q = query.astype(np.float64)
    square = float(np.dot(q, q))
    if metric == "cosine":
        return low(len(q)) <= square <= HIGH
    return square <= HIGH
