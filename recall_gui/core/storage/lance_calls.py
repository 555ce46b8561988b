"""LanceDB calls bounded in time, and their failures in words: a storage server that stopped answering
fails the operation, not the app, and a long nested LanceDB error becomes one line naming the cause."""

from __future__ import annotations

import asyncio
import datetime as dt
import inspect
import re
from collections.abc import AsyncIterator, Awaitable
from typing import TYPE_CHECKING, Any, TypeVar

from recall_gui.core.base.compat import lancedb_row_id_executor
from recall_gui.core.base.env_numbers import positive_number
from recall_gui.core.base.errors import RecallError, StorageError
from recall_gui.core.storage.target import is_local_uri

if TYPE_CHECKING:
    import pyarrow as pa

T = TypeVar("T")

#: Upper bound on one table operation, whatever the storage; object stores retry internally.
OPERATION_TIMEOUT_S = 30.0
#: Overrides :data:`OPERATION_TIMEOUT_S` (seconds), e.g. for slow links or impatient scripts.
TIMEOUT_ENV = "RECALL_GUI_STORAGE_TIMEOUT"


def operation_timeout() -> float:
    """The bound on one table operation: ``$RECALL_GUI_STORAGE_TIMEOUT`` (refused, naming it, when it is
    no number of seconds above 0), else the default."""
    return positive_number(TIMEOUT_ENV, OPERATION_TIMEOUT_S, "seconds")


#: Phrases of object-store errors that mean "the storage server did not answer", in the order tried.
_UNREACHABLE = (
    "connection refused",
    "error sending request",
    "dns error",
    "connection reset",
    "operation timed out",
    "timed out",
)
#: A Rust source location in LanceDB's errors (left out of what the user reads).
SOURCE_LOCATION = re.compile(r",?\s*/\S+\.rs:\d+:\d+")
_URL = re.compile(r"https?://[^/\s?]+")
_USER_INFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@]*@")


def describe_lance_error(error: BaseException) -> str:
    """A one-line reason from a LanceDB/object-store exception (they can be long and nested).

    A storage server that does not answer is said in plain words, with the server's address; Rust source
    locations are dropped. Other errors keep their text, shortened.
    """
    text = SOURCE_LOCATION.sub("", " ".join(str(error).split())) or type(error).__name__
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
        async with asyncio.timeout(limit_s):
            if inspect.iscoroutine(operation):
                # In a task of its own: Python 3.11 loses the trace of every coroutine an exception is
                # thrown through (cpython#106749), so coverage would miss the callers' lines after it.
                return await asyncio.ensure_future(operation)
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
    execute = lancedb_row_id_executor(query)
    if execute is None:
        result: pa.Table = await bounded(query.to_arrow(), what)
        return result
    import pyarrow as pa

    limit_s = operation_timeout()
    try:
        stream = await execute(max_batch_length=None, timeout=dt.timedelta(seconds=limit_s))
        batches = await asyncio.ensure_future(_all_batches(stream))
    except (OSError, RuntimeError, ValueError) as error:
        raise _failed(what, error, limit_s) from error
    return pa.Table.from_batches(batches, schema=stream.schema)


async def _all_batches(stream: Any) -> list[pa.RecordBatch]:
    # Run as a task of its own: the stream ends by throwing StopAsyncIteration (see bounded).
    return [batch async for batch in stream]


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
