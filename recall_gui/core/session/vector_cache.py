"""Each table's vectors in memory for exact search, within a memory bound the user sets.

LanceDB's flat scan reads and decodes every vector on every query (far slower than the memory
bandwidth allows). Holding the vector column as one float32 matrix makes an exact search a single pass
over memory. The matrix belongs to one table *version*: every search first reads the table's current
version (cheap), and a matrix of an older version is dropped and read again, so a row that another
program (cosh ingesting a document) added is in the very next search.

Memory: a row costs ``4 * dim + 16`` bytes (1,552 bytes at 384 dimensions: 148 MB per 100k rows,
1.45 GB per million; MB = 2**20 bytes here and in the setting), plus its other columns (id, content,
metadata) when all of them together take no more than the vectors and still fit in the bound; then a
search reads nothing from the table but its version (otherwise it reads its k hits by row id). All
cached tables together stay within ``RECALL_GUI_EXACT_CACHE_MB`` megabytes (least recently searched
tables are dropped first); while a table is read, one more batch of 8,192 rows (12 MB at 384-d) is
held. The default, 2048 MB but at most a quarter of the machine's memory, holds a million
384-dimensional rows (or 500k at 768-d) on an 8 GB laptop and leaves three quarters to everything else;
a million rows is also about where a flat scan stops being usable (over a second per search) and an
ANN index is the better answer. A table that alone needs more than the bound is searched by LanceDB's
flat scan, with a note saying so and naming the ways out (an index, or a higher setting). ``0`` turns
the exact path off.

Once read, a session's tables are held as int8 codes (:mod:`recall_gui.core.session.certified`: ``dim + 36``
bytes a row, a quarter of the float32 matrix; the float32 rows mapped from a file in the app's cache
folder, for the exact ranking), and counted at that size; while a table is read, at its float32 size.

Reading is read-only (a LanceDB scan), asynchronous, and the copying into the matrix runs in an
executor, so the event loop is never blocked; a table read once is shared by concurrent searches.
Reading costs about as much as two to four flat scans (docs/PERFORMANCE_LOG.md#vector_cache). A search
waits for it when the matrix is small (up to :data:`WAIT_FOR_READ_BYTES`); for a
bigger table the read goes on in the background and the searches meanwhile are LanceDB's flat scans,
so no search is slower than before (``nearest.prepare`` starts the read ahead of the first search, e.g.
when the user selects the database, and waits for it).
"""

from __future__ import annotations

import asyncio
import os
from collections import OrderedDict
from concurrent.futures import Executor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from recall_gui.core.session.certified import NotCodable
from recall_gui.core.session.exact import Matrix, RowIds, VectorMatrix, bytes_per_row
from recall_gui.core.session.magnitudes import UNBOUNDED_VECTORS
from recall_gui.core.storage.lance_calls import READ_BATCH_ROWS, bounded, read_batches, read_query
from recall_gui.core.storage.open_table import OpenTable

if TYPE_CHECKING:
    import numpy.typing as npt
    import pyarrow as pa

CACHE_ENV = "RECALL_GUI_EXACT_CACHE_MB"
DEFAULT_CACHE_MB = 2048
MB = 1024 * 1024
#: A search waits for the vectors to be read up to this size (~165k rows at 384-d, under a second).
WAIT_FOR_READ_BYTES = 256 * MB
#: The other columns (id, content, metadata) are kept too when they take at most this share of the
#: vectors' memory (and fit in the bound): hits are then built without reading the table again.
PAYLOAD_SHARE = 1.0

#: URI, table, vector column, and the version the table is pinned to (``None``: it follows the latest).
CacheKey = tuple[str, str, str, int | None]


@dataclass(frozen=True)
class NotCached:
    """Why a table is searched without the exact cache: a sentence for the user."""

    reason: str


@dataclass(frozen=True)
class CachedTable:
    """A table at one version in memory: its vectors and, when they fit, its other columns (the payload,
    row for row), so that a search's hits are built without reading the table again."""

    vectors: VectorMatrix
    payload: pa.Table | None
    #: Why its exact search scans float32 vectors rather than int8 codes, when it does (for the user).
    note: str | None = None

    @property
    def nbytes(self) -> int:
        return self.vectors.nbytes + (self.payload.nbytes if self.payload is not None else 0)


Loaded = CachedTable | NotCached


async def rows_at(
    opened: OpenTable,
    cached: CachedTable,
    positions: npt.NDArray[np.intp],
    what: str,
    columns: list[str] | None = None,
) -> pa.Table | None:
    """The table's other columns (``columns`` of them, ``None``: all) and ``_rowid`` for the rows at
    ``positions`` of the vector matrix, in that order: from memory when the payload is held, else read by
    row id; ``None`` if some of those rows are no longer in the table (it changed meanwhile)."""
    import pyarrow as pa

    row_ids = cached.vectors.row_ids[positions]
    if cached.payload is not None:
        held = cached.payload if columns is None else cached.payload.select(columns)
        return held.take(pa.array(positions)).append_column("_rowid", pa.array(row_ids))
    return await rows_by_id(opened, row_ids, what, columns)


async def rows_by_id(
    opened: OpenTable, row_ids: npt.NDArray[np.uint64], what: str, columns: list[str] | None = None
) -> pa.Table | None:
    """The table's other columns (``columns`` of them, ``None``: all) and ``_rowid`` for the rows
    ``row_ids``, in that order, read from the table; ``None`` if some of those rows are no longer in it."""
    wanted = [int(row_id) for row_id in row_ids]
    taking = opened.table.take_row_ids(wanted).select(columns or opened.row_columns).with_row_id()
    rows = await read_query(taking, what)
    # take_row_ids answers in row-id order, not in the order asked: put the rows back in that order.
    position = {row_id: i for i, row_id in enumerate(rows.column("_rowid").to_pylist())}
    if any(row_id not in position for row_id in wanted):
        return None
    return rows.take([position[row_id] for row_id in wanted])


def default_limit_mb() -> int:
    """2048 MB, or a quarter of the physical memory when that is less."""
    try:
        physical = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, OSError, ValueError):  # no sysconf (Windows): the fixed default
        return DEFAULT_CACHE_MB
    return max(0, min(DEFAULT_CACHE_MB, physical // 4 // MB))


#: Why a session that searches once answers with LanceDB's flat scan.
ONE_SEARCH = "a single search: LanceDB's flat scan answers it sooner than reading every vector into memory"


def cache_limit() -> int | NotCached:
    """The memory bound in bytes from ``RECALL_GUI_EXACT_CACHE_MB``, or why the setting cannot be used."""
    raw = os.environ.get(CACHE_ENV, "").strip()
    if not raw:
        return default_limit_mb() * MB
    try:
        value = int(raw)
    except ValueError:
        value = -1
    if value < 0:
        return NotCached(
            f"{CACHE_ENV}={raw!r} is not a whole number of megabytes, so comparing all rows in memory is "
            f"off; set it to e.g. {DEFAULT_CACHE_MB} (or 0 to keep it off)"
        )
    if value == 0:
        return NotCached(f"comparing all rows in memory is off ({CACHE_ENV}=0)")
    return value * MB


def _cache_key(opened: OpenTable) -> CacheKey:
    return (opened.uri, opened.name, opened.columns.vector, opened.version if opened.pinned else None)


class _MatrixBuilder:
    """Copies LanceDB batches into one preallocated matrix, and keeps the other columns while they fit
    in ``payload_limit`` bytes (runs in an executor: no event-loop time)."""

    def __init__(
        self, rows: int, dim: int, vector_column: str, payload_limit: int, codes: _Coding | None = None
    ) -> None:
        self.dim = dim
        self.coding = codes
        self.vector_column = vector_column
        self.matrix: Matrix = np.empty((rows, dim), np.float32)
        self.row_ids: RowIds = np.empty(rows, np.uint64)
        self.valid = np.ones(rows, bool)
        self.filled = 0
        self.payload_limit = payload_limit
        self.payload: list[pa.RecordBatch] | None = [] if payload_limit > 0 else None
        self.payload_bytes = 0

    def add(self, batch: pa.RecordBatch) -> None:
        if self.vector_column not in batch.schema.names:
            raise _TableChanged(f'its column "{self.vector_column}" vanished while it was read')
        vectors = batch.column(self.vector_column)
        rows = batch.num_rows
        width = getattr(vectors.type, "list_size", None)
        if width != self.dim:  # another program replaced the table while it was read
            raise _TableChanged(f"its vectors changed from {self.dim} to {width} dimensions while read")
        if self.filled + rows > self.matrix.shape[0]:  # rows added while reading: grow
            extra = max(rows, self.matrix.shape[0] // 8)
            self.matrix = np.concatenate([self.matrix, np.empty((extra, self.dim), np.float32)])
            self.row_ids = np.concatenate([self.row_ids, np.empty(extra, np.uint64)])
            self.valid = np.concatenate([self.valid, np.ones(extra, bool)])
        span = slice(self.filled, self.filled + rows)
        values = vectors.values.slice(vectors.offset * self.dim, rows * self.dim)
        self.matrix[span] = values.to_numpy(zero_copy_only=False).reshape(rows, self.dim)
        self.row_ids[span] = batch.column("_rowid").to_numpy()
        if vectors.null_count:
            null_rows = vectors.is_null().to_numpy(zero_copy_only=False)
            self.valid[span] &= ~null_rows
        else:
            null_rows = np.zeros(rows, bool)
        if values.null_count:  # null vectors have null components; others must not
            missing = values.is_null().to_numpy(zero_copy_only=False).reshape(rows, self.dim).any(axis=1)
            if (missing & ~null_rows).any():
                raise _Unsupported("some vectors have missing components")
        if self.payload is not None:
            others = batch.drop_columns([self.vector_column, "_rowid"])
            self.payload_bytes += others.nbytes
            if self.payload_bytes > self.payload_limit:
                self.payload = None  # too big to keep: hits will be read from the table
            else:
                self.payload.append(others)
        self.filled += rows

    def add_all(self, batches: list[pa.RecordBatch]) -> None:
        for batch in batches:
            self.add(batch)

    def finish(self) -> CachedTable:
        """Drop what LanceDB never returns (null or NaN vectors); refuse infinities (no exact order)."""
        import pyarrow as pa

        matrix, row_ids, valid = (
            self.matrix[: self.filled],
            self.row_ids[: self.filled],
            self.valid[: self.filled],
        )
        sq_norms = np.einsum("ij,ij->i", matrix, matrix)
        bad = np.flatnonzero(~np.isfinite(sq_norms) & valid)
        if len(bad):
            has_nan = np.isnan(matrix[bad]).any(axis=1)
            if not has_nan.all():
                raise _Unsupported(UNBOUNDED_VECTORS)
            valid[bad] = False
        payload = None
        if self.payload:
            payload = pa.Table.from_batches(self.payload).combine_chunks()
        if not valid.all() or self.filled < self.matrix.shape[0]:
            matrix, row_ids = matrix[valid].copy(), row_ids[valid].copy()
            payload = payload.filter(pa.array(valid)) if payload is not None else None
        vectors = VectorMatrix.build(matrix, row_ids)
        if self.coding is None:
            return CachedTable(vectors, payload)
        try:
            return CachedTable(vectors.with_codes(self.coding.folder, self.coding.workers), payload)
        except NotCodable as error:
            return CachedTable(vectors, payload, f"{error}, so exact search scans the float32 vectors")
        except OSError as error:
            note = (
                f"the float32 copy of the vectors could not be written to {self.coding.folder} ({error}), "
                "so exact search holds them in memory and scans them: slower than through int8 codes, "
                "with four times the memory"
            )
            return CachedTable(vectors, payload, note)


@dataclass(frozen=True)
class _Coding:
    """Where tables' vectors are coded as int8 for exact search: the folder of their float32 copies (the
    app's cache folder) and the threads that scan the codes."""

    folder: Path
    workers: Executor | None


class _Unsupported(Exception):
    """The table's vectors cannot be searched exactly in memory (the reason is the message)."""


class _TableChanged(Exception):
    """The table was replaced while its vectors were read: this version's read is void, the next is not."""


@dataclass
class _Entry:
    version: int
    table: CachedTable


@dataclass
class _Read:
    """A read in progress: the bytes it will take (known once the rows are counted) and its outcome."""

    version: int
    loop: asyncio.AbstractEventLoop
    size: asyncio.Future[int]
    task: asyncio.Task[Loaded]


class VectorCache:
    """Matrices by table, dropped when the table's version moves or memory is needed elsewhere.

    Copying batches into a matrix and finishing it run on ``executor`` (the session's compute thread).
    """

    def __init__(
        self,
        executor: Executor,
        *,
        enabled: bool = True,
        codes_folder: Path | None = None,
        scan_workers: Executor | None = None,
    ) -> None:
        """``codes_folder``: search through int8 codes (:mod:`recall_gui.core.session.certified`), the float32
        vectors mapped from files there; ``None`` holds float32 vectors in memory. ``scan_workers`` scan
        the codes side by side."""
        self.executor = executor
        self._coding = _Coding(codes_folder, scan_workers) if codes_folder is not None else None
        #: Off for a session that searches once (``recall-gui search``): reading every vector costs more
        #: than the one flat scan it would replace (docs/PERFORMANCE_LOG.md#fresh-process).
        self.enabled = enabled
        self._entries: OrderedDict[CacheKey, _Entry] = OrderedDict()
        self._refused: dict[CacheKey, tuple[int, NotCached]] = {}
        self._reads: dict[CacheKey, _Read] = {}
        self._reserved: dict[CacheKey, int] = {}

    @property
    def used_bytes(self) -> int:
        """Memory held by cached matrices (and reserved by reads in progress)."""
        return sum(entry.table.nbytes for entry in self._entries.values()) + sum(self._reserved.values())

    def cached_versions(self) -> dict[CacheKey, int]:
        return {key: entry.version for key, entry in self._entries.items()}

    def cached_tables(self) -> dict[CacheKey, CachedTable]:
        return {key: entry.table for key, entry in self._entries.items()}

    async def get(self, opened: OpenTable, *, wait: bool = False) -> CachedTable | NotCached:
        """``opened`` at ``opened.version`` in memory, or why it is not (yet).

        A missing matrix is read now. The caller waits for the read if ``wait`` is set or the matrix is
        small (:data:`WAIT_FOR_READ_BYTES`); otherwise the read continues in the background and the
        answer says so.
        """
        key = _cache_key(opened)
        limit = cache_limit()
        if isinstance(limit, NotCached):
            return limit
        if not self.enabled:
            return NotCached(ONE_SEARCH)
        entry = self._entries.get(key)
        if entry is not None:
            if entry.version == opened.version and entry.table.nbytes <= limit:
                self._entries.move_to_end(key)
                return entry.table
            del self._entries[key]  # stale: free it before reading the new version
        refused = self._refused.get(key)
        if refused is not None and refused[0] == opened.version:
            return refused[1]
        problem = _unsupported_type(opened)
        if problem is not None:
            return NotCached(problem)
        read = self._start_read(key, opened, limit)
        need = await asyncio.shield(read.size)
        if not wait and limit >= need > WAIT_FOR_READ_BYTES:
            return NotCached(
                f"this table's vectors ({need / MB:,.0f} MB) are being read into memory for exact search; "
                "until then LanceDB's slower flat scan answers"
            )
        try:
            return await asyncio.shield(read.task)
        except _Unsupported as error:
            return NotCached(f"comparing all rows in memory is not possible: {error}")
        except _TableChanged as error:
            return NotCached(f"the table changed while it was read into memory ({error})")

    def _start_read(self, key: CacheKey, opened: OpenTable, limit: int) -> _Read:
        """The read of ``opened``'s vectors in progress, started now if there is none on this loop.

        It is registered before anything is awaited, so that concurrent searches share one read.
        """
        loop = asyncio.get_running_loop()
        read = self._reads.get(key)
        if read is not None and read.version == opened.version and read.loop is loop:
            return read
        size: asyncio.Future[int] = loop.create_future()
        size.add_done_callback(lambda done: done.cancelled() or done.exception())  # seen by the task too
        task = loop.create_task(self._read(key, opened, limit, size))
        read = _Read(opened.version, loop, size, task)
        self._reads[key] = read
        task.add_done_callback(lambda done: self._finished(key, read, limit))
        return read

    def _finished(self, key: CacheKey, read: _Read, limit: int) -> None:
        if self._reads.get(key) is read:
            del self._reads[key]
            self._reserved.pop(key, None)
        if not read.size.done():
            read.size.cancel()
        if read.task.cancelled():
            return
        error = read.task.exception()  # also marks it retrieved when no search waits for it any more
        if isinstance(error, _Unsupported):
            reason = NotCached(f"comparing all rows in memory is not possible: {error}")
            self._refused[key] = (read.version, reason)
        elif error is None:
            loaded = read.task.result()
            current = self._entries.get(key)
            if isinstance(loaded, CachedTable) and (current is None or current.version <= read.version):
                self._entries[key] = _Entry(read.version, loaded)
                self._entries.move_to_end(key)
                while len(self._entries) > 1 and self.used_bytes > limit:  # reads that ran side by side
                    self._entries.popitem(last=False)

    def _make_room(self, need: int, limit: int) -> None:
        """Drop the least recently searched matrices until ``need`` more bytes fit in ``limit``."""
        while self._entries and self.used_bytes + need > limit:
            self._entries.popitem(last=False)

    async def _read(self, key: CacheKey, opened: OpenTable, limit: int, size: asyncio.Future[int]) -> Loaded:
        """Count the rows, make room within ``limit``, then copy the vector column into a matrix."""
        try:
            rows = await opened.count_rows()
        except asyncio.CancelledError:
            size.cancel()
            raise
        except Exception as error:
            size.set_exception(error)
            raise
        need = rows * bytes_per_row(opened.columns.vector_dim)
        size.set_result(need)
        if need > limit:
            return NotCached(_too_big(need, limit))
        self._make_room(need, limit)
        self._reserved[key] = need
        column = opened.columns.vector
        what = f'reading the vectors of "{opened.name}"'
        payload_limit = await self._payload_limit(opened, rows, need, limit)
        others = opened.row_columns if payload_limit else []
        loop = asyncio.get_running_loop()
        builder = _MatrixBuilder(rows, opened.columns.vector_dim, column, payload_limit, self._coding)
        query = opened.table.query().select([column, *others]).with_row_id()
        # LanceDB gives a batch per fragment at least, and a table added to a document at a time (as cosh
        # adds them) has a fragment per row: small batches go to the executor together.
        pending: list[pa.RecordBatch] = []
        pending_rows = 0
        async for batch in read_batches(query, what):
            pending.append(batch)
            pending_rows += batch.num_rows
            if pending_rows >= READ_BATCH_ROWS:
                await loop.run_in_executor(self.executor, builder.add_all, pending)
                pending, pending_rows = [], 0
        if pending:
            await loop.run_in_executor(self.executor, builder.add_all, pending)
        return await loop.run_in_executor(self.executor, builder.finish)

    @staticmethod
    async def _payload_limit(opened: OpenTable, rows: int, need: int, limit: int) -> int:
        """How many bytes the other columns may take in memory: no more than the vectors, within the
        bound, and 0 when the table's size on disk already says they would not fit."""
        payload_limit = min(limit - need, int(need * PAYLOAD_SHARE))
        if payload_limit <= 0:
            return 0
        stats: Any = await bounded(opened.table.stats(), f'reading the size of "{opened.name}"')
        total = stats.get("total_bytes", 0) if isinstance(stats, dict) else getattr(stats, "total_bytes", 0)
        on_disk = int(total or 0) - rows * opened.columns.vector_dim * 4
        return payload_limit if on_disk <= payload_limit else 0

    def forget_version(self, uri: str, table: str, version: int) -> None:
        """Drop what is kept of one pinned version of a table, and stop its read in progress (a run over
        many versions searches each once: keeping them would hold every version's vectors)."""
        for key in [k for k in (*self._entries, *self._refused, *self._reads) if k[:2] == (uri, table)]:
            if key[3] != version:
                continue
            self._entries.pop(key, None)
            self._refused.pop(key, None)
            read = self._reads.pop(key, None)
            if read is not None:
                self._reserved.pop(key, None)
                read.task.cancel()

    def forget(self, uri: str | None = None) -> None:
        """Drop the matrices of one database (or all); reads in progress still finish."""
        for key in [k for k in self._entries if uri is None or k[0] == uri]:
            del self._entries[key]
        for key in [k for k in self._refused if uri is None or k[0] == uri]:
            del self._refused[key]


def _unsupported_type(opened: OpenTable) -> str | None:
    import pyarrow as pa

    kind: Any = opened.schema.field(opened.columns.vector).type
    if pa.types.is_fixed_size_list(kind) and pa.types.is_float32(kind.value_type):
        return None
    return f"vectors stored as {kind} are searched by LanceDB's flat scan (the exact path reads float32)"


def _too_big(need: int, limit: int) -> str:
    return (
        f"this table's vectors need {need / MB:,.0f} MB in memory to compare all rows, more than the "
        f"{limit / MB:,.0f} MB allowed ({CACHE_ENV}), so LanceDB's slower flat scan was used; "
        "build a vector index on the table, or raise the setting"
    )
