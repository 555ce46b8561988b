"""LanceDB's flat-search distances, bit for bit, computed in NumPy float32.

LanceDB (lance-linalg, x86-64 with AVX2 and FMA, no AVX-512) computes every distance in float32 with
its own summation order; two rows whose distances differ below float32 resolution are ordered by that
arithmetic, not by the exact values. These functions repeat it step by step, so that exact search in
memory orders near-ties exactly as LanceDB does. Each step was measured against LanceDB itself
(tests/core/test_lance_order.py):

- the query is cast to float32;
- ``l2`` and ``dot`` (the sum of ``(x - q)^2`` or of ``x q``): up to 16 dimensions, chunks of 8 are
  accumulated in 8 lanes with fused multiply-adds, the lanes summed as a tree (:func:`_tree8`), then the
  sum of the leftover terms (in order) is added; above 16 dimensions each term is rounded, accumulated in
  16 lanes chunk by chunk, the leftover terms summed in order, then the 16 lanes added to it in order;
- ``dot`` distance: ``1 - x.q``;
- ``cosine``: ``x.q``, ``x.x`` and ``q.q`` accumulated in 16 lanes with fused multiply-adds, the lanes
  summed as a tree (:func:`_tree16`), then each leftover product added in order (for ``q.q``, the
  leftover products' own sum); the distance is ``1 - (x.q / |q|) / |x|``. At 8 dimensions ``x.q`` and
  ``x.x`` are 8-lane trees of the products instead. A zero row (or query) has no cosine distance: NaN,
  and LanceDB leaves such rows out.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

Vectors = npt.NDArray[np.float32]

_F32 = np.float32


def distances(rows: npt.NDArray[Any], query: npt.NDArray[Any], metric: str) -> Vectors:
    """LanceDB's float32 distance of each row of ``rows`` to ``query`` (NaN where it has none)."""
    x = np.ascontiguousarray(rows, dtype=_F32)
    if x.ndim != 2:
        raise ValueError("rows must be a matrix")
    q = np.ascontiguousarray(query, dtype=_F32)
    with np.errstate(all="ignore"):
        if metric == "l2":
            difference = x - q
            return _kernel_sum(difference, difference)
        if metric == "dot":
            return _F32(1) - _kernel_sum(x, np.broadcast_to(q, x.shape))
        if metric == "cosine":
            return _cosine(x, q)
    raise ValueError(f"unknown metric {metric!r}")


def _kernel_sum(a: Vectors, b: npt.NDArray[np.float32]) -> Vectors:
    """``sum(a * b)`` per row, the way LanceDB's l2 and dot kernels add it up."""
    rows, dim = a.shape
    if dim <= 16:
        whole = dim // 8 * 8
        lanes = np.zeros((rows, 8), _F32)
        for start in range(0, whole, 8):
            lanes = _fma(a[:, start : start + 8], b[:, start : start + 8], lanes)
        total = _tree8(lanes) if whole else np.zeros(rows, _F32)
        if dim > whole:
            total = total + _in_order(a[:, whole:] * b[:, whole:])
        return total
    whole = dim // 16 * 16
    products = (a[:, :whole] * b[:, :whole]).reshape(rows, whole // 16, 16)
    lanes = np.add.accumulate(products, axis=1, dtype=_F32)[:, -1, :]  # chunk by chunk, per lane
    leftover = _in_order(a[:, whole:] * b[:, whole:]) if dim > whole else np.zeros(rows, _F32)
    return leftover + _in_order(lanes)


def _cosine(x: Vectors, q: Vectors) -> Vectors:
    if x.shape[1] == 8:
        xy, yy = _tree8(x * q), _tree8(x * x)
    else:
        xy = _fma_sum(x, np.broadcast_to(q, x.shape))
        yy = _fma_sum(x, x)
    square = q[None, :]
    q_norm = np.sqrt(_fma_sum(square, square, leftover_apart=True)[0])
    result: Vectors = _F32(1) - (xy / q_norm) / np.sqrt(yy)
    return result


def _fma_sum(a: Vectors, b: npt.NDArray[np.float32], *, leftover_apart: bool = False) -> Vectors:
    """``sum(a * b)`` per row as LanceDB's cosine kernel adds it: 16 lanes of fused multiply-adds,
    summed as a tree, then each leftover product added to it in order (the query's norm: the leftover
    products summed in order first, then added)."""
    rows, dim = a.shape
    whole = dim // 16 * 16
    lanes = np.zeros((rows, 16), _F32)
    for start in range(0, whole, 16):
        lanes = _fma(a[:, start : start + 16], b[:, start : start + 16], lanes)
    total = _tree16(lanes)
    if dim == whole:
        return total
    if leftover_apart:
        return total + _in_order(a[:, whole:] * b[:, whole:])
    for i in range(whole, dim):
        total = total + a[:, i] * b[:, i]
    return total


def _in_order(terms: Vectors) -> Vectors:
    """The float32 sum of each row's terms, added left to right."""
    summed: Vectors = np.add.accumulate(terms, axis=1, dtype=_F32)[:, -1]
    return summed


def _tree8(lanes: Vectors) -> Vectors:
    """An AVX register's 8 lanes summed as LanceDB's reduction does: halves, then pairs, then the two."""
    t = lanes[:, :4] + lanes[:, 4:]
    result: Vectors = (t[:, 0] + t[:, 2]) + (t[:, 1] + t[:, 3])
    return result


def _tree16(lanes: Vectors) -> Vectors:
    """16 lanes (two AVX registers) added lane by lane, then summed as :func:`_tree8`."""
    return _tree8(lanes[:, :8] + lanes[:, 8:])


def _fma(a: npt.NDArray[np.float32], b: npt.NDArray[np.float32], c: Vectors) -> Vectors:
    """float32 ``a * b + c`` rounded once, as the FMA instruction does.

    The product is exact in float64; the sum is rounded to float64 "to odd" (an inexact result gets an
    odd last bit), which makes its rounding to float32 the correctly rounded one (no double rounding).
    """
    product = a.astype(np.float64) * b
    addend = c.astype(np.float64)
    total = product + addend
    back = total - product
    error = (product - (total - back)) + (addend - back)
    even = (total.view(np.int64) & 1) == 0
    inexact = (error != 0) & even
    if inexact.any():
        total[inexact] = np.nextafter(total[inexact], np.copysign(np.inf, error[inexact]))
    rounded: Vectors = total.astype(_F32)
    return rounded
