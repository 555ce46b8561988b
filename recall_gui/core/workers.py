"""The core's own worker threads, for blocking work that must leave the event loop free.

Plain Python thread pools, never the event loop's default executor: under qasync the default executor
runs QThreads, and a QThread still running when its loop or the process ends aborts the process.
"""

from __future__ import annotations

import threading
from concurrent.futures import Executor, ThreadPoolExecutor

_lock = threading.Lock()
_pools: dict[str, ThreadPoolExecutor] = {}


def _pool(name: str, workers: int) -> Executor:
    with _lock:
        pool = _pools.get(name)
        if pool is None:
            pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix=f"recall-{name}")
            _pools[name] = pool
        return pool


def embedding_executor() -> Executor:
    """One thread for loading models and embedding: onnxruntime parallelises inside each call."""
    return _pool("embed", 1)


def compute_executor() -> Executor:
    """One thread for NumPy work (copying vectors into the exact-search matrix, ranking them)."""
    return _pool("compute", 1)
