"""Opening a LanceDB table for reading, and nothing else.

``lancedb.connect_async`` creates a local directory that does not exist, so a local URI is checked first:
a mistyped path must be reported, not silently created. A session keeps connections and open tables in a
:class:`TableCache`.
A local table is opened and described through LanceDB's compiled module alone; the ``lancedb`` package
loads when a query is first built (:attr:`OpenTable.table`; docs/PERFORMANCE_LOG.md#the-command-line).
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from recall_gui.core.base import compat
from recall_gui.core.base.errors import ConnectError, RecallError, StorageError
from recall_gui.core.base.paths import folder_problem
from recall_gui.core.storage.columns import ColumnOverrides, detect_columns
from recall_gui.core.storage.entry_names import IdRepeats
from recall_gui.core.storage.filter_guard import FilterGuard
from recall_gui.core.storage.lance_calls import bounded, describe_lance_error, operation_timeout, slow_hint
from recall_gui.core.storage.open_table import OpenTable, TableIndex
from recall_gui.core.storage.target import (
    StorageKey,
    TableTarget,
    folder_shown,
    is_local_uri,
    local_path,
)

if TYPE_CHECKING:
    from lancedb.db import AsyncConnection


#: Bounds on every remote read: a storage server that stopped answering fails the operation, not the app.
REMOTE_STORAGE_DEFAULTS = {"connect_timeout": "5s", "timeout": "20s"}


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
                f"database folder {folder_shown(uri)} {problem}",
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

    async def id_repeats(self, target: TableTarget) -> IdRepeats:
        """The ids several rows of ``target``'s table share (read once per version)."""
        return await (await self.open(target)).id_repeats()

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
