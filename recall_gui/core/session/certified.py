"""Exact search's scan over int8 codes, with a proved bound that keeps every true nearest row.

Each row ``x`` is held as int8 codes ``c = round(x / s)`` with one scale ``s = max|x| / 127``, four times
smaller than its float32 vector, plus three numbers: ``|x|``, the residual's length ``e = |x - s c|`` and
``m = |s c|``. A query ``q`` is coded the same way (``q = t cq + rq``). Then, exactly,

    q.x - s t (c.cq) = q.(x - s c) + rq.(s c),   so   |q.x - s t (c.cq)| <= |q| e + |rq| m

(Cauchy-Schwarz), and ``c.cq`` is an exact integer. That bounds every row's distance from below and
above; the rows whose lower bound is not above the k-th smallest upper bound (plus a slack for float32
rounding) surely contain the k nearest rows, ties and float32 rounding of the distances included. Rows
too short or too long for float32's bounds (:mod:`recall_gui.core.session.magnitudes`) are always
candidates. Only those few are then ranked exactly (:func:`recall_gui.core.session.exact.nearest_rows`),
from a float32 copy of the vectors memory-mapped from the app's cache folder: what stays in memory is
about a quarter of the matrix.
The proof and the measurements: docs/PERFORMANCE_LOG.md#certified-exact-search.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import tempfile
import weakref
from concurrent.futures import Executor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from recall_gui.core.session.magnitudes import split_rows

#: Unit roundoff of float32.
_U = float(np.finfo(np.float32).eps) / 2
#: The absolute error of a float32 operation on subnormal numbers, times the operations that may add it.
_TINY = float(np.finfo(np.float32).smallest_subnormal) * 256
_FLOAT32_MAX = float(np.finfo(np.float32).max)
#: Rows per task of the scan: a task's temporaries (a few arrays of this many floats) stay in cache.
CHUNK_ROWS = 65536
#: Rows per block when bounding the k-th smallest upper bound by block minima.
_BLOCK = 64
#: Integer dot products of codes are exact in float32 up to 2**24: 127 * 127 * dim of them.
_EXACT_FLOAT32_DIM = 2**24 // (127 * 127)


#: Widest vectors coded: a residual's length is then at most its row's (the slack relies on it).
_MAX_DIM = 254**2


class NotCodable(ValueError):
    """The vectors cannot be coded with a finite bound (the message says why)."""


@dataclass(frozen=True, eq=False)
class Int8Codes:
    """A matrix's rows as int8 codes with what the bound needs, and the float32 rows memory-mapped.

    ``rows`` is the float32 matrix in a file of the app's cache folder (removed as soon as it is mapped,
    where the system allows: nothing is left behind), read only for the few rows a search ranks exactly.
    """

    codes: npt.NDArray[np.int8]
    #: s per row (float32; 0 for a row of zeros).
    scales: npt.NDArray[np.float32]
    #: |x - s c| per row, rounded up.
    residuals: npt.NDArray[np.float32]
    #: |s c| per row, rounded up.
    code_norms: npt.NDArray[np.float32]
    #: |x|^2 per row (float32, rounded to nearest from float64) and 1/|x| (0 for rows of zero length).
    sq_norms: npt.NDArray[np.float32]
    inv_norms: npt.NDArray[np.float32]
    #: Positions of the rows of zeros, ascending (they have no cosine distance).
    zero_rows: npt.NDArray[np.intp]
    max_norm: float
    mapped: _MappedRows
    #: Positions of the rows too short or too long for the bound, ascending: candidates of every search
    #: (their codes and numbers above are zeros).
    extreme_rows: npt.NDArray[np.intp]
    #: Threads that scan parts of the codes side by side (the session's; ``None``: the calling thread).
    workers: Executor | None = None

    @property
    def nbytes(self) -> int:
        """Memory the codes hold (the memory-mapped float32 rows are the system's page cache)."""
        arrays = (self.codes, self.scales, self.residuals, self.code_norms, self.sq_norms, self.inv_norms)
        return sum(int(array.nbytes) for array in arrays) + int(self.zero_rows.nbytes)

    @classmethod
    def build(
        cls, matrix: npt.NDArray[np.float32], folder: Path, workers: Executor | None = None
    ) -> Int8Codes:
        """Code ``matrix`` (finite float32 rows) and write its float32 copy under ``folder``.

        Raises :class:`NotCodable` when a row's numbers do not fit the bound in float32, ``OSError`` when
        the copy cannot be written.
        """
        n, dim = matrix.shape
        if dim > _MAX_DIM:
            raise NotCodable(f"{dim}-dimensional vectors are too wide for the int8 codes' bound")
        codes = np.empty((n, dim), np.int8)
        scales, residuals, code_norms, sq_norms = (np.empty(n, np.float32) for _ in range(4))
        for start in range(0, n, CHUNK_ROWS // 8):
            span = slice(start, min(n, start + CHUNK_ROWS // 8))
            with np.errstate(over="ignore"):  # the numbers of extreme rows: not kept
                codes[span], scales[span], residuals[span], code_norms[span], sq_norms[span] = _code_rows(
                    matrix[span]
                )
        zero_rows, extreme_rows = split_rows(matrix, sq_norms)
        for numbers in (codes, scales, residuals, code_norms, sq_norms):
            numbers[extreme_rows] = 0  # no bound is computed for them
        if not (
            np.isfinite(sq_norms).all() and np.isfinite(residuals).all() and np.isfinite(code_norms).all()
        ):
            raise NotCodable(  # pragma: no cover - defensive: split_rows zeroed every row that could overflow
                "some vectors are too large to bound their int8 codes' error in float32"
            )
        with np.errstate(divide="ignore"):
            inv_norms = (1.0 / np.sqrt(sq_norms.astype(np.float64))).astype(np.float32)
        inv_norms[sq_norms == 0] = 0
        max_norm = float(np.sqrt(sq_norms.max(initial=0.0), dtype=np.float64)) * (1 + 4 * _U)
        mapped = _map_copy(matrix, folder)
        return cls(
            codes,
            scales,
            residuals,
            code_norms,
            sq_norms,
            inv_norms,
            zero_rows,
            max_norm,
            mapped,
            extreme_rows,
            workers,
        )

    @property
    def rows(self) -> npt.NDArray[np.float32]:
        """The float32 rows, mapped from the file: for ranking the candidates exactly."""
        return self.mapped.rows

    def release_rows(self) -> None:
        """Hand back the pages of the float32 rows read so far (see :meth:`_MappedRows.release`)."""
        self.mapped.release()


def _code_rows(x32: npt.NDArray[np.float32]) -> tuple[npt.NDArray[Any], ...]:
    """A block of rows' codes, scales, residual lengths, code lengths and squared lengths, computed in
    float64 (the residuals are measured against the float32 scale kept)."""
    x = x32.astype(np.float64)
    scale = (np.abs(x).max(axis=1, initial=0.0) / 127).astype(np.float32)
    s = scale.astype(np.float64)[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        c = np.where(s > 0, np.rint(x / np.where(s > 0, s, 1.0)), 0.0)
    np.clip(c, -127, 127, out=c)
    residual = x - s * c
    residuals = _round_up(np.sqrt(np.einsum("ij,ij->i", residual, residual)))
    code_norms = _round_up(s[:, 0] * np.sqrt(np.einsum("ij,ij->i", c, c)))
    return c, scale, residuals, code_norms, np.einsum("ij,ij->i", x, x)


def _round_up(values: npt.NDArray[np.float64]) -> npt.NDArray[np.float32]:
    """float32 values no smaller than ``values`` (rounded to nearest, then one step up)."""
    rounded = values.astype(np.float32)
    return np.nextafter(rounded, np.float32(np.inf))


def _map_copy(matrix: npt.NDArray[np.float32], folder: Path) -> _MappedRows:
    """``matrix`` written to a file under ``folder`` and mapped read-only; the file is removed at once
    (POSIX keeps it while mapped), or when the mapping is dropped where it cannot be removed while open."""
    folder.mkdir(parents=True, exist_ok=True)
    handle, name = tempfile.mkstemp(prefix="vectors-", suffix=".f32", dir=folder)
    path = Path(name)
    try:
        with os.fdopen(handle, "r+b") as file:
            np.ascontiguousarray(matrix).tofile(file)
            file.flush()
            mapping = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) if matrix.size else None
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    if mapping is None:
        path.unlink()
        return _MappedRows(np.empty(matrix.shape, np.float32), None)
    rows = np.frombuffer(mapping, np.float32).reshape(matrix.shape)
    try:
        path.unlink()
    except OSError:  # pragma: no cover - Windows: not while mapped; removed with the rows when it can be
        weakref.finalize(rows, _remove_quietly, path)
    return _MappedRows(rows, mapping)


def _remove_quietly(path: Path) -> None:  # pragma: no cover - Windows (see _map_copy)
    with contextlib.suppress(OSError):  # still mapped elsewhere: a disposable file in the cache folder
        path.unlink()


@dataclass(frozen=True, eq=False)
class _MappedRows:
    """The float32 rows mapped from a file, and the mapping, whose pages a search can hand back."""

    rows: npt.NDArray[np.float32]
    mapping: mmap.mmap | None

    def release(self) -> None:
        """Unmap the pages read so far from this process (they stay in the system's file cache, so the
        next read is a cheap minor fault): a read maps a whole large folio, about 2 MB here, so a few
        hundred rows read at random would otherwise keep hundreds of megabytes resident."""
        if self.mapping is not None and hasattr(mmap, "MADV_DONTNEED"):
            self.mapping.madvise(mmap.MADV_DONTNEED)


def candidates(
    codes: Int8Codes,
    query: npt.NDArray[np.float32],
    k: int,
    metric: str,
    allowed: npt.NDArray[np.bool_] | None = None,
) -> npt.NDArray[np.intp]:
    """Positions (ascending) of rows that surely include the ``k`` rows nearest to ``query`` by
    ``metric`` (``l2``, ``cosine``, ``dot``), among those ``allowed`` keeps, in LanceDB's order (float32
    distance, then row id). Rows of zero length are left out for cosine. ``k`` must not exceed the rows
    that can be ranked.
    """
    codes.release_rows()  # what earlier searches (or a full pass by another tool) mapped of the rows
    n = codes.codes.shape[0]
    if k <= 0 or n == 0:
        return np.empty(0, np.intp)
    q = np.asarray(query, np.float64)
    q_norm = float(np.sqrt(q @ q))
    q_scale = float(np.float32(np.abs(q).max(initial=0.0) / 127))
    q_codes = np.rint(q / q_scale) if q_scale > 0 else np.zeros_like(q)
    np.clip(q_codes, -127, 127, out=q_codes)
    q_residual = q - q_scale * q_codes
    # |q| and |rq| rounded up, so the float32 radius is not below the proved one (but for rounding)
    bound = _Bound(
        metric, q_scale, q_norm * (1 + 4 * _U), float(np.sqrt(q_residual @ q_residual)) * (1 + 4 * _U)
    )
    slack = bound.slack(codes.max_norm, len(q))
    if not np.isfinite(slack) or slack * 1e6 > _FLOAT32_MAX:  # would overflow float32: rank all
        keep = np.ones(n, bool) if allowed is None else allowed.copy()
        if metric == "cosine":
            keep[codes.zero_rows] = False
        return np.flatnonzero(keep)
    scan = _Scan(codes, q_codes.astype(np.int8), bound, k=k, slack=slack, allowed=allowed)
    starts = range(0, n, CHUNK_ROWS)
    if codes.workers is not None and len(starts) > 1:
        try:
            parts = list(codes.workers.map(scan.chunk, starts))
        except RuntimeError:  # the session is closing: its threads are gone
            parts = [scan.chunk(start) for start in starts]
    else:
        parts = [scan.chunk(start) for start in starts]
    minima = np.concatenate([part[2] for part in parts])
    # fewer than k rows: all that can be ranked
    threshold = np.inf if len(minima) < k else float(np.partition(minima, k - 1)[k - 1])
    positions = np.concatenate([part[0] for part in parts])
    lower = np.concatenate([part[1] for part in parts])
    return positions[lower <= _limit(threshold, slack)]


def _limit(threshold: float, slack: float) -> float:
    """The largest lower bound a candidate may have: every finite one while no k-th upper bound is known
    (rows left out, by a filter or for having no cosine, have infinite bounds)."""
    return min(threshold + slack, _FLOAT32_MAX)


@dataclass(frozen=True)
class _Bound:
    """The query's side of the bound: what turns a row's integer dot product into distance bounds."""

    metric: str
    q_scale: float
    q_norm: float
    residual_norm: float

    def slack(self, max_norm: float, dim: int) -> float:
        """A bound on the float32 rounding of the scan's few operations per row and of the distances
        the exact ranking orders by, in the units of :meth:`_Scan.chunk`'s bounds (proof in
        docs/PERFORMANCE_LOG.md#certified-exact-search), with B the largest magnitude involved: LanceDB's
        float32 distances err by at most ``(2 gamma_d + 10 u) B`` (underflow included, rows and query
        within magnitudes' range), twice, and the scan's own operations by ``64 u B`` and ``_TINY``."""
        q, x = self.q_norm, max_norm
        if self.metric == "l2":
            largest = (x + q) ** 2 + 8 * x * q
        elif self.metric == "cosine":
            largest = 8 * q
        elif self.metric == "dot":
            largest = 1 + 8 * x * q
        else:
            raise ValueError(f"unknown metric {self.metric!r}")
        gamma = dim * _U / (1 - dim * _U)
        return (4 * gamma + 84 * _U) * largest + _TINY


class _Scan:
    """One query's scan, a chunk of rows at a time (chunks may run on several threads)."""

    def __init__(
        self,
        codes: Int8Codes,
        q_codes: npt.NDArray[np.int8],
        bound: _Bound,
        *,
        k: int,
        slack: float,
        allowed: npt.NDArray[np.bool_] | None,
    ) -> None:
        self.codes = codes
        self.q_codes = q_codes[None, :]
        self.bound = bound
        self.k = k
        self.slack = slack
        self.allowed = allowed
        self.exact_float32 = codes.codes.shape[1] <= _EXACT_FLOAT32_DIM
        #: The smallest k-th upper bound seen so far in any chunk: rows above it (plus the slack) cannot
        #: be among the nearest. Threads may overwrite a smaller one with a larger: that only keeps more.
        self.threshold = np.inf

    def chunk(
        self, start: int
    ) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.float32], npt.NDArray[np.float32]]:
        """The rows of the chunk at ``start`` that may be among the nearest (positions, lower bounds),
        and the minima of its upper bounds per block of rows (one row each)."""
        import numkong

        codes, bound = self.codes, self.bound
        span = slice(start, min(start + CHUNK_ROWS, codes.codes.shape[0]))
        dtype: Literal["float32", "float64"] = "float32" if self.exact_float32 else "float64"
        products = np.asarray(numkong.cdist(codes.codes[span], self.q_codes, "dot", out_dtype=dtype))
        # q.x is within `radius` of `estimate` (module docstring); both in float32, fused in place
        estimate = products[:, 0]
        estimate *= codes.scales[span]
        estimate *= bound.q_scale
        radius = codes.residuals[span] * np.float32(bound.q_norm)
        radius += codes.code_norms[span] * np.float32(bound.residual_norm)
        # lower and upper bounds of the distance minus a constant per query (1, |q|^2) or over |q|
        if bound.metric == "dot":  # -q.x
            upper = radius - estimate
            estimate += radius
            lower = np.negative(estimate, out=estimate)
        elif bound.metric == "l2":  # |x|^2 - 2 q.x
            radius *= 2
            estimate *= -2
            estimate += codes.sq_norms[span]
            upper = estimate + radius
            lower = np.subtract(estimate, radius, out=estimate)
        else:  # cosine: -q.x / |x|
            inv = codes.inv_norms[span]
            radius *= inv
            estimate *= inv
            upper = radius - estimate
            estimate += radius
            lower = np.negative(estimate, out=estimate)
            inside = _within(codes.zero_rows, span)
            upper[inside] = np.inf
            lower[inside] = np.inf
        extreme = _within(codes.extreme_rows, span)  # ranked in every search, never setting the threshold
        upper[extreme] = np.inf
        lower[extreme] = -np.inf
        if self.allowed is not None:
            dropped = ~self.allowed[span]
            upper[dropped] = np.inf
            lower[dropped] = np.inf
        blocks = len(upper) // _BLOCK
        minima = upper[: blocks * _BLOCK].reshape(blocks, _BLOCK).min(axis=1) if blocks else upper[:0]
        tail = upper[blocks * _BLOCK :]
        minima = np.concatenate([minima, tail]) if len(tail) else minima
        if len(minima) >= self.k:
            self.threshold = min(self.threshold, float(np.partition(minima, self.k - 1)[self.k - 1]))
        keep = np.flatnonzero(lower <= _limit(self.threshold, self.slack))
        return keep + start, lower[keep], minima


def _within(positions: npt.NDArray[np.intp], span: slice) -> npt.NDArray[np.intp]:
    """The ascending ``positions`` inside ``span``, counted from its start."""
    first, last = np.searchsorted(positions, [span.start, span.stop])
    inside: npt.NDArray[np.intp] = positions[first:last] - span.start
    return inside
