"""The state a front end keeps between calls: open tables, vectors in memory, loaded models, worker threads.

One :class:`Session` per front end (the window, one CLI command, the MCP server), created by it and closed
by it, the way an ``httpx.Client`` owns its connection pool. Everything that searches or browses is handed
the session; two sessions share nothing.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

from recall_gui.core.base.paths import app_cache_dir
from recall_gui.core.base.thread_priority import lower_this_thread
from recall_gui.core.embedders.pool import EmbedderPool
from recall_gui.core.session.lance_arithmetic import LanceArithmetic
from recall_gui.core.session.map_cache import MapCache
from recall_gui.core.session.vector_cache import VectorCache
from recall_gui.core.storage.filter_guard import FilterGuard
from recall_gui.core.storage.table_cache import TableCache
from recall_gui.core.storage.target import TableTarget

#: Threads scanning int8 codes for exact search (docs/PERFORMANCE_LOG.md#certified-exact-search).
SCAN_THREADS = 2
#: How much lower than the app's other threads the map's layout threads run (nice values).
LAYOUT_NICE_INCREMENT = 5


def _lower_priority() -> None:
    lower_this_thread(LAYOUT_NICE_INCREMENT)


class Session:
    """Caches and worker threads of one front end.

    Worker threads are plain Python threads, never the event loop's default executor: under qasync that
    runs QThreads, and a QThread still running when its loop or the process ends aborts the process.
    """

    def __init__(self, *, keep_vectors: bool = True, int8_codes: bool = True) -> None:
        """``keep_vectors=False``: a session for one search (``recall-gui search``) reads no table's
        vectors into memory for exact search; LanceDB's flat scan answers, with the same results.
        ``int8_codes=False``: exact search holds and scans float32 vectors instead of int8 codes (the
        same results; four times the memory)."""
        #: Loading models and embedding: one thread, since onnxruntime parallelises inside each call.
        self.embed_executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="recall-embed")
        #: NumPy work (copying vectors into the exact-search matrix, ranking them): one thread.
        self.compute_executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="recall-compute")
        #: Long inspections (maps, version diffs): one thread, so they never hold up a search's ranking.
        self.inspect_executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="recall-inspect")
        #: The worker process where users' filters are first evaluated (started by the first filter).
        self.filters = FilterGuard()
        #: Scanning int8 codes for exact search: two threads, each on its own part of the codes.
        self.scan_executor = ThreadPoolExecutor(max_workers=SCAN_THREADS, thread_name_prefix="recall-scan")
        #: The map's neighbour layout: a thread per core, below the app's other threads in priority, so a
        #: layout of a million rows uses the idle CPU without slowing the window or a search.
        self.layout_executor = ThreadPoolExecutor(
            max_workers=SCAN_THREADS, thread_name_prefix="recall-layout", initializer=_lower_priority
        )
        self.tables = TableCache(self.filters)
        self.vectors = VectorCache(
            self.compute_executor,
            enabled=keep_vectors,
            codes_folder=app_cache_dir() / "vectors" if int8_codes else None,
            scan_workers=self.scan_executor,
        )
        self.models = EmbedderPool(self.embed_executor)
        #: Whether LanceDB's float32 arithmetic here is the one exact search repeats (checked once per
        #: machine and LanceDB version, on a thread of its own, once a first exact search has answered).
        self.arithmetic = LanceArithmetic(app_cache_dir())
        #: Finished maps of tables' vectors, per table version (t-SNE's also in the app's cache folder).
        self.maps = MapCache(app_cache_dir() / "maps")
        #: Stop signals of the inspections running on ``inspect_executor`` (set on close: a t-SNE run
        #: would otherwise keep the process alive for minutes after its window closed).
        self.running_inspections: set[threading.Event] = set()
        self.closed = False

    def forget_version(self, target: TableTarget) -> None:
        """Drop what is kept of ``target`` at its pinned version (its open table, its vectors): a run over
        a table's versions searches each once, and must not hold them all."""
        assert target.version is not None
        self.tables.forget_version(target)
        self.vectors.forget_version(target.uri, target.table_name, target.version)

    async def aclose(self) -> None:
        """Release the HTTP clients, the caches and the threads (a job still running finishes on its own)."""
        if self.closed:
            return
        self.closed = True
        await self.models.aclose()
        self.tables.forget()
        self.vectors.forget()
        self.maps.forget()
        self.filters.close()
        for stop in list(self.running_inspections):
            stop.set()
        self.embed_executor.shutdown(wait=False, cancel_futures=True)
        self.compute_executor.shutdown(wait=False, cancel_futures=True)
        self.inspect_executor.shutdown(wait=False, cancel_futures=True)
        self.scan_executor.shutdown(wait=False, cancel_futures=True)
        self.layout_executor.shutdown(wait=False, cancel_futures=True)

    async def __aenter__(self) -> Session:
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.aclose()
