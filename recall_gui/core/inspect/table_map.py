"""The map of a table: each row's vector as a point on a plane (see
:mod:`recall_gui.core.inspect.projection`).

The vectors come from the session's vectors in memory (the ones exact search uses) or, when they are not
held there, from one read of the vector column. Every row is mapped up to
:data:`~recall_gui.core.inspect.projection.MAX_MAP_POINTS` rows; beyond, a seeded sample, and the map says
so. Projections run on the session's inspection thread (the neighbour layout's products on its layout
threads, below the window's in priority) and are kept per table version (``session.maps``). Neighbours
are found by the agent's metric for the table (the registry's, else its index's, else L2). Also here:
what the map shows about its points (an id and a first line on hover, a column's values to colour by),
and finding the point under the pointer among a million.
"""

from __future__ import annotations

import asyncio
import functools
import math
import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import numpy.typing as npt

from recall_gui.core.base.heap import release_free_memory
from recall_gui.core.inspect.layout import project
from recall_gui.core.inspect.projection import LABELS, MAX_MAP_POINTS, Cancelled, Progress, sample_rows
from recall_gui.core.session.map_cache import KeptMap, MapKey, Method, Projection
from recall_gui.core.session.session import Session
from recall_gui.core.session.vector_cache import CachedTable
from recall_gui.core.storage.content_identity import content_sha256, entry_label
from recall_gui.core.storage.lance_calls import read_batches, read_query
from recall_gui.core.storage.open_table import OpenTable, metric_for
from recall_gui.core.storage.target import TableTarget
from recall_gui.core.tables.versions import list_versions

if TYPE_CHECKING:
    import pyarrow as pa

#: Categories a column is coloured by at most; the rest share one colour ("other").
MAX_CATEGORIES = 10
#: Changes when the neighbour layout changes, so that maps made by an older one are made again.
LAYOUT_REVISION = "sample-place-pull-1"


@dataclass(frozen=True)
class TableMap:
    """Points for the rows of one table version: ``positions[i]`` is the row with ``row_ids[i]``."""

    table: str
    version: int
    projection: Projection
    row_ids: npt.NDArray[np.uint64]
    #: Rows with a vector in the table (the map shows all of them, or a sample when ``sampled``).
    total_rows: int
    sampled: bool
    elapsed_s: float = 0.0
    from_cache: bool = False
    #: The metric the neighbours were found by (the agent's for this table).
    metric: str = "l2"
    #: Why the map could not be kept in the cache folder ("" if it was, or needs not be).
    not_kept: str = ""
    #: Finds the point nearest to a place (scipy's k-d tree over ``positions``; None: one pass).
    finder: Any = field(default=None, compare=False, repr=False)

    @property
    def positions(self) -> npt.NDArray[np.float32]:
        return self.projection.positions

    @property
    def method(self) -> Method:
        return self.projection.method

    def __len__(self) -> int:
        return len(self.row_ids)

    def describe(self) -> str:
        """``12 points · PCA · version 3`` or, sampled, ``a sample of 100,000 of 1,000,000 rows · ...``."""
        shown = (
            f"a sample of {len(self):,} of {self.total_rows:,} rows"
            if self.sampled
            else f"{len(self):,} point{'' if len(self) == 1 else 's'}"
        )
        return f"{shown} · {LABELS[self.method]} · version {self.version}"

    def index_of(self, row_ids: npt.ArrayLike) -> npt.NDArray[np.intp]:
        """Each row id's point (-1 for a row not on the map)."""
        wanted = np.asarray(row_ids, np.uint64).ravel()
        order = np.argsort(self.row_ids, kind="stable")
        ordered = self.row_ids[order]
        at = np.searchsorted(ordered, wanted)
        at = np.minimum(at, max(len(ordered) - 1, 0))
        found = (len(ordered) > 0) & (ordered[at] == wanted) if len(ordered) else np.zeros(len(wanted), bool)
        return np.where(found, order[at] if len(ordered) else -1, -1).astype(np.intp)

    def same_points(self, other: TableMap) -> bool:
        """Whether ``other`` maps the same rows in the same order (what is read per point fits both)."""
        return other is self or bool(np.array_equal(self.row_ids, other.row_ids))

    def points_of(self, row_ids: npt.ArrayLike) -> npt.NDArray[np.bool_] | None:
        """The points of the rows ``row_ids``, as a mask; ``None`` if one of them is not on the map."""
        found = self.index_of(row_ids)
        if (found < 0).any():
            return None
        mask = np.zeros(len(self), bool)
        mask[found] = True
        return mask

    @property
    def how(self) -> str:
        """How the map was made, in words."""
        return self.projection.how or LABELS[self.method]

    def nearest(self, x: float, y: float, scale_x: float, scale_y: float, within: float) -> int | None:
        """The point nearest to ``(x, y)`` if it lies within ``within`` (in units of ``scale_x``/``y``:
        the size of a screen pixel in map units, so the distance is in pixels). Ties go to the first."""
        if not len(self) or scale_x <= 0 or scale_y <= 0:
            return None
        if self.finder is None:
            candidates = np.arange(len(self))
        else:  # the points within reach in map units, then the nearest in pixels among them
            reach = within * max(scale_x, scale_y) * (1 + 1e-6)
            candidates = np.asarray(self.finder.query_ball_point((x, y), reach), np.intp)
            if not len(candidates):
                return None
            candidates.sort()
        dx = (self.positions[candidates, 0] - x) / scale_x
        dy = (self.positions[candidates, 1] - y) / scale_y
        distances = dx * dx + dy * dy
        best = int(np.argmin(distances))
        return int(candidates[best]) if distances[best] <= within * within else None


def _key(opened: OpenTable, stamp: str, *, method: Method, seed: int, bound: int, metric: str) -> MapKey:
    revision = LAYOUT_REVISION if method != "pca" else ""
    return (
        opened.uri,
        opened.name,
        opened.columns.vector,
        opened.version,
        stamp,
        method,
        seed,
        bound,
        metric,
        revision,
    )


#: Points beyond which hovering looks through a k-d tree instead of one pass over every point.
FINDER_POINTS = 50_000


def _with_finder(table_map: TableMap) -> TableMap:
    """``table_map`` with a k-d tree to find points in (built on a worker: a big map's takes a while)."""
    if len(table_map) <= FINDER_POINTS:
        return table_map
    from scipy.spatial import cKDTree

    return replace(table_map, finder=cKDTree(table_map.positions.astype(np.float64)))


async def build_map(
    session: Session,
    target: TableTarget,
    method: Method = "pca",
    *,
    seed: int = 0,
    bound: int = MAX_MAP_POINTS,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> TableMap:
    """The map of ``target`` at its version (kept in ``session.maps``). ``progress`` is called on the
    event loop's thread; cancelling the awaiting task (or setting ``cancel``) stops the projection."""
    started = time.perf_counter()
    opened, metric, key = await _identify(session, target, method=method, seed=seed, bound=bound)
    loop = asyncio.get_running_loop()
    kept = await _kept(session, opened, key, metric)
    if kept is not None:
        return kept
    matrix, row_ids, total, release = await _vectors(session, opened, bound, seed)
    stop = cancel or threading.Event()

    def report(fraction: float, stage: str) -> None:
        if progress is not None:
            loop.call_soon_threadsafe(progress, fraction, stage)

    def make() -> TableMap:
        try:
            projection = project(
                matrix,
                method,
                seed,
                metric=metric,
                workers=session.layout_executor,
                progress=report,
                cancel=stop,
            )
        finally:
            release()
            release_free_memory()
        not_kept = session.maps.put(key, KeptMap(projection, row_ids, total))
        elapsed = time.perf_counter() - started
        made = TableMap(
            opened.name,
            opened.version,
            projection,
            row_ids,
            total,
            len(row_ids) < total,
            elapsed,
            False,
            metric,
            not_kept,
        )
        return _with_finder(made)

    job = loop.run_in_executor(session.inspect_executor, make)
    session.running_inspections.add(stop)
    try:
        return await job
    except Cancelled:
        raise asyncio.CancelledError from None
    except asyncio.CancelledError:
        stop.set()  # the thread stops at its next check
        raise
    finally:
        session.running_inspections.discard(stop)


async def kept_map(
    session: Session, target: TableTarget, method: Method, *, seed: int = 0, bound: int = MAX_MAP_POINTS
) -> TableMap | None:
    """The map :func:`build_map` would give if it is kept already (in memory or the cache folder), else
    ``None``: nothing is laid out."""
    opened, metric, key = await _identify(session, target, method=method, seed=seed, bound=bound)
    return await _kept(session, opened, key, metric)


async def _identify(
    session: Session, target: TableTarget, *, method: Method, seed: int, bound: int
) -> tuple[OpenTable, str, MapKey]:
    opened = await session.tables.open(target)
    metric = metric_for(opened, target.options)
    versions = await list_versions(session, target)
    stamp = next((v.timestamp.isoformat() for v in versions if v.version == opened.version), "")
    return opened, metric, _key(opened, stamp, method=method, seed=seed, bound=bound, metric=metric)


async def _kept(session: Session, opened: OpenTable, key: MapKey, metric: str) -> TableMap | None:
    loop = asyncio.get_running_loop()
    kept = await loop.run_in_executor(session.inspect_executor, session.maps.get, key)
    if kept is None:
        return None
    projection, row_ids, total = kept
    if total is None:  # a map file written before the count was kept with it: counted as then
        total = await opened.count_rows(f"{_quote(opened.columns.vector)} IS NOT NULL")
    found = TableMap(
        opened.name, opened.version, projection, row_ids, total, len(row_ids) < total, 0.0, True, metric
    )
    return await loop.run_in_executor(session.inspect_executor, _with_finder, found)


async def _vectors(
    session: Session, opened: OpenTable, bound: int, seed: int
) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.uint64], int, Callable[[], None]]:
    """The vectors to map (all, or a seeded sample of ``bound``), their row ids, how many there are, and
    what to call once they are read (the session's float32 copy beside its int8 codes is mapped from a
    file: reading every row maps every page, handed back then)."""
    cached = await session.vectors.get(opened, wait=True)
    if isinstance(cached, CachedTable):
        vectors = cached.vectors
        matrix, row_ids = vectors.matrix, vectors.row_ids
        release = vectors.codes.release_rows if vectors.codes is not None else _nothing
        chosen = sample_rows(len(matrix), bound, seed)
        if chosen is None:
            return matrix, row_ids, len(matrix), release
        return matrix[chosen], row_ids[chosen], len(matrix), release
    matrix, row_ids, total = await _read_vectors(session, opened, bound, seed)
    return matrix, row_ids, total, _nothing


def _nothing() -> None:
    return None


async def _read_vectors(
    session: Session, opened: OpenTable, bound: int, seed: int
) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.uint64], int]:
    """One read of the vector column (rows without a usable vector left out), keeping a seeded sample."""
    column = opened.columns.vector
    total = await opened.count_rows(f"{_quote(column)} IS NOT NULL")
    chosen = sample_rows(total, bound, seed)
    keep = total if chosen is None else len(chosen)
    matrix = np.empty((keep, opened.columns.vector_dim), np.float32)
    row_ids = np.empty(keep, np.uint64)
    what = f'reading the vectors of "{opened.name}"'
    query = opened.table.query().where(f"{_quote(column)} IS NOT NULL").select([column]).with_row_id()
    seen = filled = 0
    loop = asyncio.get_running_loop()
    async for batch in read_batches(query, what):
        taking = functools.partial(_take, chosen=chosen, seen=seen, matrix=matrix, row_ids=row_ids)
        filled = await loop.run_in_executor(session.inspect_executor, taking, batch, column, filled)
        seen += batch.num_rows
    matrix, row_ids = matrix[:filled], row_ids[:filled]
    usable = np.isfinite(matrix).all(axis=1)
    return np.ascontiguousarray(matrix[usable]), row_ids[usable], int(usable.sum()) + (total - filled)


def _take(
    batch: pa.RecordBatch,
    column: str,
    filled: int,
    *,
    chosen: npt.NDArray[np.intp] | None,
    seen: int,
    matrix: npt.NDArray[np.float32],
    row_ids: npt.NDArray[np.uint64],
) -> int:
    """Copy the batch's chosen rows into ``matrix`` from ``filled`` on; returns the new fill."""
    vectors = batch.column(column)
    width = vectors.type.list_size
    values = vectors.values.slice(vectors.offset * width, batch.num_rows * width)
    block = values.to_numpy(zero_copy_only=False).astype(np.float32, copy=False).reshape(-1, width)
    ids = batch.column("_rowid").to_numpy()
    if chosen is not None:
        lo, hi = np.searchsorted(chosen, [seen, seen + batch.num_rows])
        picked = chosen[lo:hi] - seen
        block, ids = block[picked], ids[picked]
    room = min(len(block), len(matrix) - filled)
    matrix[filled : filled + room] = block[:room]
    row_ids[filled : filled + room] = ids[:room]
    return filled + room


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


async def point_labels(
    session: Session, target: TableTarget, row_ids: list[int]
) -> dict[int, tuple[str, str]]:
    """The id (``content·3f2a9c1e`` where other rows share it) and the first line of content of each row,
    by row id (what hovering and choosing a point shows)."""
    if not row_ids:
        return {}
    opened = await session.tables.open(target)
    columns = [name for name in (opened.columns.id, opened.columns.content) if name]
    taking = opened.table.take_row_ids(sorted(set(row_ids))).select(columns).with_row_id()
    rows = await read_query(taking, f'reading rows of "{opened.name}"')
    found_ids = rows.column("_rowid").to_pylist()
    contents = rows.column(opened.columns.content).to_pylist()
    ids = rows.column(opened.columns.id).to_pylist() if opened.columns.id else [str(r) for r in found_ids]
    repeats = await opened.id_repeats()
    labels = {}
    for row_id, identifier, content in zip(found_ids, ids, contents, strict=True):
        text = "" if content is None else str(content)
        first = next((line.strip() for line in text.splitlines() if line.strip()), "")
        shown = "" if identifier is None else str(identifier)
        if repeats.is_shared(shown):
            shown = entry_label(shown, content_sha256(text))
        labels[int(row_id)] = (shown, first)
    return labels


@dataclass(frozen=True)
class Colouring:
    """A column's values on the map: per point a category code (``kind == "category"``; -1: missing,
    ``len(labels) - 1`` may be "other") or a number scaled to 0..1 (``kind == "number"``; NaN: missing)."""

    column: str
    kind: Literal["category", "number"]
    codes: npt.NDArray[np.float32]
    labels: tuple[str, ...] = ()
    low: float = 0.0
    high: float = 0.0


async def colour_by(
    session: Session,
    target: TableTarget,
    table_map: TableMap,
    column: str,
    *,
    workers: Executor | None = None,
) -> Colouring:
    """``column``'s value at each point of ``table_map`` (``parent.field`` names a nested field), matched
    to the points on ``workers`` (by default the inspection thread, which a neighbour layout holds until
    it is done)."""
    opened = await session.tables.open(target)
    top = column.split(".", 1)[0]
    what = f'reading column "{column}" of "{opened.name}"'
    query = opened.table.query().select([top]).with_row_id()
    rows = await read_query(query, what)
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(
        workers or session.inspect_executor, _colouring, rows, column, table_map
    )


def _colouring(rows: pa.Table, column: str, table_map: TableMap) -> Colouring:
    import pyarrow as pa
    import pyarrow.compute as pc

    parts = column.split(".")
    values: Any = rows.column(parts[0])
    for part in parts[1:]:
        values = pc.struct_field(values, part)
    at = table_map.index_of(rows.column("_rowid").to_numpy())
    on_map = at >= 0
    if (
        pa.types.is_integer(values.type)
        or pa.types.is_floating(values.type)
        or pa.types.is_boolean(values.type)
    ):
        numbers = pc.cast(values, pa.float64()).to_numpy(zero_copy_only=False)
        scaled = np.full(len(table_map), np.nan, np.float32)
        finite = numbers[np.isfinite(numbers)]
        distinct = np.unique(finite) if len(finite) <= 1_000_000 else finite
        if len(distinct) > MAX_CATEGORIES or pa.types.is_floating(values.type):
            low = float(finite.min()) if len(finite) else 0.0
            high = float(finite.max()) if len(finite) else 0.0
            span = high - low or 1.0
            scaled[at[on_map]] = ((numbers[on_map] - low) / span).astype(np.float32)
            return Colouring(column, "number", scaled, (), low, high)
    try:
        return _categories_vectorised(column, values, at, on_map, len(table_map))
    except (pa.ArrowNotImplementedError, pa.ArrowInvalid, pa.ArrowTypeError):
        return _categories_one_by_one(column, values, at, on_map, len(table_map))


def _categories_vectorised(column: str, values: Any, at: Any, on_map: Any, points: int) -> Colouring:
    """The categories by Arrow's kernels (one pass in C, not a Python loop over every row): the most
    common values of the points on the map, the rest "other"."""
    import pyarrow as pa
    import pyarrow.compute as pc

    values = values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values
    shown = values.filter(pa.array(on_map))
    counted = pc.value_counts(shown.drop_null())
    counts = counted.field("counts").to_numpy()
    order = np.argsort(-counts, kind="stable")  # ties: the first seen first, as Counter.most_common
    top = counted.field("values").take(pa.array(order[:MAX_CATEGORIES]))
    common = [_label(v) for v in top.to_pylist()]
    labels = list(common)
    if len(counts) > MAX_CATEGORIES:
        labels.append(f"other ({len(counts) - MAX_CATEGORIES:,} values)")
    found = pc.index_in(values, value_set=top).to_numpy(zero_copy_only=False)
    number = np.where(np.isnan(found), float(len(common)), found)  # not among the top: "other"
    number[np.asarray(values.is_null(), bool)] = -1.0
    codes = np.full(points, -1.0, np.float32)
    codes[at[on_map]] = number[on_map]
    return Colouring(column, "category", codes, tuple(labels))


def _categories_one_by_one(column: str, values: Any, at: Any, on_map: Any, points: int) -> Colouring:
    """The categories of values Arrow cannot count (nested ones), in Python."""
    texts = [None if v is None else _label(v) for v in values.to_pylist()]
    counts = Counter(text for text, on in zip(texts, on_map, strict=True) if on and text is not None)
    common = [text for text, _n in counts.most_common(MAX_CATEGORIES)]
    labels = list(common)
    if len(counts) > MAX_CATEGORIES:
        labels.append(f"other ({len(counts) - MAX_CATEGORIES:,} values)")
    code_of = {text: float(number) for number, text in enumerate(common)}
    other = float(len(common))
    codes = np.full(points, -1.0, np.float32)
    for position, text, on in zip(at.tolist(), texts, on_map.tolist(), strict=True):
        if on and text is not None:
            codes[position] = code_of.get(text, other)
    return Colouring(column, "category", codes, tuple(labels))


def _label(value: Any) -> str:
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    return value if isinstance(value, str) else str(value)
