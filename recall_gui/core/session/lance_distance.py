"""LanceDB's flat-search distances, bit for bit, computed in NumPy float32.

LanceDB (lancedb 0.40) computes every distance in float32 with its own summation order, in kernels it
chooses by the processor's instructions; rows whose distances differ below float32 resolution are ordered
by that arithmetic, not by the exact values. These functions repeat it step by step, so that exact search
in memory orders near-ties exactly as LanceDB does. Each step was measured against LanceDB itself
(tests/core/test_lance_order.py) on two kinds of processor, which differ in cosine alone
(:data:`EMULATIONS`); :mod:`recall_gui.core.session.lance_arithmetic` checks where the app runs which one
holds, and where none does (ARM, or another build of LanceDB), LanceDB measures the candidates itself:

- the query is cast to float32;
- ``l2`` and ``dot`` (the sum of ``(x - q)^2`` or of ``x q``): up to 16 dimensions, chunks of 8 are
  accumulated in 8 lanes with fused multiply-adds, the lanes summed as a tree (:func:`_tree8`), then the
  sum of the leftover terms (in order) is added; above 16 dimensions each term is rounded, accumulated in
  16 lanes chunk by chunk, the leftover terms summed in order, then the 16 lanes added to it in order;
- ``dot`` distance: ``1 - x.q``;
- ``cosine`` with AVX-512 (measured on Intel Xeon processors): ``x.q``, ``x.x`` and ``q.q`` accumulated
  in 16 lanes with fused multiply-adds, the lanes summed as a tree (:func:`_tree16`), then each leftover
  product added in order (for ``q.q``, the leftover products' own sum); the distance is
  ``1 - (x.q / |q|) / |x|``. At 8 dimensions ``x.q`` and ``x.x`` are 8-lane trees of the products
  instead. A zero row (or query) has no cosine distance: NaN, and LanceDB leaves such rows out;
- ``cosine`` with AVX2 and no AVX-512 (measured on an AMD EPYC): :func:`_cosine_avx2`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

Vectors = npt.NDArray[np.float32]
#: A function of (rows, query, metric) giving each row's LanceDB float32 distance (NaN: none), as
#: :func:`distances` does; :mod:`recall_gui.core.session.lance_arithmetic` says which one to trust here.
Measure = Callable[[npt.NDArray[Any], npt.NDArray[Any], str], Vectors]

_F32 = np.float32
#: A kernel's cosine distance of each row to the query.
Cosine = Callable[[Vectors, Vectors], Vectors]


def distances(rows: npt.NDArray[Any], query: npt.NDArray[Any], metric: str) -> Vectors:
    """LanceDB's float32 distance of each row of ``rows`` to ``query`` (NaN where it has none), as its
    kernels for processors with AVX-512 compute it."""
    return _distances(rows, query, metric, _cosine)


def distances_avx2(rows: npt.NDArray[Any], query: npt.NDArray[Any], metric: str) -> Vectors:
    """As :func:`distances`, as LanceDB's kernels for processors with AVX2 and no AVX-512 compute it."""
    return _distances(rows, query, metric, _cosine_avx2)


def _distances(rows: npt.NDArray[Any], query: npt.NDArray[Any], metric: str, cosine: Cosine) -> Vectors:
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
            return cosine(x, q)
    raise ValueError(f"unknown metric {metric!r}")


def _kernel_sum(a: Vectors, b: npt.NDArray[np.float32]) -> Vectors:
    """``sum(a * b)`` per row, the way LanceDB's l2 and dot kernels add it up."""
    rows, dim = a.shape
    if dim <= 16:
        whole = dim // 8 * 8
        total = _tree8(_fma_lanes(a[:, :whole], b[:, :whole], 8)) if whole else np.zeros(rows, _F32)
        if dim > whole:
            total = total + _in_order(a[:, whole:] * b[:, whole:])
        return total
    whole = dim // 16 * 16
    products = (a[:, :whole] * b[:, :whole]).reshape(rows, whole // 16, 16)
    lanes = np.add.accumulate(products, axis=1, dtype=_F32)[:, -1]  # each lane, chunk by chunk
    leftover = _in_order(a[:, whole:] * b[:, whole:]) if dim > whole else np.zeros(rows, _F32)
    return leftover + _in_order(lanes)


def _cosine(x: Vectors, q: Vectors) -> Vectors:
    rows, dim = x.shape
    whole = dim // 16 * 16
    # x.q, x.x and q.q in one pass of fused multiply-adds: rows of [x; x; q] times rows of [q; x; q].
    left = np.concatenate([x, x, q[None, :]])
    right = np.concatenate([np.broadcast_to(q, x.shape), x, q[None, :]])
    sums = _tree16(_fma_lanes(left[:, :whole], right[:, :whole], 16)) if whole else np.zeros(len(left), _F32)
    q_square = sums[-1] + _in_order(q[None, whole:] * q[None, whole:])[0] if dim > whole else sums[-1]
    if dim == 8:
        xy, yy = _tree8(x * q), _tree8(x * x)
    else:
        for i in range(whole, dim):  # each leftover product added in order
            sums[:-1] = sums[:-1] + left[:-1, i] * right[:-1, i]
        xy, yy = sums[:rows], sums[rows:-1]
    result: Vectors = _F32(1) - (xy / np.sqrt(q_square)) / np.sqrt(yy)
    return result


def _cosine_avx2(x: Vectors, q: Vectors) -> Vectors:
    """Cosine as LanceDB computes it with AVX2: ``|q|`` from 8 fused-multiply-add lanes (a tree) plus the
    leftover squares in order; for each row, ``x.q`` and ``x.x`` from 16 such lanes (a tree), plus one
    chunk of 8 products (a tree of them), plus the leftover terms summed in order; ``x.x``'s leftover sum
    goes through a square root and back. At 8 and 16 dimensions, the products' tree alone."""
    dim = x.shape[1]
    eighths = dim // 8 * 8
    q_square = _tree8(_fma_lanes(q[None, :eighths], q[None, :eighths], 8))[0] if eighths else _F32(0)
    if dim > eighths:
        q_square = q_square + _in_order(q[None, eighths:] * q[None, eighths:])[0]
    q_norm = np.sqrt(q_square)
    if dim in (8, 16):
        tree = _tree8 if dim == 8 else _tree16
        result: Vectors = _F32(1) - tree(x * q) / q_norm / np.sqrt(tree(x * x))
        return result
    xy = _sixteens_and_eight(x, np.broadcast_to(q, x.shape))
    xx = _sixteens_and_eight(x, x)
    if dim > eighths:
        xy = xy + _in_order(x[:, eighths:] * q[eighths:])
        leftover = np.sqrt(_in_order(x[:, eighths:] * x[:, eighths:]))
        xx = xx + leftover * leftover
    result = _F32(1) - xy / q_norm / np.sqrt(xx)
    return result


def _sixteens_and_eight(a: Vectors, b: npt.NDArray[np.float32]) -> Vectors:
    """The AVX2 cosine's vector part: 16 fused-multiply-add lanes over the chunks of 16 (a tree), plus a
    tree of the next 8 products when there are 8 more."""
    rows, dim = a.shape
    sixteens, eighths = dim // 16 * 16, dim // 8 * 8
    total = _tree16(_fma_lanes(a[:, :sixteens], b[:, :sixteens], 16)) if sixteens else np.zeros(rows, _F32)
    if eighths > sixteens:
        total = total + _tree8(a[:, sixteens:eighths] * b[:, sixteens:eighths])
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


def _fma_lanes(a: Vectors, b: npt.NDArray[np.float32], width: int) -> Vectors:
    """``width`` float32 lanes, each accumulating its column of every chunk of ``width`` products with
    a fused multiply-add (one rounding per step), as LanceDB's SIMD loops do.

    Each product is exact in float64 and each step's sum is rounded once in float64, then to float32.
    Rounding twice gives the FMA's result unless the float64 sum lies exactly halfway between two
    float32 values (or outside float32's normal range); that is checked once at the end, and only
    then are the steps redone with the exact :func:`_fma`.
    """
    rows, dim = a.shape
    chunks = dim // width
    # Chunk-major, so that each step works on contiguous memory.
    products = (a.astype(np.float64) * b).reshape(rows, chunks, width).transpose(1, 0, 2).copy()
    steps = np.empty_like(products)
    lanes = np.zeros((rows, width), _F32)
    for chunk in range(chunks):
        np.add(products[chunk], lanes, out=steps[chunk])
        lanes[...] = steps[chunk]
    if _may_round_twice(steps):
        lanes = np.zeros((rows, width), _F32)
        for chunk in range(chunks):
            start = chunk * width
            lanes = _fma(a[:, start : start + width], b[:, start : start + width], lanes)
    return lanes


#: The float64 bits float32 drops (29 of the fraction), and their value halfway between two float32s.
_DROPPED = (1 << 29) - 1
_HALFWAY = 1 << 28
#: float64 exponents (biased) of float32's normal range.
_NORMAL = (1023 - 126, 1023 + 127)


def _may_round_twice(values: npt.NDArray[np.float64]) -> bool:
    """Whether rounding any of ``values`` to float32 could differ from rounding their exact sums."""
    bits = values.view(np.int64)
    if np.any((bits & _DROPPED) == _HALFWAY):
        return True
    exponent = (bits >> 52) & 0x7FF
    return bool(np.any(((exponent < _NORMAL[0]) & (values != 0)) | (exponent > _NORMAL[1])))


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


#: The emulations, by the kernels LanceDB runs (which one holds here: :mod:`lance_arithmetic`).
EMULATIONS: dict[str, Measure] = {"avx512": distances, "avx2": distances_avx2}
