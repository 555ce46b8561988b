"""A user's filter is first evaluated in a child process with a memory bound, so it cannot take the app down.

LanceDB's engine aborts the whole process when an allocation fails, and a filter such as
``length(repeat(content, 20000000)) > 0`` asks for gigabytes per row: in the window or the MCP server that
would end the process, not the query. So the first evaluation of each filter on a table version (its row
count) runs in a worker process whose address space is bounded (``RLIMIT_AS``, where the system has it);
if the worker dies, the filter is refused with what happened, and the next filter starts a new worker.
The count it returns is the one the table keeps for that filter, so the filter is evaluated only once more
in the app, by the query that uses it, once it has been shown to fit. One worker per :class:`FilterGuard`
(one per session), started when the first filter comes (or earlier, by :meth:`FilterGuard.warm`) and kept
for the next ones. The worker loads LanceDB's compiled module only (``compat.lancedb_native``), not the
Python package, so it is ready in a fraction of a second (docs/PERFORMANCE_LOG.md#filter_guard).
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import threading
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from recall_gui.core.base.env_numbers import positive_integer
from recall_gui.core.base.errors import FilterError, StorageError

if TYPE_CHECKING:
    from multiprocessing.connection import Connection
    from multiprocessing.process import BaseProcess

#: The memory a filter may take (megabytes, beyond what the worker holds once LanceDB is loaded).
FILTER_MEMORY_ENV = "RECALL_GUI_FILTER_MEMORY_MB"
DEFAULT_FILTER_MEMORY_MB = 4096
MB = 1024 * 1024


def filter_memory_mb() -> int:
    """``$RECALL_GUI_FILTER_MEMORY_MB`` (refused, naming it, when it is no whole number above 0), else the
    default."""
    return positive_integer(FILTER_MEMORY_ENV, DEFAULT_FILTER_MEMORY_MB, "megabytes")


@dataclass(frozen=True)
class FilterProbe:
    """One filter to count on one table version."""

    uri: str
    table: str
    version: int
    where: str
    storage_options: Mapping[str, str] = field(default_factory=dict)


class FilterGuard:
    """The worker process that counts filters, and the thread that talks to it (never the event loop's
    default executor: under qasync that is a QThread)."""

    def __init__(self) -> None:
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="recall-filter")
        self._lock = threading.Lock()
        self._worker: _Worker | None = None
        self.closed = False

    async def count(self, probe: FilterProbe, timeout_s: float) -> int:
        """The rows ``probe.where`` keeps, counted in the worker; :class:`FilterError` when the filter
        took the worker down, :class:`StorageError` with LanceDB's reason when it refused the filter."""
        return await asyncio.wrap_future(self._thread.submit(self._count, probe, timeout_s))

    def warm(self) -> None:
        """Start the worker now, in the background (when a filter is likely to come: the user is typing
        one, a command was given one), so that the first filter does not wait for it."""
        if not self.closed:
            self._thread.submit(self._warm)

    def _warm(self) -> None:
        with self._lock:
            self._started_worker()

    def _started_worker(self) -> _Worker:
        """The worker, started if there is none (or it died); called under ``_lock``."""
        if self.closed:
            raise StorageError("the app is closing")
        if self._worker is None or not self._worker.alive:
            self._worker = _Worker(filter_memory_mb())
        return self._worker

    def _count(self, probe: FilterProbe, timeout_s: float) -> int:
        with self._lock:
            worker = self._started_worker()
            try:
                answer = worker.ask(probe, timeout_s)
            except _WorkerDied as died:
                self._worker = None
                raise _died_error(probe.where, died.exit_code, worker.memory_mb) from None
            except TimeoutError:
                self._worker = None
                worker.stop()
                raise StorageError(
                    f"counting the rows the filter {probe.where!r} keeps timed out after {timeout_s:g} s",
                    hint="Try a simpler filter, or raise RECALL_GUI_STORAGE_TIMEOUT for a large table.",
                ) from None
        kind, value = answer
        if kind == "error":
            raise StorageError(f"checking the filter failed: {value}")
        return int(value)

    def close(self) -> None:
        """Stop the worker (a filter still counting is abandoned)."""
        self.closed = True
        worker, self._worker = self._worker, None
        if worker is not None:
            worker.stop()
        self._thread.shutdown(wait=False, cancel_futures=True)


def _died_error(where: str, exit_code: int | None, memory_mb: int) -> FilterError:
    if exit_code in (-6, 134, -9) or exit_code is None:  # aborted, or killed by the system's OOM killer
        return FilterError(
            f"the filter {where!r} needed more memory than allowed ({memory_mb:,} MB), so it was stopped "
            "before it could take the app down",
            hint=f"Simplify the filter (repeat() or long texts build huge values per row), or raise "
            f"{FILTER_MEMORY_ENV} if the table really needs it.",
        )
    return FilterError(
        f"the filter {where!r} stopped the process that checks filters (exit code {exit_code})",
        hint="Simplify the filter; LanceDB could not evaluate it.",
    )


class _WorkerDied(Exception):
    def __init__(self, exit_code: int | None) -> None:
        super().__init__(exit_code)
        self.exit_code = exit_code


class _Worker:
    """A spawned process answering filter counts over a pipe, bounded to ``memory_mb`` more than it
    holds once LanceDB is imported."""

    def __init__(self, memory_mb: int) -> None:
        self.memory_mb = memory_mb
        context = multiprocessing.get_context("spawn")
        self._connection, child = context.Pipe()
        self._process: BaseProcess = context.Process(
            target=serve, args=(child, memory_mb * MB), name="recall-filter-check", daemon=True
        )
        self._process.start()
        child.close()

    @property
    def alive(self) -> bool:
        return self._process.is_alive()

    def ask(self, probe: FilterProbe, timeout_s: float) -> tuple[str, Any]:
        try:
            self._connection.send(probe)
            # The worker's start (importing LanceDB) is not the filter's time.
            if not self._connection.poll(timeout_s + 30):
                raise TimeoutError
            answer: tuple[str, Any] = self._connection.recv()
        except (EOFError, OSError):
            self._process.join(5)
            raise _WorkerDied(self._process.exitcode) from None
        return answer

    def stop(self) -> None:
        self._connection.close()
        if self._process.is_alive():
            self._process.kill()
        self._process.join(5)


def serve(connection: Connection, memory_bytes: int) -> None:
    """The worker's loop: count each probe's rows and answer ``("ok", count)`` or ``("error", reason)``."""
    _quiet()
    tables = _Tables()
    _bound_memory(memory_bytes)
    loop = asyncio.new_event_loop()
    while True:
        try:
            probe: FilterProbe = connection.recv()
        except (EOFError, OSError):
            return
        try:
            answer: tuple[str, Any] = ("ok", loop.run_until_complete(tables.count(probe)))
        except Exception as error:  # LanceDB's refusal: the parent says it in the user's words
            answer = ("error", " ".join(str(error).split()))
        connection.send(answer)


class _Tables:
    """The worker's open tables, through LanceDB's compiled module when the tested LanceDB is installed
    (milliseconds to load), else through ``lancedb`` (the same engine, most of a second to import)."""

    def __init__(self) -> None:
        from recall_gui.core.base.compat import lancedb_native

        self._native = lancedb_native()
        self._open: dict[tuple[str, str, tuple[tuple[str, str], ...]], Any] = {}

    async def count(self, probe: FilterProbe) -> int:
        options = tuple(sorted(probe.storage_options.items()))
        key = (probe.uri, probe.table, options)
        table = self._open.get(key)
        if table is None:
            table = self._open[key] = await self._open_table(probe.uri, probe.table, dict(options))
        await table.checkout(probe.version)
        return int(await table.count_rows(probe.where))

    async def _open_table(self, uri: str, name: str, options: dict[str, str]) -> Any:
        if self._native is not None:
            from recall_gui.core.base.compat import native_open_table

            return await native_open_table(self._native, uri, name, options)
        import lancedb

        database = await lancedb.connect_async(uri, storage_options=options or None)
        return await database.open_table(name)


def _bound_memory(extra_bytes: int) -> None:
    """Bound the address space to what the process holds now plus ``extra_bytes`` (Linux: the size is
    read from /proc; elsewhere RLIMIT_AS is not enforced or not there, and only the crash is contained)."""
    try:
        import resource

        with open("/proc/self/statm") as statm:
            held = int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        resource.setrlimit(resource.RLIMIT_AS, (held + extra_bytes, resource.RLIM_INFINITY))
    except (ImportError, OSError, ValueError):
        pass


def _quiet() -> None:
    """Send the worker's stderr nowhere: LanceDB's own report of a failed allocation would reach the
    user's terminal beside the parent's clear message."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 2)
        os.close(null)
    except OSError:
        pass
