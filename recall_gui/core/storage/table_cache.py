"""Opening a LanceDB table for reading, and nothing else.

``lancedb.connect_async`` creates a local directory that does not exist, so a local URI is checked first:
a mistyped path must be reported, not silently created. A session keeps connections and open tables in a
:class:`TableCache`.
A local table is opened and described through LanceDB's compiled module alone; the ``lancedb`` package
loads when a query is first built (:attr:`OpenTable.table`; docs/PERFORMANCE.md#the-command-line).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import inspect
import re
import time
from collections.abc import AsyncIterator, Awaitable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlparse

from recall_gui.core.base import compat
from recall_gui.core.base.env_numbers import positive_number
from recall_gui.core.base.errors import (
    ConnectError,
    FilterError,
    InvalidInputError,
    RecallError,
    StorageError,
)
from recall_gui.core.base.paths import folder_problem
from recall_gui.core.storage.columns import ColumnMapping, ColumnOverrides, detect_columns
from recall_gui.core.storage.filter_guard import FilterGuard, FilterProbe
from recall_gui.core.storage.target import StorageKey, TableOptions, TableTarget

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    import pyarrow as pa
    from lancedb.db import AsyncConnection
    from lancedb.table import AsyncTable

T = TypeVar("T")

#: Bounds on every remote read: a storage server that stopped answering fails the operation, not the app.
REMOTE_STORAGE_DEFAULTS = {"connect_timeout": "5s", "timeout": "20s"}
#: Upper bound on one table operation, whatever the storage; object stores retry internally.
OPERATION_TIMEOUT_S = 30.0
#: Overrides :data:`OPERATION_TIMEOUT_S` (seconds), e.g. for slow links or impatient scripts.
TIMEOUT_ENV = "RECALL_GUI_STORAGE_TIMEOUT"


def operation_timeout() -> float:
    """The bound on one table operation: ``$RECALL_GUI_STORAGE_TIMEOUT`` (refused, naming it, when it is
    no number of seconds above 0), else the default."""
    return positive_number(TIMEOUT_ENV, OPERATION_TIMEOUT_S, "seconds")


@dataclass(frozen=True)
class TableIndex:
    """An index of a table: on which columns, and for a vector index the metric it was built for."""

    name: str
    index_type: str
    columns: tuple[str, ...]
    metric: str | None = None


def _unquoted(text: str) -> str:
    """``text`` with its SQL string literals ('...' with '' for a quote) left out."""
    kept, quoted = [], False
    for found in text:
        if found == "'":
            quoted = not quoted
        elif not quoted:
            kept.append(found)
    return "".join(kept)


def filter_problem(where: str) -> str | None:
    """Why ``where`` is not one read-only expression, or ``None``: a filter may not end a statement and
    start another (``;``), hide text in a comment, or close a bracket it did not open (which would let it
    break out of the brackets it is combined in)."""
    bare = _unquoted(where)
    if where.count("'") % 2:
        return "a text value is not closed (a ' is missing)"
    if ";" in bare:
        return "it holds a ';': a filter is one expression, never a statement"
    if "--" in bare or "/*" in bare:
        return "it holds a comment (-- or /*)"
    depth = 0
    for char in bare:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth < 0:
            return "it closes a bracket it did not open"
    return "a bracket is not closed" if depth else None


_PARSE_ERROR = re.compile(r"Error parsing statement: .*\(sql parser error: (.*)\)\s*$", re.S)
_NO_FIELD = re.compile(
    r"No field named (\S+?)\.(?: Valid fields are .*| Did you mean '([^']+)'\?\.?)?\s*$", re.S
)


def plain_filter_reason(reason: str) -> str:
    """LanceDB's reason for refusing a filter, in one line without the SQL it wrapped the filter in."""
    reason = " ".join(reason.split()).removeprefix("Invalid input, ")
    parsed = _PARSE_ERROR.search(reason)
    if parsed:
        return "it cannot be parsed: " + parsed.group(1).replace("Expected: ", "expected ").replace(
            "found: EOF", "but the filter ends there"
        )
    missing = _NO_FIELD.search(reason)
    if missing:
        guess = f" (did you mean {missing.group(2)}?)" if missing.group(2) else ""
        return f"there is no column named {missing.group(1)}{guess}"
    return reason.removeprefix("Error during planning: ")


def column_names(schema: pa.Schema) -> list[str]:
    """Every name a filter can use: the columns, and the fields of struct columns as ``parent.field``."""
    import pyarrow as pa

    names: list[str] = []

    def add(column: pa.Field, prefix: str) -> None:
        names.append(prefix + column.name)
        if pa.types.is_struct(column.type):
            for child in column.type:
                add(child, f"{prefix}{column.name}.")

    for column in schema:
        add(column, "")
    return names


def is_local_uri(uri: str) -> bool:
    scheme = urlparse(uri).scheme
    return scheme in ("", "file") or (len(scheme) == 1 and uri[1:3] in (":\\", ":/"))  # Windows drive


def legacy_fts_folder(uri: str, table: str) -> Path | None:
    """The folder of a legacy Tantivy full-text index, which LanceDB 0.40 rejects."""
    if not is_local_uri(uri):
        return None
    folder = Path(uri.removeprefix("file://")) / f"{table}.lance" / "_indices" / "fts"
    return folder if folder.is_dir() else None


def local_path(uri: str) -> Path:
    return Path(uri[len("file://") :] if uri.startswith("file://") else uri).expanduser()


#: Phrases of object-store errors that mean "the storage server did not answer", in the order tried.
_UNREACHABLE = (
    "connection refused",
    "error sending request",
    "dns error",
    "connection reset",
    "operation timed out",
    "timed out",
)
_SOURCE_LOCATION = re.compile(r",?\s*/\S+\.rs:\d+:\d+")
_URL = re.compile(r"https?://[^/\s?]+")
_USER_INFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@]*@")


def describe_lance_error(error: BaseException) -> str:
    """A one-line reason from a LanceDB/object-store exception (they can be long and nested).

    A storage server that does not answer is said in plain words, with the server's address; Rust source
    locations are dropped. Other errors keep their text, shortened.
    """
    text = _SOURCE_LOCATION.sub("", " ".join(str(error).split())) or type(error).__name__
    text = _USER_INFO.sub(r"\1***@", text)  # a password in a storage address is never shown
    lowered = text.lower()
    phrase = next((p for p in _UNREACHABLE if p in lowered), None)
    if phrase is not None:
        url = _URL.search(text)
        where = f" at {url.group(0)}" if url else ""
        retries = re.search(r"after (\d+) retries", text)
        tried = f", {retries.group(1)} retries" if retries else ""
        return f"the storage server{where} did not answer ({phrase}{tried})"
    return text if len(text) <= 400 else text[:397] + "..."


async def bounded(
    operation: Awaitable[T], what: str, limit_s: float | None = None, *, timeout_hint: str | None = None
) -> T:
    """Await a LanceDB call, turning a hang or a storage failure into a :class:`StorageError`
    (``timeout_hint``: what to do when it times out, when the caller knows better than "the storage did
    not answer")."""
    limit_s = operation_timeout() if limit_s is None else limit_s
    try:
        async with asyncio.timeout(limit_s):  # no extra task, unlike wait_for: cheaper on every search
            return await operation
    except TimeoutError:
        raise _timed_out(what, limit_s, timeout_hint) from None
    except RecallError:
        raise
    except (OSError, RuntimeError, ValueError) as error:
        raise _failed(what, error, limit_s) from error
    finally:
        # Stepped outside a task (a loop that is closing), asyncio.timeout refuses before the operation
        # starts: close it, so that it is not reported as a coroutine never awaited.
        if inspect.iscoroutine(operation) and inspect.getcoroutinestate(operation) == "CORO_CREATED":
            operation.close()


#: Rows per batch read from LanceDB: big enough to be fast (~12 MB at 384-d), small enough to be cheap.
READ_BATCH_ROWS = 8192


async def read_batches(query: Any, what: str) -> AsyncIterator[pa.RecordBatch]:
    """The query's rows batch by batch, each read bounded in time (a whole-table read may take long; no
    single batch may)."""
    reader = await bounded(query.to_batches(max_batch_length=READ_BATCH_ROWS), what)
    while True:
        try:
            batch = await bounded(reader.__anext__(), what)
        except StopAsyncIteration:
            return
        yield batch


async def read_query(query: Any, what: str) -> pa.Table:
    """``query.to_arrow()`` for a query that asks for row ids, bounded in time, one round trip shorter.

    LanceDB's ``to_arrow`` first reads the table's schema again, to add row ids when blob columns need
    them; a query that asks for row ids itself never needs that (``lancedb._blob``), and the extra round
    trip to LanceDB's runtime is a noticeable share of an indexed search
    (docs/PERFORMANCE_LOG.md#tables-read_query). Such a query is executed directly,
    bounded by LanceDB's own timeout (no timer on the event loop either). Any other query, or a LanceDB
    whose queries lack that entry point, goes the public way.
    """
    execute = compat.lancedb_row_id_executor(query)
    if execute is None:
        result: pa.Table = await bounded(query.to_arrow(), what)
        return result
    import pyarrow as pa

    limit_s = operation_timeout()
    try:
        stream = await execute(max_batch_length=None, timeout=dt.timedelta(seconds=limit_s))
        batches = [batch async for batch in stream]
    except (OSError, RuntimeError, ValueError) as error:
        raise _failed(what, error, limit_s) from error
    return pa.Table.from_batches(batches, schema=stream.schema)


def slow_hint(uri: str) -> str | None:
    """What a timeout means for ``uri``: a local folder has no server or network to blame; ``None`` for
    object storage (the default hint: the storage did not answer)."""
    if not is_local_uri(uri):
        return None
    return (
        f"The folder is local, so no server or network is involved: the disk or LanceDB was slower than "
        f"{TIMEOUT_ENV} allows (a very long history or a very wide table). Raise it, then try again."
    )


def _timed_out(what: str, limit_s: float, hint: str | None = None) -> StorageError:
    return StorageError(
        f"{what} timed out after {limit_s:g} s",
        hint=hint or "The storage did not answer. Check that the server or network is up, then search again.",
    )


def _failed(what: str, error: BaseException, limit_s: float) -> StorageError:
    if "query timeout" in str(error).lower():  # LanceDB's own timeout (see read_query)
        return _timed_out(what, limit_s)
    return StorageError(
        f"{what} failed: {describe_lance_error(error)}",
        hint="Check that the storage is reachable and the table is intact, then try again.",
    )


def _storage_options(uri: str, options: Mapping[str, str]) -> dict[str, str]:
    if is_local_uri(uri):
        return dict(options)
    return {**REMOTE_STORAGE_DEFAULTS, **options}


async def connect(uri: str, storage_options: Mapping[str, str] | None = None) -> tuple[Any, bool]:
    """A read connection and whether it is compiled (``compat.lance_connection``); refuses a local
    directory that does not exist instead of creating it."""
    storage = _storage_options(uri, storage_options or {})
    target = uri
    if is_local_uri(uri):
        path = local_path(uri)
        problem = folder_problem(path)
        if problem is not None:
            raise ConnectError(
                f"database folder {path} {problem}",
                hint='Check the "uri" of this database in the registry: it names the LanceDB folder '
                "that holds the table (build it with cosh first if it does not exist yet).",
                kind="path",
            )
        target = str(path)
    opening = compat.lance_connection(target, storage, compiled=is_local_uri(uri))
    try:
        async with asyncio.timeout(operation_timeout()):
            return await opening
    except TimeoutError:
        raise ConnectError(
            f"{uri} did not answer within {operation_timeout():g} s",
            hint=slow_hint(uri)
            or "The storage did not answer. Check that the server or network is up, then search again.",
        ) from None
    except (OSError, RuntimeError, ValueError) as error:
        raise ConnectError(
            f"{uri}: {describe_lance_error(error)}",
            hint="Check the URI and the storage credentials (storage_options or the environment).",
        ) from error
    finally:
        # A loop that is closing refuses the timeout before the connect starts: close it, so that it is not
        # reported as a coroutine never awaited.
        if inspect.getcoroutinestate(opening) == "CORO_CREATED":
            opening.close()


#: Filters whose row counts an open table keeps (one per filter a user typed while browsing it).
MAX_COUNTS_KEPT = 64


@dataclass
class OpenTable:
    """An open table with its resolved columns; refreshed cheaply when the table's version moves."""

    uri: str
    name: str
    #: What answers ``version``, ``schema``, ``list_indices``, ``count_rows``…: the compiled or Python table.
    native: Any
    schema: pa.Schema
    columns: ColumnMapping
    indexes: tuple[TableIndex, ...]
    version: int
    #: When ``version`` was last read (``time.monotonic()``).
    checked_at: float = field(default_factory=time.monotonic)
    #: Rows at ``version``, in all (key ``None``) or matching a filter (key: its SQL). A version is
    #: immutable, so a count holds until the version moves, when the table is described afresh.
    row_counts: dict[str | None, int] = field(default_factory=dict)
    #: Opened at a chosen older version (a read-only view that never moves), not following the latest.
    pinned: bool = False
    #: Row ids kept by each filter at ``version`` (key: its SQL), for exact search with a filter.
    matching: dict[str, npt.NDArray[np.uint64]] = field(default_factory=dict)
    #: Where a user's filter is first evaluated (a child process), so that it cannot abort this one.
    guard: FilterGuard | None = None
    #: How the table is reached (the guard's worker opens it too).
    storage_options: Mapping[str, str] = field(default_factory=dict)
    compiled: bool = False  #: whether :attr:`native` is LanceDB's compiled table (no ``lancedb`` package)
    _python: AsyncTable | None = field(default=None, repr=False)

    @property
    def table(self) -> AsyncTable:
        """LanceDB's Python table (its query builders): over a compiled one, made when first asked for."""
        if self._python is None:
            self._python = compat.python_table(self.native) if self.compiled else self.native
        return self._python

    def query(self) -> Any:
        """A query of the table for the search's builders (``nearest_to``, ``column``, ``where`` …)."""
        return compat.CompiledQuery(self.native.query()) if self.compiled else self.table.query()

    async def count_rows(self, where: str | None = None) -> int:
        """Rows at this version (matching ``where``): counted once per version and filter."""
        counted = self.row_counts.get(where)
        if counted is None:
            counted = int(await bounded(self.native.count_rows(where), f'reading table "{self.name}"'))
            self._keep_count(where, counted)
        return counted

    def _keep_count(self, where: str | None, counted: int) -> None:
        if len(self.row_counts) >= MAX_COUNTS_KEPT:
            self.row_counts.clear()
        self.row_counts[where] = counted

    async def check_filter(self, where: str) -> None:
        """Refuse a filter this table cannot apply, with LanceDB's reason and the columns it has; a
        filter is an expression, never a statement."""
        problem = filter_problem(where)
        if problem is not None:
            raise FilterError(
                f"the filter {where!r} is not one expression: {problem}",
                hint="A filter is a condition such as source = 'a.md' AND page < 3, never a statement.",
            )
        try:
            if where not in self.row_counts and self.guard is not None:
                # First counted in the guard's worker: a filter that exhausts memory ends it, not us.
                place = str(local_path(self.uri)) if is_local_uri(self.uri) else self.uri
                probe = FilterProbe(place, self.name, self.version, where, self.storage_options)
                self._keep_count(where, await self.guard.count(probe, operation_timeout()))
            await self.count_rows(where)
        except StorageError as error:
            reason = plain_filter_reason(_SOURCE_LOCATION.sub("", error.message.split(" failed: ", 1)[-1]))
            names = [name for name in column_names(self.schema) if name != self.columns.vector]
            raise FilterError(
                f"the filter {where!r} cannot be used: {reason}",
                hint=f"Columns of this table: {', '.join(names)}. Text goes in single quotes: "
                "source = 'a.md' AND page < 3.",
            ) from None

    async def matching_row_ids(self, where: str) -> npt.NDArray[np.uint64]:
        """The row ids of the rows that ``where`` keeps, at this version (read once per filter)."""
        import numpy as np

        found = self.matching.get(where)
        if found is None:
            await self.check_filter(where)
            query = self.table.query().where(where).select([]).with_row_id()
            rows = await read_query(query, f'filtering table "{self.name}"')
            found = np.sort(rows.column("_rowid").to_numpy())
            if len(self.matching) >= MAX_COUNTS_KEPT:
                self.matching.clear()
            self.matching[where] = found
        return found

    def vector_index(self) -> TableIndex | None:
        """The index on the vector column that a search can go through (one with a metric)."""
        return next(
            (ix for ix in self.indexes if ix.metric and ix.columns[:1] == (self.columns.vector,)), None
        )

    @property
    def row_columns(self) -> list[str]:
        """Every column but the vector: what a page or a hit reads besides it."""
        return self.columns.without_vector(self.schema.names)

    def default_metric(self) -> str:
        """The index's metric when there is a vector index (so the index is used), else cosh's L2."""
        index = self.vector_index()
        return index.metric if index and index.metric else "l2"


#: The distance metrics a search (and the map's neighbours) can use.
METRICS = ("l2", "cosine", "dot")


def metric_for(opened: OpenTable, options: TableOptions | None) -> str:
    """The registry's metric if it names one, else the index's (so the index is used), else cosh's L2."""
    metric = ((options.metric if options else None) or opened.default_metric()).lower()
    if metric not in METRICS:
        raise InvalidInputError(
            f'unknown distance metric "{metric}" (expected one of {", ".join(METRICS)})',
            hint='Fix "metric" in the registry entry of this database, or remove it to use the default.',
        )
    return metric


TableKey = tuple[str, str, StorageKey, ColumnOverrides, int | None]


def _table_key(target: TableTarget) -> TableKey:
    options = target.options
    return (target.uri, target.table_name, options.storage_key, options.columns, target.version)


async def list_tables(connection: AsyncConnection) -> list[str]:
    listed: Any = await connection.list_tables()
    names = listed.tables if hasattr(listed, "tables") else listed
    return [str(name) for name in names]


async def _indexes(table: Any) -> tuple[TableIndex, ...]:
    found: list[TableIndex] = []
    for config in await table.list_indices():
        stats = await table.index_stats(config.name)
        metric = compat.index_metric(stats) if stats is not None else None
        kind, columns = str(config.index_type), tuple(config.columns)
        found.append(TableIndex(config.name, kind, columns, metric))
    return tuple(found)


class TableCache:
    """Connections and open tables, kept because they are cheap to keep and costly to reopen (object
    storage); each open table reads the table's version on every open, so rows another program adds are
    seen by the next search."""

    def __init__(self, guard: FilterGuard | None = None) -> None:
        """``guard``: where the tables' users' filters are first evaluated (``None``: in this process)."""
        self.guard = guard
        #: Each connection (see :func:`connect`) and whether it is a compiled one.
        self._connections: dict[tuple[str, StorageKey], tuple[Any, bool]] = {}
        self._tables: dict[TableKey, OpenTable] = {}

    async def _connection(self, uri: str, storage_options: Mapping[str, str] | None) -> tuple[Any, bool]:
        key = (uri, tuple(sorted(_storage_options(uri, storage_options or {}).items())))
        cached = self._connections.get(key)
        if cached is None:
            cached = self._connections[key] = await connect(uri, storage_options)
        return cached

    async def connect(self, uri: str, storage_options: Mapping[str, str] | None = None) -> AsyncConnection:
        """A kept read connection (see :func:`connect`), as LanceDB's Python ``AsyncConnection``."""
        connection, compiled = await self._connection(uri, storage_options)
        return compat.python_connection(connection) if compiled else connection  # type: ignore[no-any-return]

    async def open(self, target: TableTarget) -> OpenTable:
        """Open ``target`` read-only; raises :class:`ConnectError` naming what is missing."""
        key = _table_key(target)
        cached = self._tables.get(key)
        if cached is not None:
            try:
                what = f'reading table "{target.table_name}"'
                version = await bounded(cached.native.version(), what, timeout_hint=slow_hint(target.uri))
                if version == cached.version:
                    cached.checked_at = time.monotonic()
                    return cached
                return await self._describe(cached.uri, cached.native, cached.compiled, target, key)
            except RecallError:
                # Storage gone or table replaced: start afresh next time, so a server that comes back (or
                # a table rebuilt by another program) is picked up without a restart.
                self.forget(target.uri)
                raise
        connection, compiled = await self._connection(target.uri, target.options.storage_options)
        table = await _open_table(connection, compiled, target)
        if target.version is not None:
            await _check_out(table, target)
        return await self._describe(target.uri, table, compiled, target, key)

    async def _describe(
        self, uri: str, table: Any, compiled: bool, target: TableTarget, key: TableKey
    ) -> OpenTable:
        name = table.name() if compiled else table.name
        what = f'reading table "{name}"'
        hint = slow_hint(uri)
        version = await bounded(table.version(), what, timeout_hint=hint)
        schema = await bounded(table.schema(), what, timeout_hint=hint)
        indexes = await bounded(_indexes(table), what, timeout_hint=hint)
        columns = detect_columns(schema, target.options.columns)
        opened = OpenTable(uri, name, table, schema, columns, indexes, version, compiled=compiled)
        opened.pinned = key[-1] is not None
        opened.guard = self.guard
        opened.storage_options = _storage_options(uri, target.options.storage_options)
        self._tables[key] = opened
        return opened

    def opened_recently(self, target: TableTarget, within_s: float) -> OpenTable | None:
        """The kept open table if its version was read less than ``within_s`` seconds ago, else ``None``;
        no I/O. For callers that can do without the version check (see ``nearest.INDEX_RECHECK_S``)."""
        cached = self._tables.get(_table_key(target))
        if cached is None or time.monotonic() - cached.checked_at >= within_s:
            return None
        return cached

    def forget_version(self, target: TableTarget) -> None:
        """Drop the kept open table of ``target`` (pinned to a version), keeping the connection."""
        self._tables.pop(_table_key(target), None)

    def forget(self, uri: str | None = None) -> None:
        """Drop kept connections and tables (all, or those of one URI), e.g. after a storage failure."""
        for connection_key in [k for k in self._connections if uri is None or k[0] == uri]:
            del self._connections[connection_key]
        for table_key in [k for k in self._tables if uri is None or k[0] == uri]:
            del self._tables[table_key]


async def _check_out(table: Any, target: TableTarget) -> None:
    """Make ``table`` a read-only view of ``target.version`` (LanceDB's ``checkout``: nothing is written)."""
    assert target.version is not None
    what = f'opening version {target.version} of table "{target.table_name}"'
    try:
        await bounded(table.checkout(target.version), what, timeout_hint=slow_hint(target.uri))
    except StorageError as error:
        raise ConnectError(
            f"{what}: {error.message.split(' failed: ', 1)[-1]}",
            hint="Choose one of the versions the table lists.",
            kind="version",
        ) from None


async def _open_table(connection: Any, compiled: bool, target: TableTarget) -> Any:
    uri, table_name = target.uri, target.table_name
    opening = compat.native_open(connection, table_name) if compiled else connection.open_table(table_name)
    try:
        return await asyncio.wait_for(opening, operation_timeout())
    except TimeoutError:
        raise ConnectError(
            f'opening table "{table_name}" in {uri} timed out after {operation_timeout():g} s',
            hint=slow_hint(uri)
            or "The storage did not answer. Check that the server or network is up, then try again.",
        ) from None
    except (ValueError, OSError, RuntimeError) as error:
        try:
            listing_from = compat.python_connection(connection) if compiled else connection
            names = await bounded(list_tables(listing_from), f"listing tables of {uri}", 10)
        except RecallError:
            names = None
        if names is not None and table_name not in names:
            listing = ", ".join(names) if names else "none"
            raise ConnectError(
                f'table "{table_name}" not found in {uri} (tables there: {listing})',
                hint='Check the database name, or set "table" in its registry entry.',
                kind="table",
            ) from None
        raise ConnectError(
            f'cannot open table "{table_name}" in {uri}: {describe_lance_error(error)}',
            hint="Check that the storage is reachable and the table files are intact.",
        ) from error
